//! Exact broad-phase collision detection for many moving 3D boxes.
//!
//! Every algorithm implements [`BroadPhase`] and reports exactly the pairs of proxies whose
//! closed boxes overlap, whose [`CollisionFilter`]s allow each other, and which are not both
//! [`ProxyKind::Static`]; [`BruteForce`] is the reference the others are tested against.
//! [`create`] builds any algorithm by its command-line name. Without temporal coherence,
//! [`complete_pairs`] and [`bipartite_pairs`] find all overlapping pairs of a slice of boxes
//! in one stateless call.
#![deny(missing_docs)]

mod aabb;
mod adaptive;
mod box_pruning;
mod broad_phase;
mod brute_force;
mod bvh;
mod bvh_broad_phase;
mod cell_hash;
mod dynamic_tree;
mod dynamic_tree_broad_phase;
mod error;
mod grid;
mod hgrid;
mod loose_octree;
mod masking;
mod move_buffer;
mod octree;
mod octree_nodes;
mod pair_set;
mod pair_tracker;
mod proxy;
mod query;
mod radix_sort;
mod registry;
mod sort_and_sweep;
mod sweep_and_prune;
mod traversal_stack;
pub mod verify;

pub use aabb::Aabb;
pub use adaptive::{
    Adaptive, AdaptiveOptions, SwitchPolicy, SwitchRecord, ADAPTIVE_DEFAULT_CANDIDATES,
};
pub use box_pruning::{
    bipartite_pairs, bipartite_pairs_with, complete_pairs, complete_pairs_with, PruneOptions,
    PruneScratch,
};
pub use broad_phase::BroadPhase;
pub use brute_force::BruteForce;
pub use bvh::{Bvh, BvhBuild, DescendRule};
pub use bvh_broad_phase::{
    BvhBroadPhase, REBUILD_AREA_GROWTH, REBUILD_CHANGE_BASE, REBUILD_CHANGE_DIVISOR,
};
pub use dynamic_tree::{DynamicTree, RayVisit, TreeLeaves};
pub use dynamic_tree_broad_phase::{DynamicTreeBroadPhase, StepCounts, DEFAULT_TREE_MARGIN};
pub use error::{Error, Result};
pub use glam::Vec3;
pub use grid::{UniformGrid, DEFAULT_MAX_CELLS_PER_BOX};
pub use hgrid::{
    HierarchicalGrid, HGRID_DEFAULT_MOTION_FACTOR, HGRID_DEFAULT_SCAN_LIMIT, HGRID_MAX_LEVEL,
    HGRID_MIN_LEVEL, HGRID_MOTION_LEVELS,
};
pub use loose_octree::{LooseOctree, LOOSE_OCTREE_DEFAULT_MAX_DEPTH};
pub use masking::{SpatialMasking, MASKING_MAX_BINS};
pub use octree::{
    Octree, OCTREE_DEFAULT_MAX_DEPTH, OCTREE_DEFAULT_SPLIT_THRESHOLD, OCTREE_MAX_DEPTH_LIMIT,
};
pub use octree_nodes::LevelStatistics;
pub use pair_set::{key_indices, pair_key, PairSet};
pub use pair_tracker::{Pair, PairEvents, PairTracker};
pub use proxy::{CollisionFilter, ProxyId, ProxyKind, ProxyTable};
pub use query::{sort_hits, Ray, RayHit};
pub use radix_sort::{radix_sort_keys, sortable_key};
pub use registry::{create, AlgorithmOptions, ALGORITHMS};
pub use sort_and_sweep::SortAndSweep;
pub use sweep_and_prune::SweepAndPrune;
pub use traversal_stack::TraversalStack;
