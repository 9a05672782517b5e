//! Octrees: space cut recursively into eight children. [`Octree`] stores a box in the
//! smallest node that contains it; [`LooseOctree`] in a node whose enlarged ("loose") bounds
//! contain it, chosen by size and centre.

mod loose;
pub(crate) mod nodes;
pub(crate) mod tight;

pub use loose::{LooseOctree, LooseOctreeOptions};
pub use nodes::LevelStatistics;
pub use tight::{Octree, OctreeOptions};
