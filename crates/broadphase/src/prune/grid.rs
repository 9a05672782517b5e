//! Step 2: the optional coarse y/z grid: its choice from the boxes' bounds and extents, and
//! the cells a box touches. [`super::gather`] writes the boxes into it.
//!
//! A single sort axis leaves many false candidates in dense scenes: every pair that overlaps
//! on x is tested, most of them apart on y or z. Bucketing the boxes into a grid over y and z
//! (each box into every cell it touches) and sweeping each cell on its own cuts the candidates
//! roughly in proportion to the number of cells. A pair shares a run of cells; it is reported
//! only in the cell holding the low corner of the two boxes' y/z intersection,
//! `(max(cell(min_y a), cell(min_y b)), max(cell(min_z a), cell(min_z b)))`: there, at least
//! one of the two boxes starts on each axis. Each entry's code records whether its box starts
//! in an earlier cell on y (bit 0) and z (bit 1); a pair whose codes share a bit is skipped.
//! This only needs the cell function to be monotone, which holds for every finite input.

use super::sort::Sources;
use crate::Aabb;

/// Fewer boxes than this are swept without a grid: the sort dominates anyway.
const MIN_BOXES_FOR_GRID: usize = 256;
/// Target cell side, in mean box extents. Candidates per box fall as cells shrink towards one
/// extent, but every box is copied into more cells, and with a million boxes the scatter into
/// thousands of cells is what costs most: three is in the flat part of the curve on both the
/// dense and the sparse benchmark scenes (docs/performance-notes.md, "Prune grid cells").
const CELL_EXTENTS: f64 = 3.0;
/// Cell side, in mean box extents, in large sparse scenes (below [`SPARSE_DENSITY`], at
/// least [`SPARSE_MIN_BOXES`]): there each copy of a box costs memory traffic, and wider
/// cells add few candidates, so fewer copies win (docs/performance-notes.md, "Prune grid
/// cells").
const SPARSE_CELL_EXTENTS: f64 = 5.0;
/// Boxes overlapping a mean box's volume below which a scene counts as sparse.
const SPARSE_DENSITY: f64 = 1.0;
/// Boxes from which sparse scenes get wider cells.
const SPARSE_MIN_BOXES: usize = 20_000;
/// At most `n / MIN_BOXES_PER_CELL` cells, so that cells stay worth a sweep: each cell adds
/// [`PADDING`](super::PADDING) sentinels to gather and sweep. Binds in small sparse scenes,
/// where more cells would cost more in sentinels than they save in candidates.
const MIN_BOXES_PER_CELL: f64 = 64.0;
/// Coarsen the grid when boxes would be stored more than this many times on average.
pub(super) const MAX_COPIES_PER_BOX: usize = 3;

/// A uniform grid over y and z.
#[derive(Debug, Clone, Copy)]
pub(super) struct Grid {
    low_y: f32,
    low_z: f32,
    inv_cell_y: f32,
    inv_cell_z: f32,
    pub(super) cells_y: u32,
    pub(super) cells_z: u32,
}

/// Boxes per chunk of the input (64 in tests and fuzzing, so that small inputs have many).
/// The grid is chosen from per-chunk sums merged in chunk order, so the (rounded) result is
/// the same whether chunks run on one thread or many.
pub(super) const CHUNK: usize = if cfg!(any(test, fuzzing)) {
    64
} else {
    1 << 16
};

/// The number of [`CHUNK`]-sized chunks of `sources` (each source chunked on its own).
pub(super) fn chunk_count<const N: usize>(sources: &Sources<'_, N>) -> usize {
    sources
        .iter()
        .map(|(boxes, _)| boxes.len().div_ceil(CHUNK))
        .sum()
}

/// Chunk `chunk` of `sources`: its boxes, its source's tag and the global index of its first
/// box.
pub(super) fn chunk_of<'a, const N: usize>(
    sources: &Sources<'a, N>,
    chunk: usize,
) -> (&'a [Aabb], u32, u32) {
    let (mut chunk, mut base) = (chunk, 0usize);
    for &(boxes, tag) in sources {
        let chunks = boxes.len().div_ceil(CHUNK);
        if chunk < chunks {
            let start = chunk * CHUNK;
            let end = (start + CHUNK).min(boxes.len());
            return (&boxes[start..end], tag, (base + start) as u32);
        }
        chunk -= chunks;
        base += boxes.len();
    }
    unreachable!("chunk index below chunk_count")
}

/// The y/z bounds and summed y/z extents of some boxes, what the grid is chosen from.
#[derive(Debug, Clone, Copy)]
pub(super) struct Bounds {
    low_x: f32,
    high_x: f32,
    extent_x: f64,
    low_y: f32,
    high_y: f32,
    low_z: f32,
    high_z: f32,
    extent_y: f64,
    extent_z: f64,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds::EMPTY
    }
}

impl Bounds {
    const EMPTY: Bounds = Bounds {
        low_x: f32::MAX,
        high_x: f32::MIN,
        extent_x: 0.0,
        low_y: f32::MAX,
        high_y: f32::MIN,
        low_z: f32::MAX,
        high_z: f32::MIN,
        extent_y: 0.0,
        extent_z: 0.0,
    };

    pub(super) fn of(boxes: &[Aabb]) -> Bounds {
        // Two accumulators, even and odd boxes: each sum and extreme is a chain of
        // dependent additions or compares, and two chains run at twice the rate of one.
        let (mut even, mut odd) = (Bounds::EMPTY, Bounds::EMPTY);
        let pairs = boxes.chunks_exact(2);
        let rest = pairs.remainder();
        for pair in pairs {
            even.add(&pair[0]);
            odd.add(&pair[1]);
        }
        for aabb in rest {
            even.add(aabb);
        }
        even.merge(odd)
    }

    #[inline(always)]
    fn add(&mut self, aabb: &Aabb) {
        // Boxes hold no NaN, so a plain compare does: `f32::min` and `max` pay for NaN
        // handling with three instructions each rather than one, in a pass over every box.
        let lower = |a: f32, b: f32| if b < a { b } else { a };
        let higher = |a: f32, b: f32| if b > a { b } else { a };
        let (min, max) = (aabb.min(), aabb.max());
        self.low_x = lower(self.low_x, min.x);
        self.high_x = higher(self.high_x, max.x);
        self.extent_x += max.x as f64 - min.x as f64;
        self.low_y = lower(self.low_y, min.y);
        self.high_y = higher(self.high_y, max.y);
        self.low_z = lower(self.low_z, min.z);
        self.high_z = higher(self.high_z, max.z);
        self.extent_y += max.y as f64 - min.y as f64;
        self.extent_z += max.z as f64 - min.z as f64;
    }

    pub(super) fn merge(self, other: Bounds) -> Bounds {
        Bounds {
            low_x: self.low_x.min(other.low_x),
            high_x: self.high_x.max(other.high_x),
            extent_x: self.extent_x + other.extent_x,
            low_y: self.low_y.min(other.low_y),
            high_y: self.high_y.max(other.high_y),
            low_z: self.low_z.min(other.low_z),
            high_z: self.high_z.max(other.high_z),
            extent_y: self.extent_y + other.extent_y,
            extent_z: self.extent_z + other.extent_z,
        }
    }
}

impl Grid {
    /// The inclusive cell ranges a box touches, packed as `y0 | y1 << 16 | z0 << 32 | z1 << 48`
    /// (at most 4096 cells per axis). Each bound is `trunc(min((v - low) * inverse, cells - 1))`:
    /// monotone in `v` for every finite `v >= low` (an overflowed `+inf` product lands in the
    /// last cell), which is all the dedup rule needs.
    #[inline]
    pub(super) fn cell_range(&self, aabb: &Aabb) -> u64 {
        let (min, max) = (aabb.min(), aabb.max());
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::*;
            // SAFETY: these SSE2 intrinsics only compute on registers (no memory access), and
            // SSE2 is part of the x86_64 baseline, so every x86_64 CPU has them.
            unsafe {
                let values = _mm_setr_ps(min.y, max.y, min.z, max.z);
                let low = _mm_setr_ps(self.low_y, self.low_y, self.low_z, self.low_z);
                let inverse = _mm_setr_ps(
                    self.inv_cell_y,
                    self.inv_cell_y,
                    self.inv_cell_z,
                    self.inv_cell_z,
                );
                let (last_y, last_z) = ((self.cells_y - 1) as f32, (self.cells_z - 1) as f32);
                let last = _mm_setr_ps(last_y, last_y, last_z, last_z);
                // `_mm_min_ps` returns its second operand when the first is NaN; no input is.
                let cells = _mm_cvttps_epi32(_mm_min_ps(
                    _mm_mul_ps(_mm_sub_ps(values, low), inverse),
                    last,
                ));
                // Values are in 0..4096: the signed 16-bit pack keeps them.
                _mm_cvtsi128_si64(_mm_packs_epi32(cells, cells)) as u64
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self.cell_range_scalar(min.y, max.y, min.z, max.z)
        }
    }

    /// [`Grid::cell_range`] one bound at a time (the reference the vector path is tested
    /// against, and the path on other architectures).
    #[cfg_attr(target_arch = "x86_64", allow(dead_code))]
    fn cell_range_scalar(&self, min_y: f32, max_y: f32, min_z: f32, max_z: f32) -> u64 {
        let cell = |v: f32, low: f32, inverse: f32, cells: u32| -> u64 {
            ((v - low) * inverse).min((cells - 1) as f32) as u64
        };
        cell(min_y, self.low_y, self.inv_cell_y, self.cells_y)
            | cell(max_y, self.low_y, self.inv_cell_y, self.cells_y) << 16
            | cell(min_z, self.low_z, self.inv_cell_z, self.cells_z) << 32
            | cell(max_z, self.low_z, self.inv_cell_z, self.cells_z) << 48
    }

    pub(super) fn cell_count(&self) -> usize {
        self.cells_y as usize * self.cells_z as usize
    }

    /// Chooses cells about [`CELL_EXTENTS`] mean box extents wide, or `None` when a grid would
    /// have fewer than four cells.
    pub(super) fn choose<const N: usize>(sources: &Sources<'_, N>, n: usize) -> Option<Grid> {
        if n < MIN_BOXES_FOR_GRID {
            return None;
        }
        let bounds = (0..chunk_count(sources))
            .map(|chunk| Bounds::of(chunk_of(sources, chunk).0))
            .fold(Bounds::EMPTY, Bounds::merge);
        Grid::from_bounds(&bounds, n)
    }

    /// [`Grid::choose`] from the [`Bounds`] of the boxes' chunks, merged in chunk order.
    pub(super) fn from_bounds(bounds: &Bounds, n: usize) -> Option<Grid> {
        if n < MIN_BOXES_FOR_GRID {
            return None;
        }
        let Bounds {
            low_x,
            high_x,
            extent_x,
            low_y,
            high_y,
            low_z,
            high_z,
            extent_y,
            extent_z,
        } = *bounds;
        // About how many boxes overlap a mean box's volume (pairs per box, roughly).
        let fraction = |low: f32, high: f32, extent_sum: f64| {
            extent_sum / n as f64 / (high as f64 - low as f64)
        };
        let density = n as f64
            * fraction(low_x, high_x, extent_x)
            * fraction(low_y, high_y, extent_y)
            * fraction(low_z, high_z, extent_z);
        let cell_extents = if density < SPARSE_DENSITY && n >= SPARSE_MIN_BOXES {
            SPARSE_CELL_EXTENTS
        } else {
            CELL_EXTENTS
        };
        let max_cells_per_axis = (n as f64 / MIN_BOXES_PER_CELL).sqrt().min(4096.0);
        let cells = |low: f32, high: f32, extent_sum: f64| -> u32 {
            let range = high as f64 - low as f64;
            let cells = (range * n as f64 / (cell_extents * extent_sum)).min(max_cells_per_axis);
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
    pub(super) fn coarser(self) -> Option<Grid> {
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

/// The `(y0, y1, z0, z1)` of a packed [`Grid::cell_range`].
#[inline]
pub(super) fn unpack(range: u64) -> (usize, usize, usize, usize) {
    (
        (range & 0xffff) as usize,
        (range >> 16 & 0xffff) as usize,
        (range >> 32 & 0xffff) as usize,
        (range >> 48) as usize,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vector cell range equals the scalar reference on every kind of value, and bounds
    /// stay in the grid and ordered (`y0 <= y1`, `z0 <= z1`).
    #[test]
    fn vector_cell_range_matches_the_scalar_reference() {
        let values = [
            -f32::MAX,
            -1e30,
            -4096.5,
            -1.0,
            -1e-40,
            0.0,
            1e-40,
            0.5,
            1.0,
            127.0,
            4096.0,
            1e30,
            f32::MAX,
        ];
        let mut boxes = Vec::new();
        for &low in &values {
            for &high in &values {
                if low <= high {
                    boxes.push(Aabb::from_arrays([0.0, low, low], [1.0, high, high]).unwrap());
                    boxes.push(Aabb::from_arrays([0.0, low, 0.0], [1.0, high, 0.5]).unwrap());
                }
            }
        }
        // Fine grids over the whole float range and over a narrow one.
        let n = boxes.len();
        let wide = [(&boxes[..], 0u32)];
        let narrow: Vec<Aabb> = (0..4096)
            .map(|i| {
                let v = i as f32 * 0.25;
                Aabb::from_arrays([0.0, v, v], [1.0, v + 0.1, v + 0.3]).unwrap()
            })
            .collect();
        let narrow_sources = [(&narrow[..], 0u32)];
        // (A grid only ever sees the boxes it was chosen for: they lie within its bounds.)
        let cases = [
            (Grid::choose(&wide, n.max(MIN_BOXES_FOR_GRID) * 64), &boxes),
            (Grid::choose(&narrow_sources, narrow.len()), &narrow),
        ];
        for (grid, boxes) in cases {
            let grid = grid.expect("both scenes get a grid");
            for aabb in boxes {
                let (min, max) = (aabb.min(), aabb.max());
                let range = grid.cell_range(aabb);
                assert_eq!(range, grid.cell_range_scalar(min.y, max.y, min.z, max.z));
                let (y0, y1, z0, z1) = unpack(range);
                assert!(y0 <= y1 && y1 < grid.cells_y as usize, "{aabb:?}");
                assert!(z0 <= z1 && z1 < grid.cells_z as usize, "{aabb:?}");
            }
        }
    }
}
