//! Step 2-3: the optional coarse y/z grid, and the gather into sweep-ordered arrays.
//!
//! A single sort axis leaves many false candidates in dense scenes: every pair that overlaps
//! on x is tested, most of them apart on y or z. Bucketing the
//! boxes into a grid over y and z (each box into every cell it touches) and sweeping each cell
//! on its own cuts the candidates roughly in proportion to the number of cells. A pair shares a run of cells;
//! it is reported only in the cell holding the low corner of the two boxes' y/z intersection,
//! `(max(cell(min_y a), cell(min_y b)), max(cell(min_z a), cell(min_z b)))`: there, at least
//! one of the two boxes starts on each axis. Each entry's code records whether its box starts
//! in an earlier cell on y (bit 0) and z (bit 1); a pair whose codes share a bit is skipped.
//! This only needs the cell function to be monotone, which holds for every finite input.

use super::sort::{locate, Sources};
use super::{Entry, PruneScratch, SweepArrays, PADDING};
use crate::Aabb;

/// Fewer boxes than this are swept without a grid: the sort dominates anyway.
const MIN_BOXES_FOR_GRID: usize = 256;
/// Target cell side, in mean box extents. Candidates per box fall as cells shrink towards one
/// extent, but every box is copied into more cells and the scatter into thousands of cells is
/// what costs most at a million boxes; 2 to 6 measured within noise of each other on `cube`,
/// 3 to 6 best on `sparse` (see the closing note).
const CELL_EXTENTS: f64 = 3.0;
/// At most `n / MIN_BOXES_PER_CELL` cells, so that cells stay worth a sweep.
const MIN_BOXES_PER_CELL: f64 = 16.0;
/// Coarsen the grid when boxes would be stored more than this many times on average.
const MAX_COPIES_PER_BOX: usize = 3;

/// A uniform grid over y and z.
#[derive(Debug, Clone, Copy)]
struct Grid {
    low_y: f32,
    low_z: f32,
    inv_cell_y: f32,
    inv_cell_z: f32,
    cells_y: u32,
    cells_z: u32,
}

impl Grid {
    /// Monotone in `y` for every finite `y >= low_y`, which is all the dedup rule needs.
    #[inline]
    fn cell_y(&self, y: f32) -> u32 {
        // `as` saturates: an overflowed `+inf` product lands in the last cell.
        (((y - self.low_y) * self.inv_cell_y) as u32).min(self.cells_y - 1)
    }

    #[inline]
    fn cell_z(&self, z: f32) -> u32 {
        (((z - self.low_z) * self.inv_cell_z) as u32).min(self.cells_z - 1)
    }

    /// The inclusive cell ranges `(y0, y1, z0, z1)` a box touches.
    #[inline]
    fn cells_of(&self, aabb: &Aabb) -> (u32, u32, u32, u32) {
        let (min, max) = (aabb.min(), aabb.max());
        (
            self.cell_y(min.y),
            self.cell_y(max.y),
            self.cell_z(min.z),
            self.cell_z(max.z),
        )
    }

    fn cell_count(&self) -> usize {
        self.cells_y as usize * self.cells_z as usize
    }

    /// Chooses cells about [`CELL_EXTENTS`] mean box extents wide, or `None` when a grid would
    /// have fewer than four cells.
    fn choose<const N: usize>(sources: &Sources<'_, N>, n: usize) -> Option<Grid> {
        if n < MIN_BOXES_FOR_GRID {
            return None;
        }
        let (mut low_y, mut high_y, mut low_z, mut high_z) =
            (f32::MAX, f32::MIN, f32::MAX, f32::MIN);
        let (mut extent_y, mut extent_z) = (0f64, 0f64);
        for &(boxes, _) in sources {
            for aabb in boxes {
                let (min, max) = (aabb.min(), aabb.max());
                low_y = low_y.min(min.y);
                high_y = high_y.max(max.y);
                low_z = low_z.min(min.z);
                high_z = high_z.max(max.z);
                extent_y += max.y as f64 - min.y as f64;
                extent_z += max.z as f64 - min.z as f64;
            }
        }
        let max_cells_per_axis = (n as f64 / MIN_BOXES_PER_CELL).sqrt().min(4096.0);
        let cells = |low: f32, high: f32, extent_sum: f64| -> u32 {
            let range = high as f64 - low as f64;
            let cells = (range * n as f64 / (CELL_EXTENTS * extent_sum)).min(max_cells_per_axis);
            // NaN (0/0 for a flat, zero-size scene) or < 1: one cell.
            if cells >= 1.0 {
                cells as u32
            } else {
                1
            }
        };
        let cells_y = cells(low_y, high_y, extent_y);
        let cells_z = cells(low_z, high_z, extent_z);
        if cells_y * cells_z < 4 {
            return None;
        }
        let inverse = |low: f32, high: f32, cells: u32| -> f32 {
            let range = (high as f64 - low as f64).max(f64::MIN_POSITIVE);
            // Positive and finite (clamped for sub-normal ranges); cell_y stays monotone even
            // when `(y - low) * inverse` overflows to +inf.
            (cells as f64 / range).min(f32::MAX as f64) as f32
        };
        Some(Grid {
            low_y,
            low_z,
            inv_cell_y: inverse(low_y, high_y, cells_y),
            inv_cell_z: inverse(low_z, high_z, cells_z),
            cells_y,
            cells_z,
        })
    }

    /// Halves the resolution (for scenes whose boxes would be copied too often).
    fn coarser(self) -> Option<Grid> {
        let cells_y = (self.cells_y / 2).max(1);
        let cells_z = (self.cells_z / 2).max(1);
        if cells_y * cells_z < 4 {
            return None;
        }
        Some(Grid {
            inv_cell_y: self.inv_cell_y * (cells_y as f32 / self.cells_y as f32),
            inv_cell_z: self.inv_cell_z * (cells_z as f32 / self.cells_z as f32),
            cells_y,
            cells_z,
            ..self
        })
    }
}

/// Writes the sorted boxes (from `scratch.keys`) into `scratch.arrays`, bucketed into a grid
/// when `bucketing` is allowed and the scene is dense enough. O(n + copies).
pub(super) fn gather<const N: usize>(
    scratch: &mut PruneScratch,
    sources: Sources<'_, N>,
    bucketing: bool,
) {
    let n = scratch.keys.len();
    let mut grid = if bucketing {
        Grid::choose(&sources, n)
    } else {
        None
    };
    // Count the entries of each cell; coarsen while boxes are copied too often.
    while let Some(g) = grid {
        let counts = &mut scratch.cell_cursor;
        counts.clear();
        counts.resize(g.cell_count(), 0);
        let mut copies = 0usize;
        for &(boxes, _) in &sources {
            for aabb in boxes {
                let (y0, y1, z0, z1) = g.cells_of(aabb);
                for y in y0..=y1 {
                    let row = (y * g.cells_z) as usize;
                    for count in &mut counts[row + z0 as usize..=row + z1 as usize] {
                        *count += 1;
                    }
                }
                copies += ((y1 - y0 + 1) * (z1 - z0 + 1)) as usize;
            }
        }
        if copies <= MAX_COPIES_PER_BOX * n {
            break;
        }
        grid = g.coarser();
    }
    let arrays = &mut scratch.arrays;
    let Some(grid) = grid else {
        gather_single_cell(arrays, &scratch.keys, &sources);
        return;
    };
    // Counts become write cursors; each cell's run is followed by PADDING sentinels.
    let mut position = 0usize;
    for cursor in scratch.cell_cursor.iter_mut() {
        let count = *cursor;
        *cursor = position;
        position += count + PADDING;
    }
    let len = position;
    // Entries are scattered to their cells as whole records (two per cache line, one open
    // line per cell), then transposed to the arrays in one sequential pass: scattering into
    // eight arrays directly would keep eight open lines per cell, far more than the caches
    // hold when there are thousands of cells.
    let staging = &mut scratch.staging;
    // Every position is written below (entries, then sentinels): no clearing pass.
    staging.resize(len, Entry::SENTINEL);
    staging.truncate(len);
    let keys = &scratch.keys;
    for (k, &key) in keys.iter().enumerate() {
        // Boxes are read in sorted order, which is random in memory: ask for later ones early.
        if let Some(&ahead) = keys.get(k + PREFETCH_DISTANCE) {
            prefetch(locate(&sources, ahead as u32).0);
        }
        let index = key as u32;
        let (aabb, tag) = locate(&sources, index);
        let (y0, y1, z0, z1) = grid.cells_of(aabb);
        for y in y0..=y1 {
            let row = (y * grid.cells_z) as usize;
            let y_code = tag | (y != y0) as u32;
            for z in z0..=z1 {
                let cursor = &mut scratch.cell_cursor[row + z as usize];
                staging[*cursor] = Entry::new(aabb, y_code | ((z != z0) as u32) << 1, index);
                *cursor += 1;
            }
        }
    }
    // Each cursor now stands at the end of its cell's entries: the sentinels go there.
    for &end in &scratch.cell_cursor {
        staging[end..end + PADDING].fill(Entry::SENTINEL);
    }
    arrays.transpose_from(staging);
    arrays.swept = len - PADDING;
    arrays.cells = grid.cell_count();
}

/// How many sorted boxes ahead the gather prefetches.
const PREFETCH_DISTANCE: usize = 16;

/// A hint that `aabb` will be read soon; does nothing on other architectures.
#[inline(always)]
fn prefetch(aabb: &Aabb) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch never faults and writes nothing; the address is a valid reference.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((aabb as *const Aabb).cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = aabb;
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
