//! Step 4, portable: the sweep one candidate at a time, branchless interval tests, no bounds
//! checks in the inner loop (equal-length slices; the sentinels end every run).

use std::ops::Range;

use super::SweepArrays;

/// Appends `(low, high - shift)` for every reported pair whose first entry is in `range`.
/// O(range + candidates).
pub(super) fn sweep(
    arrays: &SweepArrays,
    range: Range<usize>,
    shift: u32,
    out: &mut Vec<(u32, u32)>,
) {
    let len = arrays.min_x.len();
    for i in range {
        let max_x = arrays.max_x[i];
        let (min_y, max_y) = (arrays.min_y[i], arrays.max_y[i]);
        let (min_z, max_z) = (arrays.min_z[i], arrays.max_z[i]);
        let (code, index) = (arrays.code[i], arrays.index[i]);
        let start = i + 1;
        let n = len - start;
        let min_xs = &arrays.min_x[start..][..n];
        let min_ys = &arrays.min_y[start..][..n];
        let max_ys = &arrays.max_y[start..][..n];
        let min_zs = &arrays.min_z[start..][..n];
        let max_zs = &arrays.max_z[start..][..n];
        let codes = &arrays.code[start..][..n];
        let indices = &arrays.index[start..][..n];
        for j in 0..n {
            // Sorted on min x within the run, and a +inf sentinel follows it.
            if min_xs[j] > max_x {
                break;
            }
            let hit = (min_ys[j] <= max_y)
                & (min_y <= max_ys[j])
                & (min_zs[j] <= max_z)
                & (min_z <= max_zs[j])
                & (codes[j] & code == 0);
            if hit {
                out.push(ordered(index, indices[j], shift));
            }
        }
    }
}

/// The pair with the smaller index first, the larger one minus `shift` (the bipartite offset).
#[inline(always)]
pub(super) fn ordered(a: u32, b: u32, shift: u32) -> (u32, u32) {
    (a.min(b), a.max(b) - shift)
}
