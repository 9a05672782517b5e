//! Step 4 on x86_64 with AVX2: eight candidates per step. Same tests, same order, same output
//! as [`super::sweep_scalar`] (ordered, non-signalling `<=` compares; inputs have no NaN).
//!
//! Pairs are written without branching on the hits: the eight candidate pairs of a step are
//! compacted with a lane permutation chosen by the hit mask, stored whole (64 bytes) into the
//! output's spare capacity, and the length advances by the number of hits. No call sits in
//! the inner loop (growing the output is a cold path), so the broadcast values stay in
//! registers.

use std::arch::x86_64::*;
use std::mem::offset_of;
use std::ops::Range;

use super::{SweepArrays, PADDING};

/// The loads below read eight entries past a swept position.
const _: () = assert!(PADDING >= 8);

/// Appends `(low, high - shift)` for every reported pair whose first entry is in `range`;
/// falls back to the scalar sweep when the CPU lacks AVX2. O(range + candidates / 8 + pairs).
pub(super) fn sweep(
    arrays: &SweepArrays,
    range: Range<usize>,
    shift: u32,
    out: &mut Vec<(u32, u32)>,
) {
    arrays.assert_sweepable(&range);
    if !(std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("popcnt"))
    {
        return super::sweep_scalar::sweep(arrays, range, shift, out);
    }
    // SAFETY: the CPU supports AVX2 and POPCNT (checked just above).
    unsafe { sweep_avx2(arrays, range, shift, out) }
}

/// The sweep proper. Memory safety of the unchecked loads: every array has `len` entries, and
/// a swept position `i` has `i + PADDING < len` (asserted by the caller). The first block reads
/// `i + 1 ..= i + 8`. A further block is read only when all eight lanes of the previous one
/// passed the x test, so they were real entries (sentinels have `min_x = +inf` and fail it), and
/// every real entry is followed by at least [`PADDING`] more entries of its run or its
/// sentinels, so the next block `j + 8 ..= j + 15` is in bounds too.
#[target_feature(enable = "avx2,popcnt")]
fn sweep_avx2(arrays: &SweepArrays, range: Range<usize>, shift: u32, out: &mut Vec<(u32, u32)>) {
    let min_xs = arrays.min_x.as_ptr();
    let min_ys = arrays.min_y.as_ptr();
    let max_ys = arrays.max_y.as_ptr();
    let min_zs = arrays.min_z.as_ptr();
    let max_zs = arrays.max_z.as_ptr();
    let codes = arrays.code.as_ptr();
    let indices = arrays.index.as_ptr();
    let zero = _mm256_setzero_si256();
    let shift = _mm256_set1_epi32(shift as i32);
    // The output's length and buffer in registers; written back at the end and before it
    // grows.
    let mut len = out.len();
    let mut pairs = out.as_mut_ptr();
    let max_xs = arrays.max_x.as_ptr();
    for i in range {
        // SAFETY: `i < swept <= len` for every array (asserted by the caller); unchecked, as
        // seven bounds checks per entry are a large share of a sparse sweep, where an entry
        // has few candidates.
        let (max_x, min_y, max_y, min_z, max_z, code, index) = unsafe {
            (
                _mm256_set1_ps(*max_xs.add(i)),
                _mm256_set1_ps(*min_ys.add(i)),
                _mm256_set1_ps(*max_ys.add(i)),
                _mm256_set1_ps(*min_zs.add(i)),
                _mm256_set1_ps(*max_zs.add(i)),
                _mm256_set1_epi32(*codes.add(i) as i32),
                _mm256_set1_epi32(*indices.add(i) as i32),
            )
        };
        // Opaque to the optimiser: otherwise it keeps a pointer per array advancing with
        // `i`, seven more than there are registers, spilled and updated in memory for every
        // entry.
        let mut j = std::hint::black_box(i + 1);
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
            let bits = _mm256_movemask_ps(hit) as usize;
            // SAFETY: `j + 8 <= len`, as for the loads above.
            let others = unsafe { _mm256_loadu_si256(indices.add(j).cast::<__m256i>()) };
            let compact = _mm256_permutevar8x32_epi32(others, COMPACT[bits]);
            let low = _mm256_min_epu32(index, compact);
            let high = _mm256_sub_epi32(_mm256_max_epu32(index, compact), shift);
            // Interleave to (low, high) pairs in lane order: [p0 p1 p2 p3] and [p4 p5 p6 p7].
            let even = _mm256_unpacklo_epi32(low, high);
            let odd = _mm256_unpackhi_epi32(low, high);
            let first = _mm256_permute2x128_si256::<0x20>(even, odd);
            let second = _mm256_permute2x128_si256::<0x31>(even, odd);
            if out.capacity() - len < 8 {
                // SAFETY: the first `len` pairs are initialised (see the stores below).
                unsafe { out.set_len(len) };
                grow(out);
                pairs = out.as_mut_ptr();
            }
            // SAFETY: the output has room for 8 more pairs (just ensured), a `(u32, u32)` is
            // two u32 at offsets 0 and 4 (asserted at compile time below), so the two
            // unaligned 32-byte stores write pairs `len .. len + 8` inside the allocation, and
            // the first `count` of them are initialised pairs when the length grows.
            unsafe {
                let end = pairs.add(len).cast::<__m256i>();
                _mm256_storeu_si256(end, first);
                _mm256_storeu_si256(end.add(1), second);
            }
            len += bits.count_ones() as usize;
            if x_bits != 0xff {
                break;
            }
            j += 8;
        }
    }
    // SAFETY: the first `len` pairs are initialised and within the capacity (see above).
    unsafe { out.set_len(len) };
}

const _: () = assert!(
    offset_of!((u32, u32), 0) == 0
        && offset_of!((u32, u32), 1) == 4
        && size_of::<(u32, u32)>() == 8
);

/// Makes room for at least eight more pairs; out of the inner loop's way.
#[cold]
#[inline(never)]
fn grow(out: &mut Vec<(u32, u32)>) {
    out.reserve(out.len().max(1024));
}

/// For each 8-bit hit mask, the lane permutation that moves the hit lanes, in order, to the
/// front.
static COMPACT: [__m256i; 256] = compact_table();

const fn compact_table() -> [__m256i; 256] {
    let mut table = [[0i32; 8]; 256];
    let mut mask = 0;
    while mask < 256 {
        let (mut lane, mut next) = (0, 0);
        while lane < 8 {
            if mask & (1 << lane) != 0 {
                table[mask][next] = lane;
                next += 1;
            }
            lane += 1;
        }
        mask += 1;
    }
    // SAFETY: `[i32; 8]` and `__m256i` have the same size (32 bytes) and every bit pattern is
    // a valid value of both.
    unsafe { std::mem::transmute::<[[i32; 8]; 256], [__m256i; 256]>(table) }
}
