//! Uniform cell grid with two inline slots and an overflow list per cell, for the event
//! calendar's neighbour search.

use crate::linked_lists::{LinkedLists, NONE};
use crate::simd::avx2_available;
use crate::world::World;

/// Inline body slots per cell.
const SLOTS: usize = 2;

/// Cells of `NONE` after the last one, so that the vector gather can load eight slots (four
/// cells) from any cell of a block.
const PADDING_CELLS: usize = 4;

/// Entries [`CellGrid::gather`] may write past the bodies it returns: `out` must hold this
/// many more entries than there are bodies.
pub(crate) const GATHER_SLACK: usize = 8;

/// A body's cell: its coordinates, and the index of the cell in [`CellGrid`]'s stored
/// cells, kept beside them so that a gather, link or unlink does not recompute it. 16 bytes.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Place {
    pub(crate) coord: [u32; 3],
    pub(crate) cell: u32,
}

const _: () = assert!(std::mem::size_of::<Place>() == 16);

/// A uniform grid over the world box whose cells are at least one maximum diameter wide (plus a
/// relative slack of 1e-6 against rounding in crossing times), so two bodies in contact always
/// sit in the same or adjacent cells. Each body is in exactly one cell, tracked by integer
/// coordinates that change only through cell-crossing events (never recomputed from rounded
/// positions). A cell holds its first two bodies in two inline slots (cells hold well under
/// one body on average at the packings of interest, so the slots of a row of cells are one or
/// two cache lines and are read without a data-dependent branch) and any further ones in a
/// doubly linked overflow list stored in arrays: O(1) moves, no allocation after
/// construction, O(n + cells) memory with cells capped at about 4n.
///
/// The cells are stored with a ring of empty cells around the grid, so that the block of
/// cells around any body is whole: the gather runs the same rows of the same length for
/// every body, without clipping at the grid's faces.
#[derive(Debug, Clone)]
pub(crate) struct CellGrid {
    pub(crate) dim: usize,
    pub(crate) cells: [u32; 3],
    pub(crate) width: [f64; 3],
    /// Distance between the stored cells of adjacent rows, and of adjacent planes (the ring
    /// included).
    row_stride: usize,
    plane_stride: usize,
    /// Per stored cell: two bodies, or `NONE`; then [`PADDING_CELLS`] empty cells.
    slots: Vec<[u32; SLOTS]>,
    /// Per cell: the first body of its overflow list, or `NONE`.
    head: Vec<u32>,
    /// Per cell: 1 when its overflow list is non-empty, else 0; padded like `slots`, so that a
    /// row's flags are read as one word. A quarter of the size of `head`, so that the check
    /// for the rare overflow stays in cache and `head` is read only when set.
    overflows: Vec<u8>,
    /// The overflow lists' links.
    lists: LinkedLists,
    /// Per body: its cell's coordinates and where that cell is stored.
    pub(crate) place: Vec<Place>,
    /// Whether the gather compacts each row of slots with AVX2 (detected at run time).
    avx2: bool,
}

impl CellGrid {
    /// The grid of `world`'s bodies at time `now`; `simd` allows the AVX2 gather where the
    /// CPU has it (the scalar gather returns the same bodies in the same order).
    pub(crate) fn new(world: &World, now: f64, simd: bool) -> Self {
        let n = world.len();
        let dim = world.dim;
        let max_diameter = 2.0 * world.motion.iter().fold(0.0f64, |m, b| m.max(b.radius));
        let mut min_width = max_diameter * (1.0 + 1e-6);
        // At most about 4n cells, and few enough that a cell's index fits in `Place::cell`.
        let cell_limit = (4.0 * n as f64 + 64.0).min(f64::from(u32::MAX / 2));
        let mut cells = [1u32; 3];
        loop {
            let mut total = 1.0;
            for k in 0..dim {
                cells[k] = ((world.size[k] / min_width).floor().max(1.0))
                    .min(f64::from(u32::MAX / 2)) as u32;
                // With the ring of empty cells.
                total *= f64::from(cells[k]) + 2.0;
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
        let stored = |k: usize| if k < dim { cells[k] as usize + 2 } else { 1 };
        let (row_stride, plane_stride) = (stored(0), stored(0) * stored(1));
        let total = plane_stride * stored(2);
        let mut grid = CellGrid {
            dim,
            cells,
            width,
            row_stride,
            plane_stride,
            slots: vec![[NONE; SLOTS]; total + PADDING_CELLS],
            head: vec![NONE; total],
            overflows: vec![0; total + PADDING_CELLS],
            lists: LinkedLists::new(n),
            place: vec![Place::default(); n],
            avx2: simd && avx2_available(),
        };
        for i in 0..n {
            let p = world.position_at(i, now);
            let mut c = [0u32; 3];
            for k in 0..dim {
                c[k] = ((p[k] / width[k]).floor().max(0.0) as u32).min(cells[k] - 1);
            }
            let cell = u32::try_from(grid.cell_index(c)).expect("cells are capped below 2^31");
            grid.place[i] = Place { coord: c, cell };
            grid.link(i as u32);
        }
        grid
    }

    /// Where the cell of coordinates `c` is stored (inside the ring).
    #[inline]
    fn cell_index(&self, c: [u32; 3]) -> usize {
        let z = if self.dim == 3 { c[2] as usize + 1 } else { 0 };
        (c[0] as usize + 1) + self.row_stride * (c[1] as usize + 1) + self.plane_stride * z
    }

    /// Puts body `i` into the cell of its coordinates: a free slot, else the overflow list.
    fn link(&mut self, i: u32) {
        let cell = self.place[i as usize].cell as usize;
        if let Some(slot) = self.slots[cell].iter_mut().find(|s| **s == NONE) {
            *slot = i;
            return;
        }
        self.lists.push_front(&mut self.head[cell], i);
        self.overflows[cell] = 1;
    }

    /// Takes body `i` out of the cell of its coordinates.
    fn unlink(&mut self, i: u32) {
        let cell = self.place[i as usize].cell as usize;
        if let Some(slot) = self.slots[cell].iter_mut().find(|s| **s == i) {
            *slot = NONE;
            return;
        }
        self.lists.remove(&mut self.head[cell], i);
        self.overflows[cell] = u8::from(self.head[cell] != NONE);
    }

    /// Moves body `i` one cell along `axis`, up if `up`.
    pub(crate) fn step(&mut self, i: usize, axis: usize, up: bool) {
        self.unlink(i as u32);
        let stride = [1, self.row_stride, self.plane_stride][axis] as u32;
        let place = &mut self.place[i];
        let c = &mut place.coord[axis];
        (*c, place.cell) = if up {
            (*c + 1, place.cell + stride)
        } else {
            (*c - 1, place.cell - stride)
        };
        self.link(i as u32);
    }

    /// Starts loading the slots of the 3^dim block around body `i`'s cell (see
    /// [`crate::simd::prefetch_address`]): the first and last cell of each row.
    #[inline]
    pub(crate) fn prefetch_block(&self, i: usize) {
        let first = self.block_first(i);
        let planes = if self.dim == 3 { 3 } else { 1 };
        let slots = self.slots.as_ptr();
        for plane in 0..planes {
            let start = first + plane * self.plane_stride;
            for row in [start, start + self.row_stride, start + 2 * self.row_stride] {
                crate::simd::prefetch_address(slots.wrapping_add(row));
                crate::simd::prefetch_address(slots.wrapping_add(row + 2));
            }
        }
    }

    /// The first stored cell of the 3^dim block around body `i`'s cell. The ring keeps the
    /// block inside the stored cells, so the offsets never wrap below zero.
    #[inline(always)]
    fn block_first(&self, i: usize) -> usize {
        let first = self.place[i].cell as usize - 1 - self.row_stride;
        if self.dim == 3 {
            first - self.plane_stride
        } else {
            first
        }
    }

    /// Writes into `out` every body `j != i` in the cells adjacent to (or equal to) `i`'s, or
    /// with `Some((axis, up))`, after `i` stepped one cell along `axis` (up if `up`), those of
    /// the layer of cells that just became adjacent to `i`'s cell (none at the grid's edge),
    /// and returns their number. `out` must hold [`GATHER_SLACK`] more entries than there are
    /// bodies; the entries after the returned ones are overwritten with arbitrary bodies.
    ///
    /// With `INLINE_AVX2`, the AVX2 gather is inlined into the caller, for callers compiled
    /// for AVX2 (a call costs its prologue and epilogue; in code not compiled for AVX2 each
    /// intrinsic would be a call instead).
    #[inline(always)]
    pub(crate) fn gather<const INLINE_AVX2: bool>(
        &self,
        i: usize,
        entering: Option<(usize, bool)>,
        out: &mut [u32],
    ) -> usize {
        if self.beyond_face(i, entering) {
            return 0;
        }
        match (self.avx2, INLINE_AVX2, self.dim) {
            (true, true, 2) => self.gather_block::<true, 2>(i, entering, out),
            (true, true, _) => self.gather_block::<true, 3>(i, entering, out),
            // SAFETY: `avx2` is only set where the CPU has AVX2 and POPCNT.
            (true, false, 2) => unsafe { self.gather_block_avx2::<2>(i, entering, out) },
            (true, false, _) => unsafe { self.gather_block_avx2::<3>(i, entering, out) },
            (false, _, 2) => self.gather_block::<false, 2>(i, entering, out),
            (false, _, _) => self.gather_block::<false, 3>(i, entering, out),
        }
    }

    /// Whether the layer `i` entered (with `Some((axis, up))`) lies beyond the grid's face,
    /// in the ring of empty cells.
    #[inline(always)]
    fn beyond_face(&self, i: usize, entering: Option<(usize, bool)>) -> bool {
        entering.is_some_and(|(axis, up)| {
            let c = self.place[i].coord[axis];
            (up && c + 1 == self.cells[axis]) || (!up && c == 0)
        })
    }

    /// [`CellGrid::gather_block`] compiled for AVX2.
    ///
    /// # Safety
    /// The CPU must have AVX2 and POPCNT.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,popcnt")]
    unsafe fn gather_block_avx2<const D: usize>(
        &self,
        i: usize,
        layer: Option<(usize, bool)>,
        out: &mut [u32],
    ) -> usize {
        self.gather_block::<true, D>(i, layer, out)
    }

    #[cfg(not(target_arch = "x86_64"))]
    unsafe fn gather_block_avx2<const D: usize>(
        &self,
        _: usize,
        _: Option<(usize, bool)>,
        _: &mut [u32],
    ) -> usize {
        unreachable!("AVX2 is only detected on x86_64")
    }

    /// Gathers the 3^D block around `i`'s cell, or with `Some((axis, up))` only its layer
    /// one cell up (or down) along `axis`; with `AVX2` (only instantiated so where the grid's
    /// `avx2` is set: the CPU has AVX2 and POPCNT) a row at a time. Compiled per dimension, so
    /// that a 2D grid runs no loop over a third axis.
    ///
    /// Cells are numbered x fastest, so each row of the block is a run of consecutive cells
    /// whose slots are adjacent in memory. Every slot is written to `out` and the count
    /// advances only for a body other than `i`, so occupancy costs no branch; only the rare
    /// overflow lists are walked.
    #[inline(always)]
    fn gather_block<const AVX2: bool, const D: usize>(
        &self,
        i: usize,
        layer: Option<(usize, bool)>,
        out: &mut [u32],
    ) -> usize {
        // The block's (or layer's) first stored cell, and its cells per row.
        let mut first = self.block_first(i);
        let mut cells = 3;
        match layer {
            None => {}
            Some((0, up)) => {
                first += if up { 2 } else { 0 };
                cells = 1;
            }
            Some((1, up)) => first += if up { 2 * self.row_stride } else { 0 },
            Some((_, up)) => first += if up { 2 * self.plane_stride } else { 0 },
        }
        // Constant trip counts, so that the rows are unrolled.
        match (D, layer) {
            (2, Some((1, _))) => self.rows::<AVX2, 1, 1>(first, cells, i, out),
            (2, _) | (_, Some((2, _))) => self.rows::<AVX2, 1, 3>(first, cells, i, out),
            (_, Some((1, _))) => self.rows::<AVX2, 3, 1>(first, cells, i, out),
            _ => self.rows::<AVX2, 3, 3>(first, cells, i, out),
        }
    }

    /// Gathers `PLANES` × `ROWS` runs of `cells` cells from cell `first` (see
    /// [`CellGrid::gather_block`]).
    #[inline(always)]
    fn rows<const AVX2: bool, const PLANES: usize, const ROWS: usize>(
        &self,
        first: usize,
        cells: usize,
        i: usize,
        out: &mut [u32],
    ) -> usize {
        let me = i as u32;
        // A row's overflow flags, read as one word: no loop over its cells.
        let flag_mask = (1u32 << (8 * cells)) - 1;
        let mut count = 0;
        for plane in 0..PLANES {
            for row in 0..ROWS {
                let first = first + plane * self.plane_stride + row * self.row_stride;
                count = if AVX2 {
                    // SAFETY: `AVX2` is only set where the CPU has AVX2 and POPCNT (see
                    // `gather_block`).
                    unsafe { compact_row_avx2(&self.slots, first, cells, me, out, count) }
                } else {
                    compact_row(&self.slots[first..first + cells], me, out, count)
                };
                let flags: [u8; 4] = self.overflows[first..first + 4]
                    .try_into()
                    .expect("a slice of four");
                if u32::from_le_bytes(flags) & flag_mask != 0 {
                    for &head in &self.head[first..first + cells] {
                        let mut j = head;
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

/// Appends to `out` from `count` the bodies of a run of cells other than `me`, in order, and
/// returns the new count. Every slot is written and the count advances only for a body, so
/// occupancy costs no branch.
#[inline(always)]
fn compact_row(run: &[[u32; SLOTS]], me: u32, out: &mut [u32], mut count: usize) -> usize {
    for slots in run {
        for &j in slots {
            out[count] = j;
            count += usize::from((j != NONE) & (j != me));
        }
    }
    count
}

/// Lane permutations that move the lanes set in a mask of six (three cells of two slots) to
/// the front, in order, for `_mm256_permutevar8x32_epi32`.
#[cfg(target_arch = "x86_64")]
static COMPACT_LANES: [[u32; 8]; 64] = compact_lanes();

/// The table of [`COMPACT_LANES`].
#[cfg(target_arch = "x86_64")]
const fn compact_lanes() -> [[u32; 8]; 64] {
    let mut table = [[0u32; 8]; 64];
    let mut mask = 0;
    while mask < 64 {
        let (mut lane, mut next) = (0, 0);
        while lane < 6 {
            if mask & (1 << lane) != 0 {
                table[mask][next] = lane as u32;
                next += 1;
            }
            lane += 1;
        }
        mask += 1;
    }
    table
}

/// [`compact_row`] on the run of `cells` cells (at most three) from cell `first` of
/// `slots`: one load of eight slots, two compares and a lane permutation, with no
/// per-slot work. Always writes eight entries from `count`. Meant to be inlined into AVX2 code.
///
/// Panics if `slots` does not hold four cells from `first` (the grid pads its slots with
/// [`PADDING_CELLS`]) or `out` does not hold eight entries from `count` (a gather finds each
/// body at most once and `out` holds [`GATHER_SLACK`] more entries than there are bodies).
///
/// # Safety
/// The CPU must have AVX2 and POPCNT. The caller should be compiled for them: elsewhere every
/// intrinsic is a call (correct, but slow).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn compact_row_avx2(
    slots: &[[u32; SLOTS]],
    first: usize,
    cells: usize,
    me: u32,
    out: &mut [u32],
    count: usize,
) -> usize {
    use std::arch::x86_64::*;
    debug_assert!(cells <= 3);
    let source = &slots[first..first + 4];
    let target = &mut out[count..count + 8];
    let in_run = (1u32 << (SLOTS * cells)) - 1;
    // SAFETY: `source` is 32 bytes and `target` 32 bytes (unaligned accesses); the table
    // entry is one of `COMPACT_LANES`' 64, as `keep` has six bits.
    unsafe {
        let row = _mm256_loadu_si256(source.as_ptr().cast());
        let unwanted = _mm256_or_si256(
            _mm256_cmpeq_epi32(row, _mm256_set1_epi32(NONE as i32)),
            _mm256_cmpeq_epi32(row, _mm256_set1_epi32(me as i32)),
        );
        let keep = !(_mm256_movemask_ps(_mm256_castsi256_ps(unwanted)) as u32) & in_run & 63;
        let lanes = _mm256_loadu_si256(COMPACT_LANES[keep as usize].as_ptr().cast());
        let packed = _mm256_permutevar8x32_epi32(row, lanes);
        _mm256_storeu_si256(target.as_mut_ptr().cast(), packed);
        count + keep.count_ones() as usize
    }
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn compact_row_avx2(
    _: &[[u32; SLOTS]],
    _: usize,
    _: usize,
    _: u32,
    _: &mut [u32],
    _: usize,
) -> usize {
    unreachable!("AVX2 is only detected on x86_64")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{generate_scene, SceneConfig};

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn lane_table_moves_the_set_lanes_to_the_front() {
        assert_eq!(COMPACT_LANES[0b101001][..3], [0, 3, 5]);
        assert_eq!(COMPACT_LANES[0b111111][..6], [0, 1, 2, 3, 4, 5]);
        assert_eq!(COMPACT_LANES[0b100000][0], 5);
    }

    /// The bodies of the 3^dim block around `i`'s cell (or its layer), from the coordinates.
    fn expected_block(grid: &CellGrid, i: usize, layer: Option<(usize, u32)>) -> Vec<u32> {
        let c = grid.place[i].coord;
        let mut found: Vec<u32> = (0..grid.place.len())
            .filter(|&j| j != i)
            .filter(|&j| {
                (0..grid.dim).all(|k| {
                    let (a, b) = (grid.place[j].coord[k], c[k]);
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

    /// What `grid` gathers, sorted, after checking that the scalar gather (of `scalar`, the
    /// same grid built without SIMD) returns the same bodies in the same order.
    fn gathered(
        grid: &CellGrid,
        scalar: &CellGrid,
        i: usize,
        entering: Option<(usize, bool)>,
    ) -> Vec<u32> {
        // The stored cell kept beside the coordinates is the one they give.
        assert_eq!(
            grid.place[i].cell as usize,
            grid.cell_index(grid.place[i].coord)
        );
        // The called gather, the inlined form the calendar's AVX2 event loop uses, and the
        // scalar gather return the same bodies in the same order.
        let run = |grid: &CellGrid, inline: bool| {
            let mut out = vec![0; grid.place.len() + GATHER_SLACK];
            let count = if inline {
                grid.gather::<true>(i, entering, &mut out)
            } else {
                grid.gather::<false>(i, entering, &mut out)
            };
            out.truncate(count);
            out
        };
        let (out, inlined, reference) = (run(grid, false), run(grid, true), run(scalar, false));
        assert_eq!(inlined, out, "inlined vs called gather");
        assert_eq!(out, reference, "vector vs scalar gather");
        let mut found = out;
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
            let mut grid = CellGrid::new(&world, 0.0, true);
            let mut scalar = CellGrid::new(&world, 0.0, false);
            assert!(!scalar.avx2);
            let mut state = 99u64;
            let mut overflowed = 0;
            for round in 0..3000 {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let i = (state >> 33) as usize % world.len();
                let axis = (state >> 20) as usize % dim;
                let up = (state >> 10) & 1 == 1;
                let c = grid.place[i].coord[axis];
                if (up && c + 1 < grid.cells[axis]) || (!up && c > 0) {
                    grid.step(i, axis, up);
                    scalar.step(i, axis, up);
                    let layer = Some((axis, if up { c + 2 } else { c.wrapping_sub(2) }))
                        .filter(|&(_, at)| at < grid.cells[axis]);
                    let entering = gathered(&grid, &scalar, i, Some((axis, up)));
                    let expected = layer.map_or(Vec::new(), |l| expected_block(&grid, i, Some(l)));
                    assert_eq!(
                        entering, expected,
                        "dim {dim} round {round}: entering layer"
                    );
                }
                assert_eq!(
                    gathered(&grid, &scalar, i, None),
                    expected_block(&grid, i, None)
                );
                overflowed += grid.overflows.iter().filter(|&&o| o != 0).count();
            }
            assert!(overflowed > 0, "dim {dim}: no cell overflowed its slots");
        }
    }
}
