//! The y/z grid of the resting boxes (the sweep axis is x): which cells a box touches, and
//! its code in each, which tells in which cell a pair is reported.

use crate::Aabb;

/// Target cell side, in mean box extents; coarser than the one-shot kernel's grid. An update
/// walks and rewrites every cell a moved box touches, so each such cell costs a visit
/// whatever it holds: with few moved boxes per cell, larger cells mean fewer visits, while
/// the candidates of a moved box (the boxes of its cells that overlap it along x) grow with
/// the side only in dense scenes.
const CELL_EXTENTS: f64 = 5.0;
/// At most one cell per this many boxes: a cell costs a few words and a visit when the grid
/// is rebuilt.
const MIN_BOXES_PER_CELL: usize = 8;
/// At most this many cells along y or z.
const MAX_CELLS_PER_AXIS: u32 = 256;
/// Coarsen the grid when boxes would be stored more than this many times on average.
const MAX_COPIES_PER_BOX: usize = 3;

/// One box in this many, on each side of each axis, may lie outside the grid's bounds.
const OUTLIER_SHARE: usize = 64;
/// The grid's bounds are measured on at most this many boxes.
const BOUNDS_SAMPLE: usize = 2048;

/// The cells a box touches: y and z ranges, inclusive (`y0, y1, z0, z1`).
pub(super) type CellRange = (u32, u32, u32, u32);

/// A uniform grid over y and z of the rotated boxes. Cell coordinates are clamped to the
/// grid, so a box outside the bounds the grid was chosen for lands in a border cell; the
/// cell function stays monotone, which is all the once-per-pair rule needs.
#[derive(Debug, Clone, Copy)]
pub(super) struct CellGrid {
    low_y: f32,
    low_z: f32,
    inv_y: f32,
    inv_z: f32,
    cells_y: u32,
    cells_z: u32,
}

impl Default for CellGrid {
    fn default() -> Self {
        Self {
            low_y: 0.0,
            low_z: 0.0,
            inv_y: 0.0,
            inv_z: 0.0,
            cells_y: 1,
            cells_z: 1,
        }
    }
}

impl CellGrid {
    #[inline]
    fn cell_y(&self, y: f32) -> u32 {
        // `as` saturates and maps NaN (an infinite span times a zero inverse) to 0.
        (((y - self.low_y) * self.inv_y) as u32).min(self.cells_y - 1)
    }

    #[inline]
    fn cell_z(&self, z: f32) -> u32 {
        (((z - self.low_z) * self.inv_z) as u32).min(self.cells_z - 1)
    }

    /// The cells `b` touches: y and z ranges, inclusive.
    #[inline]
    pub(super) fn range(&self, b: &Aabb) -> CellRange {
        (
            self.cell_y(b.min().y),
            self.cell_y(b.max().y),
            self.cell_z(b.min().z),
            self.cell_z(b.max().z),
        )
    }

    /// Calls `f` with the index of every cell of `range` (from [`CellGrid::range`]) and the
    /// box's code there: bit 0 set when it starts in an earlier cell on y, bit 1 on z.
    #[inline]
    pub(super) fn for_each_cell(&self, (y0, y1, z0, z1): CellRange, mut f: impl FnMut(usize, u32)) {
        for y in y0..=y1 {
            for z in z0..=z1 {
                let code = (y != y0) as u32 | ((z != z0) as u32) << 1;
                f((y * self.cells_z + z) as usize, code);
            }
        }
    }

    /// The box's code in cell `cell` (as [`CellGrid::for_each_cell`] gives it), or `None`
    /// when `range` (from [`CellGrid::range`]) does not hold the cell.
    #[inline]
    pub(super) fn code_in(&self, (y0, y1, z0, z1): CellRange, cell: usize) -> Option<u32> {
        let (y, z) = (cell as u32 / self.cells_z, cell as u32 % self.cells_z);
        (y0 <= y && y <= y1 && z0 <= z && z <= z1)
            .then_some((y != y0) as u32 | ((z != z0) as u32) << 1)
    }

    /// True when `other` cuts space like this grid to within a tenth of a cell: the same
    /// cell counts, and cell boundaries that moved by less than a tenth of a cell at both
    /// ends of each axis. Rebuilding for such a grid would only move boxes between cells.
    pub(super) fn is_close_to(&self, other: &CellGrid) -> bool {
        let close = |low: f32, inv: f32, other_low: f32, other_inv: f32, cells: u32| {
            if inv == 0.0 || other_inv == 0.0 {
                return inv == other_inv;
            }
            // The grid's low end and high end (low + cells / inv), in this grid's cells.
            let high = low as f64 + cells as f64 / inv as f64;
            let other_high = other_low as f64 + cells as f64 / other_inv as f64;
            let tenth = 0.1 / inv as f64;
            (low as f64 - other_low as f64).abs() < tenth && (high - other_high).abs() < tenth
        };
        self.cells_y == other.cells_y
            && self.cells_z == other.cells_z
            && close(
                self.low_y,
                self.inv_y,
                other.low_y,
                other.inv_y,
                self.cells_y,
            )
            && close(
                self.low_z,
                self.inv_z,
                other.low_z,
                other.inv_z,
                self.cells_z,
            )
    }

    #[inline]
    pub(super) fn count(&self) -> usize {
        (self.cells_y * self.cells_z) as usize
    }

    /// Copies of `boxes` in this grid.
    fn copies(&self, boxes: &[Aabb]) -> usize {
        boxes
            .iter()
            .map(|b| {
                let (y0, y1, z0, z1) = self.range(b);
                ((y1 - y0 + 1) * (z1 - z0 + 1)) as usize
            })
            .sum()
    }

    /// A grid for `boxes`: cells of about [`CELL_EXTENTS`] mean extents over their bounds
    /// (without the [`OUTLIER_SHARE`] furthest out on each side), coarsened while there are
    /// too many cells or copies. `scratch` is a buffer of the caller's.
    pub(super) fn choose(boxes: &[Aabb], scratch: &mut Vec<f32>) -> Self {
        let n = boxes.len();
        if n == 0 {
            return Self::default();
        }
        let (mut low, mut high) = ([f32::MAX; 2], [f32::MIN; 2]);
        let mut extent = [0f64; 2];
        for b in boxes {
            for (k, axis) in [1, 2].into_iter().enumerate() {
                extent[k] += (b.max()[axis] - b.min()[axis]) as f64;
            }
        }
        // A few boxes far from the rest (fallen off the edge of a level, flung away) would
        // stretch the grid over empty space and move its bounds at every rebuild: they are
        // left out of the bounds and land in the border cells. The bounds are quantiles of
        // an evenly spaced sample of at most BOUNDS_SAMPLE boxes.
        let stride = n.div_ceil(BOUNDS_SAMPLE);
        let sample = boxes.iter().step_by(stride);
        let m = n.div_ceil(stride);
        let skip = m / OUTLIER_SHARE;
        for (k, axis) in [1, 2].into_iter().enumerate() {
            scratch.clear();
            scratch.extend(sample.clone().map(|b| b.min()[axis]));
            low[k] = *scratch.select_nth_unstable_by(skip, f32::total_cmp).1;
            scratch.clear();
            scratch.extend(sample.clone().map(|b| b.max()[axis]));
            high[k] = *scratch
                .select_nth_unstable_by(m - 1 - skip, f32::total_cmp)
                .1;
        }
        let mut cells = [1u32; 2];
        let mut side = [0f64; 2];
        for k in 0..2 {
            let span = high[k] as f64 - low[k] as f64;
            side[k] = (CELL_EXTENTS * extent[k] / n as f64).max(span / MAX_CELLS_PER_AXIS as f64);
            if span.is_finite() && side[k] > 0.0 && side[k].is_finite() {
                cells[k] = ((span / side[k]).ceil() as u32).clamp(1, MAX_CELLS_PER_AXIS);
            }
        }
        let max_cells = (n / MIN_BOXES_PER_CELL).max(1);
        loop {
            let grid = Self::with_cells(low, high, cells);
            let too_many = grid.count() > max_cells
                || grid.copies(boxes) > MAX_COPIES_PER_BOX * n + grid.count();
            if !too_many || cells == [1, 1] {
                return grid;
            }
            for c in &mut cells {
                *c = c.div_ceil(2);
            }
        }
    }

    fn with_cells(low: [f32; 2], high: [f32; 2], cells: [u32; 2]) -> Self {
        let inverse = |k: usize| {
            let span = high[k] as f64 - low[k] as f64;
            if cells[k] > 1 && span > 0.0 {
                (cells[k] as f64 / span) as f32
            } else {
                0.0
            }
        };
        Self {
            low_y: low[0],
            low_z: low[1],
            inv_y: inverse(0),
            inv_z: inverse(1),
            cells_y: cells[0],
            cells_z: cells[1],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grid_is_close_only_to_grids_that_cut_space_alike() {
        let grid = CellGrid::with_cells([0.0, 0.0], [40.0, 40.0], [8, 8]);
        assert!(grid.is_close_to(&grid));
        // The high ends a hundredth of a cell further out (cells of 5): close, both ways.
        let nudged = CellGrid::with_cells([0.0, 0.0], [40.05, 40.05], [8, 8]);
        assert!(grid.is_close_to(&nudged) && nudged.is_close_to(&grid));
        // Shifted by half a cell, or a fifth of a cell wider on one axis, or with other cell
        // counts: not close.
        let shifted = CellGrid::with_cells([2.5, 0.0], [42.5, 40.0], [8, 8]);
        assert!(!grid.is_close_to(&shifted));
        let wider = CellGrid::with_cells([0.0, 0.0], [40.0, 41.0], [8, 8]);
        assert!(!grid.is_close_to(&wider));
        let coarser = CellGrid::with_cells([0.0, 0.0], [40.0, 40.0], [4, 8]);
        assert!(!grid.is_close_to(&coarser));
        // A grid of one cell is close only to another of one cell.
        let single = CellGrid::default();
        assert!(single.is_close_to(&CellGrid::default()));
        assert!(!single.is_close_to(&grid) && !grid.is_close_to(&single));
        // A grid chosen for boxes is close to the one chosen for the same boxes.
        let boxes: Vec<Aabb> = (0..1600)
            .map(|i| {
                let (y, z) = ((i / 40) as f32, (i % 40) as f32);
                Aabb::from_arrays([0.0, y, z], [1.0, y + 1.0, z + 1.0]).unwrap()
            })
            .collect();
        let mut scratch = Vec::new();
        let chosen = CellGrid::choose(&boxes, &mut scratch);
        assert!(chosen.cells_y > 1 && chosen.is_close_to(&CellGrid::choose(&boxes, &mut scratch)));
        // A few boxes far away (fallen off the edge) leave the grid as it was.
        let mut with_outliers = boxes.clone();
        for k in 0..10 {
            let far = -1000.0 * (k + 1) as f32;
            with_outliers
                .push(Aabb::from_arrays([0.0, far, far], [1.0, far + 1.0, far + 1.0]).unwrap());
        }
        assert!(CellGrid::choose(&with_outliers, &mut scratch).is_close_to(&chosen));
    }
}
