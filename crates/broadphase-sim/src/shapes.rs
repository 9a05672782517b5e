//! The objects' collision shapes and their bounding boxes.

use glam::{Quat, Vec3};
use parry3d::math::Pose;
use parry3d::shape::{Ball, Capsule, Cone, Cuboid, Cylinder, SharedShape};

use crate::distributions::{random_rotation, SceneRng, SizeSampler};
use crate::scene::ShapeKind;

/// A shape with a fixed orientation: its parry shape and the half extents of its AABB.
#[derive(Clone)]
pub struct PlacedShape {
    /// Which kind of shape.
    pub kind: ShapeKind,
    /// The parry shape, in its own frame.
    pub shape: SharedShape,
    /// Its orientation (random for boxes and capsules, identity otherwise).
    pub rotation: Quat,
    /// Half extents of the AABB of the rotated shape, around its center.
    pub aabb_half_extents: Vec3,
}

impl std::fmt::Debug for PlacedShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlacedShape")
            .field("kind", &self.kind)
            .field("rotation", &self.rotation)
            .field("aabb_half_extents", &self.aabb_half_extents)
            .finish()
    }
}

impl PlacedShape {
    /// A shape of `kind` whose extents are drawn from `sizes`, each dimension independently
    /// (so boxes can be thin, and their rotated AABBs loose: [Zych16, ch. 4.2, Fig. 4.15]).
    pub fn random(kind: ShapeKind, sizes: &SizeSampler, rng: &mut SceneRng) -> Self {
        let mut draw = || sizes.sample(rng);
        let (shape, rotated) = match kind {
            ShapeKind::Sphere => (SharedShape::new(Ball::new(draw() / 2.0)), false),
            ShapeKind::Box => {
                let half = Vec3::new(draw(), draw(), draw()) / 2.0;
                (SharedShape::new(Cuboid::new(half)), true)
            }
            ShapeKind::Capsule => {
                // Length along the axis, then diameter; the caps are part of the length.
                let (length, diameter) = (draw(), draw());
                let radius = diameter.min(length) / 2.0;
                let half_height = (length / 2.0 - radius).max(0.0);
                (SharedShape::new(Capsule::new_y(half_height, radius)), true)
            }
            ShapeKind::Cylinder => {
                let (height, diameter) = (draw(), draw());
                (
                    SharedShape::new(Cylinder::new(height / 2.0, diameter / 2.0)),
                    false,
                )
            }
            ShapeKind::Cone => {
                let (height, diameter) = (draw(), draw());
                (
                    SharedShape::new(Cone::new(height / 2.0, diameter / 2.0)),
                    false,
                )
            }
        };
        let rotation = if rotated {
            random_rotation(rng)
        } else {
            Quat::IDENTITY
        };
        Self::new(kind, shape, rotation)
    }

    /// An axis-aligned static box (terrain, ground).
    pub fn static_box(half_extents: Vec3) -> Self {
        Self::new(
            ShapeKind::Box,
            SharedShape::new(Cuboid::new(half_extents)),
            Quat::IDENTITY,
        )
    }

    fn new(kind: ShapeKind, shape: SharedShape, rotation: Quat) -> Self {
        let aabb = shape.compute_aabb(&Pose::from_parts(Vec3::ZERO, rotation));
        // Symmetric shapes centred on their origin: the AABB is symmetric up to rounding.
        let aabb_half_extents = aabb.maxs.max(-aabb.mins);
        Self {
            kind,
            shape,
            rotation,
            aabb_half_extents,
        }
    }

    /// The pose of this shape at `center`.
    #[inline]
    pub fn pose(&self, center: Vec3) -> Pose {
        Pose::from_parts(center, self.rotation)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::distributions::scene_rng;
    use crate::scene::SizeDistribution;

    #[test]
    fn aabb_encloses_the_rotated_shape_and_is_loose_for_thin_boxes() {
        let mut rng = scene_rng(5);
        let sizes =
            SizeSampler::new(SizeDistribution::Uniform, 0.1, 4.0, 1.0, 1.0, None, None).unwrap();
        for kind in ShapeKind::ALL {
            for _ in 0..50 {
                let s = PlacedShape::random(kind, &sizes, &mut rng);
                let center = Vec3::new(3.0, -2.0, 1.0);
                let exact = s.shape.compute_aabb(&s.pose(center));
                assert!(exact.mins.cmpge(center - s.aabb_half_extents - 1e-4).all());
                assert!(exact.maxs.cmple(center + s.aabb_half_extents + 1e-4).all());
            }
        }
        // A rotated 4 x 0.1 x 0.1 rod: its AABB volume is far above its own.
        let rod = PlacedShape::new(
            ShapeKind::Box,
            SharedShape::new(Cuboid::new(Vec3::new(2.0, 0.05, 0.05))),
            Quat::from_rotation_z(0.7) * Quat::from_rotation_y(0.5),
        );
        let h = rod.aabb_half_extents;
        assert!(h.x * h.y * h.z * 8.0 > 50.0 * 4.0 * 0.1 * 0.1);
    }
}
