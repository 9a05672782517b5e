//! The incremental updates of [`UniformGrid`], for updates in which few boxes moved: each
//! moved box is taken out of the cells it left and put into those it entered, and its pairs
//! are found in its cells, in one of two ways.
//!
//! - By lookup (`update_by_lookup`): one pass over the pairs drops those of moved boxes that
//!   no longer overlap, then each pair a moved box meets in its cells is added (a lookup in
//!   the pair set, which finds most of them present). Cheap while the pairs are few.
//! - By change (`update_by_change`): each box a moved box meets is tested with its box at the
//!   last update and now, so that the pair set is touched only where a pair began or ended,
//!   with no pass over the pairs and no lookup for a pair that persists; it costs a scan of
//!   the cells a moved box leaves and two box tests instead of one. Chosen when the pairs
//!   are at least as many as the moved boxes: then the pass over them and their lookups, in a
//!   pair set that may outgrow the caches, cost more.
//!
//! By change, every pair that changed has a moved box, and is met at least once:
//! - a pair that ended overlapped before, so the two old ranges share the cell `c` of the
//!   minimum corner of the old boxes' intersection. If a moved box leaves `c`, it scans `c`
//!   before leaving (every box still in `c` then, and every box that left it earlier scanned
//!   it while this one was there); if neither leaves `c`, both are in it when the moved boxes
//!   scan their cells after all boxes are placed.
//! - a pair that began overlaps now, and the scan of the moved box's cells meets it in the
//!   cell of the minimum corner of the new boxes' intersection, where it is added once.
//! - boxes in the oversized list are in no cell: a moved box tests the list, and a moved box
//!   that is or was in the list tests every box.
//!
//! Removing a pair twice, or one that is absent, changes nothing, so the ended pairs need no
//! dedup. A change of filter or kind is the store's to re-evaluate (`ProxyStore::finish`):
//! here the filters and kinds of now stand for those of the last update too.

use super::{UniformGrid, FRESH, SCANS_ALL};
use crate::backend::{PairTracker, ProxyTable};
use crate::grid::stored::Placement;
use crate::util::MoveBuffer;
use crate::Aabb;

/// What an update knows of the boxes before it.
pub(super) struct Before<'a> {
    proxies: &'a ProxyTable,
    last: &'a [Aabb],
    marks: &'a [u8],
    moved: &'a MoveBuffer,
}

impl<'a> Before<'a> {
    pub(super) fn new(
        proxies: &'a ProxyTable,
        last: &'a [Aabb],
        marks: &'a [u8],
        moved: &'a MoveBuffer,
    ) -> Self {
        Self {
            proxies,
            last,
            marks,
            moved,
        }
    }

    /// The box of `slot` at the last update; `None` if it was not placed then.
    #[inline(always)]
    fn old_box(&self, slot: usize) -> Option<&Aabb> {
        if self.marks[slot] & FRESH != 0 {
            None
        } else if self.moved.contains(slot) {
            Some(&self.last[slot])
        } else {
            // Unmoved: the box is the one of the last update.
            Some(self.proxies.aabb(slot))
        }
    }

    /// The boxes of moved slot `a`, for testing it against many others.
    #[inline(always)]
    pub(super) fn mover(&self, a: usize) -> Mover {
        let now = *self.proxies.aabb(a);
        let old = self.old_box(a).copied();
        Mover {
            now,
            old,
            reach: old.map_or(now, |old| old.union(&now)),
        }
    }
}

/// A moved box now and at the last update, and the union of the two.
pub(super) struct Mover {
    now: Aabb,
    old: Option<Aabb>,
    reach: Aabb,
}

impl Mover {
    /// Whether this box and slot `b`'s overlapped at the last update and do now. One test
    /// when `b` did not move and overlaps neither box (most boxes of a cell).
    #[inline(always)]
    fn overlap(&self, before: &Before, b: usize, b_moved: bool) -> (bool, bool) {
        let now_b = before.proxies.aabb(b);
        let old_b = if b_moved {
            before.old_box(b)
        } else if !self.reach.overlaps(now_b) {
            return (false, false);
        } else {
            Some(now_b)
        };
        let was = match (&self.old, old_b) {
            (Some(x), Some(y)) => x.overlaps(y),
            _ => false,
        };
        (was, self.now.overlaps(now_b))
    }

    /// Ends the pairs of moved slot `a` with the boxes `others` (of a cell it is leaving) that
    /// overlapped it at the last update and no longer do.
    #[inline]
    pub(super) fn end_pairs_among(
        &self,
        others: &[u32],
        before: &Before,
        pairs: &mut PairTracker,
        a: usize,
    ) {
        for &other in others {
            let other = other as usize;
            if other != a
                && self.overlap(before, other, before.moved.contains(other)) == (true, false)
            {
                pairs.remove(a as u32, other as u32);
            }
        }
    }

    /// Applies the change of the pair `(a, b)`, met without a rule that makes it met once:
    /// adds it if it began (the add of a present pair changes nothing), removes it if it
    /// ended.
    #[inline]
    fn apply(&self, before: &Before, pairs: &mut PairTracker, a: usize, b: usize) {
        match self.overlap(before, b, before.moved.contains(b)) {
            (false, true) if before.proxies.can_pair(a, b) => pairs.add(a as u32, b as u32),
            (true, false) => pairs.remove(a as u32, b as u32),
            _ => {}
        }
    }
}

impl UniformGrid {
    /// Updates the cells and the pairs of the moved boxes by change (see the module's docs).
    pub(super) fn update_by_change(&mut self) {
        for k in 0..self.moved.len() {
            let slot = self.moved.slot(k);
            self.marks[slot] = match self.stored.placement[slot] {
                Placement::None => FRESH,
                Placement::Cells => 0,
                Placement::Oversized => SCANS_ALL,
            };
        }
        for k in 0..self.moved.len() {
            self.replace::<true>(self.moved.slot(k));
        }
        self.store
            .pairs
            .remove_pairs_of_removed(&self.store.proxies);
        for k in 0..self.moved.len() {
            self.pair_changes_of(self.moved.slot(k));
        }
        for k in 0..self.moved.len() {
            self.marks[self.moved.slot(k)] = 0;
        }
    }

    /// Adds the pairs of a moved box that began and removes those that ended among the boxes
    /// of its cells (a pair of two moved boxes by the one with the smaller slot) and the
    /// oversized list; a box marked to scan every box tests every placed box instead.
    fn pair_changes_of(&mut self, slot: usize) {
        let before = Before::new(&self.store.proxies, &self.last, &self.marks, &self.moved);
        let (stored, pairs) = (&self.stored, &mut self.store.pairs);
        let mover = before.mover(slot);
        if self.marks[slot] & SCANS_ALL != 0 {
            for other in before.proxies.live_slots() {
                if other != slot && stored.placement[other] != Placement::None {
                    mover.apply(&before, pairs, slot, other);
                }
            }
            return;
        }
        let range = stored.ranges[slot];
        range.for_each(|c| {
            let Some(cell) = stored.cells.find(&Self::key(c)) else {
                return;
            };
            for &other in stored.cells.items(cell) {
                let other = other as usize;
                let other_moved = before.moved.contains(other);
                if other == slot || (other_moved && other < slot) {
                    continue;
                }
                match mover.overlap(&before, other, other_moved) {
                    // Began: added in one cell only, the one of the intersection's corner.
                    (false, true)
                        if range.corner_cell(&stored.ranges[other]) == c
                            && before.proxies.can_pair(slot, other) =>
                    {
                        pairs.add(slot as u32, other as u32);
                    }
                    (true, false) => pairs.remove(slot as u32, other as u32),
                    _ => {}
                }
            }
        });
        for &other in &stored.oversized {
            let other = other as usize;
            // A moved oversized box scans every box itself.
            if !before.moved.contains(other) {
                mover.apply(&before, pairs, slot, other);
            }
        }
    }

    /// Updates the cells and the pairs of the moved boxes by lookup (see the module's docs).
    pub(super) fn update_by_lookup(&mut self) {
        for k in 0..self.moved.len() {
            self.replace::<false>(self.moved.slot(k));
        }
        self.store
            .pairs
            .remove_pairs_of_removed(&self.store.proxies);
        if !self.moved.is_empty() {
            let (proxies, moved) = (&self.store.proxies, &self.moved);
            self.store.pairs.retain(|a, b| {
                let (a, b) = (a as usize, b as usize);
                !(moved.contains(a) || moved.contains(b))
                    || proxies.aabb(a).overlaps(proxies.aabb(b))
            });
        }
        for k in 0..self.moved.len() {
            self.find_pairs_of(self.moved.slot(k));
        }
    }

    /// Finds the pairs of a moved slot: occupants of its cells (each pair only in the cell of
    /// its intersection's minimum corner) and the oversized list, or everything if oversized.
    fn find_pairs_of(&mut self, slot: usize) {
        let proxies = &self.store.proxies;
        let aabb = proxies.aabb(slot);
        match self.stored.placement[slot] {
            Placement::None => {}
            Placement::Oversized => {
                for other in proxies.live_slots() {
                    // Another moved oversized box finds the pair itself if it has the larger slot.
                    if other == slot
                        || (self.moved.contains(other)
                            && self.stored.placement[other] == Placement::Oversized
                            && other < slot)
                    {
                        continue;
                    }
                    if self.stored.placement[other] != Placement::None
                        && aabb.overlaps(proxies.aabb(other))
                        && proxies.can_pair(slot, other)
                    {
                        self.store.pairs.add(slot as u32, other as u32);
                    }
                }
            }
            Placement::Cells => {
                let range = self.stored.ranges[slot];
                let (cells, pairs, ranges, moved) = (
                    &self.stored.cells,
                    &mut self.store.pairs,
                    &self.stored.ranges,
                    &self.moved,
                );
                range.for_each(|c| {
                    let Some(cell) = cells.find(&Self::key(c)) else {
                        return;
                    };
                    for &other in cells.items(cell) {
                        let other = other as usize;
                        // Two moved boxes: the smaller slot reports.
                        if other == slot || (moved.contains(other) && other < slot) {
                            continue;
                        }
                        if aabb.overlaps(proxies.aabb(other))
                            && range.corner_cell(&ranges[other]) == c
                            && proxies.can_pair(slot, other)
                        {
                            pairs.add(slot as u32, other as u32);
                        }
                    }
                });
                for &other in &self.stored.oversized {
                    let other = other as usize;
                    if !self.moved.contains(other)
                        && aabb.overlaps(proxies.aabb(other))
                        && proxies.can_pair(slot, other)
                    {
                        self.store.pairs.add(slot as u32, other as u32);
                    }
                }
            }
        }
    }
}
