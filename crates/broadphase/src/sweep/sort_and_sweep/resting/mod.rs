//! The moved-against-resting update of [`SortAndSweep`](super::SortAndSweep): when few boxes
//! moved, only their pairs can have changed, so only they are swept, against each other and
//! against the boxes at rest, which stay sorted between updates. This is the split of
//! PhysX's ABP (its "sleeping" and "updated" box arrays) applied to box pruning
//! ([Terdiman07, "Box pruning revisited"]).
//!
//! The resting boxes are kept in a coarse grid over y and z (the sweep axis is x), each box
//! in every cell it touches and each cell sorted by minimum x, as the one-shot kernel's grid
//! (`crate::prune`) but kept between updates. One update with m moved boxes among n:
//! 1. the moved boxes are sorted by minimum x and bucketed into the cells they touch (those
//!    cells, and the cells of the moved and removed proxies' old entries, are dirty);
//! 2. in every dirty cell, the moved boxes are swept against each other and, by one walk of
//!    the two sorted lists, against the cell's resting boxes; resting entries of moved or
//!    removed proxies are stale and skipped. A pair is reported only in the cell holding the
//!    low corner of the two boxes' y/z intersection, which the entries' codes tell, so once;
//! 3. the pairs that may have ended are the pairs of the stale entries: found by sweeping
//!    them in the dirty cells, or by one pass over the pairs when that visits fewer. Those
//!    whose boxes parted end. Of the pairs found in step 2, those whose boxes overlapped
//!    before the moves too were present already; only the others are looked up, and begin;
//! 4. the dirty cells are rewritten without their stale entries and with the moved boxes;
//!    the others are copied.
//!
//! Pairs between two resting boxes are left as they were: neither box changed, and the pair
//! set was exact after the last update.

use crate::backend::ProxyStore;
use crate::util::radix_sort::{radix_sort_keys, sortable_key};
use crate::util::MoveBuffer;
use crate::{Aabb, Vec3};

/// Target cell side, in mean box extents (as the one-shot kernel's grid).
const CELL_EXTENTS: f64 = 3.0;
/// At most one cell per this many boxes: a cell costs a few words and a visit when the grid
/// is rebuilt.
const MIN_BOXES_PER_CELL: usize = 8;
/// At most this many cells along y or z.
const MAX_CELLS_PER_AXIS: u32 = 256;
/// Coarsen the grid when boxes would be stored more than this many times on average.
const MAX_COPIES_PER_BOX: usize = 3;

/// A uniform grid over y and z of the rotated boxes. Cell coordinates are clamped to the
/// grid, so a box outside the bounds the grid was chosen for lands in a border cell; the
/// cell function stays monotone, which is all the once-per-pair rule needs.
#[derive(Debug, Clone, Copy)]
struct CellGrid {
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
    fn range(&self, b: &Aabb) -> (u32, u32, u32, u32) {
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
    fn for_each_cell(&self, (y0, y1, z0, z1): (u32, u32, u32, u32), mut f: impl FnMut(usize, u32)) {
        for y in y0..=y1 {
            for z in z0..=z1 {
                let code = (y != y0) as u32 | ((z != z0) as u32) << 1;
                f((y * self.cells_z + z) as usize, code);
            }
        }
    }

    #[inline]
    fn count(&self) -> usize {
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

    /// A grid for `boxes`: cells of about [`CELL_EXTENTS`] mean extents over their bounds,
    /// coarsened while there are too many cells or copies.
    fn choose(boxes: &[Aabb]) -> Self {
        let n = boxes.len();
        if n == 0 {
            return Self::default();
        }
        let (mut low, mut high) = ([f32::MAX; 2], [f32::MIN; 2]);
        let mut extent = [0f64; 2];
        for b in boxes {
            for (k, axis) in [1, 2].into_iter().enumerate() {
                low[k] = low[k].min(b.min()[axis]);
                high[k] = high[k].max(b.max()[axis]);
                extent[k] += (b.max()[axis] - b.min()[axis]) as f64;
            }
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

/// An entry's slot word holds the slot in its low bits and, from this bit up, the entry's
/// code in its cell (see [`CellGrid::for_each_cell`]).
const CODE_SHIFT: u32 = 30;
const SLOT_MASK: u32 = (1 << CODE_SHIFT) - 1;
/// Slots from this many on do not fit an entry word: the update takes the full path.
pub(super) const MAX_SLOTS: usize = 1 << CODE_SHIFT;

/// The boxes at rest in the cells of a y/z grid, each cell sorted by minimum x, plus the
/// scratch of an update.
#[derive(Debug, Clone, Default)]
pub(super) struct RestingSet {
    /// False until built, and after an update that took the full path or changed the axis.
    valid: bool,
    axis: usize,
    grid: CellGrid,
    /// Cell `c` holds the entries `starts[c]..starts[c + 1]`: boxes rotated so that the sweep
    /// axis is x, sorted by minimum x, and their slots.
    starts: Vec<u32>,
    boxes: Vec<Aabb>,
    slots: Vec<u32>,
    /// Per slot: the cells its resting entries are in (`y0, y1, z0, z1`), and whether it has
    /// any.
    placed: Vec<[u16; 4]>,
    resting: Vec<bool>,
    /// Per slot: the box of its resting entries (rotated).
    rest_box: Vec<Aabb>,
    /// Per cell: whether it has stale entries or moved boxes this update.
    dirty: Vec<bool>,
    // Scratch: the moved boxes (rotated; while building, the resting ones) in sweep order
    // with their slots; the boxes gathered for sorting (also the merge's output) and their
    // sort keys; the moved boxes of cell `c` (`cell_boxes[moved_starts[c]..moved_starts[c +
    // 1]]` and their slots, copies so that a cell's sweep reads them in sequence); the next
    // free entry per cell; the stale entries of a cell; the slot pairs found.
    moved_boxes: Vec<Aabb>,
    moved_slots: Vec<u32>,
    keys: Vec<u64>,
    key_scratch: Vec<u64>,
    moved_starts: Vec<u32>,
    cell_boxes: Vec<Aabb>,
    cell_slots: Vec<u32>,
    cursor: Vec<u32>,
    new_starts: Vec<u32>,
    new_boxes: Vec<Aabb>,
    new_slots: Vec<u32>,
    stale_boxes: Vec<Aabb>,
    stale_slots: Vec<u32>,
    found: Vec<(u32, u32)>,
    parted: Vec<(u32, u32)>,
}

/// `v` with sweep axis `axis` moved to x (y and z follow in cyclic order).
#[inline]
pub(super) fn rotate(v: Vec3, axis: usize) -> Vec3 {
    match axis {
        0 => v,
        1 => Vec3::new(v.y, v.z, v.x),
        _ => Vec3::new(v.z, v.x, v.y),
    }
}

#[inline]
fn rotated(aabb: &Aabb, axis: usize) -> Aabb {
    // A permutation of a valid box's coordinates is valid.
    Aabb::new_unchecked(rotate(aabb.min(), axis), rotate(aabb.max(), axis))
}

/// Overlap on y and z of two boxes already known to overlap on x.
#[inline]
fn overlaps_yz(a: &Aabb, b: &Aabb) -> bool {
    let (a_min, a_max, b_min, b_max) = (a.min(), a.max(), b.min(), b.max());
    a_min.y <= b_max.y && b_min.y <= a_max.y && a_min.z <= b_max.z && b_min.z <= a_max.z
}

#[inline]
fn sort_key(b: &Aabb, index: usize) -> u64 {
    ((sortable_key(b.min().x) as u64) << 32) | index as u64
}

/// Below this many keys a comparison sort beats the radix sort's fixed cost (clearing and
/// scanning its digit counters).
const RADIX_MIN_KEYS: usize = 512;

/// Sorts keys made by [`sort_key`] (all distinct, so any sort gives the same order).
fn sort_keys(keys: &mut Vec<u64>, scratch: &mut Vec<u64>) {
    if keys.len() < RADIX_MIN_KEYS {
        keys.sort_unstable();
    } else {
        radix_sort_keys(keys, scratch);
    }
}

/// Cells of boxes in one array: cell `c` holds `boxes[starts[c]..starts[c + 1]]` and their
/// slots.
type CellLists<'a> = (&'a mut Vec<u32>, &'a mut Vec<Aabb>, &'a mut Vec<u32>);

/// Writes `boxes`, in sweep order, and their `slots` into every cell of `grid` they touch, so
/// that each cell of `out` comes out in sweep order; with `place`, records each slot as
/// resting there (see [`place`]); calls `touch` with every cell written. `cursor` is scratch.
fn scatter(
    grid: &CellGrid,
    (boxes, slots): (&[Aabb], &[u32]),
    (starts, out_boxes, out_slots): CellLists<'_>,
    cursor: &mut Vec<u32>,
    mut place_into: Option<Placement<'_>>,
    mut touch: impl FnMut(usize),
) {
    starts.clear();
    starts.resize(grid.count() + 1, 0);
    for b in boxes {
        grid.for_each_cell(grid.range(b), |c, _| starts[c + 1] += 1);
    }
    for c in 0..grid.count() {
        starts[c + 1] += starts[c];
    }
    let total = starts[grid.count()] as usize;
    out_boxes.clear();
    out_boxes.resize(total, Aabb::new_unchecked(Vec3::ZERO, Vec3::ZERO));
    out_slots.clear();
    out_slots.resize(total, 0);
    cursor.clear();
    cursor.extend_from_slice(&starts[..grid.count()]);
    for (b, &slot) in boxes.iter().zip(slots) {
        let range = grid.range(b);
        if let Some(into) = place_into.as_mut() {
            place(slot, b, range, into);
        }
        grid.for_each_cell(range, |c, code| {
            let at = cursor[c] as usize;
            out_boxes[at] = *b;
            out_slots[at] = slot | code << CODE_SHIFT;
            cursor[c] += 1;
            touch(c);
        });
    }
}

/// Per slot: the box of its resting entries, their cells, and whether it has any.
type Placement<'a> = (&'a mut [Aabb], &'a mut [[u16; 4]], &'a mut [bool]);

/// Records that `slot` rests with box `b` in the cells of `range`.
#[inline]
fn place(slot: u32, b: &Aabb, (y0, y1, z0, z1): (u32, u32, u32, u32), into: &mut Placement<'_>) {
    let slot = slot as usize;
    into.0[slot] = *b;
    into.1[slot] = [y0 as u16, y1 as u16, z0 as u16, z1 as u16];
    into.2[slot] = true;
}

/// Into `out`, the overlapping pairs of cell `cell` among the boxes `m` (sorted by minimum
/// x), and between `m` and the boxes `r` (sorted by minimum x) whose slot `skip` does not
/// exclude: `m` among themselves by a sweep, `m` against `r` by one walk of both lists (a pair
/// met by whichever box has the smaller minimum x, the one of `m` on ties). A pair is kept
/// only when the cell holds the low corner of its y/z intersection, so once over the grid:
/// there at least one of the two boxes starts on each axis, which their codes tell. Slots
/// are entry words (a slot with its code, [`CODE_SHIFT`]); pairs are written as slots.
fn sweep_cell(
    (m_boxes, m_slots): (&[Aabb], &[u32]),
    (r_boxes, r_slots): (&[Aabb], &[u32]),
    skip: &impl Fn(u32) -> bool,
    out: &mut Vec<(u32, u32)>,
) {
    let home = |a: u32, b: u32| (a & b) >> CODE_SHIFT == 0;
    let slot = |word: u32| word & SLOT_MASK;
    for i in 0..m_boxes.len() {
        let a = &m_boxes[i];
        for j in i + 1..m_boxes.len() {
            let b = &m_boxes[j];
            if b.min().x > a.max().x {
                break;
            }
            if overlaps_yz(a, b) && home(m_slots[i], m_slots[j]) {
                out.push((slot(m_slots[i]), slot(m_slots[j])));
            }
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < m_boxes.len() && j < r_boxes.len() {
        if m_boxes[i].min().x <= r_boxes[j].min().x {
            let a = &m_boxes[i];
            for k in j..r_boxes.len() {
                let r = &r_boxes[k];
                if r.min().x > a.max().x {
                    break;
                }
                if overlaps_yz(a, r) && home(m_slots[i], r_slots[k]) && !skip(slot(r_slots[k])) {
                    out.push((slot(m_slots[i]), slot(r_slots[k])));
                }
            }
            i += 1;
        } else {
            let r = &r_boxes[j];
            if m_boxes[i].min().x <= r.max().x && !skip(slot(r_slots[j])) {
                for k in i..m_boxes.len() {
                    let a = &m_boxes[k];
                    if a.min().x > r.max().x {
                        break;
                    }
                    if overlaps_yz(a, r) && home(m_slots[k], r_slots[j]) {
                        out.push((slot(m_slots[k]), slot(r_slots[j])));
                    }
                }
            }
            j += 1;
        }
    }
}

impl RestingSet {
    /// Forgets the resting boxes: the next [`RestingSet::update`] collects them again.
    pub(super) fn invalidate(&mut self) {
        self.valid = false;
    }

    /// Heap bytes held.
    pub(super) fn memory_bytes(&self) -> usize {
        (self.boxes.capacity()
            + self.moved_boxes.capacity()
            + self.new_boxes.capacity()
            + self.cell_boxes.capacity())
            * std::mem::size_of::<Aabb>()
            + (self.starts.capacity()
                + self.slots.capacity()
                + self.moved_slots.capacity()
                + self.moved_starts.capacity()
                + self.cell_slots.capacity()
                + self.cursor.capacity()
                + self.new_starts.capacity()
                + self.new_slots.capacity())
                * 4
            + (self.keys.capacity() + self.key_scratch.capacity()) * 8
            + (self.found.capacity() + self.parted.capacity()) * 8
            + self.stale_boxes.capacity() * std::mem::size_of::<Aabb>()
            + self.stale_slots.capacity() * 4
            + self.placed.capacity() * 8
            + self.rest_box.capacity() * std::mem::size_of::<Aabb>()
            + self.resting.capacity()
            + self.dirty.capacity()
    }

    /// Updates the pairs of `store` for the boxes listed in `moved` (moved, inserted or with a
    /// new kind since the last update), sweeping on `axis`; `rebuild` chooses the grid again
    /// from the current boxes. The pair set must be exact for every other pair of live
    /// proxies.
    pub(super) fn update(
        &mut self,
        store: &mut ProxyStore,
        moved: &MoveBuffer,
        axis: usize,
        rebuild: bool,
    ) {
        let built_now = !self.valid || self.axis != axis;
        if built_now {
            self.build(store, Some(moved), axis);
        }
        self.sort_moved(store, moved);
        // The pairs that may have ended are found by sweeping the stale entries of the dirty
        // cells, or by one pass over all pairs, whichever visits fewer: a pass over a pair
        // costs about half what a visit of an entry does. Built now, the list lacks the old
        // boxes of the moved proxies, so the pass it is.
        let dirty_entries: usize = (0..self.grid.count())
            .filter(|&c| self.dirty[c])
            .map(|c| (self.starts[c + 1] - self.starts[c]) as usize)
            .sum();
        let sweep_stale = !built_now && store.pairs().len() > 2 * dirty_entries;
        self.find_pairs(store, moved, sweep_stale);

        let (proxies, pairs) = store.split_mut();
        if !moved.is_empty() || !proxies.removed_slots().is_empty() {
            let parted = |a: usize, b: usize| {
                proxies.is_removed(a)
                    || proxies.is_removed(b)
                    || !proxies.aabb(a).overlaps(proxies.aabb(b))
            };
            if !sweep_stale {
                pairs.retain(|a, b| {
                    let (a, b) = (a as usize, b as usize);
                    !((moved.contains(a)
                        || moved.contains(b)
                        || proxies.is_removed(a)
                        || proxies.is_removed(b))
                        && parted(a, b))
                });
            } else {
                // Every pair that may have ended is in `parted`; removing an absent pair does
                // nothing.
                for &(a, b) in &self.parted {
                    if parted(a as usize, b as usize) {
                        pairs.remove(a, b);
                    }
                }
            }
            // A pair whose boxes overlapped before the moves too was present (or refused by
            // filters or kinds, whose changes the store re-evaluates itself): only the others
            // are looked up in the pair set.
            let (resting, rest_box) = (&self.resting, &self.rest_box);
            let unchanged =
                |a: usize, b: usize| resting[a] && resting[b] && rest_box[a].overlaps(&rest_box[b]);
            for &(a, b) in &self.found {
                let (i, j) = (a as usize, b as usize);
                if !unchanged(i, j) && proxies.can_pair(i, j) {
                    pairs.add(a, b);
                }
            }
            self.place_moved(store);
            self.merge(store, moved);
        }
        if rebuild && !built_now {
            // After the merge every live box is in place with its current box, so the next
            // update has the old boxes it needs.
            self.build(store, None, axis);
        }
    }

    /// The resting boxes from scratch: every live box not in `exclude`, in a grid chosen for
    /// them.
    fn build(&mut self, store: &ProxyStore, exclude: Option<&MoveBuffer>, axis: usize) {
        let proxies = store.proxies();
        self.axis = axis;
        self.keys.clear();
        self.new_boxes.clear();
        self.new_slots.clear();
        for slot in proxies.live_slots() {
            if !exclude.is_some_and(|moved| moved.contains(slot)) {
                let b = rotated(proxies.aabb(slot), axis);
                self.keys.push(sort_key(&b, self.new_boxes.len()));
                self.new_boxes.push(b);
                self.new_slots.push(slot as u32);
            }
        }
        self.grid = CellGrid::choose(&self.new_boxes);
        let slot_count = proxies.slot_count();
        self.placed.clear();
        self.placed.resize(slot_count, [0; 4]);
        self.resting.clear();
        self.resting.resize(slot_count, false);
        self.rest_box.clear();
        self.rest_box
            .resize(slot_count, Aabb::new_unchecked(Vec3::ZERO, Vec3::ZERO));
        self.dirty.clear();
        self.dirty.resize(self.grid.count(), false);
        self.sort_gathered();
        scatter(
            &self.grid,
            (&self.moved_boxes, &self.moved_slots),
            (&mut self.starts, &mut self.boxes, &mut self.slots),
            &mut self.cursor,
            Some((&mut self.rest_box, &mut self.placed, &mut self.resting)),
            |_| {},
        );
        self.valid = true;
    }

    /// The live moved boxes, rotated, by minimum x (then listing order), and bucketed into
    /// the cells they touch.
    fn sort_moved(&mut self, store: &ProxyStore, moved: &MoveBuffer) {
        let proxies = store.proxies();
        let slot_count = proxies.slot_count();
        if self.resting.len() < slot_count {
            self.placed.resize(slot_count, [0; 4]);
            self.resting.resize(slot_count, false);
            self.rest_box
                .resize(slot_count, Aabb::new_unchecked(Vec3::ZERO, Vec3::ZERO));
        }
        // The cells that lose an entry: those of moved and removed proxies. Their resting
        // flags and boxes stay as they were until `place_moved`: they tell which pairs were
        // present before.
        let (grid, placed, resting, dirty) =
            (&self.grid, &self.placed, &self.resting, &mut self.dirty);
        let removed = proxies
            .removed_slots()
            .iter()
            .map(|&slot| slot as usize)
            .filter(|&slot| !moved.contains(slot));
        for slot in (0..moved.len()).map(|k| moved.slot(k)).chain(removed) {
            if resting[slot] {
                let [y0, y1, z0, z1] = placed[slot].map(u32::from);
                grid.for_each_cell((y0, y1, z0, z1), |c, _| dirty[c] = true);
            }
        }
        self.keys.clear();
        self.new_boxes.clear();
        self.new_slots.clear();
        for k in 0..moved.len() {
            let slot = moved.slot(k);
            if proxies.is_live(slot) {
                let b = rotated(proxies.aabb(slot), self.axis);
                self.keys.push(sort_key(&b, self.new_boxes.len()));
                self.new_boxes.push(b);
                self.new_slots.push(slot as u32);
            }
        }
        self.sort_gathered();
        let dirty = &mut self.dirty;
        scatter(
            &self.grid,
            (&self.moved_boxes, &self.moved_slots),
            (
                &mut self.moved_starts,
                &mut self.cell_boxes,
                &mut self.cell_slots,
            ),
            &mut self.cursor,
            None,
            |c| dirty[c] = true,
        );
    }

    /// The moved boxes rest where they were bucketed; removed proxies rest no more.
    fn place_moved(&mut self, store: &ProxyStore) {
        let mut into = (
            &mut self.rest_box[..],
            &mut self.placed[..],
            &mut self.resting[..],
        );
        for (b, &slot) in self.moved_boxes.iter().zip(&self.moved_slots) {
            place(slot, b, self.grid.range(b), &mut into);
        }
        for &slot in store.proxies().removed_slots() {
            self.resting[slot as usize] = false;
        }
    }

    /// The boxes gathered in `new_boxes` (with their slots and sort keys) into `moved_boxes`
    /// and `moved_slots`, in sweep order.
    fn sort_gathered(&mut self) {
        sort_keys(&mut self.keys, &mut self.key_scratch);
        self.moved_boxes.clear();
        self.moved_slots.clear();
        for &key in &self.keys {
            let k = key as u32 as usize;
            self.moved_boxes.push(self.new_boxes[k]);
            self.moved_slots.push(self.new_slots[k]);
        }
    }

    /// The pairs whose overlap may have changed, as slots, in the cells that lost or gained
    /// an entry: into `found`, every overlapping pair with a moved box (new boxes); into
    /// `parted`, every pair that overlapped with a stale entry (the old boxes of moved and
    /// removed proxies, which every pair of theirs present before this update overlapped).
    fn find_pairs(&mut self, store: &ProxyStore, moved: &MoveBuffer, with_parted: bool) {
        let proxies = store.proxies();
        let grid = self.grid;
        self.found.clear();
        self.parted.clear();
        let stale = |slot: u32| moved.contains(slot as usize) || proxies.is_removed(slot as usize);
        for c in 0..grid.count() {
            if !self.dirty[c] {
                continue;
            }
            let range = self.starts[c] as usize..self.starts[c + 1] as usize;
            let (r_boxes, r_slots) = (&self.boxes[range.clone()], &self.slots[range]);
            let moved_range = self.moved_starts[c] as usize..self.moved_starts[c + 1] as usize;
            let new = (
                &self.cell_boxes[moved_range.clone()],
                &self.cell_slots[moved_range],
            );
            sweep_cell(new, (r_boxes, r_slots), &stale, &mut self.found);
            if !with_parted {
                continue;
            }

            self.stale_boxes.clear();
            self.stale_slots.clear();
            for (b, &word) in r_boxes.iter().zip(r_slots) {
                if stale(word & SLOT_MASK) {
                    self.stale_boxes.push(*b);
                    self.stale_slots.push(word);
                }
            }
            let old = (&self.stale_boxes[..], &self.stale_slots[..]);
            sweep_cell(old, (r_boxes, r_slots), &stale, &mut self.parted);
        }
    }

    /// Every cell with its stale entries dropped and its moved boxes merged in, in sweep
    /// order (a resting box before a moved one of equal minimum).
    fn merge(&mut self, store: &ProxyStore, moved: &MoveBuffer) {
        let proxies = store.proxies();
        self.new_boxes.clear();
        self.new_slots.clear();
        self.new_starts.clear();
        for c in 0..self.grid.count() {
            self.new_starts.push(self.new_boxes.len() as u32);
            let (start, end) = (self.starts[c] as usize, self.starts[c + 1] as usize);
            if !std::mem::replace(&mut self.dirty[c], false) {
                self.new_boxes.extend_from_slice(&self.boxes[start..end]);
                self.new_slots.extend_from_slice(&self.slots[start..end]);
                continue;
            }
            let moved_range = self.moved_starts[c] as usize..self.moved_starts[c + 1] as usize;
            let (m_boxes, m_slots) = (
                &self.cell_boxes[moved_range.clone()],
                &self.cell_slots[moved_range],
            );
            let mut i = 0;
            for at in start..end {
                let (r, slot) = (&self.boxes[at], self.slots[at]);
                let index = (slot & SLOT_MASK) as usize;
                if moved.contains(index) || proxies.is_removed(index) {
                    continue;
                }
                while i < m_boxes.len() && m_boxes[i].min().x < r.min().x {
                    self.new_boxes.push(m_boxes[i]);
                    self.new_slots.push(m_slots[i]);
                    i += 1;
                }
                self.new_boxes.push(*r);
                self.new_slots.push(slot);
            }
            self.new_boxes.extend_from_slice(&m_boxes[i..]);
            self.new_slots.extend_from_slice(&m_slots[i..]);
        }
        self.new_starts.push(self.new_boxes.len() as u32);
        std::mem::swap(&mut self.starts, &mut self.new_starts);
        std::mem::swap(&mut self.boxes, &mut self.new_boxes);
        std::mem::swap(&mut self.slots, &mut self.new_slots);
    }
}
