//! Pairs, pair events, and the tracker that turns an algorithm's pair changes into events.

use rustc_hash::FxHashSet;

use crate::backend::{key_indices, pair_key, PairSet, ProxyTable};
use crate::ProxyId;

/// An overlapping pair of proxies, the one with the smaller slot index first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pair {
    /// The proxy with the smaller slot index.
    pub a: ProxyId,
    /// The proxy with the larger slot index.
    pub b: ProxyId,
}

impl Pair {
    /// Orders the two ids by slot index.
    pub fn new(x: ProxyId, y: ProxyId) -> Self {
        if x.index() < y.index() {
            Self { a: x, b: y }
        } else {
            Self { a: y, b: x }
        }
    }
}

/// The pairs that began and ended during one `update`.
///
/// Applying them to the pair set before the update gives the set after it: every begun pair
/// was absent before and is present now, every ended pair the reverse; no pair appears twice.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PairEvents {
    /// Pairs that overlap now and did not before.
    pub begun: Vec<Pair>,
    /// Pairs that overlapped before and do not now, including every pair of a removed proxy.
    pub ended: Vec<Pair>,
}

impl PairEvents {
    /// Empty event lists.
    pub fn new() -> Self {
        Self::default()
    }

    /// Empties both lists, keeping their allocations.
    pub fn clear(&mut self) {
        self.begun.clear();
        self.ended.clear();
    }

    /// True when nothing began or ended.
    pub fn is_empty(&self) -> bool {
        self.begun.is_empty() && self.ended.is_empty()
    }
}

/// The current pair set of an algorithm plus the changes made to it since the last update.
///
/// Algorithms use one of two styles within a step:
/// - incremental: [`PairTracker::add`] and [`PairTracker::remove`] as they discover changes
///   (a pair may be added and removed several times; only the net change becomes an event);
/// - full recompute: [`PairTracker::begin_full`], [`PairTracker::mark`] for every overlapping
///   pair found, then [`PairTracker::end_full`], which ends every pair not marked.
///
/// [`PairTracker::finish`] then writes the events in the order the changes were first made,
/// so the same calls always produce the same events in the same order.
#[derive(Debug, Clone, Default)]
pub struct PairTracker {
    set: PairSet,
    /// Keys changed this step, in first-change order, with their presence at step start.
    changes: Vec<(u64, bool)>,
    /// Keys in `changes`, for the incremental style, where a pair may change several times.
    changed: FxHashSet<u64>,
    epoch: u32,
}

impl PairTracker {
    /// An empty tracker.
    pub fn new() -> Self {
        Self::default()
    }

    /// The current pairs.
    #[inline]
    pub fn set(&self) -> &PairSet {
        &self.set
    }

    /// Number of current pairs.
    #[inline]
    pub fn len(&self) -> usize {
        self.set.len()
    }

    /// True when there are no current pairs.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    /// True when `(a, b)` is a current pair.
    #[inline]
    pub fn contains(&self, a: u32, b: u32) -> bool {
        self.set.contains(a, b)
    }

    #[inline]
    fn note(&mut self, key: u64, present_before: bool) {
        if self.changed.insert(key) {
            self.changes.push((key, present_before));
        }
    }

    /// Incremental style: `(a, b)` overlaps now.
    #[inline]
    pub fn add(&mut self, a: u32, b: u32) {
        let key = pair_key(a, b);
        if self.set.insert_key(key, 0).1 {
            self.note(key, false);
        }
    }

    /// Incremental style: `(a, b)` does not overlap now (no-op if it was not a pair).
    #[inline]
    pub fn remove(&mut self, a: u32, b: u32) {
        let key = pair_key(a, b);
        if self.set.remove_key(key) {
            self.note(key, true);
        }
    }

    /// Incremental style: removes every pair for which `keep(a, b)` is false. O(pairs).
    pub fn retain(&mut self, mut keep: impl FnMut(u32, u32) -> bool) {
        let mut position = 0;
        while position < self.set.len() {
            let key = self.set.keys()[position];
            let (a, b) = key_indices(key);
            if keep(a, b) {
                position += 1;
            } else {
                // The last pair moves into `position`; look at it next.
                self.set.remove_at(position);
                self.note(key, true);
            }
        }
    }

    /// Ends every pair that has a proxy removed since the last update. O(pairs) when
    /// something was removed, free otherwise.
    pub fn remove_pairs_of_removed(&mut self, proxies: &ProxyTable) {
        if proxies.removed_slots().is_empty() {
            return;
        }
        self.retain(|a, b| !proxies.is_removed(a as usize) && !proxies.is_removed(b as usize));
    }

    /// Full-recompute style: starts a step in which every current pair will be [`mark`]ed.
    ///
    /// [`mark`]: PairTracker::mark
    pub fn begin_full(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            // After 2^32 steps, restart the epochs so that no stale tag equals a new epoch.
            self.set.fill_tags(0);
            self.epoch = 1;
        }
    }

    /// Full-recompute style: `(a, b)` overlaps now. Each pair must be marked at most once per
    /// step... or more, at the cost of a lookup each time.
    #[inline]
    pub fn mark(&mut self, a: u32, b: u32) {
        let key = pair_key(a, b);
        let (position, inserted) = self.set.insert_key(key, self.epoch);
        if inserted {
            self.changes.push((key, false));
        } else {
            self.set.set_tag(position, self.epoch);
        }
    }

    /// Full-recompute style: ends every pair not marked since [`PairTracker::begin_full`].
    pub fn end_full(&mut self) {
        let epoch = self.epoch;
        let mut position = 0;
        while position < self.set.len() {
            if self.set.tag(position) == epoch {
                position += 1;
            } else {
                let key = self.set.keys()[position];
                self.set.remove_at(position);
                self.changes.push((key, true));
            }
        }
    }

    /// Writes the net changes since the last `finish` into `events` (cleared first), with ids
    /// from `proxies`. Call before `ProxyTable::release_removed`.
    pub fn finish(&mut self, proxies: &ProxyTable, events: &mut PairEvents) {
        events.clear();
        for &(key, present_before) in &self.changes {
            let present_now = self.set.find_key(key).is_some();
            if present_now == present_before {
                continue;
            }
            let (a, b) = key_indices(key);
            let pair = Pair {
                a: proxies.id(a as usize),
                b: proxies.id(b as usize),
            };
            if present_now {
                events.begun.push(pair);
            } else {
                events.ended.push(pair);
            }
        }
        self.changes.clear();
        self.changed.clear();
    }

    /// Drops all pairs without events (for `clear`).
    pub fn clear(&mut self) {
        self.set.clear();
        self.changes.clear();
        self.changed.clear();
    }

    /// Bytes held, pair set included.
    pub fn memory_bytes(&self) -> usize {
        self.set.memory_bytes() + self.changes.capacity() * 16 + self.changed.capacity() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::unit_box;
    use crate::{CollisionFilter, ProxyKind};

    fn table(n: usize) -> ProxyTable {
        let mut table = ProxyTable::new();
        for _ in 0..n {
            table
                .insert(unit_box(), ProxyKind::Dynamic, CollisionFilter::ALL)
                .unwrap();
        }
        table
    }

    #[test]
    fn incremental_reports_net_changes_only() {
        let proxies = table(4);
        let mut tracker = PairTracker::new();
        let mut events = PairEvents::new();
        tracker.add(0, 1);
        tracker.add(2, 3);
        tracker.finish(&proxies, &mut events);
        assert_eq!(events.begun.len(), 2);
        assert!(events.ended.is_empty());

        // Removed and re-added: no event. Added and removed: no event.
        tracker.remove(1, 0);
        tracker.add(0, 1);
        tracker.add(1, 2);
        tracker.remove(2, 1);
        tracker.remove(3, 2);
        tracker.finish(&proxies, &mut events);
        assert!(events.begun.is_empty());
        assert_eq!(events.ended, vec![Pair::new(proxies.id(2), proxies.id(3))]);
        assert_eq!(tracker.len(), 1);
    }

    #[test]
    fn full_recompute_diffs_against_previous_set() {
        let proxies = table(4);
        let mut tracker = PairTracker::new();
        let mut events = PairEvents::new();
        tracker.begin_full();
        tracker.mark(0, 1);
        tracker.mark(1, 2);
        tracker.end_full();
        tracker.finish(&proxies, &mut events);
        assert_eq!(events.begun.len(), 2);

        tracker.begin_full();
        tracker.mark(2, 1);
        tracker.mark(2, 3);
        tracker.end_full();
        tracker.finish(&proxies, &mut events);
        assert_eq!(events.begun, vec![Pair::new(proxies.id(2), proxies.id(3))]);
        assert_eq!(events.ended, vec![Pair::new(proxies.id(0), proxies.id(1))]);
        assert!(tracker.contains(1, 2) && tracker.contains(3, 2) && !tracker.contains(0, 1));
    }

    #[test]
    fn removed_proxies_end_their_pairs() {
        let mut proxies = table(3);
        let mut tracker = PairTracker::new();
        let mut events = PairEvents::new();
        tracker.add(0, 1);
        tracker.add(1, 2);
        tracker.finish(&proxies, &mut events);
        let removed = proxies.id(1);
        proxies.remove(removed).unwrap();
        tracker.remove_pairs_of_removed(&proxies);
        tracker.finish(&proxies, &mut events);
        assert_eq!(events.ended.len(), 2);
        assert!(events
            .ended
            .iter()
            .all(|p| p.a == removed || p.b == removed));
        assert!(tracker.is_empty());
    }
}
