//! Step 4 of the resting update (see the parent module): the resting lists brought up to date
//! in place, so that an update writes only where boxes changed. A moved proxy that keeps its
//! cells and its list (narrow or wide) has each of its entries overwritten where it is and
//! moved by a few places to keep the list sorted; an entry that leaves or joins a list
//! shifts the list's tail within the list's room. A cell with more such shifts than
//! [`MAX_SHIFTS`] is rewritten whole, and when a list outgrows its room the caller places
//! every box again, with room to spare.

use super::sweep::{new_box_entry, swept_index, REPORTS_BEGUN, REPORTS_ENDED};
use super::{is_narrow, RestingSet, CODE_SHIFT, SLOT_MASK};
use crate::Aabb;

/// A change to one resting list.
#[derive(Debug, Clone, Copy)]
pub(super) enum Edit {
    /// The entry of a proxy with box `old` takes box `new` and slot word `word`.
    Replace {
        list: usize,
        old: Aabb,
        new: Aabb,
        word: u32,
    },
    /// The entry of `slot` with box `old` leaves.
    Remove { list: usize, old: Aabb, slot: u32 },
    /// An entry with box `new` and slot word `word` joins.
    Insert { list: usize, new: Aabb, word: u32 },
}

/// A cell with more entries leaving or joining its lists than this is rewritten whole: each
/// such edit shifts the tail of a list, where a rewrite copies the cell once.
const MAX_SHIFTS: usize = 4;

/// How often each way of the upkeep ran (for tests): entries replaced in place, entries that
/// left or joined a list in place, cells rewritten, and placements of every box after a list
/// outgrew its room.
#[cfg(test)]
#[derive(Debug, Clone, Copy, Default)]
pub(in crate::sweep::sort_and_sweep) struct UpkeepCounts {
    pub(in crate::sweep::sort_and_sweep) replaced: u64,
    pub(in crate::sweep::sort_and_sweep) shifted: u64,
    pub(in crate::sweep::sort_and_sweep) rewritten: u64,
    pub(in crate::sweep::sort_and_sweep) placed_again: u64,
}

impl RestingSet {
    /// Brings every dirty cell's lists to the boxes the proxies swept this update rest with
    /// now (their new boxes; none for the removed ones), each list in sweep order. Runs after
    /// [`RestingSet::place_moved`]. False when a list outgrew its room, or an entry was not
    /// where its proxy's record says (which would be a defect): the lists are then partly
    /// updated, and the caller places every box again.
    pub(super) fn upkeep(&mut self, stale: &impl Fn(u32) -> bool) -> bool {
        for c in 0..self.grid.count() {
            if !std::mem::replace(&mut self.dirty[c], false) {
                continue;
            }
            self.cell_edits(c);
            let shifts = self
                .edits
                .iter()
                .filter(|edit| !matches!(edit, Edit::Replace { .. }))
                .count();
            #[cfg(test)]
            {
                let counts = &mut self.upkeep_counts;
                if shifts <= MAX_SHIFTS {
                    counts.shifted += shifts as u64;
                    counts.replaced += (self.edits.len() - shifts) as u64;
                } else {
                    counts.rewritten += 1;
                }
            }
            let done = if shifts <= MAX_SHIFTS {
                self.apply_edits()
            } else {
                self.rewrite_cell(c, stale)
            };
            if !done {
                return false;
            }
        }
        true
    }

    /// Into `edits`, the changes to cell `c`'s lists, from the cell's swept entries: a proxy
    /// whose old entry is in the cell (an entry that reports ended pairs holds the old box)
    /// and whose new box belongs to the same list of the cell is replaced; otherwise its old
    /// entry leaves and its new box (from an entry that reports begun pairs) joins.
    fn cell_edits(&mut self, c: usize) {
        self.edits.clear();
        let (grid, wide_x) = (&self.grid, self.wide_x);
        let list = |b: &Aabb| 2 * c + !is_narrow(b, wide_x) as usize;
        for at in self.moved_starts[c] as usize..self.moved_starts[c + 1] as usize {
            let tag = self.cell_tags[at];
            let k = swept_index(tag);
            let swept = &self.swept[k];
            let old = swept
                .old
                .filter(|b| tag & REPORTS_ENDED != 0 && grid.code_in(grid.range(b), c).is_some());
            let new = swept
                .new
                .filter(|_| tag & REPORTS_BEGUN != 0)
                .and_then(|b| {
                    let code = grid.code_in(self.new_ranges[k], c)?;
                    Some((b, swept.slot | code << CODE_SHIFT))
                });
            match (old, new) {
                (Some(old), Some((new, word))) if list(&old) == list(&new) => {
                    self.edits.push(Edit::Replace {
                        list: list(&old),
                        old,
                        new,
                        word,
                    });
                }
                (old, new) => {
                    if let Some(old) = old {
                        self.edits.push(Edit::Remove {
                            list: list(&old),
                            old,
                            slot: swept.slot,
                        });
                    }
                    if let Some((new, word)) = new {
                        self.edits.push(Edit::Insert {
                            list: list(&new),
                            new,
                            word,
                        });
                    }
                }
            }
        }
    }

    /// Applies `edits` in place; false when a list is full or an entry is missing. Each edit
    /// leaves its list sorted, so they apply in any order.
    fn apply_edits(&mut self) -> bool {
        for k in 0..self.edits.len() {
            let done = match self.edits[k] {
                Edit::Replace {
                    list,
                    old,
                    new,
                    word,
                } => self
                    .find(list, &old, word & SLOT_MASK)
                    .map(|at| self.replace(list, at, new, word))
                    .is_some(),
                Edit::Remove { list, old, slot } => self
                    .find(list, &old, slot)
                    .map(|at| self.remove_at(list, at))
                    .is_some(),
                Edit::Insert { list, new, word } => self.insert(list, new, word),
            };
            if !done {
                return false;
            }
        }
        true
    }

    /// Where in list `l` the entry of `slot` with box `b` is: a binary search for `b`'s
    /// minimum x, then a scan of the entries with that minimum.
    fn find(&self, l: usize, b: &Aabb, slot: u32) -> Option<usize> {
        let range = self.list(l);
        let boxes = &self.boxes[range.clone()];
        let x = b.min().x;
        let first = boxes.partition_point(|r| r.min().x < x);
        (first..boxes.len())
            .take_while(|&i| boxes[i].min().x == x)
            .map(|i| range.start + i)
            .find(|&at| self.slots[at] & SLOT_MASK == slot)
    }

    /// Puts `new` with `word` at `at` in list `l`, then moves it to where its minimum x
    /// belongs (a moved box rarely passes more than a few neighbours).
    fn replace(&mut self, l: usize, at: usize, new: Aabb, word: u32) {
        let range = self.list(l);
        let boxes = &mut self.boxes[range.clone()];
        let slots = &mut self.slots[range.clone()];
        let mut i = at - range.start;
        boxes[i] = new;
        slots[i] = word;
        let x = new.min().x;
        while i > 0 && boxes[i - 1].min().x > x {
            boxes.swap(i - 1, i);
            slots.swap(i - 1, i);
            i -= 1;
        }
        while i + 1 < boxes.len() && boxes[i + 1].min().x < x {
            boxes.swap(i, i + 1);
            slots.swap(i, i + 1);
            i += 1;
        }
    }

    /// Takes the entry at `at` out of list `l`.
    fn remove_at(&mut self, l: usize, at: usize) {
        let end = self.list(l).end;
        self.boxes.copy_within(at + 1..end, at);
        self.slots.copy_within(at + 1..end, at);
        self.lens[l] -= 1;
    }

    /// Puts `new` with `word` into list `l` after the entries of equal or lower minimum x;
    /// false when the list's room is full.
    fn insert(&mut self, l: usize, new: Aabb, word: u32) -> bool {
        let range = self.list(l);
        if range.end == self.starts[l + 1] as usize {
            return false;
        }
        let x = new.min().x;
        let at = range.start + self.boxes[range.clone()].partition_point(|r| r.min().x <= x);
        self.boxes.copy_within(at..range.end, at + 1);
        self.slots.copy_within(at..range.end, at + 1);
        self.boxes[at] = new;
        self.slots[at] = word;
        self.lens[l] += 1;
        true
    }

    /// Rewrites cell `c`'s lists without their `stale` entries and with the new boxes of the
    /// swept proxies that touch the cell merged in; false when a list outgrows its room.
    fn rewrite_cell(&mut self, c: usize, stale: &impl Fn(u32) -> bool) -> bool {
        // The new boxes that touch the cell, from the cell's entries that hold one, by
        // minimum x: such an entry is at most as low as its new box, so the order is nearly
        // sweep order already.
        self.merge_cell.clear();
        for at in self.moved_starts[c] as usize..self.moved_starts[c + 1] as usize {
            let Some(k) = new_box_entry(self.cell_tags[at]) else {
                continue;
            };
            if let Some(new) = self.swept[k].new {
                if let Some(code) = self.grid.code_in(self.new_ranges[k], c) {
                    let slot = self.cell_slots[at] & SLOT_MASK;
                    self.merge_cell.push((new, slot | code << CODE_SHIFT));
                }
            }
        }
        insertion_sort_by_min_x(&mut self.merge_cell);
        let wide_x = self.wide_x;
        for (l, narrow) in [(2 * c, true), (2 * c + 1, false)] {
            self.new_boxes.clear();
            self.new_slots.clear();
            let pending = self
                .merge_cell
                .iter()
                .filter(|(b, _)| is_narrow(b, wide_x) == narrow);
            merge_list(
                (&self.boxes, &self.slots),
                self.list(l),
                pending,
                stale,
                (&mut self.new_boxes, &mut self.new_slots),
            );
            let (start, len) = (self.starts[l] as usize, self.new_boxes.len());
            if start + len > self.starts[l + 1] as usize {
                return false;
            }
            self.boxes[start..start + len].copy_from_slice(&self.new_boxes);
            self.slots[start..start + len].copy_from_slice(&self.new_slots);
            self.lens[l] = len as u32;
        }
        true
    }
}

/// Appends to `out` the entries of `boxes[range]` (with their slot words) whose slot is not
/// `stale`, merged with `pending` (in sweep order) so that the result is in sweep order, a
/// resting entry before a pending one of equal minimum x. The resting entries are copied in
/// runs, which end at a stale entry and before a pending one.
fn merge_list<'a>(
    (boxes, slots): (&[Aabb], &[u32]),
    range: std::ops::Range<usize>,
    pending: impl Iterator<Item = &'a (Aabb, u32)>,
    stale: &impl Fn(u32) -> bool,
    (out_boxes, out_slots): (&mut Vec<Aabb>, &mut Vec<u32>),
) {
    let mut pending = pending.peekable();
    let mut run = range.start;
    for at in range.clone() {
        if stale(slots[at] & SLOT_MASK) {
            out_boxes.extend_from_slice(&boxes[run..at]);
            out_slots.extend_from_slice(&slots[run..at]);
            run = at + 1;
            continue;
        }
        let x = boxes[at].min().x;
        if pending.peek().is_some_and(|(b, _)| b.min().x < x) {
            out_boxes.extend_from_slice(&boxes[run..at]);
            out_slots.extend_from_slice(&slots[run..at]);
            run = at;
            while let Some((b, word)) = pending.next_if(|(b, _)| b.min().x < x) {
                out_boxes.push(*b);
                out_slots.push(*word);
            }
        }
    }
    out_boxes.extend_from_slice(&boxes[run..range.end]);
    out_slots.extend_from_slice(&slots[run..range.end]);
    for &(b, word) in pending {
        out_boxes.push(b);
        out_slots.push(word);
    }
}

/// Sorts a cell's new boxes by minimum x, stably (equal minima keep sweep order). They come
/// in the sweep order of the entries holding them, so the insertion sort costs O(k + the
/// inversions), and an inversion costs nothing the sweep did not already pay: if entry e
/// precedes entry f and f's new box starts before e's, then e.min <= f.min <= f's new box's
/// min < e's new box's min <= e.max, so e and f overlap along x, a candidate pair that the
/// cell's sweep of its moved entries visited.
fn insertion_sort_by_min_x(entries: &mut [(Aabb, u32)]) {
    for i in 1..entries.len() {
        let mut j = i;
        while j > 0 && entries[j - 1].0.min().x > entries[j].0.min().x {
            entries.swap(j - 1, j);
            j -= 1;
        }
    }
}
