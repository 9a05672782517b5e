//! Building blocks shared by several algorithms.

mod morton;
mod move_buffer;
pub(crate) mod radix_sort;
mod rng;

pub(crate) use morton::morton_code;
pub(crate) use move_buffer::MoveBuffer;
pub use rng::SplitMix64;
