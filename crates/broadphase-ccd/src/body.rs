//! A moving sphere (3D) or circle (2D) and how its mass follows from its size.

use crate::vector::Vec3;

/// A sphere (or circle in a 2D world) moving with constant velocity between events.
///
/// In 2D worlds the `z` components of position and velocity are ignored (treated as 0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Body {
    /// Centre at the world's start time.
    pub position: Vec3,
    /// Constant velocity until the next event of this body.
    pub velocity: Vec3,
    /// Radius, finite and positive.
    pub radius: f64,
    /// Mass, finite and positive.
    pub mass: f64,
}

impl Body {
    /// A body whose mass follows `model` in a `dim`-dimensional world.
    pub fn new(position: Vec3, velocity: Vec3, radius: f64, model: MassModel, dim: usize) -> Self {
        Body {
            position,
            velocity,
            radius,
            mass: model.mass(radius, dim),
        }
    }
}

/// How masses are assigned to generated bodies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MassModel {
    /// Mass proportional to volume (area in 2D): `radius^dim`.
    #[default]
    ProportionalToVolume,
    /// Every body has mass 1.
    Equal,
}

impl MassModel {
    /// The mass of a body of `radius` in a `dim`-dimensional world.
    pub fn mass(self, radius: f64, dim: usize) -> f64 {
        match self {
            MassModel::ProportionalToVolume => radius.powi(dim as i32),
            MassModel::Equal => 1.0,
        }
    }
}
