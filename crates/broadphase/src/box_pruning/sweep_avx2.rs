//! Step 4 on x86_64 with AVX2: eight candidates per step. Same tests, same order, same output
//! as [`super::sweep_scalar`] (ordered, non-signalling `<=` compares; inputs have no NaN).

use std::arch::x86_64::*;
use std::ops::Range;

use super::sweep_scalar::ordered;
use super::{SweepArrays, PADDING};

/// Appends `(low, high - shift)` for every reported pair whose first entry is in `range`;
/// falls back to the scalar sweep when the CPU lacks AVX2. O(range + candidates / 8 + pairs).
pub(super) fn sweep(
    arrays: &SweepArrays,
    range: Range<usize>,
    shift: u32,
    out: &mut Vec<(u32, u32)>,
) {
    let len = arrays.min_x.len();
    let lengths_agree = [
        &arrays.max_x,
        &arrays.min_y,
        &arrays.max_y,
        &arrays.min_z,
        &arrays.max_z,
    ]
    .iter()
    .all(|array| array.len() == len)
        && arrays.code.len() == len
        && arrays.index.len() == len;
    assert!(lengths_agree && range.end <= arrays.swept && arrays.swept + PADDING <= len);
    if !std::arch::is_x86_feature_detected!("avx2") {
        return super::sweep_scalar::sweep(arrays, range, shift, out);
    }
    // SAFETY: the CPU supports AVX2 (checked just above).
    unsafe { sweep_avx2(arrays, range, shift, out) }
}

/// The sweep proper. Memory safety of the unchecked loads: every array has `len` entries, and
/// a swept position `i` has `i + PADDING < len` (asserted by the caller). The first block reads
/// `i + 1 ..= i + 8`. A further block is read only when all eight lanes of the previous one
/// passed the x test, so they were real entries (sentinels have `min_x = +inf` and fail it), and
/// every real entry is followed by at least [`PADDING`] more entries of its run or its
/// sentinels, so the next block `j + 8 ..= j + 15` is in bounds too.
#[target_feature(enable = "avx2")]
fn sweep_avx2(arrays: &SweepArrays, range: Range<usize>, shift: u32, out: &mut Vec<(u32, u32)>) {
    let min_xs = arrays.min_x.as_ptr();
    let min_ys = arrays.min_y.as_ptr();
    let max_ys = arrays.max_y.as_ptr();
    let min_zs = arrays.min_z.as_ptr();
    let max_zs = arrays.max_z.as_ptr();
    let codes = arrays.code.as_ptr();
    let zero = _mm256_setzero_si256();
    for i in range {
        let max_x = _mm256_set1_ps(arrays.max_x[i]);
        let min_y = _mm256_set1_ps(arrays.min_y[i]);
        let max_y = _mm256_set1_ps(arrays.max_y[i]);
        let min_z = _mm256_set1_ps(arrays.min_z[i]);
        let max_z = _mm256_set1_ps(arrays.max_z[i]);
        let code = _mm256_set1_epi32(arrays.code[i] as i32);
        let index = arrays.index[i];
        let mut j = i + 1;
        loop {
            // SAFETY: `j + 8 <= len`, see the function's comment.
            let x_ok =
                _mm256_cmp_ps::<_CMP_LE_OQ>(unsafe { _mm256_loadu_ps(min_xs.add(j)) }, max_x);
            let x_bits = _mm256_movemask_ps(x_ok);
            if x_bits == 0 {
                break;
            }
            // SAFETY: as above, same `j`, arrays of the same length.
            let (lo_y, hi_y, lo_z, hi_z, other_codes) = unsafe {
                (
                    _mm256_loadu_ps(min_ys.add(j)),
                    _mm256_loadu_ps(max_ys.add(j)),
                    _mm256_loadu_ps(min_zs.add(j)),
                    _mm256_loadu_ps(max_zs.add(j)),
                    _mm256_loadu_si256(codes.add(j).cast::<__m256i>()),
                )
            };
            let y_ok = _mm256_and_ps(
                _mm256_cmp_ps::<_CMP_LE_OQ>(lo_y, max_y),
                _mm256_cmp_ps::<_CMP_LE_OQ>(min_y, hi_y),
            );
            let z_ok = _mm256_and_ps(
                _mm256_cmp_ps::<_CMP_LE_OQ>(lo_z, max_z),
                _mm256_cmp_ps::<_CMP_LE_OQ>(min_z, hi_z),
            );
            let code_ok = _mm256_castsi256_ps(_mm256_cmpeq_epi32(
                _mm256_and_si256(other_codes, code),
                zero,
            ));
            let hit = _mm256_and_ps(_mm256_and_ps(x_ok, y_ok), _mm256_and_ps(z_ok, code_ok));
            let mut bits = _mm256_movemask_ps(hit) as u32;
            while bits != 0 {
                let lane = bits.trailing_zeros() as usize;
                out.push(ordered(index, arrays.index[j + lane], shift));
                bits &= bits - 1;
            }
            if x_bits != 0xff {
                break;
            }
            j += 8;
        }
    }
}
