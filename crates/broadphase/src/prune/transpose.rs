//! Step 3's last pass: grid entries from records (one [`Entry`] per box copy, as the scatter
//! writes them) to the sweep's structure-of-arrays, eight at a time with AVX2 when the CPU
//! has it (an 8 x 8 transpose in registers: eight loads, 24 shuffles and eight stores for
//! eight entries, where the scalar copy does 64 stores).

use super::{ArraysView, Entry};

/// Copies `entries` to positions `offset..offset + entries.len()` of `arrays` (each array
/// at least that long). O(entries).
pub(super) fn transpose(entries: &[Entry], arrays: &mut ArraysView<'_>, offset: usize) {
    assert!(arrays.len() >= offset + entries.len());
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above), and the arrays hold the
        // positions written (asserted above).
        let done = unsafe { transpose_avx2(entries, arrays, offset) };
        return transpose_scalar(&entries[done..], arrays, offset + done);
    }
    transpose_scalar(entries, arrays, offset);
}

/// Copies `entries` to positions `offset..` one at a time.
fn transpose_scalar(entries: &[Entry], arrays: &mut ArraysView<'_>, offset: usize) {
    for (position, entry) in entries.iter().enumerate() {
        arrays.write(offset + position, entry);
    }
}

/// Copies the entries in whole blocks of eight to positions `offset..`; returns how many it
/// copied.
///
/// # Safety
/// Every array of `arrays` must hold at least `offset + entries.len()` values.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn transpose_avx2(entries: &[Entry], arrays: &mut ArraysView<'_>, offset: usize) -> usize {
    use std::arch::x86_64::*;
    let blocks = entries.len() / 8;
    let columns: [*mut f32; 8] = [
        arrays.min_x.as_mut_ptr(),
        arrays.max_x.as_mut_ptr(),
        arrays.min_y.as_mut_ptr(),
        arrays.max_y.as_mut_ptr(),
        arrays.min_z.as_mut_ptr(),
        arrays.max_z.as_mut_ptr(),
        arrays.code.as_mut_ptr().cast::<f32>(),
        arrays.index.as_mut_ptr().cast::<f32>(),
    ];
    for block in 0..blocks {
        let rows = &entries[8 * block..8 * block + 8];
        // SAFETY: an `Entry` is 32 bytes of eight 4-byte fields in column order (repr(C),
        // asserted in the parent module), so each row loads as one vector from a valid
        // reference.
        let row = |k: usize| unsafe { _mm256_loadu_ps((&rows[k] as *const Entry).cast::<f32>()) };
        let (r0, r1, r2, r3, r4, r5, r6, r7) = (
            row(0),
            row(1),
            row(2),
            row(3),
            row(4),
            row(5),
            row(6),
            row(7),
        );
        // Pairs of rows interleaved, then quadruples, then the 128-bit halves swapped: the
        // standard 8 x 8 transpose.
        let t0 = _mm256_unpacklo_ps(r0, r1);
        let t1 = _mm256_unpackhi_ps(r0, r1);
        let t2 = _mm256_unpacklo_ps(r2, r3);
        let t3 = _mm256_unpackhi_ps(r2, r3);
        let t4 = _mm256_unpacklo_ps(r4, r5);
        let t5 = _mm256_unpackhi_ps(r4, r5);
        let t6 = _mm256_unpacklo_ps(r6, r7);
        let t7 = _mm256_unpackhi_ps(r6, r7);
        let u0 = _mm256_shuffle_ps::<0x44>(t0, t2);
        let u1 = _mm256_shuffle_ps::<0xee>(t0, t2);
        let u2 = _mm256_shuffle_ps::<0x44>(t1, t3);
        let u3 = _mm256_shuffle_ps::<0xee>(t1, t3);
        let u4 = _mm256_shuffle_ps::<0x44>(t4, t6);
        let u5 = _mm256_shuffle_ps::<0xee>(t4, t6);
        let u6 = _mm256_shuffle_ps::<0x44>(t5, t7);
        let u7 = _mm256_shuffle_ps::<0xee>(t5, t7);
        let columns_of_block = [
            _mm256_permute2f128_ps::<0x20>(u0, u4),
            _mm256_permute2f128_ps::<0x20>(u1, u5),
            _mm256_permute2f128_ps::<0x20>(u2, u6),
            _mm256_permute2f128_ps::<0x20>(u3, u7),
            _mm256_permute2f128_ps::<0x31>(u0, u4),
            _mm256_permute2f128_ps::<0x31>(u1, u5),
            _mm256_permute2f128_ps::<0x31>(u2, u6),
            _mm256_permute2f128_ps::<0x31>(u3, u7),
        ];
        for (column, values) in columns.iter().zip(columns_of_block) {
            // SAFETY: every array holds at least `offset + entries.len() >= offset + 8 *
            // block + 8` values (the function's contract), and code and index are u32
            // arrays, for which every bit pattern of an f32 is valid.
            unsafe { _mm256_storeu_ps(column.add(offset + 8 * block), values) };
        }
    }
    8 * blocks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prune::SweepArrays;

    /// The vector transpose writes what the one-at-a-time copy writes, for lengths around
    /// the block of eight and at an offset, and leaves the positions around untouched.
    #[test]
    fn transpose_matches_the_scalar_copy() {
        let mut state = 3u32;
        let mut next = move || {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            state
        };
        for len in [0usize, 1, 7, 8, 9, 15, 16, 17, 40] {
            let entries: Vec<Entry> = (0..len)
                .map(|_| Entry {
                    min_x: next() as f32,
                    max_x: next() as f32,
                    min_y: next() as f32,
                    max_y: next() as f32,
                    min_z: next() as f32,
                    max_z: next() as f32,
                    code: next(),
                    index: next(),
                })
                .collect();
            let offset = 3;
            let (mut vector, mut scalar) = (SweepArrays::default(), SweepArrays::default());
            for arrays in [&mut vector, &mut scalar] {
                arrays.set_len(offset + len + 5);
            }
            transpose(&entries, &mut ArraysView::of(&mut vector), offset);
            transpose_scalar(&entries, &mut ArraysView::of(&mut scalar), offset);
            assert_eq!(vector.min_x, scalar.min_x, "{len}");
            assert_eq!(vector.max_x, scalar.max_x, "{len}");
            assert_eq!(vector.min_y, scalar.min_y, "{len}");
            assert_eq!(vector.max_y, scalar.max_y, "{len}");
            assert_eq!(vector.min_z, scalar.min_z, "{len}");
            assert_eq!(vector.max_z, scalar.max_z, "{len}");
            assert_eq!(vector.code, scalar.code, "{len}");
            assert_eq!(vector.index, scalar.index, "{len}");
            assert_eq!(
                scalar.index[offset..offset + len],
                entries.iter().map(|e| e.index).collect::<Vec<_>>()[..]
            );
        }
    }
}
