//! Exact broad-phase collision detection for many moving 3D boxes.
//!
//! Every algorithm implements [`BroadPhase`] and reports exactly the pairs of proxies whose
//! closed boxes overlap, whose [`CollisionFilter`]s allow each other, and which are not both
//! [`ProxyKind::Static`]; [`BruteForce`] is the reference the others are tested against.
//! [`create`] builds any algorithm by its command-line name.
#![deny(missing_docs)]

mod aabb;
mod adaptive;
mod broad_phase;
mod brute_force;
mod error;
mod pair_set;
mod pair_tracker;
mod proxy;
mod query;
mod radix_sort;
mod registry;
mod sort_and_sweep;
mod sweep_and_prune;
pub mod verify;

pub use aabb::Aabb;
pub use adaptive::{Adaptive, AdaptiveOptions, SwitchPolicy, SwitchRecord};
pub use broad_phase::BroadPhase;
pub use brute_force::BruteForce;
pub use error::{Error, Result};
pub use glam::Vec3;
pub use pair_set::{key_indices, pair_key, PairSet};
pub use pair_tracker::{Pair, PairEvents, PairTracker};
pub use proxy::{CollisionFilter, ProxyId, ProxyKind, ProxyTable};
pub use query::{sort_hits, Ray, RayHit};
pub use radix_sort::{radix_sort_keys, sortable_key};
pub use registry::{create, AlgorithmOptions, ALGORITHMS};
pub use sort_and_sweep::SortAndSweep;
pub use sweep_and_prune::SweepAndPrune;
