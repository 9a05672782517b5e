//! What the calendar's kernels share: run-time detection of AVX2, the lane tables of their
//! compactions, a branch-free select and a cache prefetch hint.

/// Whether the CPU runs the AVX2 kernels (AVX2 and POPCNT).
pub(crate) fn avx2_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("popcnt")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// For each of the `MASKS` masks (a power of two: one bit per lane), the permutation of
/// 32-bit lanes (for `_mm256_permutevar8x32_*`) that moves the lanes set in the mask, each
/// `WIDTH` 32-bit lanes wide, to the front, in order.
#[cfg(target_arch = "x86_64")]
pub(crate) const fn compact_lanes<const MASKS: usize, const WIDTH: usize>() -> [[u32; 8]; MASKS] {
    let lanes = MASKS.trailing_zeros() as usize;
    assert!(MASKS.is_power_of_two() && lanes * WIDTH <= 8);
    let mut table = [[0u32; 8]; MASKS];
    let mut mask = 0;
    while mask < MASKS {
        let (mut lane, mut next) = (0, 0);
        while lane < lanes {
            if mask & (1 << lane) != 0 {
                let mut part = 0;
                while part < WIDTH {
                    table[mask][next] = (lane * WIDTH + part) as u32;
                    next += 1;
                    part += 1;
                }
            }
            lane += 1;
        }
        mask += 1;
    }
    table
}

/// `if condition { a } else { b }` without a branch, for conditions that are coin flips
/// (`std::hint::select_unpredictable` still compiles to a branch on `f64`): a mask on the
/// bits, so that the CPU never speculates on it.
#[inline(always)]
pub(crate) fn select_f64(condition: bool, a: f64, b: f64) -> f64 {
    let mask = u64::from(condition).wrapping_neg();
    f64::from_bits((a.to_bits() & mask) | (b.to_bits() & !mask))
}

/// Hints the CPU to bring `value`'s cache line in; no effect on the program's state.
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    prefetch_address(value as *const T);
}

/// Hints the CPU to bring the cache line at `address` in; no effect on the program's state,
/// whatever the address (it is never dereferenced), so callers need no bounds check.
#[inline(always)]
pub(crate) fn prefetch_address<T>(address: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch has no architectural effect and never faults, on any address.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(address.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

#[cfg(test)]
mod tests {
    use super::select_f64;

    #[test]
    fn select_f64_picks_by_the_condition_bit_for_bit() {
        assert_eq!(select_f64(true, -0.0, 1.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(select_f64(false, -0.0, f64::INFINITY), f64::INFINITY);
        assert!(select_f64(true, f64::NAN, 1.0).is_nan());
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn tables_move_the_set_lanes_to_the_front() {
        let bytes: [[u32; 8]; 64] = super::compact_lanes::<64, 1>();
        assert_eq!(bytes[0b101001][..3], [0, 3, 5]);
        let pairs: [[u32; 8]; 16] = super::compact_lanes::<16, 2>();
        assert_eq!(pairs[0b1010][..4], [2, 3, 6, 7]);
        assert_eq!(pairs[0b1111], [0, 1, 2, 3, 4, 5, 6, 7]);
    }
}
