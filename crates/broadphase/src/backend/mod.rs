//! What an implementor of [`BroadPhase`](crate::BroadPhase) needs beyond the root types: the
//! proxy table, the pair set and tracker, the [`ProxyStore`] that bundles them, and the
//! sortable float keys with their radix sort.
//!
//! Users of the algorithms never need this module; a broad phase written outside this crate
//! (the workbench's peers) embeds a [`ProxyStore`] and forwards to it.

mod pair_set;
pub(crate) mod pair_tracker;
pub(crate) mod proxy;
mod sorted_pairs;
mod store;

pub use crate::query::sort_hits;
pub use crate::util::radix_sort::{radix_sort_keys, sortable_key};
pub use pair_set::{key_indices, pair_key, PairSet};
pub use pair_tracker::PairTracker;
pub use proxy::ProxyTable;
pub use store::ProxyStore;
pub(crate) use store::{impl_candidate, store_accessors, store_edits, store_moved_edits};
