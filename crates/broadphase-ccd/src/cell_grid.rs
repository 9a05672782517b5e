//! Uniform cell grid with two inline slots and an overflow list per cell, for the event
//! calendar's neighbour search.

use crate::linked_lists::{LinkedLists, NONE};
use crate::world::World;

/// Inline body slots per cell.
const SLOTS: usize = 2;

/// A uniform grid over the world box whose cells are at least one maximum diameter wide (plus a
/// relative slack of 1e-6 against rounding in crossing times), so two bodies in contact always
/// sit in the same or adjacent cells. Each body is in exactly one cell, tracked by integer
/// coordinates that change only through cell-crossing events (never recomputed from rounded
/// positions). A cell holds its first two bodies in two inline slots (cells hold well under
/// one body on average at the packings of interest, so the slots of a row of cells are one or
/// two cache lines and are read without a data-dependent branch) and any further ones in a
/// doubly linked overflow list stored in arrays: O(1) moves, no allocation after
/// construction, O(n + cells) memory with cells capped at about 4n.
#[derive(Debug, Clone)]
pub(crate) struct CellGrid {
    pub(crate) dim: usize,
    pub(crate) cells: [u32; 3],
    pub(crate) width: [f64; 3],
    /// Per cell: two bodies, or `NONE`.
    slots: Vec<[u32; SLOTS]>,
    /// Per cell: the first body of its overflow list, or `NONE`.
    head: Vec<u32>,
    /// Per cell: whether its overflow list is non-empty. A quarter of the size of `head`, so
    /// that the check for the rare overflow stays in cache and `head` is read only when set.
    overflows: Vec<bool>,
    /// The overflow lists' links.
    lists: LinkedLists,
    pub(crate) coord: Vec<[u32; 3]>,
}

impl CellGrid {
    pub(crate) fn new(world: &World, now: f64) -> Self {
        let n = world.len();
        let dim = world.dim;
        let max_diameter = 2.0 * world.motion.iter().fold(0.0f64, |m, b| m.max(b.radius));
        let mut min_width = max_diameter * (1.0 + 1e-6);
        let cell_limit = 4.0 * n as f64 + 64.0;
        let mut cells = [1u32; 3];
        loop {
            let mut total = 1.0;
            for k in 0..dim {
                cells[k] = ((world.size[k] / min_width).floor().max(1.0))
                    .min(f64::from(u32::MAX / 2)) as u32;
                total *= f64::from(cells[k]);
            }
            if total <= cell_limit {
                break;
            }
            min_width *= (total / cell_limit).powf(1.0 / dim as f64) * 1.001;
        }
        let mut width = [1.0; 3];
        for k in 0..dim {
            width[k] = world.size[k] / f64::from(cells[k]);
        }
        let total = cells.iter().map(|&c| c as usize).product();
        let mut grid = CellGrid {
            dim,
            cells,
            width,
            slots: vec![[NONE; SLOTS]; total],
            head: vec![NONE; total],
            overflows: vec![false; total],
            lists: LinkedLists::new(n),
            coord: vec![[0; 3]; n],
        };
        for i in 0..n {
            let p = world.position_at(i, now);
            let mut c = [0u32; 3];
            for k in 0..dim {
                c[k] = ((p[k] / width[k]).floor().max(0.0) as u32).min(cells[k] - 1);
            }
            grid.coord[i] = c;
            grid.link(i as u32);
        }
        grid
    }

    #[inline]
    fn cell_index(&self, c: [u32; 3]) -> usize {
        (c[0] as usize)
            + self.cells[0] as usize * (c[1] as usize + self.cells[1] as usize * c[2] as usize)
    }

    /// Puts body `i` into the cell of its coordinates: a free slot, else the overflow list.
    fn link(&mut self, i: u32) {
        let cell = self.cell_index(self.coord[i as usize]);
        if let Some(slot) = self.slots[cell].iter_mut().find(|s| **s == NONE) {
            *slot = i;
            return;
        }
        self.lists.push_front(&mut self.head[cell], i);
        self.overflows[cell] = true;
    }

    /// Takes body `i` out of the cell of its coordinates.
    fn unlink(&mut self, i: u32) {
        let cell = self.cell_index(self.coord[i as usize]);
        if let Some(slot) = self.slots[cell].iter_mut().find(|s| **s == i) {
            *slot = NONE;
            return;
        }
        self.lists.remove(&mut self.head[cell], i);
        self.overflows[cell] = self.head[cell] != NONE;
    }

    /// Moves body `i` one cell along `axis`, up if `up`.
    pub(crate) fn step(&mut self, i: usize, axis: usize, up: bool) {
        self.unlink(i as u32);
        let c = &mut self.coord[i][axis];
        *c = if up { *c + 1 } else { *c - 1 };
        self.link(i as u32);
    }

    /// Writes into `out` every body `j != i` in the cells adjacent to (or equal to) `i`'s, or
    /// with `Some((axis, up))`, after `i` stepped one cell along `axis` (up if `up`), those of
    /// the layer of cells that just became adjacent to `i`'s cell (none at the grid's edge),
    /// and returns their number. `out` must hold at least as many entries as there are bodies.
    #[inline]
    pub(crate) fn gather(
        &self,
        i: usize,
        entering: Option<(usize, bool)>,
        out: &mut [u32],
    ) -> usize {
        let layer = match entering {
            None => None,
            Some((axis, up)) => {
                let c = self.coord[i][axis];
                if up {
                    if c + 1 >= self.cells[axis] {
                        return 0;
                    }
                    Some((axis, c + 1))
                } else {
                    if c == 0 {
                        return 0;
                    }
                    Some((axis, c - 1))
                }
            }
        };
        self.gather_block(i, layer, out)
    }

    /// Gathers the 3^dim block around `i`'s cell, or only its layer `coord[axis] == layer`.
    ///
    /// Cells are numbered x fastest, so each row of the block is a run of consecutive cells
    /// whose slots are adjacent in memory. Every slot is written to `out` and the count
    /// advances only for a body other than `i`, so occupancy costs no branch; only the rare
    /// overflow lists are walked.
    #[inline]
    fn gather_block(&self, i: usize, layer: Option<(usize, u32)>, out: &mut [u32]) -> usize {
        let c = self.coord[i];
        // Half-open cell ranges per axis (exclusive ranges iterate faster than inclusive ones).
        let (mut lo, mut hi) = ([0usize; 3], [1usize; 3]);
        for k in 0..self.dim {
            lo[k] = c[k].saturating_sub(1) as usize;
            hi[k] = (c[k] + 2).min(self.cells[k]) as usize;
        }
        if let Some((axis, at)) = layer {
            (lo[axis], hi[axis]) = (at as usize, at as usize + 1);
        }
        let row_stride = self.cells[0] as usize;
        let plane_stride = row_stride * self.cells[1] as usize;
        let me = i as u32;
        let mut count = 0;
        for z in lo[2]..hi[2] {
            for y in lo[1]..hi[1] {
                let row = z * plane_stride + y * row_stride;
                for slots in &self.slots[row + lo[0]..row + hi[0]] {
                    for &j in slots {
                        out[count] = j;
                        count += usize::from((j != NONE) & (j != me));
                    }
                }
                if self.overflows[row + lo[0]..row + hi[0]].contains(&true) {
                    for &first in &self.head[row + lo[0]..row + hi[0]] {
                        let mut j = first;
                        while j != NONE {
                            if j != me {
                                out[count] = j;
                                count += 1;
                            }
                            j = self.lists.next(j);
                        }
                    }
                }
            }
        }
        count
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{generate_scene, SceneConfig};

    /// The bodies of the 3^dim block around `i`'s cell (or its layer), from the coordinates.
    fn expected_block(grid: &CellGrid, i: usize, layer: Option<(usize, u32)>) -> Vec<u32> {
        let c = grid.coord[i];
        let mut found: Vec<u32> = (0..grid.coord.len())
            .filter(|&j| j != i)
            .filter(|&j| {
                (0..grid.dim).all(|k| {
                    let (a, b) = (grid.coord[j][k], c[k]);
                    match layer {
                        Some((axis, at)) if axis == k => a == at,
                        _ => a.abs_diff(b) <= 1,
                    }
                })
            })
            .map(|j| j as u32)
            .collect();
        found.sort_unstable();
        found
    }

    fn gathered(grid: &CellGrid, i: usize, entering: Option<(usize, bool)>) -> Vec<u32> {
        let mut out = vec![0; grid.coord.len()];
        let count = grid.gather(i, entering, &mut out);
        let mut found = out[..count].to_vec();
        found.sort_unstable();
        found
    }

    /// Small and large bodies mixed, so that cells hold many bodies and the overflow lists
    /// (beyond the two inline slots) fill, empty and refill as bodies step between cells.
    #[test]
    fn gather_finds_exactly_the_block_through_overflowing_cells() {
        for dim in [2, 3] {
            let mut config = SceneConfig::new(400, dim, 5);
            config.radius_min = 0.05;
            config.radius_max = 1.0;
            let world = generate_scene(&config).unwrap();
            let mut grid = CellGrid::new(&world, 0.0);
            let mut state = 99u64;
            let mut overflowed = 0;
            for round in 0..3000 {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let i = (state >> 33) as usize % world.len();
                let axis = (state >> 20) as usize % dim;
                let up = (state >> 10) & 1 == 1;
                let c = grid.coord[i][axis];
                if (up && c + 1 < grid.cells[axis]) || (!up && c > 0) {
                    grid.step(i, axis, up);
                    let layer = Some((axis, if up { c + 2 } else { c.wrapping_sub(2) }))
                        .filter(|&(_, at)| at < grid.cells[axis]);
                    let entering = gathered(&grid, i, Some((axis, up)));
                    let expected = layer.map_or(Vec::new(), |l| expected_block(&grid, i, Some(l)));
                    assert_eq!(
                        entering, expected,
                        "dim {dim} round {round}: entering layer"
                    );
                }
                assert_eq!(gathered(&grid, i, None), expected_block(&grid, i, None));
                overflowed += grid.overflows.iter().filter(|&&o| o).count();
            }
            assert!(overflowed > 0, "dim {dim}: no cell overflowed its slots");
        }
    }
}
