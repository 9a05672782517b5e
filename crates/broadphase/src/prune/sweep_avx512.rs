//! Step 4 on x86_64 with AVX-512: sixteen candidates per step, the tests as mask registers
//! and the hits compacted by `vpcompressd`. Same tests, same order, same output as
//! [`super::sweep_scalar`] (ordered, non-signalling `<=` compares; inputs have no NaN).
//!
//! Dense scenes test dozens of candidates per box (100,000 `cube` boxes: about 46 per grid
//! entry), so twice the width halves the steps; the pairs are written as in
//! [`super::sweep_avx2`], without branching on the hits, the second half of a step's pairs
//! only when there are more than eight.

use std::arch::x86_64::*;
use std::ops::Range;

use super::{SweepArrays, PADDING};

/// Candidates per step.
const WIDTH: usize = 16;
const _: () = assert!(PADDING >= WIDTH);

/// Whether this CPU runs [`sweep`] (AVX-512F and POPCNT).
pub(super) fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("popcnt")
}

/// Appends `(low, high - shift)` for every reported pair whose first entry is in `range`;
/// falls back to the AVX2 sweep when the CPU lacks AVX-512. O(range + candidates / 16 +
/// pairs).
pub(super) fn sweep(
    arrays: &SweepArrays,
    range: Range<usize>,
    shift: u32,
    out: &mut Vec<(u32, u32)>,
) {
    arrays.assert_sweepable(&range);
    if !available() {
        return super::sweep_avx2::sweep(arrays, range, shift, out);
    }
    // SAFETY: the CPU supports AVX-512F and POPCNT (checked just above).
    unsafe { sweep_avx512(arrays, range, shift, out) }
}

/// The sweep proper. Memory safety of the unchecked loads: every array has `len` entries, and
/// a swept position `i` has `i + PADDING < len` (asserted by the caller), `PADDING >= 16`.
/// The first block reads `i + 1 ..= i + 16`. A further block is read only when all sixteen
/// lanes of the previous one passed the x test, so they were real entries (sentinels have
/// `min_x = +inf` and fail it), and every real entry is followed by at least [`PADDING`] more
/// entries of its run or its sentinels, so the next block `j + 16 ..= j + 31` is in bounds
/// too.
#[target_feature(enable = "avx512f,popcnt")]
fn sweep_avx512(arrays: &SweepArrays, range: Range<usize>, shift: u32, out: &mut Vec<(u32, u32)>) {
    let min_xs = arrays.min_x.as_ptr();
    let max_xs = arrays.max_x.as_ptr();
    let min_ys = arrays.min_y.as_ptr();
    let max_ys = arrays.max_y.as_ptr();
    let min_zs = arrays.min_z.as_ptr();
    let max_zs = arrays.max_z.as_ptr();
    let codes = arrays.code.as_ptr();
    let indices = arrays.index.as_ptr();
    let shift = _mm512_set1_epi32(shift as i32);
    // Lane `k` of the pairs: `low[k]` then `high[k]` (indices 16.. pick from `high`).
    let first_pairs = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    let second_pairs =
        _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    // The output's length and buffer in registers; written back at the end and before it
    // grows.
    let mut len = out.len();
    let mut pairs = out.as_mut_ptr();
    let mut capacity = out.capacity();
    for i in range {
        // SAFETY: `i < swept <= len` for every array (asserted by the caller).
        let (max_x, min_y, max_y, min_z, max_z, code, index) = unsafe {
            (
                _mm512_set1_ps(*max_xs.add(i)),
                _mm512_set1_ps(*min_ys.add(i)),
                _mm512_set1_ps(*max_ys.add(i)),
                _mm512_set1_ps(*min_zs.add(i)),
                _mm512_set1_ps(*max_zs.add(i)),
                _mm512_set1_epi32(*codes.add(i) as i32),
                _mm512_set1_epi32(*indices.add(i) as i32),
            )
        };
        // Opaque to the optimiser, as in the AVX2 sweep (a pointer per array advancing
        // with `i` would not fit in the registers).
        let mut j = std::hint::black_box(i + 1);
        loop {
            // SAFETY: `j + 16 <= len`, see the function's comment.
            let x_ok =
                _mm512_cmp_ps_mask::<_CMP_LE_OQ>(unsafe { _mm512_loadu_ps(min_xs.add(j)) }, max_x);
            if x_ok == 0 {
                break;
            }
            // SAFETY: as above, same `j`, arrays of the same length.
            let (lo_y, hi_y, lo_z, hi_z, other_codes, others) = unsafe {
                (
                    _mm512_loadu_ps(min_ys.add(j)),
                    _mm512_loadu_ps(max_ys.add(j)),
                    _mm512_loadu_ps(min_zs.add(j)),
                    _mm512_loadu_ps(max_zs.add(j)),
                    _mm512_loadu_si512(codes.add(j).cast::<__m512i>()),
                    _mm512_loadu_si512(indices.add(j).cast::<__m512i>()),
                )
            };
            let y_ok = _mm512_cmp_ps_mask::<_CMP_LE_OQ>(lo_y, max_y)
                & _mm512_cmp_ps_mask::<_CMP_LE_OQ>(min_y, hi_y);
            let z_ok = _mm512_cmp_ps_mask::<_CMP_LE_OQ>(lo_z, max_z)
                & _mm512_cmp_ps_mask::<_CMP_LE_OQ>(min_z, hi_z);
            let code_ok = _mm512_testn_epi32_mask(other_codes, code);
            let hit = x_ok & y_ok & z_ok & code_ok;
            let compact = _mm512_maskz_compress_epi32(hit, others);
            let low = _mm512_min_epu32(index, compact);
            let high = _mm512_sub_epi32(_mm512_max_epu32(index, compact), shift);
            if capacity - len < WIDTH {
                // SAFETY: the first `len` pairs are initialised (see the stores below).
                unsafe { out.set_len(len) };
                grow(out);
                (pairs, capacity) = (out.as_mut_ptr(), out.capacity());
            }
            let count = hit.count_ones() as usize;
            // SAFETY: the output has room for 16 more pairs (just ensured); a `(u32, u32)` is
            // two u32 at offsets 0 and 4 (asserted in the AVX2 sweep), so the 64-byte stores
            // write pairs `len .. len + 8` and, when there are more than eight hits,
            // `len + 8 .. len + 16`, inside the allocation; the first `count` of them are
            // initialised pairs when the length grows.
            unsafe {
                let end = pairs.add(len).cast::<__m512i>();
                _mm512_storeu_si512(end, _mm512_permutex2var_epi32(low, first_pairs, high));
                if count > 8 {
                    _mm512_storeu_si512(
                        end.add(1),
                        _mm512_permutex2var_epi32(low, second_pairs, high),
                    );
                }
            }
            len += count;
            if x_ok != 0xffff {
                break;
            }
            j += WIDTH;
        }
    }
    // SAFETY: the first `len` pairs are initialised and within the capacity (see above).
    unsafe { out.set_len(len) };
}

/// Makes room for at least sixteen more pairs; out of the inner loop's way.
#[cold]
#[inline(never)]
fn grow(out: &mut Vec<(u32, u32)>) {
    out.reserve(out.len().max(1024));
}
