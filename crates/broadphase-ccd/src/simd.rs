//! What the calendar's vector kernels share: run-time detection of AVX2, the lane tables of
//! their compactions, and a cache prefetch hint.

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

/// Hints the CPU to bring `value`'s cache line in; no effect on the program's state.
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch has no architectural effect and never faults; the pointer comes
    // from a reference.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::compact_lanes;

    #[test]
    fn tables_move_the_set_lanes_to_the_front() {
        let bytes: [[u32; 8]; 64] = compact_lanes::<64, 1>();
        assert_eq!(bytes[0b101001][..3], [0, 3, 5]);
        let pairs: [[u32; 8]; 16] = compact_lanes::<16, 2>();
        assert_eq!(pairs[0b1010][..4], [2, 3, 6, 7]);
        assert_eq!(pairs[0b1111], [0, 1, 2, 3, 4, 5, 6, 7]);
    }
}
