//! Scenes, motion and narrow phase for the `broadphase` workbench.
//!
//! A [`Scene`] (TOML file or flags) describes the objects; a [`World`] moves them step by
//! step, deterministically for a seed; [`narrow_phase`] tests the broad phase's pairs with
//! parry3d's exact shapes.
#![deny(missing_docs)]

mod bouncing_boxes;
pub mod distributions;
mod motion;
pub mod narrow_phase;
mod scene;
mod shapes;
mod world_proxies;

pub use bouncing_boxes::{BouncingBoxes, BouncingBoxesConfig};
pub use motion::World;
pub use scene::{
    field_help, scene_fields, Phase, Scene, SceneBuilder, SceneError, ShapeKind, SizeDistribution,
    SpeedDistribution, MAX_OBJECTS, MAX_SCENE_BYTES, MAX_STEPS,
};
pub use shapes::PlacedShape;
pub use world_proxies::WorldProxies;
