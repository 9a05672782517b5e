//! What the calendar's kernels share: run-time detection of AVX2, a branch-free select and a
//! cache prefetch hint.

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
}
