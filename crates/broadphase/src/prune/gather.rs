//! Step 3: the gather of the sorted boxes into sweep-ordered arrays, bucketed into the grid's
//! cells when there is one ([`super::grid`]).
//!
//! A pair shares a run of cells; it is reported only in the cell holding the low corner of the
//! two boxes' y/z intersection. Each entry's code records whether its box starts in an earlier
//! cell on y (bit 0) and z (bit 1); the sweep skips a pair whose codes share a bit.

use super::grid::{unpack, Grid, MAX_COPIES_PER_BOX};
use super::sort::{locate, Sources};
use super::{Entry, EntryParts, PruneScratch, SweepArrays, PADDING};
use crate::Aabb;

/// Chooses the grid (when `bucketing` allows one and the scene is dense enough) and counts
/// each cell's entries into `scratch.cell_cursor`, coarsening while boxes are copied too
/// often. Each box's cell range is kept in `scratch.cell_ranges` (by index), so the scatter
/// reads 8 bytes instead of redoing four float-to-cell conversions.
fn choose_and_count<const N: usize>(
    scratch: &mut PruneScratch,
    sources: &Sources<'_, N>,
    n: usize,
    bucketing: bool,
) -> Option<Grid> {
    let mut grid = if bucketing {
        Grid::choose(sources, n)
    } else {
        None
    };
    while let Some(g) = grid {
        let counts = &mut scratch.cell_cursor;
        counts.clear();
        counts.resize(g.cell_count(), 0);
        let ranges = &mut scratch.cell_ranges;
        ranges.clear();
        let mut copies = 0usize;
        for &(boxes, _) in sources {
            for aabb in boxes {
                let range = g.cell_range(aabb);
                ranges.push(range);
                let (y0, y1, z0, z1) = unpack(range);
                let (dy, dz) = (y1 - y0, z1 - z0);
                if dy <= 1 && dz <= 1 {
                    // Nearly every box spans one or two cells per axis (cells are wider
                    // than the mean box). Four increments, some by zero, rather than
                    // branches on the shape that mispredict about half the time.
                    let cell = y0 * g.cells_z as usize + z0;
                    let next_row = cell + dy * g.cells_z as usize;
                    counts[cell] += 1;
                    counts[cell + dz] += dz;
                    counts[next_row] += dy;
                    counts[next_row + dz] += dy & dz;
                    copies += (1 + dy) * (1 + dz);
                    continue;
                }
                for y in y0..=y1 {
                    let row = y * g.cells_z as usize;
                    for count in &mut counts[row + z0..=row + z1] {
                        *count += 1;
                    }
                }
                copies += (y1 - y0 + 1) * (z1 - z0 + 1);
            }
        }
        if copies <= MAX_COPIES_PER_BOX * n {
            return Some(g);
        }
        grid = g.coarser();
    }
    None
}

/// Turns per-cell counts into write cursors, each cell's run followed by [`PADDING`]
/// sentinels, and returns the total length.
fn cursors_from_counts(cursors: &mut [usize]) -> usize {
    let mut position = 0usize;
    for cursor in cursors.iter_mut() {
        let count = *cursor;
        *cursor = position;
        position += count + PADDING;
    }
    position
}

/// Writes the sorted boxes (from `scratch.keys`) into `scratch.arrays`, bucketed into a grid
/// when `bucketing` is allowed and the scene is dense enough. O(n + copies).
pub(super) fn gather<const N: usize>(
    scratch: &mut PruneScratch,
    sources: Sources<'_, N>,
    bucketing: bool,
) {
    let n = scratch.keys.len();
    let grid = choose_and_count(scratch, &sources, n, bucketing);
    let arrays = &mut scratch.arrays;
    let Some(grid) = grid else {
        gather_single_cell(arrays, &scratch.keys, &sources);
        return;
    };
    let len = cursors_from_counts(&mut scratch.cell_cursor);
    let cells_z = grid.cells_z as usize;
    // Entries are scattered to their cells as whole records (two per cache line, one
    // open line per cell), then transposed to the arrays in one sequential pass:
    // scattering into eight arrays would keep eight open lines per cell, far more than
    // the caches hold when there are thousands of cells.
    let staging = &mut scratch.staging;
    // Every position is written (entries, then sentinels): no clearing pass.
    staging.resize(len, Entry::SENTINEL);
    scatter(
        staging,
        &scratch.keys,
        &sources,
        &scratch.cell_ranges,
        &mut scratch.cell_cursor,
        cells_z,
    );
    // Each cursor now stands at the end of its cell's entries: the sentinels go there.
    for &end in &scratch.cell_cursor {
        staging[end..end + PADDING].fill(Entry::SENTINEL);
    }
    arrays.transpose_from(staging);
    arrays.swept = len - PADDING;
    arrays.cells = grid.cell_count();
}

/// Writes box `index` into each cell of its range `(y0, y1, z0, z1)` at the cell's cursor
/// (advanced), with the code bits of the dedup rule.
#[inline(always)]
fn place(
    staging: &mut [Entry],
    cursors: &mut [usize],
    aabb: &Aabb,
    tag: u32,
    index: u32,
    (y0, y1, z0, z1): (usize, usize, usize, usize),
    cells_z: usize,
) {
    let (dy, dz) = (y1 - y0, z1 - z0);
    if dy <= 1 && dz <= 1 {
        // One to four cells, written without branching on which (the shape mispredicts
        // about half the time). All four copies are written, last cell first; a copy that
        // is not wanted has the same cell as a later one and does not advance its cursor,
        // so the later copy overwrites it.
        let parts = EntryParts::new(aabb, index);
        let cell = y0 * cells_z + z0;
        let next_row = cell + dy * cells_z;
        for (cell, code, advance) in [
            (next_row + dz, 3, dy & dz),
            (next_row, 1, dy),
            (cell + dz, 2, dz),
            (cell, 0, 1),
        ] {
            let cursor = &mut cursors[cell];
            staging[*cursor] = parts.with_code(tag | code);
            *cursor += advance;
        }
        return;
    }
    for y in y0..=y1 {
        let row = y * cells_z;
        let y_code = tag | (y != y0) as u32;
        for z in z0..=z1 {
            let cursor = &mut cursors[row + z];
            staging[*cursor] = Entry::new(aabb, y_code | ((z != z0) as u32) << 1, index);
            *cursor += 1;
        }
    }
}

/// Writes every sorted box into each cell of its range at the cell's cursor (advanced), with
/// the code bits of the dedup rule. Boxes are visited in sweep order, so each cell's run is
/// sorted on min x.
fn scatter<const N: usize>(
    staging: &mut [Entry],
    keys: &[u64],
    sources: &Sources<'_, N>,
    ranges: &[u64],
    cursors: &mut [usize],
    cells_z: usize,
) {
    for (k, &key) in keys.iter().enumerate() {
        // Boxes are read in sorted order, which is random in memory: ask for later ones early.
        // (Their cell ranges too: another array read at random.)
        if let Some(&ahead) = keys.get(k + PREFETCH_DISTANCE) {
            prefetch(locate(sources, ahead as u32).0);
            prefetch(&ranges[ahead as u32 as usize]);
        }
        let index = key as u32;
        let (aabb, tag) = locate(sources, index);
        place(
            staging,
            cursors,
            aabb,
            tag,
            index,
            unpack(ranges[index as usize]),
            cells_z,
        );
    }
}

/// How many sorted boxes ahead the gather prefetches.
const PREFETCH_DISTANCE: usize = 16;

/// A hint that `value` will be read soon; does nothing on other architectures.
#[inline(always)]
fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch never faults and writes nothing; the address is a valid reference.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// No grid: the sorted boxes, then the sentinels.
fn gather_single_cell<const N: usize>(
    arrays: &mut SweepArrays,
    keys: &[u64],
    sources: &Sources<'_, N>,
) {
    let n = keys.len();
    arrays.set_len(n + PADDING);
    for position in n..n + PADDING {
        arrays.write_sentinel(position);
    }
    arrays.swept = n;
    arrays.cells = 1;
    for (position, &key) in keys.iter().enumerate() {
        if let Some(&ahead) = keys.get(position + PREFETCH_DISTANCE) {
            prefetch(locate(sources, ahead as u32).0);
        }
        let index = key as u32;
        let (aabb, tag) = locate(sources, index);
        arrays.write(position, aabb, tag, index);
    }
}
