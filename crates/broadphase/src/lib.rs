//! Exact broad-phase collision detection for many moving 3D boxes.
//!
//! Every algorithm implements [`BroadPhase`] and reports exactly the pairs of proxies whose
//! closed boxes overlap, whose [`CollisionFilter`]s allow each other, and which are not both
//! [`ProxyKind::Static`]; [`BruteForce`] is the reference the others are tested against.
//! [`create`] builds any algorithm by its command-line name. Without temporal coherence,
//! [`complete_pairs`] and [`bipartite_pairs`] find all overlapping pairs of a slice of boxes
//! in one stateless call.
//!
//! ```
//! use broadphase::{Aabb, BroadPhase, CollisionFilter, PairEvents, ProxyKind};
//!
//! let mut bp = broadphase::create("sort-and-sweep", &Default::default())?;
//! let a = bp.insert(Aabb::from_arrays([0.0; 3], [1.0; 3])?, ProxyKind::Dynamic, CollisionFilter::ALL)?;
//! let b = bp.insert(Aabb::from_arrays([2.0; 3], [3.0; 3])?, ProxyKind::Dynamic, CollisionFilter::ALL)?;
//! let mut events = PairEvents::new();
//! bp.update(&mut events);
//! assert!(events.begun.is_empty());
//! bp.set_aabb(b, Aabb::from_arrays([0.5; 3], [1.5; 3])?)?; // b moves onto a
//! bp.update(&mut events);
//! assert_eq!(events.begun.len(), 1);
//! # let _ = a;
//! # Ok::<(), broadphase::Error>(())
//! ```
//!
//! # Modules
//! The root holds what a user of the algorithms needs. Each family keeps its tuning options
//! and its own data structures in its module ([`sweep`], [`prune`], [`grid`], [`octree`],
//! [`tree`], [`adaptive`]); [`backend`] holds what a broad phase written outside this crate
//! needs to implement [`BroadPhase`].
//!
//! # Dependencies in the API
//! [`Vec3`] is `glam::Vec3`, re-exported on purpose: engines built on glam (Bevy, parry,
//! rapier) pass their vectors without conversion. A new major version of glam is therefore a
//! new major version of this crate.
#![deny(missing_docs)]

mod aabb;
pub mod adaptive;
pub mod backend;
mod broad_phase;
mod brute_force;
mod error;
pub mod grid;
pub mod octree;
pub mod prune;
mod query;
mod registry;
pub mod sweep;
#[cfg(test)]
mod test_support;
pub mod tree;
mod util;
#[cfg(any(test, feature = "verify"))]
pub mod verify;

pub use aabb::Aabb;
pub use adaptive::Adaptive;
pub use backend::pair_tracker::{Pair, PairEvents};
pub use backend::proxy::{CollisionFilter, ProxyId, ProxyKind};
pub(crate) use broad_phase::Candidate;
pub use broad_phase::{BroadPhase, ChoiceOverhead, Diagnostics};
pub use brute_force::BruteForce;
pub use error::{Error, Result};
pub use glam::Vec3;
pub use grid::{HierarchicalGrid, SpatialMasking, UniformGrid};
pub use octree::{LooseOctree, Octree};
pub use prune::{bipartite_pairs, complete_pairs};
pub use query::{Ray, RayHit};
pub use registry::{create, AlgorithmOptions, ALGORITHMS};
pub use sweep::{SortAndSweep, SweepAndPrune};
pub use tree::{BvhBroadPhase, DynamicTreeBroadPhase};

/// The README's Rust examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;

/// The library guide's Rust examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/library.md")]
struct LibraryGuideDoctests;

/// The adaptive guide's Rust examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/adaptive.md")]
struct AdaptiveGuideDoctests;
