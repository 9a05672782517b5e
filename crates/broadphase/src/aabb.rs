//! Axis-aligned bounding boxes.

use glam::Vec3;

use crate::{Error, Result};

/// A closed axis-aligned box in 3D: boxes that only touch overlap.
///
/// An `Aabb` is always valid: every coordinate is finite and `min <= max` on every axis.
/// Zero-size boxes and any finite magnitude (including ±1e30) are allowed.
///
/// ```
/// use broadphase::Aabb;
/// use glam::Vec3;
/// let a = Aabb::new(Vec3::ZERO, Vec3::ONE).unwrap();
/// let b = Aabb::new(Vec3::ONE, Vec3::splat(2.0)).unwrap();
/// assert!(a.overlaps(&b)); // touching at a corner counts
/// assert!(Aabb::new(Vec3::ONE, Vec3::ZERO).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aabb {
    min: Vec3,
    max: Vec3,
}

impl Aabb {
    /// Builds a box, checking that coordinates are finite and `min <= max` per axis.
    #[inline]
    pub fn new(min: Vec3, max: Vec3) -> Result<Self> {
        // The common case in one comparison of each kind (a NaN fails `cmple`), inlined into
        // the callers that build boxes by the thousand each step; the error apart.
        if min.is_finite() && max.is_finite() && min.cmple(max).all() {
            return Ok(Self { min, max });
        }
        Self::invalid(min, max)
    }

    /// The error of [`Aabb::new`] for a box that fails its checks.
    #[cold]
    fn invalid(min: Vec3, max: Vec3) -> Result<Self> {
        for axis in 0..3 {
            if !min[axis].is_finite() || !max[axis].is_finite() {
                return Err(Error::NonFiniteCoordinate { axis });
            }
            if min[axis] > max[axis] {
                return Err(Error::InvertedBox {
                    axis,
                    min: min[axis],
                    max: max[axis],
                });
            }
        }
        Ok(Self { min, max })
    }

    /// Builds a box from its centre and non-negative half extents.
    ///
    /// Fails like [`Aabb::new`] when the result is not finite or a half extent is negative.
    pub fn from_center_half_extents(center: Vec3, half_extents: Vec3) -> Result<Self> {
        Self::new(center - half_extents, center + half_extents)
    }

    /// A box around one point (zero size).
    pub fn from_point(point: Vec3) -> Result<Self> {
        Self::new(point, point)
    }

    /// Builds a box from arrays, as [`Aabb::new`].
    #[inline]
    pub fn from_arrays(min: [f32; 3], max: [f32; 3]) -> Result<Self> {
        Self::new(Vec3::from_array(min), Vec3::from_array(max))
    }

    /// The point box at the origin, a filler for arrays.
    pub(crate) const ORIGIN: Aabb = Aabb {
        min: Vec3::ZERO,
        max: Vec3::ZERO,
    };

    /// Callers guarantee the invariant (finite, `min <= max`); checked in debug builds.
    #[inline]
    pub(crate) fn new_unchecked(min: Vec3, max: Vec3) -> Self {
        debug_assert!(Self::new(min, max).is_ok(), "invalid box {min:?} {max:?}");
        Self { min, max }
    }

    /// The minimum corner.
    #[inline]
    pub fn min(&self) -> Vec3 {
        self.min
    }

    /// The maximum corner.
    #[inline]
    pub fn max(&self) -> Vec3 {
        self.max
    }

    /// True when the closed boxes share at least one point.
    #[inline]
    pub fn overlaps(&self, other: &Aabb) -> bool {
        self.min.cmple(other.max).all() && other.min.cmple(self.max).all()
    }

    /// True when `other` lies inside `self` (boundaries included).
    #[inline]
    pub fn contains(&self, other: &Aabb) -> bool {
        self.min.cmple(other.min).all() && other.max.cmple(self.max).all()
    }

    /// The smallest box holding both.
    #[inline]
    pub fn union(&self, other: &Aabb) -> Aabb {
        Aabb::new_unchecked(self.min.min(other.min), self.max.max(other.max))
    }

    /// The box grown by `margin >= 0` on every side, saturating at `f32::MAX`.
    pub fn expanded(&self, margin: f32) -> Aabb {
        debug_assert!(margin >= 0.0);
        let m = Vec3::splat(margin);
        let limit = Vec3::splat(f32::MAX);
        Aabb::new_unchecked(
            (self.min - m).clamp(-limit, limit),
            (self.max + m).clamp(-limit, limit),
        )
    }

    /// The centre point. Computed without overflow for boxes near `f32::MAX`.
    #[inline]
    pub fn center(&self) -> Vec3 {
        self.min * 0.5 + self.max * 0.5
    }

    /// Edge lengths (`max - min`); may be infinite for boxes spanning ±3e38.
    #[inline]
    pub fn extents(&self) -> Vec3 {
        self.max - self.min
    }

    /// Surface area, the cost measure of bounding volume hierarchies.
    #[inline]
    pub fn surface_area(&self) -> f32 {
        let e = self.extents();
        2.0 * (e.x * e.y + e.y * e.z + e.z * e.x)
    }

    /// Volume.
    #[inline]
    pub fn volume(&self) -> f32 {
        let e = self.extents();
        e.x * e.y * e.z
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_nan_infinity_and_inverted() {
        assert_eq!(
            Aabb::new(Vec3::new(f32::NAN, 0.0, 0.0), Vec3::ONE),
            Err(Error::NonFiniteCoordinate { axis: 0 })
        );
        assert_eq!(
            Aabb::new(Vec3::ZERO, Vec3::new(1.0, 1.0, f32::INFINITY)),
            Err(Error::NonFiniteCoordinate { axis: 2 })
        );
        assert!(matches!(
            Aabb::new(Vec3::new(0.0, 2.0, 0.0), Vec3::ONE),
            Err(Error::InvertedBox { axis: 1, .. })
        ));
        assert!(Aabb::from_center_half_extents(Vec3::ZERO, Vec3::new(-1.0, 1.0, 1.0)).is_err());
    }

    #[test]
    fn accepts_huge_and_zero_size() {
        let huge = Aabb::new(Vec3::splat(-1e30), Vec3::splat(1e30)).unwrap();
        let point = Aabb::from_point(Vec3::splat(5.0)).unwrap();
        assert!(huge.overlaps(&point));
        assert!(point.overlaps(&point));
        assert!(huge.contains(&point));
        let max = Aabb::new(Vec3::splat(-f32::MAX), Vec3::splat(f32::MAX)).unwrap();
        assert_eq!(max.center(), Vec3::ZERO);
        assert_eq!(max.expanded(1.0), max);
    }

    #[test]
    fn closed_overlap_semantics() {
        let a = Aabb::from_arrays([0.0; 3], [1.0; 3]).unwrap();
        let touching_face = Aabb::from_arrays([1.0, 0.0, 0.0], [2.0, 1.0, 1.0]).unwrap();
        let separated = Aabb::from_arrays([1.0001, 0.0, 0.0], [2.0, 1.0, 1.0]).unwrap();
        assert!(a.overlaps(&touching_face) && touching_face.overlaps(&a));
        assert!(!a.overlaps(&separated) && !separated.overlaps(&a));
        assert_eq!(a.union(&separated).max(), Vec3::new(2.0, 1.0, 1.0));
        assert_eq!(a.surface_area(), 6.0);
        assert_eq!(a.volume(), 1.0);
    }
}
