//! The scenarios of a verification run: the kinds of boxes it generates and how it moves
//! them.

use std::fmt;

use glam::Vec3;

use super::SplitMix64;
use crate::Aabb;

/// The kind of boxes a verification run generates; each stresses a known weak spot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    /// Random sizes and positions snapped to a coarse lattice, so touching faces are common.
    Mixed,
    /// Every box identical: all pairs overlap.
    Identical,
    /// All boxes on one plane (the clustering case that hurts sweep and prune).
    Plane,
    /// A few boxes larger than the world among tiny and zero-size ones.
    HugeAndTiny,
    /// Coordinates around ±1e30 beside ordinary ones.
    Far,
    /// Unit boxes on an integer lattice: faces, edges and corners touch.
    Touching,
    /// Every box flies away from the origin forever, faster and faster: structures must not
    /// keep memory for the space left behind.
    Drift,
}

impl Scenario {
    /// Every scenario, in the order a full run cycles through them.
    pub const ALL: [Scenario; 7] = [
        Scenario::Mixed,
        Scenario::Identical,
        Scenario::Plane,
        Scenario::HugeAndTiny,
        Scenario::Far,
        Scenario::Touching,
        Scenario::Drift,
    ];

    pub(super) fn random_box(self, rng: &mut SplitMix64) -> Aabb {
        let snap = |v: f32| (v * 4.0).round() / 4.0;
        let (min, max) = match self {
            Scenario::Mixed | Scenario::Drift => {
                let c = Vec3::new(
                    rng.range(0.0, 40.0),
                    rng.range(0.0, 40.0),
                    rng.range(0.0, 40.0),
                )
                .map(snap);
                let h = if rng.chance(0.1) {
                    Vec3::ZERO
                } else {
                    Vec3::new(
                        rng.range(0.0, 4.0),
                        rng.range(0.0, 4.0),
                        rng.range(0.0, 4.0),
                    )
                    .map(snap)
                };
                (c - h, c + h)
            }
            Scenario::Identical => (Vec3::splat(-1.0), Vec3::splat(1.0)),
            Scenario::Plane => {
                let c = Vec3::new(rng.range(0.0, 60.0), 0.0, rng.range(0.0, 60.0)).map(snap);
                let h = Vec3::new(rng.range(0.0, 2.0), 0.5, rng.range(0.0, 2.0)).map(snap);
                (c - Vec3::new(h.x, 0.0, h.z), c + Vec3::new(h.x, 1.0, h.z))
            }
            Scenario::HugeAndTiny => {
                let c = Vec3::new(
                    rng.range(0.0, 30.0),
                    rng.range(0.0, 30.0),
                    rng.range(0.0, 30.0),
                );
                let h = match rng.below(10) {
                    0 => Vec3::splat(1e4),
                    1..=3 => Vec3::ZERO,
                    _ => Vec3::splat(rng.range(0.0, 0.05)),
                };
                (c - h, c + h)
            }
            Scenario::Far => {
                let scale = if rng.chance(0.5) { 1e30 } else { 10.0 };
                let c = Vec3::new(
                    rng.range(-4.0, 4.0),
                    rng.range(-4.0, 4.0),
                    rng.range(-4.0, 4.0),
                )
                .map(|v| v.round() * scale);
                let h = Vec3::splat(rng.range(0.0, 1.0) * scale);
                let h = if rng.chance(0.1) {
                    Vec3::splat(3e38)
                } else {
                    h
                };
                let limit = Vec3::splat(f32::MAX);
                ((c - h).clamp(-limit, limit), (c + h).clamp(-limit, limit))
            }
            Scenario::Touching => {
                let c = Vec3::new(
                    rng.below(12) as f32,
                    rng.below(12) as f32,
                    rng.below(12) as f32,
                );
                let h = if rng.chance(0.2) {
                    Vec3::ZERO
                } else {
                    Vec3::splat(0.5)
                };
                (c - h, c + h)
            }
        };
        Aabb::new(min, max).expect("scenario boxes are valid")
    }

    /// A small move of `aabb`, a teleport, or a resize.
    pub(super) fn moved_box(self, aabb: &Aabb, rng: &mut SplitMix64) -> Aabb {
        match rng.below(10) {
            0 => self.random_box(rng),
            1 => {
                // Grow or shrink about the centre, sometimes to a point.
                let c = aabb.center();
                let factor = [0.0, 0.5, 2.0][rng.below(3)];
                let h = (aabb.extents() * 0.5 * factor).min(Vec3::splat(1e38));
                Aabb::new(
                    (c - h).max(Vec3::splat(-f32::MAX)),
                    (c + h).min(Vec3::splat(f32::MAX)),
                )
                .unwrap_or(*aabb)
            }
            _ => {
                let step = match self {
                    Scenario::Far if aabb.min().abs().max_element() > 1e20 => 1e29,
                    Scenario::Touching => 1.0,
                    _ => 0.5,
                };
                let d = Vec3::new(
                    rng.below(5) as f32 - 2.0,
                    if self == Scenario::Plane {
                        0.0
                    } else {
                        rng.below(5) as f32 - 2.0
                    },
                    rng.below(5) as f32 - 2.0,
                ) * step;
                Aabb::new(aabb.min() + d, aabb.max() + d).unwrap_or(*aabb)
            }
        }
    }
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Scenario::Mixed => "mixed",
            Scenario::Identical => "identical",
            Scenario::Plane => "plane",
            Scenario::HugeAndTiny => "huge-and-tiny",
            Scenario::Far => "far",
            Scenario::Touching => "touching",
            Scenario::Drift => "drift",
        };
        f.write_str(name)
    }
}
