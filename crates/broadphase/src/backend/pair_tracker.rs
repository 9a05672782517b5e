//! Pairs, pair events, and the tracker that turns an algorithm's pair changes into events.

use rustc_hash::FxHashSet;

use crate::backend::sorted_pairs::SortedPairs;
use crate::backend::{key_indices, pair_key, PairSet, ProxyTable};
use crate::{Error, ProxyId, Result};

/// An overlapping pair of proxies, the one with the smaller slot index first, with the keys
/// their callers gave them ([`BroadPhase::insert_keyed`](crate::BroadPhase::insert_keyed); 0
/// for proxies inserted without one), so that an engine reads its own handles (entities,
/// collider handles) from events without a map of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pair {
    /// The proxy with the smaller slot index.
    pub a: ProxyId,
    /// The proxy with the larger slot index.
    pub b: ProxyId,
    /// The key of `a`.
    pub key_a: u64,
    /// The key of `b`.
    pub key_b: u64,
}

impl Pair {
    /// Orders the two ids by slot index; both keys 0.
    pub fn new(x: ProxyId, y: ProxyId) -> Self {
        Self::with_keys((x, 0), (y, 0))
    }

    /// Orders two (id, key) by slot index.
    pub fn with_keys(x: (ProxyId, u64), y: (ProxyId, u64)) -> Self {
        let (first, second) = if x.0.index() < y.0.index() {
            (x, y)
        } else {
            (y, x)
        };
        Self {
            a: first.0,
            b: second.0,
            key_a: first.1,
            key_b: second.1,
        }
    }

    /// The pair of slots `a` and `b` of `proxies` (live or removed since the last update).
    #[inline]
    pub(crate) fn of_slots(proxies: &ProxyTable, a: usize, b: usize) -> Self {
        Self {
            a: proxies.id(a),
            b: proxies.id(b),
            key_a: proxies.key(a),
            key_b: proxies.key(b),
        }
    }
}

/// The pairs that began and ended during one `update`.
///
/// Applying them to the pair set before the update gives the set after it: every begun pair
/// was absent before and is present now, every ended pair the reverse; no pair appears twice.
/// Two calls widen this on purpose: the pairs of a proxy removed with
/// [`BroadPhase::remove_without_events`](crate::BroadPhase::remove_without_events) end
/// without an event, and the pairs of a proxy passed to
/// [`BroadPhase::report_pairs_again`](crate::BroadPhase::report_pairs_again) are all listed
/// as begun, those present before included.
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
///   pair found, then [`PairTracker::end_full`], which ends every pair not marked. The marked
///   pairs are sorted and merged with the previous step's, so a pair found again costs no
///   lookup in the hash table; only pairs that began or ended do.
///
/// A step may use both, the incremental calls first (SAP ends the pairs of removed proxies,
/// then may recompute everything). [`PairTracker::finish`] then writes the events in the
/// order the changes were first made, so the same calls always produce the same events in
/// the same order.
///
/// # Pair limit
/// A step that ends with more than [`PairTracker::limit`] pairs (by default
/// [`PairSet::MAX_LEN`]) fails: [`PairTracker::finish`] returns [`Error::PairLimit`], empties
/// the set and reports no events. So that memory stays bounded during the step, the step is
/// marked failed and further pairs dropped once the full-recompute style has marked more
/// than `limit` distinct pairs (its marks are deduplicated when they reach twice the limit,
/// plus 64), or once the incremental style's set holds twice the limit (plus 64), which
/// covers the pairs a step adds and then removes again. The next step then starts with [`PairTracker::lost`] true: an
/// incremental algorithm must find all its pairs again, not only the changes.
///
/// # Memory
/// The set's 16 to 20 bytes per pair (see [`PairSet`]), plus 8 bytes per pair changed in a
/// step (16 in the incremental style, which also remembers which keys changed), kept as
/// capacity for the next step; the full-recompute style adds 24 bytes per pair (the marked
/// pairs, the sorted pairs of the last step and the sort's scratch). The events a caller
/// reads cost 32 bytes per begun or ended pair.
#[derive(Debug, Clone)]
pub struct PairTracker {
    set: PairSet,
    /// Keys changed this step that were absent at step start, in first-change order.
    absent_before: Vec<u64>,
    /// Keys changed this step that were present at step start, in first-change order.
    present_before: Vec<u64>,
    /// Keys in either list, for the incremental style, where a pair may change several times.
    changed: FxHashSet<u64>,
    /// The full-recompute style's marked pairs and the set's sorted keys.
    full: SortedPairs,
    limit: usize,
    overflowed: bool,
    lost: bool,
    /// Slots whose pairs the next `finish` reports as begun again, with their flags by slot.
    again: Vec<u32>,
    again_flags: Vec<bool>,
}

impl Default for PairTracker {
    fn default() -> Self {
        Self {
            set: PairSet::new(),
            absent_before: Vec::new(),
            present_before: Vec::new(),
            changed: FxHashSet::default(),
            full: SortedPairs::default(),
            limit: PairSet::MAX_LEN,
            overflowed: false,
            lost: false,
            again: Vec::new(),
            again_flags: Vec::new(),
        }
    }
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

    /// Most pairs the set may hold.
    #[inline]
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Sets the most pairs the set may hold (`None`: [`PairSet::MAX_LEN`], also the largest
    /// limit taken). Takes effect at the next step.
    pub fn set_limit(&mut self, limit: Option<usize>) {
        self.limit = limit.unwrap_or(PairSet::MAX_LEN).min(PairSet::MAX_LEN);
    }

    /// The size the set may reach within a step of the incremental style.
    #[inline]
    fn transient_limit(&self) -> usize {
        self.limit
            .saturating_mul(2)
            .saturating_add(64)
            .min(PairSet::MAX_LEN)
    }

    /// True when the last [`PairTracker::finish`] failed and emptied the set: the step under
    /// way must find every pair, not only the changes.
    #[inline]
    pub fn lost(&self) -> bool {
        self.lost
    }

    /// Lists every pair of slot `slot` after the step as begun at the next
    /// [`PairTracker::finish`], those already present before included.
    pub fn report_again(&mut self, slot: u32) {
        self.again.push(slot);
    }

    /// Marks the step overflowed (an algorithm's own pair-sized scratch set refused a pair),
    /// so that [`PairTracker::finish`] fails.
    pub fn refuse(&mut self) {
        self.overflowed = true;
    }

    #[inline]
    fn note(&mut self, key: u64, present_before: bool) {
        if self.changed.insert(key) {
            if present_before {
                self.present_before.push(key);
            } else {
                self.absent_before.push(key);
            }
        }
    }

    /// A change of the full-recompute style: listed directly when the step made no
    /// incremental change (nothing to deduplicate against), through [`PairTracker::note`]
    /// otherwise.
    #[inline]
    fn note_full(&mut self, key: u64, present_before: bool) {
        if !self.changed.is_empty() {
            self.note(key, present_before);
        } else if present_before {
            self.present_before.push(key);
        } else {
            self.absent_before.push(key);
        }
    }

    /// Incremental style: `(a, b)` overlaps now.
    #[inline]
    pub fn add(&mut self, a: u32, b: u32) {
        let key = pair_key(a, b);
        // Within a step the set may pass through more pairs than it ends with (a pair added
        // by one swap, removed by a later one): only a set twice the limit (and some) is
        // refused during the step; `finish` judges the final count.
        if self.set.len() >= self.transient_limit() && self.set.find_key(key).is_none() {
            self.overflowed = true;
            return;
        }
        // Below the limit, which is at most `PairSet::MAX_LEN`, the insert cannot fail.
        if let Ok((_, true)) = self.set.insert_key(key) {
            self.full.invalidate();
            self.note(key, false);
        }
    }

    /// Incremental style: `(a, b)` does not overlap now (no-op if it was not a pair).
    #[inline]
    pub fn remove(&mut self, a: u32, b: u32) {
        let key = pair_key(a, b);
        if self.set.remove_key(key) {
            self.full.invalidate();
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
                self.full.invalidate();
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
        self.full.begin();
    }

    /// Full-recompute style: `(a, b)` overlaps now. A pair may be marked more than once per
    /// step; the copies are dropped at [`PairTracker::end_full`].
    #[inline]
    pub fn mark(&mut self, a: u32, b: u32) {
        if self.overflowed {
            return; // the step fails anyway; keep memory bounded
        }
        // Copies are dropped when the marked keys reach twice the limit (and some), so the
        // step's memory stays bounded; more distinct pairs than the limit fail the step.
        if self.full.marked_len() >= self.transient_limit() && self.full.sort_marked() > self.limit
        {
            self.overflowed = true;
            return;
        }
        self.full.mark(pair_key(a, b));
    }

    /// Full-recompute style: ends every pair not marked since [`PairTracker::begin_full`]
    /// and adds every marked pair not present.
    pub fn end_full(&mut self) {
        self.end_full_among(None::<fn(u32) -> bool>);
    }

    /// Full-recompute style restricted to the pairs with a changed slot: when the step
    /// marked every overlapping pair that has a slot for which `changed` holds (and maybe
    /// others), ends the pairs of changed slots not marked, adds every marked pair not
    /// present, and keeps the pairs of two unchanged slots as they are. `None`: every slot
    /// changed ([`PairTracker::end_full`]). Must not be used while [`PairTracker::lost`]
    /// holds (the set is empty, so its unchanged pairs are unknown).
    pub fn end_full_among(&mut self, changed: Option<impl Fn(u32) -> bool>) {
        debug_assert!(changed.is_none() || !self.lost);
        if self.overflowed || self.full.sort_marked() > self.limit {
            // `finish` fails and empties the set.
            self.overflowed = true;
            self.full.invalidate();
            return;
        }
        let mut full = std::mem::take(&mut self.full);
        full.take_sorted_copy(self.set.keys());
        // Ascending keys: the same calls give the same events in the same order.
        full.diff_among(changed, |key, present_before| {
            if present_before {
                self.set.remove_key(key);
            } else if self.set.insert_key(key).is_err() {
                // Past `PairSet::MAX_LEN`, which only the pairs kept by a restricted step
                // can add to the at most `limit` marked ones: `finish` fails.
                self.overflowed = true;
            }
            self.note_full(key, present_before);
        });
        self.full = full;
    }

    /// Writes the net changes since the last `finish` into `events` (cleared first), with ids
    /// from `proxies`. Call before `ProxyTable::release_removed`.
    ///
    /// Fails with [`Error::PairLimit`] when the step found more pairs than the limit; the set
    /// is then empty, `events` too, and [`PairTracker::lost`] is true until the next success.
    pub fn finish(&mut self, proxies: &ProxyTable, events: &mut PairEvents) -> Result<()> {
        events.clear();
        self.changed.clear();
        // A limit lowered below the pairs already held counts as an overflow too.
        if self.overflowed || self.set.len() > self.limit {
            self.set.clear();
            self.full.clear();
            self.absent_before.clear();
            self.present_before.clear();
            self.overflowed = false;
            self.lost = true;
            self.again.clear();
            self.give_back_memory();
            return Err(Error::PairLimit { limit: self.limit });
        }
        self.lost = false;
        let pair = |key: u64| {
            let (a, b) = key_indices(key);
            Pair::of_slots(proxies, a as usize, b as usize)
        };
        for &key in &self.absent_before {
            if self.set.find_key(key).is_some() {
                events.begun.push(pair(key));
            }
        }
        for &key in &self.present_before {
            if self.set.find_key(key).is_none() {
                let (a, b) = key_indices(key);
                // A proxy removed without events takes its pairs with it silently.
                if !proxies.is_removed_silently(a as usize)
                    && !proxies.is_removed_silently(b as usize)
                {
                    events.ended.push(pair(key));
                }
            }
        }
        self.report_pairs_again(proxies, events);
        self.absent_before.clear();
        self.present_before.clear();
        self.give_back_memory();
        Ok(())
    }

    /// Lists as begun the pairs of the slots passed to [`PairTracker::report_again`] that
    /// the step did not already report: the pairs present before the step and still present.
    /// O(pairs) when a slot was listed, free otherwise.
    fn report_pairs_again(&mut self, proxies: &ProxyTable, events: &mut PairEvents) {
        if self.again.is_empty() {
            return;
        }
        self.again_flags.clear();
        self.again_flags.resize(proxies.slot_count(), false);
        for &slot in &self.again {
            if proxies.is_live(slot as usize) {
                self.again_flags[slot as usize] = true;
            }
        }
        // The keys absent before the step; those present now were just reported as begun.
        // (`changed` is free here: `finish` cleared it.)
        self.changed.extend(self.absent_before.iter().copied());
        for &key in self.set.keys() {
            let (a, b) = key_indices(key);
            if (self.again_flags[a as usize] || self.again_flags[b as usize])
                && !self.changed.contains(&key)
            {
                events
                    .begun
                    .push(Pair::of_slots(proxies, a as usize, b as usize));
            }
        }
        self.changed.clear();
        self.again.clear();
    }

    /// After a step that changed far more pairs than the set holds now (a pair explosion
    /// that passed, a scene emptied), the set and the change lists shrink, so that memory
    /// follows the pairs rather than their peak.
    fn give_back_memory(&mut self) {
        self.set.shrink_if_sparse();
        let floor = 1024.max(4 * self.set.len());
        for list in [&mut self.absent_before, &mut self.present_before] {
            if list.capacity() > floor {
                list.shrink_to(floor / 2);
            }
        }
        if self.changed.capacity() > floor {
            self.changed.shrink_to(floor / 2);
        }
        self.full.shrink_above(floor);
    }

    /// Drops all pairs without events (for `clear`).
    pub fn clear(&mut self) {
        self.set.clear();
        self.full.clear();
        self.again.clear();
        self.absent_before.clear();
        self.present_before.clear();
        self.changed.clear();
        self.overflowed = false;
        self.lost = false;
    }

    /// Bytes held, pair set included.
    pub fn memory_bytes(&self) -> usize {
        self.set.memory_bytes()
            + (self.absent_before.capacity() + self.present_before.capacity()) * 8
            + self.changed.capacity() * 9
            + self.again.capacity() * 4
            + self.again_flags.capacity()
            + self.full.memory_bytes()
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
                .insert(unit_box(), ProxyKind::Dynamic, CollisionFilter::ALL, 0)
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
        tracker.finish(&proxies, &mut events).unwrap();
        assert_eq!(events.begun.len(), 2);
        assert!(events.ended.is_empty());

        // Removed and re-added: no event. Added and removed: no event.
        tracker.remove(1, 0);
        tracker.add(0, 1);
        tracker.add(1, 2);
        tracker.remove(2, 1);
        tracker.remove(3, 2);
        tracker.finish(&proxies, &mut events).unwrap();
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
        tracker.finish(&proxies, &mut events).unwrap();
        assert_eq!(events.begun.len(), 2);

        tracker.begin_full();
        tracker.mark(2, 1);
        tracker.mark(2, 3);
        tracker.end_full();
        tracker.finish(&proxies, &mut events).unwrap();
        assert_eq!(events.begun, vec![Pair::new(proxies.id(2), proxies.id(3))]);
        assert_eq!(events.ended, vec![Pair::new(proxies.id(0), proxies.id(1))]);
        assert!(tracker.contains(1, 2) && tracker.contains(3, 2) && !tracker.contains(0, 1));
    }

    /// A full step after incremental changes diffs against the set as they left it, not
    /// against the last full step's pairs.
    #[test]
    fn full_recompute_after_incremental_changes_sees_them() {
        let proxies = table(4);
        let mut tracker = PairTracker::new();
        let mut events = PairEvents::new();
        let full = |tracker: &mut PairTracker, pairs: &[(u32, u32)]| {
            tracker.begin_full();
            pairs.iter().for_each(|&(a, b)| tracker.mark(a, b));
            tracker.end_full();
        };
        full(&mut tracker, &[(0, 1), (1, 2)]);
        tracker.finish(&proxies, &mut events).unwrap();
        tracker.add(2, 3);
        tracker.remove(0, 1);
        tracker.finish(&proxies, &mut events).unwrap();
        full(&mut tracker, &[(1, 2), (1, 0)]);
        tracker.finish(&proxies, &mut events).unwrap();
        let id = |i| proxies.id(i);
        assert_eq!(events.begun, vec![Pair::new(id(0), id(1))]);
        assert_eq!(events.ended, vec![Pair::new(id(2), id(3))]);
        // Incremental and full changes in one step: the pair added, then not marked, was
        // never reported; the one removed, then marked, neither.
        tracker.add(0, 3);
        tracker.remove(1, 2);
        full(&mut tracker, &[(0, 1), (1, 2), (2, 3)]);
        tracker.finish(&proxies, &mut events).unwrap();
        assert_eq!(events.begun, vec![Pair::new(id(2), id(3))]);
        assert!(events.ended.is_empty());
        let mut pairs: Vec<_> = tracker.set().iter().collect();
        pairs.sort_unstable();
        assert_eq!(pairs, vec![(0, 1), (1, 2), (2, 3)]);
    }

    /// A pair marked many times counts once against the limit; one distinct pair too many
    /// fails the step, however the marks are repeated.
    #[test]
    fn repeated_marks_count_once_against_the_limit() {
        let proxies = table(5);
        let mut tracker = PairTracker::new();
        let mut events = PairEvents::new();
        tracker.set_limit(Some(2));
        tracker.begin_full();
        for _ in 0..500 {
            tracker.mark(0, 1);
            tracker.mark(2, 1);
        }
        tracker.end_full();
        tracker.finish(&proxies, &mut events).unwrap();
        assert_eq!(events.begun.len(), 2);
        tracker.begin_full();
        for _ in 0..500 {
            tracker.mark(0, 1);
            tracker.mark(1, 2);
        }
        tracker.mark(3, 4);
        tracker.end_full();
        assert!(tracker.finish(&proxies, &mut events).is_err());
        assert!(tracker.lost() && tracker.is_empty() && events.is_empty());
        // The next step starts from the empty set.
        tracker.begin_full();
        tracker.mark(3, 4);
        tracker.end_full();
        tracker.finish(&proxies, &mut events).unwrap();
        assert_eq!(events.begun, vec![Pair::new(proxies.id(3), proxies.id(4))]);
    }

    #[test]
    fn removed_proxies_end_their_pairs() {
        let mut proxies = table(3);
        let mut tracker = PairTracker::new();
        let mut events = PairEvents::new();
        tracker.add(0, 1);
        tracker.add(1, 2);
        tracker.finish(&proxies, &mut events).unwrap();
        let removed = proxies.id(1);
        proxies.remove(removed, true).unwrap();
        tracker.remove_pairs_of_removed(&proxies);
        tracker.finish(&proxies, &mut events).unwrap();
        assert_eq!(events.ended.len(), 2);
        assert!(events
            .ended
            .iter()
            .all(|p| p.a == removed || p.b == removed));
        assert!(tracker.is_empty());
    }
}
