//! The choice of sweep kernel (scalar, AVX2, AVX-512) by CPU and options.

use std::ops::Range;

#[cfg(target_arch = "x86_64")]
use super::{sweep_avx2, sweep_avx512};
use super::{sweep_scalar, PruneOptions, SweepArrays};

/// Which sweep kernel runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kernel {
    Scalar,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Kernel {
    pub(super) fn select(options: &PruneOptions) -> Self {
        #[cfg(target_arch = "x86_64")]
        if !options.force_scalar {
            if options.avx512 && sweep_avx512::available() {
                return Kernel::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                return Kernel::Avx2;
            }
        }
        let _ = options;
        Kernel::Scalar
    }

    /// Sweeps positions `range` of `arrays`, appending `(low, high - shift)` for each
    /// reported pair of box indices `low < high`.
    #[inline]
    pub(crate) fn sweep(
        self,
        arrays: &SweepArrays,
        range: Range<usize>,
        shift: u32,
        out: &mut Vec<(u32, u32)>,
    ) {
        match self {
            Kernel::Scalar => sweep_scalar::sweep(arrays, range, shift, out),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => sweep_avx2::sweep(arrays, range, shift, out),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => sweep_avx512::sweep(arrays, range, shift, out),
        }
    }
}
