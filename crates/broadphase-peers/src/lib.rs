//! The best-known Rust broad phases behind [`broadphase::BroadPhase`], so the workbench can
//! run them side by side with the library's algorithms on identical motion.
//!
//! - [`ParryBvh`] (`parry-bvh`): parry3d's `Bvh`, updated incrementally and refitted, its
//!   pairs found by a self-traversal of the tree.
//! - [`RapierBroadPhase`] (`rapier`, feature `rapier`, on by default): rapier3d's
//!   `BroadPhaseBvh` driven standalone with a `ColliderSet` of cuboid colliders.
//! - [`PhysxBroadPhase`] (`physx-sap`, `physx-mbp`, `physx-abp`, `physx-abp-parallel`,
//!   feature `physx`, off by default: it builds PhysX 5 from source with a C++ compiler):
//!   PhysX's standalone CPU broad phases through physx-sys, listed in [`PHYSX_PEERS`] and
//!   built by [`create_physx`].
//!
//! All report exactly the library's pair set: candidates are filtered with the exact box
//! test and the proxies' filters and kinds.
#![deny(missing_docs)]

mod parry_bvh;
#[cfg(feature = "physx")]
mod physx;
#[cfg(feature = "rapier")]
mod rapier;

pub use parry_bvh::ParryBvh;
#[cfg(feature = "physx")]
pub use physx::{PhysxBroadPhase, PhysxKind, PhysxStats};
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

/// The PhysX peers' names, as [`create_physx`] accepts them (feature `physx`).
#[cfg(feature = "physx")]
pub const PHYSX_PEERS: &[&str] = &["physx-sap", "physx-mbp", "physx-abp", "physx-abp-parallel"];

/// Builds the PhysX peer called `name` (one of [`PHYSX_PEERS`]); `None` for any other name.
///
/// The result is an error only when PhysX refused to start: it allows one foundation per
/// process, so this fails if another library in the process made one
/// (`Error::InvalidOption` with the reason).
///
/// ```
/// let abp = broadphase_peers::create_physx("physx-abp").unwrap().unwrap();
/// assert_eq!(abp.name(), "physx-abp");
/// assert!(broadphase_peers::create_physx("sap").is_none());
/// ```
#[cfg(feature = "physx")]
pub fn create_physx(name: &str) -> Option<Result<Box<dyn BroadPhase>, Error>> {
    let kind = PhysxKind::from_name(name)?;
    Some(match PhysxBroadPhase::new(kind) {
        Some(bp) => Ok(Box::new(bp) as Box<dyn BroadPhase>),
        None => Err(Error::InvalidOption(
            "PhysX refused to create its foundation or broad phase (one foundation per process)",
        )),
    })
}
