//! Grids: space cut into cells, pairs found among boxes that share a cell. [`UniformGrid`]
//! has one cell size, [`HierarchicalGrid`] a level of cells per power of two of box size,
//! and [`SpatialMasking`] per-axis bitmasks of bins instead of cells.

mod cell_hash;
mod hierarchical;
mod masking;
mod stored;
mod uniform;

pub use hierarchical::{HierarchicalGrid, HierarchicalGridOptions};
pub use masking::SpatialMasking;
pub use uniform::{GridOptions, UniformGrid};
