//! Rays and the exact box and ray tests that every algorithm's queries share.

use glam::Vec3;

use crate::{Aabb, Error, ProxyId, Result};

/// A segment `origin + t * direction` for `t` in `[0, max_distance]`, with a unit direction.
///
/// A zero direction or a zero `max_distance` makes a point query at `origin` (hits at distance
/// 0 the boxes that contain it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ray {
    origin: Vec3,
    direction: Vec3,
    max_distance: f32,
}

impl Ray {
    /// Builds a ray; `direction` is normalised, whatever its non-zero length (from subnormal
    /// to `f32::MAX` components). Fails on NaN or infinite
    /// values and on a negative `max_distance` (`f32::INFINITY` is allowed: an unbounded ray).
    pub fn new(origin: Vec3, direction: Vec3, max_distance: f32) -> Result<Self> {
        if !origin.is_finite() {
            return Err(Error::InvalidRay("origin is not finite"));
        }
        if !direction.is_finite() {
            return Err(Error::InvalidRay("direction is not finite"));
        }
        if max_distance.is_nan() || max_distance < 0.0 {
            return Err(Error::InvalidRay("max_distance is negative or NaN"));
        }
        let largest = direction.abs().max_element();
        let direction = if largest == 0.0 {
            Vec3::ZERO
        } else if (1e-18..=1e18).contains(&largest) {
            direction / direction.length()
        } else {
            // The squared length would underflow (a tiny direction such as 1e-30 would become
            // a point query) or overflow: scale by the largest component first.
            let scaled = direction / largest;
            scaled / scaled.length()
        };
        Ok(Self {
            origin,
            direction,
            max_distance,
        })
    }

    /// The start point.
    #[inline]
    pub fn origin(&self) -> Vec3 {
        self.origin
    }

    /// The unit direction (zero for a point query).
    #[inline]
    pub fn direction(&self) -> Vec3 {
        self.direction
    }

    /// The length of the segment.
    #[inline]
    pub fn max_distance(&self) -> f32 {
        self.max_distance
    }

    /// The same ray with a shorter or equal length (for closest-hit searches).
    #[inline]
    pub fn with_max_distance(&self, max_distance: f32) -> Ray {
        Ray {
            max_distance: max_distance.min(self.max_distance),
            ..*self
        }
    }

    /// The entry distance of the segment into the closed box, or `None` if it misses.
    /// A segment starting inside the box enters at 0.
    ///
    /// Monotone: a box that contains another is entered no later, so a structure may prune
    /// with enclosing boxes and never lose a hit.
    #[inline]
    pub fn hit_distance(&self, aabb: &Aabb) -> Option<f32> {
        let mut entry = 0.0f32;
        let mut exit = self.max_distance;
        for axis in 0..3 {
            let o = self.origin[axis];
            let d = self.direction[axis];
            let (lo, hi) = (aabb.min()[axis], aabb.max()[axis]);
            if d == 0.0 {
                if o < lo || o > hi {
                    return None;
                }
            } else {
                let t1 = (lo - o) / d;
                let t2 = (hi - o) / d;
                let (near, far) = if t1 <= t2 { (t1, t2) } else { (t2, t1) };
                entry = entry.max(near);
                exit = exit.min(far);
                if entry > exit {
                    return None;
                }
            }
        }
        Some(entry)
    }
}

/// A ray hit: the proxy and the distance at which the ray enters its box.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RayHit {
    /// The proxy hit.
    pub id: ProxyId,
    /// Distance from the ray's origin to the entry point (0 when the origin is inside).
    pub distance: f32,
}

/// Sorts hits by distance, then by slot index, the order every algorithm reports.
pub fn sort_hits(hits: &mut [RayHit]) {
    hits.sort_unstable_by(|a, b| {
        a.distance
            .total_cmp(&b.distance)
            .then(a.id.index().cmp(&b.id.index()))
    });
}

/// True when `candidate` is closer than `best` in the order of [`sort_hits`].
#[inline]
pub fn is_closer(candidate: &RayHit, best: &Option<RayHit>) -> bool {
    match best {
        None => true,
        Some(best) => {
            candidate.distance < best.distance
                || (candidate.distance == best.distance && candidate.id.index() < best.id.index())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::unit_box;

    #[test]
    fn validates_input() {
        assert!(Ray::new(Vec3::ZERO, Vec3::new(f32::NAN, 0.0, 0.0), 1.0).is_err());
        assert!(Ray::new(Vec3::splat(f32::INFINITY), Vec3::X, 1.0).is_err());
        assert!(Ray::new(Vec3::ZERO, Vec3::X, -1.0).is_err());
        assert!(Ray::new(Vec3::ZERO, Vec3::X, f32::NAN).is_err());
        assert!(Ray::new(Vec3::ZERO, Vec3::X, f32::INFINITY).is_ok());
        let huge = Ray::new(Vec3::ZERO, Vec3::splat(f32::MAX), 1.0).unwrap();
        assert!((huge.direction().length() - 1.0).abs() < 1e-6);
    }

    #[test]
    fn tiny_directions_are_normalised_not_points() {
        for tiny in [1e-30, 1e-20, f32::MIN_POSITIVE, 1e-45] {
            let ray = Ray::new(Vec3::ZERO, Vec3::new(tiny, -tiny, 0.0), 1.0).unwrap();
            let expected = Vec3::new(1.0, -1.0, 0.0).normalize();
            assert!(
                (ray.direction() - expected).length() < 1e-6,
                "{tiny}: {:?}",
                ray.direction()
            );
        }
        assert_eq!(
            Ray::new(Vec3::ZERO, Vec3::ZERO, 1.0).unwrap().direction(),
            Vec3::ZERO
        );
    }

    #[test]
    fn hits_along_axes_edges_and_corners() {
        let b = unit_box();
        let ray = Ray::new(Vec3::new(-1.0, 0.5, 0.5), Vec3::X, 10.0).unwrap();
        assert_eq!(ray.hit_distance(&b), Some(1.0));
        // Along an edge and through a corner: closed boxes are hit.
        let edge = Ray::new(Vec3::new(-1.0, 1.0, 1.0), Vec3::X, 10.0).unwrap();
        assert_eq!(edge.hit_distance(&b), Some(1.0));
        let corner = Ray::new(Vec3::new(2.0, 2.0, 0.0), Vec3::new(-1.0, -1.0, 0.0), 10.0).unwrap();
        assert!(corner.hit_distance(&b).is_some());
        // Too short, pointing away, starting inside.
        assert_eq!(ray.with_max_distance(0.5).hit_distance(&b), None);
        let away = Ray::new(Vec3::new(-1.0, 0.5, 0.5), -Vec3::X, 10.0).unwrap();
        assert_eq!(away.hit_distance(&b), None);
        let inside = Ray::new(Vec3::splat(0.5), Vec3::Y, 0.0).unwrap();
        assert_eq!(inside.hit_distance(&b), Some(0.0));
        let point_outside = Ray::new(Vec3::splat(2.0), Vec3::ZERO, 5.0).unwrap();
        assert_eq!(point_outside.hit_distance(&b), None);
    }
}
