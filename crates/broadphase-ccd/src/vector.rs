//! Minimal f64 3-vector arithmetic; 2D worlds keep the third component at zero.

/// A point or direction in 3D (`[x, y, z]`); in 2D worlds `z` is always 0.
pub type Vec3 = [f64; 3];

#[inline]
pub(crate) fn sub(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

#[inline]
pub(crate) fn dot(a: Vec3, b: Vec3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// `a + s * b`.
#[inline]
pub(crate) fn mul_add(a: Vec3, s: f64, b: Vec3) -> Vec3 {
    [a[0] + s * b[0], a[1] + s * b[1], a[2] + s * b[2]]
}
