//! The best-known Rust broad phases behind [`broadphase::BroadPhase`], so the workbench can
//! run them side by side with the library's algorithms on identical motion.
//!
//! - [`ParryBvh`] (`parry-bvh`): parry3d's `Bvh`, updated incrementally and refitted, its
//!   pairs found by a self-traversal of the tree.
//! - [`RapierBroadPhase`] (`rapier`, feature `rapier`, on by default): rapier3d's
//!   `BroadPhaseBvh` driven standalone with a `ColliderSet` of cuboid colliders.
//!
//! Both report exactly the library's pair set: candidates are filtered with the exact box
//! test and the proxies' filters and kinds.
#![deny(missing_docs)]

mod parry_bvh;
#[cfg(feature = "rapier")]
mod rapier;

pub use parry_bvh::ParryBvh;
#[cfg(feature = "rapier")]
pub use rapier::RapierBroadPhase;

use broadphase::{BroadPhase, Error};

/// The peers' names, as [`create`] accepts them.
#[cfg(feature = "rapier")]
pub const PEERS: &[&str] = &["parry-bvh", "rapier"];
/// The peers' names, as [`create`] accepts them.
#[cfg(not(feature = "rapier"))]
pub const PEERS: &[&str] = &["parry-bvh"];

/// Builds the peer called `name` (one of [`PEERS`]).
///
/// ```
/// let bvh = broadphase_peers::create("parry-bvh").unwrap();
/// assert_eq!(bvh.name(), "parry-bvh");
/// assert!(broadphase_peers::create("sap").is_err());
/// ```
pub fn create(name: &str) -> Result<Box<dyn BroadPhase>, Error> {
    match name {
        "parry-bvh" => Ok(Box::new(ParryBvh::new())),
        #[cfg(feature = "rapier")]
        "rapier" => Ok(Box::new(RapierBroadPhase::new())),
        _ => Err(Error::UnknownAlgorithm {
            name: name.to_string(),
            known: PEERS.join(", "),
        }),
    }
}
