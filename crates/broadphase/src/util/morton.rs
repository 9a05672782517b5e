//! Morton (Z-order) codes of quantised 3D points: sorting boxes by the code of their centres
//! puts boxes that are close in space close in the order, which both the bottom-up BVH build
//! and the dynamic tree's batched reinsertion rely on.

use glam::UVec3;

/// Spreads the low 10 bits of `v` to every third bit.
fn spread_bits(v: u32) -> u64 {
    let mut x = v as u64 & 0x3ff;
    x = (x | x << 16) & 0x0300_00ff;
    x = (x | x << 8) & 0x0300_f00f;
    x = (x | x << 4) & 0x030c_30c3;
    x = (x | x << 2) & 0x0924_9249;
    x
}

/// The 30-bit Morton code of a point quantised to 10 bits per axis (higher bits ignored):
/// the bits of x, y and z interleaved, x lowest.
pub(crate) fn morton_code(q: UVec3) -> u64 {
    spread_bits(q.x) | spread_bits(q.y) << 1 | spread_bits(q.z) << 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleaves_the_axes() {
        assert_eq!(morton_code(UVec3::new(1, 0, 0)), 1);
        assert_eq!(morton_code(UVec3::new(0, 1, 0)), 2);
        assert_eq!(morton_code(UVec3::new(0, 0, 1)), 4);
        assert_eq!(morton_code(UVec3::new(3, 0, 0)), 0b1001);
        assert_eq!(morton_code(UVec3::splat(1023)), (1 << 30) - 1);
        assert_eq!(
            morton_code(UVec3::new(1024, 0, 0)),
            0,
            "bits above the tenth are ignored"
        );
    }
}
