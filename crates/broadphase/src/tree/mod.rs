//! Bounding-volume trees: [`DynamicTree`] (incremental insert, remove and rotations) with its
//! broad phase [`DynamicTreeBroadPhase`], and [`Bvh`] (built whole, then refitted) with
//! [`BvhBroadPhase`]. The trees themselves are public for queries of their own.

mod bvh;
mod bvh_broad_phase;
mod dynamic;
mod dynamic_broad_phase;
mod traversal_stack;

pub use bvh::{Bvh, BvhBuild, DescendRule};
pub use bvh_broad_phase::{BvhBroadPhase, BvhOptions};
pub use dynamic::{DynamicTree, RayVisit, TreeLeaves};
pub use dynamic_broad_phase::{DynamicTreeBroadPhase, DynamicTreeOptions, StepCounts};
pub use traversal_stack::TraversalStack;
