//! The moved-against-resting update of [`SortAndSweep`](super::SortAndSweep): when few boxes
//! moved, only their pairs can have changed, so only they are swept, against each other and
//! against the boxes at rest, which stay sorted between updates. This is the split of
//! PhysX's ABP (its "sleeping" and "updated" box arrays) applied to box pruning
//! ([Terdiman07, "Box pruning revisited"]).
//!
//! The resting boxes are kept in a coarse grid over y and z (the sweep axis is x), each box
//! in every cell it touches and each cell sorted by minimum x, as the one-shot kernel's grid
//! (`crate::prune`) but kept between updates. One update with m moved (or removed) proxies
//! among n:
//! 1. each moved proxy is swept with the union of its box at the last update and its box
//!    now when the two overlap, else with each box apart (a box that jumped is not swept
//!    over the space between); a removed one with its old box, an inserted one with its new
//!    box. These entries are sorted by minimum x and bucketed into the cells they touch
//!    (those cells are dirty, as are the cells of the moved proxies' old resting entries);
//! 2. in every dirty cell, the entries are swept against each other and against the cell's
//!    resting boxes; resting entries of moved or removed proxies are stale and skipped. A
//!    cell keeps its resting boxes in two sorted lists, the narrow ones (at most
//!    [`WIDE_EXTENTS`] mean extents long on x) and the wide ones: a few entries find their
//!    narrow candidates by a search from their minimum x less that bound, without walking
//!    the cell; many entries, and the wide list, take one walk of both sorted lists. A pair
//!    is considered only in the cell holding the low corner of the y/z intersection of its
//!    two boxes, which the entries' codes tell, so once. Every pair that overlapped before or overlaps now is met by entries that may
//!    report its change, and the old and new boxes tell whether it began or ended;
//! 3. the pairs that ended leave the pair set, those that began and that filters and kinds
//!    allow join it: only the changes touch the set;
//! 4. the dirty cells' lists are brought up to date in place (`upkeep`): an entry whose
//!    proxy keeps its cells and list takes the new box where it is and moves by a few places
//!    to keep the order, others leave or join by shifting the list's tail within the room
//!    each list was placed with, and a cell with many of those is rewritten whole; the clean
//!    cells are not touched. A list that outgrows its room has every box placed again.
//!
//! Pairs between two resting boxes are left as they were: neither box changed, and the pair
//! set was exact after the last update. When the resting boxes were collected again in this
//! update (after an update that took the full path), the old boxes of the moved proxies are
//! unknown: every pair found overlapping is added, and one pass over the pair set drops the
//! pairs of moved and removed proxies whose boxes parted.

mod grid;
mod sweep;
mod upkeep;

use crate::backend::{ProxyStore, ProxyTable};
use crate::util::radix_sort::{sort_distinct_keys, sortable_key};
use crate::util::MoveBuffer;
use crate::{Aabb, Vec3};
use grid::{CellGrid, CellRange};
pub(super) use sweep::overlaps_yz;
use sweep::{sweep_cell, Changes, RestingLists, Swept, CODE_SHIFT, SLOT_MASK};
use upkeep::Edit;

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
    /// The longest extent on x of a narrow box (see [`is_narrow`]), chosen with the grid.
    wide_x: f32,
    /// Cell `c` holds two lists of entries, its narrow boxes (see [`is_narrow`]) and its
    /// wide ones, rotated so that the sweep axis is x and each list sorted by minimum x, with
    /// their slot words: list `l` (`2c` and `2c + 1`) is `lens[l]` entries from `starts[l]`,
    /// in room up to `starts[l + 1]`, so that an update changes a list in place.
    starts: Vec<u32>,
    lens: Vec<u32>,
    boxes: Vec<Aabb>,
    slots: Vec<u32>,
    /// Per slot: where its resting entries are, if it has any.
    rest: Vec<Rest>,
    /// Per cell: whether it has stale entries or moved boxes this update.
    dirty: Vec<bool>,
    // Scratch. The swept proxies in listing order (their old and new boxes, the cells of the
    // new box); gathered for sorting (also a rewritten list, see `upkeep`): boxes, slots,
    // entry tags and sort keys; the swept entries in sweep order with their slots and tags;
    // the entries of cell `c` (`cell_boxes[moved_starts[c]..moved_starts[c + 1]]` with their
    // slot words and tags, copies so that a cell's sweep reads them in sequence); the next
    // free entry per cell; the new boxes of a rewritten cell; the edits of one cell's lists;
    // the pairs that changed.
    swept: Vec<Swept>,
    new_ranges: Vec<CellRange>,
    new_tags: Vec<u32>,
    keys: Vec<u64>,
    key_scratch: Vec<u64>,
    moved_boxes: Vec<Aabb>,
    moved_slots: Vec<u32>,
    moved_tags: Vec<u32>,
    moved_starts: Vec<u32>,
    cell_boxes: Vec<Aabb>,
    cell_slots: Vec<u32>,
    cell_tags: Vec<u32>,
    cursor: Vec<u32>,
    new_boxes: Vec<Aabb>,
    new_slots: Vec<u32>,
    merge_cell: Vec<(Aabb, u32)>,
    edits: Vec<Edit>,
    /// Scratch of the grid's choice.
    bounds: Vec<f32>,
    changes: Changes,
    #[cfg(test)]
    pub(super) upkeep_counts: upkeep::UpkeepCounts,
}

/// Where a slot rests: the box of its resting entries (rotated) and the cells they are in
/// (`y0, y1, z0, z1`), or [`Rest::NONE`]. One record per slot, so that looking up a moved
/// proxy reads one cache line.
#[derive(Debug, Clone, Copy)]
struct Rest {
    aabb: Aabb,
    cells: [u16; 4],
}

impl Rest {
    /// Not resting (cell indices stay below [`u16::MAX`]: at most 256 cells per axis).
    const NONE: Rest = Rest {
        aabb: Aabb::ORIGIN,
        cells: [u16::MAX; 4],
    };

    /// The box of the resting entries and their cells, if any.
    #[inline]
    fn get(&self) -> Option<(Aabb, CellRange)> {
        let [y0, y1, z0, z1] = self.cells;
        (y0 != u16::MAX).then_some((self.aabb, (y0.into(), y1.into(), z0.into(), z1.into())))
    }
}

/// Resting boxes at most this many mean extents long on x are narrow: a moved box finds
/// them by their minimum x within that length of its own. A longer bound widens every
/// search window; a shorter one puts more boxes in the wide lists, which are walked whole.
const WIDE_EXTENTS: f64 = 2.0;

/// True when `b` is at most `wide_x` long on x, in the f32 arithmetic of the search: then
/// `b.min().x >= fl(b.max().x - wide_x) >= fl(x - wide_x)` for any `x <= b.max().x`, since
/// rounding is monotone, so a search from `fl(x - wide_x)` misses no narrow box that
/// reaches `x`.
#[inline]
pub(super) fn is_narrow(b: &Aabb, wide_x: f32) -> bool {
    b.min().x >= b.max().x - wide_x
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

/// `aabb` with sweep axis `axis` moved to x.
#[inline]
pub(super) fn rotated(aabb: &Aabb, axis: usize) -> Aabb {
    // A permutation of a valid box's coordinates is valid.
    Aabb::new_unchecked(rotate(aabb.min(), axis), rotate(aabb.max(), axis))
}

/// A key that sorts by minimum x, then by `index` (distinct keys for distinct indices).
#[inline]
pub(super) fn sort_key(b: &Aabb, index: usize) -> u64 {
    ((sortable_key(b.min().x) as u64) << 32) | index as u64
}

/// Cells of boxes in one array: cell `c` holds `boxes[starts[c]..starts[c + 1]]` and their
/// slot words.
type CellLists<'a> = (&'a mut Vec<u32>, &'a mut Vec<Aabb>, &'a mut Vec<u32>);

/// The room left after a resting list of `len` entries when the boxes are placed, so that
/// updates insert in place: a quarter more, and a few for lists that start short.
#[inline]
fn slack(len: u32) -> u32 {
    len / 4 + 4
}

/// Writes `boxes`, in sweep order, and their `slots` into every cell of `grid` they touch, so
/// that each cell of `out` comes out in sweep order: one list per cell, or with `wide_x`
/// two, the narrow boxes then the wide ones (see [`is_narrow`]); with `index`, also each
/// box's word of the first list of `index` into the second; with `place`, records each slot
/// as resting there (see [`place`]); with `lens`, leaves room after each list for
/// [`slack`] more entries and records the lists' lengths there (list `l` then holds
/// `starts[l]..starts[l] + lens[l]` of the room `starts[l]..starts[l + 1]`); calls `touch`
/// with every cell written. `cursor` is scratch.
#[allow(clippy::too_many_arguments)]
fn scatter(
    grid: &CellGrid,
    (boxes, slots): (&[Aabb], &[u32]),
    (starts, out_boxes, out_slots): CellLists<'_>,
    mut index: Option<(&[u32], &mut Vec<u32>)>,
    cursor: &mut Vec<u32>,
    mut place_into: Option<Placement<'_>>,
    (wide_x, mut lens): (Option<f32>, Option<&mut Vec<u32>>),
    mut touch: impl FnMut(usize),
) {
    let per_cell = if wide_x.is_some() { 2 } else { 1 };
    let lists = grid.count() * per_cell;
    let list =
        |b: &Aabb, c: usize| c * per_cell + wide_x.is_some_and(|w| !is_narrow(b, w)) as usize;
    starts.clear();
    starts.resize(lists + 1, 0);
    for b in boxes {
        grid.for_each_cell(grid.range(b), |c, _| starts[list(b, c) + 1] += 1);
    }
    if let Some(lens) = lens.as_mut() {
        lens.clear();
        lens.extend_from_slice(&starts[1..]);
        for room in &mut starts[1..] {
            *room += slack(*room);
        }
    }
    for l in 0..lists {
        starts[l + 1] += starts[l];
    }
    let total = starts[lists] as usize;
    out_boxes.clear();
    out_boxes.resize(total, Aabb::ORIGIN);
    out_slots.clear();
    out_slots.resize(total, 0);
    if let Some((_, out_index)) = index.as_mut() {
        out_index.clear();
        out_index.resize(total, 0);
    }
    cursor.clear();
    cursor.extend_from_slice(&starts[..lists]);
    for (k, (b, &slot)) in boxes.iter().zip(slots).enumerate() {
        let range = grid.range(b);
        if let Some(into) = place_into.as_mut() {
            place(slot, b, range, into);
        }
        grid.for_each_cell(range, |c, code| {
            let l = list(b, c);
            let at = cursor[l] as usize;
            out_boxes[at] = *b;
            out_slots[at] = slot | code << CODE_SHIFT;
            if let Some((index, out_index)) = index.as_mut() {
                out_index[at] = index[k];
            }
            cursor[l] += 1;
            touch(c);
        });
    }
}

/// Per slot: where its resting entries are.
type Placement<'a> = &'a mut [Rest];

/// Records that `slot` rests with box `b` in the cells of `range`.
#[inline]
fn place(slot: u32, b: &Aabb, (y0, y1, z0, z1): CellRange, into: &mut Placement<'_>) {
    into[slot as usize] = Rest {
        aabb: *b,
        cells: [y0 as u16, y1 as u16, z0 as u16, z1 as u16],
    };
}

impl RestingSet {
    /// Forgets the resting boxes: the next [`RestingSet::update`] collects them again.
    pub(super) fn invalidate(&mut self) {
        self.valid = false;
    }

    /// Heap bytes held.
    pub(super) fn memory_bytes(&self) -> usize {
        let size = std::mem::size_of::<Aabb>();
        (self.boxes.capacity()
            + self.moved_boxes.capacity()
            + self.new_boxes.capacity()
            + self.cell_boxes.capacity()
            + self.rest.capacity())
            * size
            + (self.starts.capacity()
                + self.lens.capacity()
                + self.slots.capacity()
                + self.moved_slots.capacity()
                + self.moved_tags.capacity()
                + self.new_tags.capacity()
                + self.moved_starts.capacity()
                + self.cell_slots.capacity()
                + self.cell_tags.capacity()
                + self.cursor.capacity()
                + self.new_slots.capacity())
                * 4
            + (self.keys.capacity() + self.key_scratch.capacity()) * 8
            + self.swept.capacity() * std::mem::size_of::<Swept>()
            + self.new_ranges.capacity() * std::mem::size_of::<CellRange>()
            + self.merge_cell.capacity() * std::mem::size_of::<(Aabb, u32)>()
            + self.edits.capacity() * std::mem::size_of::<Edit>()
            + self.bounds.capacity() * 4
            + self.changes.memory_bytes()
            + self.rest.capacity() * 8
            + self.dirty.capacity()
    }

    /// Updates the pairs of `store` for the boxes listed in `moved` (moved, inserted or with a
    /// new kind since the last update) and the removed proxies, sweeping on `axis`; `rebuild`
    /// chooses the grid again from the current boxes. The pair set must be exact for every
    /// other pair of live proxies.
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
        if !moved.is_empty() || !store.proxies().removed_slots().is_empty() {
            self.sweep_moved(store, moved, built_now);
        }
        if rebuild && !built_now {
            // After the upkeep every live box is in place with its current box, so the next
            // update has the old boxes it needs. The boxes are placed again only when the
            // grid chosen for them now is not the one they are in.
            self.gather(store, None, axis);
            let grid = CellGrid::choose(&self.new_boxes, &mut self.bounds);
            if !grid.is_close_to(&self.grid) {
                self.place_gathered(store, grid);
            }
        }
    }

    /// The update's work when some proxy moved or was removed: steps 1 to 4 of the module
    /// docs.
    fn sweep_moved(&mut self, store: &mut ProxyStore, moved: &MoveBuffer, built_now: bool) {
        self.sort_moved(store, moved);
        self.find_changes(store, moved);

        let (proxies, pairs) = store.split_mut();
        if built_now {
            // The old boxes of the moved proxies are unknown: every pair of a moved or removed
            // proxy whose boxes parted ends, found by one pass over the pairs.
            pairs.retain(|a, b| {
                let (a, b) = (a as usize, b as usize);
                let stale = |i: usize| is_stale(moved, proxies, i);
                !((stale(a) || stale(b))
                    && (proxies.is_removed(a)
                        || proxies.is_removed(b)
                        || !proxies.aabb(a).overlaps(proxies.aabb(b))))
            });
        } else {
            // Removing a pair that filters or kinds kept out does nothing.
            for &(a, b) in &self.changes.ended {
                pairs.remove(a, b);
            }
        }
        // A pair that overlapped before too was present (or refused by filters or kinds,
        // whose changes the store re-evaluates itself): only the begun ones are looked up.
        for &(a, b) in &self.changes.begun {
            if proxies.can_pair(a as usize, b as usize) {
                pairs.add(a, b);
            }
        }
        self.place_moved();
        let proxies = store.proxies();
        if !self.upkeep(&|slot: u32| is_stale(moved, proxies, slot as usize)) {
            // Every live box rests with its current box now.
            self.build(store, None, self.axis);
            #[cfg(test)]
            {
                self.upkeep_counts.placed_again += 1;
            }
        }
    }

    /// The resting boxes from scratch: every live box not in `exclude`, in a grid chosen for
    /// them.
    fn build(&mut self, store: &ProxyStore, exclude: Option<&MoveBuffer>, axis: usize) {
        self.gather(store, exclude, axis);
        let grid = CellGrid::choose(&self.new_boxes, &mut self.bounds);
        self.place_gathered(store, grid);
    }

    /// Collects every live box not in `exclude`, rotated for `axis`, with its slot and sort
    /// key, for [`RestingSet::place_gathered`].
    fn gather(&mut self, store: &ProxyStore, exclude: Option<&MoveBuffer>, axis: usize) {
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
    }

    /// Makes the gathered boxes the resting boxes, in `grid`.
    fn place_gathered(&mut self, store: &ProxyStore, grid: CellGrid) {
        self.grid = grid;
        let slot_count = store.proxies().slot_count();
        self.rest.clear();
        self.rest.resize(slot_count, Rest::NONE);
        self.dirty.clear();
        self.dirty.resize(self.grid.count(), false);
        self.sort_gathered(false);
        let mean_x = self
            .moved_boxes
            .iter()
            .map(|b| (b.max().x - b.min().x) as f64)
            .sum::<f64>()
            / self.moved_boxes.len().max(1) as f64;
        // Infinite boxes make the mean infinite: then only they are wide.
        self.wide_x = ((WIDE_EXTENTS * mean_x) as f32).min(f32::MAX);
        scatter(
            &self.grid,
            (&self.moved_boxes, &self.moved_slots),
            (&mut self.starts, &mut self.boxes, &mut self.slots),
            None,
            &mut self.cursor,
            Some(&mut self.rest),
            (Some(self.wide_x), Some(&mut self.lens)),
            |_| {},
        );
        self.valid = true;
    }

    /// The swept proxies (live moved ones, and removed ones that were resting) with their
    /// old and new boxes, their entries sorted by minimum x (then listing order) and
    /// bucketed into the cells they touch, which become dirty, as do the cells of the stale
    /// entries.
    fn sort_moved(&mut self, store: &ProxyStore, moved: &MoveBuffer) {
        let proxies = store.proxies();
        let slot_count = proxies.slot_count();
        if self.rest.len() < slot_count {
            self.rest.resize(slot_count, Rest::NONE);
        }
        self.keys.clear();
        self.new_boxes.clear();
        self.new_slots.clear();
        self.new_tags.clear();
        self.swept.clear();
        self.new_ranges.clear();
        let (grid, rest, dirty) = (&self.grid, &self.rest, &mut self.dirty);
        // A proxy moved and then removed is swept once, as removed.
        let live_moved = (0..moved.len())
            .map(|k| moved.slot(k))
            .filter(|&slot| proxies.is_live(slot));
        let removed = proxies.removed_slots().iter().map(|&slot| slot as usize);
        for slot in live_moved.chain(removed) {
            let old = rest[slot].get().map(|(b, cells)| {
                // Its resting entries are stale: their cells change.
                grid.for_each_cell(cells, |c, _| dirty[c] = true);
                b
            });
            let new = proxies
                .is_live(slot)
                .then(|| rotated(proxies.aabb(slot), self.axis));
            let swept = Swept {
                old,
                new,
                slot: slot as u32,
            };
            self.new_ranges
                .push(new.map_or((0, 0, 0, 0), |b| grid.range(&b)));
            let (keys, boxes, slots, tags) = (
                &mut self.keys,
                &mut self.new_boxes,
                &mut self.new_slots,
                &mut self.new_tags,
            );
            swept.entries(self.swept.len() as u32, |b, tag| {
                keys.push(sort_key(&b, boxes.len()));
                boxes.push(b);
                slots.push(slot as u32);
                tags.push(tag);
            });
            self.swept.push(swept);
        }
        self.sort_gathered(true);
        let dirty = &mut self.dirty;
        scatter(
            &self.grid,
            (&self.moved_boxes, &self.moved_slots),
            (
                &mut self.moved_starts,
                &mut self.cell_boxes,
                &mut self.cell_slots,
            ),
            Some((&self.moved_tags, &mut self.cell_tags)),
            &mut self.cursor,
            None,
            (None, None),
            |c| dirty[c] = true,
        );
    }

    /// The moved boxes rest where their new boxes are; removed proxies rest no more.
    fn place_moved(&mut self) {
        let mut into = &mut self.rest[..];
        for (swept, &range) in self.swept.iter().zip(&self.new_ranges) {
            match swept.new {
                Some(b) => place(swept.slot, &b, range, &mut into),
                None => into[swept.slot as usize] = Rest::NONE,
            }
        }
    }

    /// The boxes gathered in `new_boxes` (with their slots, sort keys and, `with_tags`, entry
    /// tags) into `moved_boxes`, `moved_slots` and `moved_tags`, in sweep order.
    fn sort_gathered(&mut self, with_tags: bool) {
        sort_distinct_keys(&mut self.keys, &mut self.key_scratch);
        self.moved_boxes.clear();
        self.moved_slots.clear();
        self.moved_tags.clear();
        for &key in &self.keys {
            let k = key as u32 as usize;
            self.moved_boxes.push(self.new_boxes[k]);
            self.moved_slots.push(self.new_slots[k]);
            if with_tags {
                self.moved_tags.push(self.new_tags[k]);
            }
        }
    }

    /// Into `changes`, the pairs with a swept proxy that began or ended, from one sweep of
    /// every dirty cell.
    fn find_changes(&mut self, store: &ProxyStore, moved: &MoveBuffer) {
        let proxies = store.proxies();
        self.changes.clear();
        let stale = |slot: u32| is_stale(moved, proxies, slot as usize);
        for c in 0..self.grid.count() {
            if !self.dirty[c] {
                continue;
            }
            let [narrow, wide] = self.lists(c);
            let moved_range = self.moved_starts[c] as usize..self.moved_starts[c + 1] as usize;
            sweep_cell(
                (
                    &self.cell_boxes[moved_range.clone()],
                    &self.cell_slots[moved_range.clone()],
                    &self.cell_tags[moved_range],
                ),
                RestingLists {
                    narrow: (&self.boxes[narrow.clone()], &self.slots[narrow]),
                    wide: (&self.boxes[wide.clone()], &self.slots[wide]),
                    wide_x: self.wide_x,
                },
                &self.swept,
                &stale,
                &mut self.changes,
            );
        }
    }

    /// The entry ranges of cell `c`'s narrow and wide lists.
    fn lists(&self, c: usize) -> [std::ops::Range<usize>; 2] {
        [self.list(2 * c), self.list(2 * c + 1)]
    }

    /// The entry range of list `l`.
    #[inline]
    fn list(&self, l: usize) -> std::ops::Range<usize> {
        let start = self.starts[l] as usize;
        start..start + self.lens[l] as usize
    }
}

/// True when the resting entries of `slot` are stale in this update: it moved or was removed.
#[inline]
fn is_stale(moved: &MoveBuffer, proxies: &ProxyTable, slot: usize) -> bool {
    moved.contains(slot) || proxies.is_removed(slot)
}
