//! Scenes and motion for the `broadphase` workbench.
#![deny(missing_docs)]

mod bouncing_boxes;

pub use bouncing_boxes::{BouncingBoxes, BouncingBoxesConfig};
