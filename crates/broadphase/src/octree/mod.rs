//! Octrees: space cut recursively into eight children ([Zych16, ch. 2.2.3], \[Ericson05\]).
//! [`Octree`] stores a box in the smallest node that contains it; [`LooseOctree`] in a node
//! whose enlarged ("loose") bounds contain it, chosen by size and centre \[Ulrich00\].
//!
//! Both are one octree with two placement rules: they share the node storage, the update
//! sequence, the root fit and its refit rule, the pair marking of the outside list, queries,
//! statistics and their `BroadPhase` implementation, and differ only in where a box goes, how
//! the tree grows and shrinks, and how the stored boxes are paired.

mod base;
mod inspect;
mod loose;
mod nodes;
mod pairs;
mod query;
mod root;
mod stats;
#[cfg(test)]
mod tests;
mod tight;
mod update;

pub use loose::{LooseOctree, LooseOctreeOptions};
pub use stats::LevelStatistics;
pub use tight::{Octree, OctreeOptions};
