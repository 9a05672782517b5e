//! The regions given to PhysX's MBP: a grid over the x/z extent of the boxes (4×4, finer
//! for many boxes) whose outer cells reach to ±`f32::MAX`, so that the regions tile all of
//! space.
//!
//! Why tile: MBP finds a pair only inside a region that holds both boxes. A box outside
//! every region is listed as out of bounds and loses its pairs, but a box that pokes out of
//! the regions loses pairs too, silently: two boxes that each touch a different region and
//! overlap only outside all regions share no region. When the regions cover everything,
//! every point of an overlap lies in some region, which then holds both boxes, so MBP misses
//! nothing (up to its conservative quantization) whatever the boxes do. The grid's inner
//! lines only spread the work; when the boxes spread far beyond them, the broad phase is
//! rebuilt on a new grid ([`Grid::outgrown_by`]) for speed, not for correctness.
//!
//! Why finer for many boxes: an MBP region holds at most 65,535 objects (PhysX reports an
//! error and drops the pairs of the objects past that), so the grid gets a cell per
//! [`BOXES_PER_REGION`] boxes, up to PhysX's 256 regions, and the broad phase is rebuilt when
//! the boxes outgrow that count ([`Grid::crowded_by`]).

use broadphase::Aabb;

use super::ffi::{PxBounds3, PxVec3};

/// Cells per axis (x and z) at least: 16 regions.
const MIN_CELLS: usize = 4;
/// Cells per axis at most: PhysX's limit of 256 regions.
const MAX_CELLS: usize = 16;
const _: () = assert!(MAX_CELLS * MAX_CELLS <= 256);
/// Boxes per region the grid is sized for: an eighth of a region's capacity, so that a
/// cell can hold several times its share (boxes crowd where the scene is dense, and one
/// that straddles a boundary counts in each region it touches).
const BOXES_PER_REGION: usize = 8192;

/// Cells per axis for `boxes` boxes.
fn cells_for(boxes: usize) -> usize {
    let mut cells = MIN_CELLS;
    while cells < MAX_CELLS && cells * cells * BOXES_PER_REGION < boxes {
        cells += 1;
    }
    cells
}

/// The grid's inner extent in x and z, in `f64` so that the extent of boxes near ±`f32::MAX`
/// and its margins do not overflow.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Grid {
    lo: [f64; 2],
    hi: [f64; 2],
    /// Cells per axis.
    cells: usize,
}

impl Grid {
    /// The grid over the x/z extent of `boxes` enlarged by 10% (5% of its size on each
    /// side, at least 1 unit per side), or around the origin when there are none, with
    /// cells for their number.
    pub fn around<'a>(boxes: impl IntoIterator<Item = &'a Aabb>) -> Self {
        let mut lo = [f64::INFINITY; 2];
        let mut hi = [f64::NEG_INFINITY; 2];
        let mut count = 0;
        for aabb in boxes {
            count += 1;
            for (k, axis) in [0, 2].into_iter().enumerate() {
                lo[k] = lo[k].min(f64::from(aabb.min()[axis]));
                hi[k] = hi[k].max(f64::from(aabb.max()[axis]));
            }
        }
        for k in 0..2 {
            if lo[k] > hi[k] {
                (lo[k], hi[k]) = (0.0, 0.0);
            }
            let margin = ((hi[k] - lo[k]) * 0.05).max(1.0);
            lo[k] -= margin;
            hi[k] += margin;
        }
        Self {
            lo,
            hi,
            cells: cells_for(count),
        }
    }

    /// True when `boxes` boxes call for more cells than the grid has.
    pub fn crowded_by(&self, boxes: usize) -> bool {
        cells_for(boxes) > self.cells
    }

    /// True when `aabb` reaches beyond the grid by more than the grid's own size on x or z:
    /// the boxes have spread so far that most of them would crowd into the outer cells.
    pub fn outgrown_by(&self, aabb: &Aabb) -> bool {
        [0, 2].into_iter().enumerate().any(|(k, axis)| {
            let size = self.hi[k] - self.lo[k];
            f64::from(aabb.min()[axis]) < self.lo[k] - size
                || f64::from(aabb.max()[axis]) > self.hi[k] + size
        })
    }

    /// The regions (cells per axis squared), row by row. Neighbouring cells share their
    /// boundary value exactly (no gap); the outer boundaries and the y range are ±`f32::MAX`.
    pub fn regions(&self) -> Vec<PxBounds3> {
        let cells = self.cells;
        let lines = |k: usize| -> Vec<f32> {
            let mut lines: Vec<f32> = (0..=cells)
                .map(|i| {
                    let t = i as f64 / cells as f64;
                    let v = self.lo[k] + (self.hi[k] - self.lo[k]) * t;
                    (v as f32).clamp(-f32::MAX, f32::MAX)
                })
                .collect();
            lines[0] = -f32::MAX;
            lines[cells] = f32::MAX;
            lines
        };
        let (xs, zs) = (lines(0), lines(1));
        let mut regions = Vec::with_capacity(cells * cells);
        for i in 0..cells {
            for j in 0..cells {
                regions.push(PxBounds3 {
                    minimum: PxVec3 {
                        x: xs[i],
                        y: -f32::MAX,
                        z: zs[j],
                    },
                    maximum: PxVec3 {
                        x: xs[i + 1],
                        y: f32::MAX,
                        z: zs[j + 1],
                    },
                });
            }
        }
        regions
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boxed(min: [f32; 3], max: [f32; 3]) -> Aabb {
        Aabb::from_arrays(min, max).unwrap()
    }

    #[test]
    fn regions_tile_space_without_gaps() {
        let grid = Grid::around(&[boxed([0.0; 3], [10.0; 3]), boxed([-3e38; 3], [-2e38; 3])]);
        for (grid, cells) in [(grid, MIN_CELLS), (Grid { cells: 7, ..grid }, 7)] {
            check_tiling(&grid.regions(), cells);
        }
    }

    fn check_tiling(regions: &[PxBounds3], cells: usize) {
        assert_eq!(regions.len(), cells * cells);
        for (n, r) in regions.iter().enumerate() {
            let (i, j) = (n / cells, n % cells);
            assert!(r.minimum.x <= r.maximum.x && r.minimum.z <= r.maximum.z);
            assert_eq!((r.minimum.y, r.maximum.y), (-f32::MAX, f32::MAX));
            if i == 0 {
                assert_eq!(r.minimum.x, -f32::MAX);
            } else {
                assert_eq!(r.minimum.x, regions[n - cells].maximum.x);
            }
            if j == 0 {
                assert_eq!(r.minimum.z, -f32::MAX);
            } else {
                assert_eq!(r.minimum.z, regions[n - 1].maximum.z);
            }
            assert_eq!(i == cells - 1, r.maximum.x == f32::MAX);
            assert_eq!(j == cells - 1, r.maximum.z == f32::MAX);
        }
    }

    #[test]
    fn many_boxes_get_more_regions_up_to_physx_limit() {
        assert_eq!(cells_for(0), MIN_CELLS);
        assert_eq!(cells_for(100_000), MIN_CELLS);
        // A million boxes: 12×12 regions of about 6,900 each.
        assert_eq!(cells_for(1_000_000), 12);
        assert!(cells_for(1_000_000) * cells_for(1_000_000) * BOXES_PER_REGION >= 1_000_000);
        assert_eq!(cells_for(usize::MAX), MAX_CELLS);
        let grid = Grid::around(&[boxed([0.0; 3], [10.0; 3])]);
        assert!(!grid.crowded_by(100_000));
        assert!(grid.crowded_by(1_000_000));
        check_tiling(
            &Grid {
                cells: cells_for(1_000_000),
                ..grid
            }
            .regions(),
            12,
        );
    }

    #[test]
    fn outgrown_only_far_beyond_the_grid() {
        let grid = Grid::around(&[boxed([0.0; 3], [10.0; 3])]);
        assert!(!grid.outgrown_by(&boxed([15.0; 3], [16.0; 3])));
        assert!(!grid.outgrown_by(&boxed([-5.0, 0.0, 0.0], [1.0; 3])));
        assert!(grid.outgrown_by(&boxed([1e6; 3], [1e6; 3])));
        assert!(grid.outgrown_by(&boxed([0.0, 0.0, -1e6], [1.0; 3])));
        // y does not matter: the regions span all of it.
        assert!(!grid.outgrown_by(&boxed([0.0, 1e30, 0.0], [1.0, 2e30, 1.0])));
        let empty = Grid::around(std::iter::empty());
        assert!(!empty.outgrown_by(&boxed([0.5; 3], [0.5; 3])));
    }
}
