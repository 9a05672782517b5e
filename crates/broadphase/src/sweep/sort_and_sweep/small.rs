//! The full update of a small scene with static boxes (level geometry): the static boxes stay
//! sorted between updates, so that an update gathers, sorts and sweeps only the others, and
//! meets the static boxes in one walk of the two sorted lists, never visiting a pair of two
//! static boxes. Below a few hundred boxes everything is in the first-level cache and the
//! one-shot kernel's fixed costs (its grid, its tags, sorting every box) are most of an
//! update; this is the plain, cache-resident path that [Terdiman07, "Box pruning revisited"]
//! describes for the bipartite case.

use crate::backend::ProxyStore;
use crate::util::MoveBuffer;
use crate::{Aabb, ProxyKind};

use super::resting::{overlaps_yz, rotated, sort_key};

/// Scenes of at most this many live boxes, at least half of them static, take this path.
pub(super) const MAX_BOXES: usize = 256;

/// Boxes rotated so that the sweep axis is x, sorted by minimum x (then slot), and their
/// slots.
#[derive(Debug, Clone, Default)]
struct SortedBoxes {
    boxes: Vec<Aabb>,
    slots: Vec<u32>,
}

impl SortedBoxes {
    fn memory_bytes(&self) -> usize {
        self.boxes.capacity() * std::mem::size_of::<Aabb>() + self.slots.capacity() * 4
    }
}

/// The sorted static boxes and the scratch of an update.
#[derive(Debug, Clone, Default)]
pub(super) struct SmallPath {
    /// False until built, and whenever a static box may have changed since.
    valid: bool,
    axis: usize,
    statics: SortedBoxes,
    /// Per slot: whether its box is in `statics`.
    cached: Vec<bool>,
    /// The other boxes, this update.
    movers: SortedBoxes,
    /// Sort keys (minimum x, then gather index) and the gathered boxes, unsorted.
    keys: Vec<u64>,
    gathered: SortedBoxes,
}

impl SmallPath {
    /// Forgets the static boxes: the next update collects them again.
    pub(super) fn invalidate(&mut self) {
        self.valid = false;
    }

    /// Heap bytes held.
    pub(super) fn memory_bytes(&self) -> usize {
        self.statics.memory_bytes()
            + self.movers.memory_bytes()
            + self.gathered.memory_bytes()
            + self.keys.capacity() * 8
            + self.cached.capacity()
    }

    /// Into `out` (cleared first), every pair of slots of `store` whose boxes overlap (closed
    /// boxes, filters not applied), except the pairs of two static boxes, sweeping on `axis`;
    /// false, with `out` untouched, when fewer than half the live boxes are static (the
    /// kernel's vectorised sweep then does better on the others). `moved` lists the proxies
    /// moved, inserted or given a new kind since the last update: when one of them, or a
    /// removed proxy, is or was static, the static boxes are sorted again. Must be called at
    /// every full update, and the path invalidated at every other, so that no change to a
    /// static box goes unseen. O(m log m + s + k) for m other boxes, s static ones and k
    /// candidate pairs along the sweep axis; O(s log s) more when the static boxes changed.
    pub(super) fn pairs(
        &mut self,
        store: &ProxyStore,
        moved: &MoveBuffer,
        axis: usize,
        out: &mut Vec<(u32, u32)>,
    ) -> bool {
        let proxies = store.proxies();
        if proxies.static_count() * 2 < proxies.len() {
            self.invalidate();
            return false;
        }
        if !self.statics_unchanged(store, moved, axis) {
            self.collect(store, axis, true);
            self.cached.clear();
            self.cached.resize(proxies.slot_count(), false);
            for &slot in &self.statics.slots {
                self.cached[slot as usize] = true;
            }
            self.axis = axis;
            self.valid = true;
        }
        self.collect(store, axis, false);
        out.clear();
        sweep_within(&self.movers, out);
        sweep_between(&self.movers, &self.statics, out);
        true
    }

    /// True when the sorted static boxes are those of `store` now: built for `axis`, and no
    /// proxy moved, inserted, removed or given a new kind since is or was static.
    fn statics_unchanged(&self, store: &ProxyStore, moved: &MoveBuffer, axis: usize) -> bool {
        let proxies = store.proxies();
        let touches_statics = |slot: usize| {
            self.cached.get(slot).copied().unwrap_or(false)
                || (proxies.is_live(slot) && proxies.kind(slot) == ProxyKind::Static)
        };
        self.valid
            && self.axis == axis
            && (0..moved.len()).all(|k| !touches_statics(moved.slot(k)))
            && proxies
                .removed_slots()
                .iter()
                .all(|&slot| !touches_statics(slot as usize))
    }

    /// Into `statics` (with `statics` true) or `movers`, the live boxes of that kind, rotated
    /// for `axis` and sorted.
    fn collect(&mut self, store: &ProxyStore, axis: usize, statics: bool) {
        let proxies = store.proxies();
        let (keys, gathered) = (&mut self.keys, &mut self.gathered);
        keys.clear();
        gathered.boxes.clear();
        gathered.slots.clear();
        for slot in proxies.live_slots() {
            if (proxies.kind(slot) == ProxyKind::Static) != statics {
                continue;
            }
            let b = rotated(proxies.aabb(slot), axis);
            keys.push(sort_key(&b, gathered.boxes.len()));
            gathered.boxes.push(b);
            gathered.slots.push(slot as u32);
        }
        // The keys end in distinct indices (in slot order): any sort gives one order.
        keys.sort_unstable();
        let out = if statics {
            &mut self.statics
        } else {
            &mut self.movers
        };
        out.boxes.clear();
        out.slots.clear();
        for &key in keys.iter() {
            let index = key as u32 as usize;
            out.boxes.push(gathered.boxes[index]);
            out.slots.push(gathered.slots[index]);
        }
    }
}

/// Calls `pair` with the index of every box of `list` from `from` on that overlaps `pivot`,
/// given that those boxes start on x no lower than `pivot` does (the list is sorted by
/// minimum x): the scan stops at the first that starts past `pivot`'s end.
#[inline]
fn scan(pivot: &Aabb, list: &[Aabb], from: usize, mut pair: impl FnMut(usize)) {
    for (k, b) in list.iter().enumerate().skip(from) {
        if b.min().x > pivot.max().x {
            break;
        }
        if overlaps_yz(pivot, b) {
            pair(k);
        }
    }
}

/// The overlapping pairs of one sorted list, as slot pairs.
fn sweep_within(list: &SortedBoxes, out: &mut Vec<(u32, u32)>) {
    let (boxes, slots) = (&list.boxes, &list.slots);
    for (i, a) in boxes.iter().enumerate() {
        scan(a, boxes, i + 1, |j| out.push((slots[i], slots[j])));
    }
}

/// The overlapping pairs between two lists sorted by minimum x, by one walk of both: each pair
/// is met by whichever box starts lower on x (the first list's on ties), which scans the other
/// list from where the walk stands up to its own maximum x.
fn sweep_between(a: &SortedBoxes, b: &SortedBoxes, out: &mut Vec<(u32, u32)>) {
    let (mut i, mut j) = (0, 0);
    while i < a.boxes.len() && j < b.boxes.len() {
        if a.boxes[i].min().x <= b.boxes[j].min().x {
            scan(&a.boxes[i], &b.boxes, j, |k| {
                out.push((a.slots[i], b.slots[k]))
            });
            i += 1;
        } else {
            scan(&b.boxes[j], &a.boxes, i, |k| {
                out.push((a.slots[k], b.slots[j]))
            });
            j += 1;
        }
    }
}
