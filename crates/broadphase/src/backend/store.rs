//! The proxy store: the proxy table and the pair tracker that every algorithm embeds, with
//! the plumbing of insert, move, remove, clear and the end of an update written once.

use crate::backend::{PairSet, PairTracker, ProxyTable};
use crate::prune::{bipartite_pairs_with, PruneOptions, PruneScratch};
use crate::util::MoveBuffer;
use crate::{Aabb, CollisionFilter, Error, PairEvents, ProxyId, ProxyKind, Result};

/// Up to this many proxies with a new filter or kind in one update, their new pairs are
/// found by testing each against every proxy; beyond it, by one sort-and-sweep of the
/// changed boxes against all boxes.
const REEVALUATE_SCAN_MAX: usize = 16;

/// The proxies of a broad phase and its pairs: what every algorithm keeps besides its own
/// spatial structure.
///
/// An algorithm forwards [`BroadPhase::insert`](crate::BroadPhase::insert),
/// [`set_aabb`](crate::BroadPhase::set_aabb) and [`remove`](crate::BroadPhase::remove) here
/// (adding its own bookkeeping of the returned slot), records pair changes in
/// [`ProxyStore::pairs_mut`] during `update`, and ends every update with
/// [`ProxyStore::finish`].
///
/// # When to use
/// When writing a [`BroadPhase`](crate::BroadPhase) outside this crate: embed one and forward
/// to it, so that ids, stale-id errors, filters and pair events behave as in every algorithm
/// here.
///
/// # Performance
/// Insert, move and remove are O(1) (amortised; slots are reused after the update that
/// removed them). [`ProxyStore::finish`] costs O(c) for the c pair changes of the step, or
/// O(pairs) after a full recompute; after k filter or kind changes
/// ([`ProxyStore::set_filter`]), O(pairs + n·k) for k up to 16 and
/// O(pairs + (n + k) log n) above; after [`ProxyStore::report_pairs_again`], O(pairs).
/// Memory O(n + pairs).
///
/// Worst case: O(n²) for a finish that ends or begins every pair of n overlapping proxies.
///
/// # Examples
/// ```
/// use broadphase::backend::ProxyStore;
/// use broadphase::{Aabb, CollisionFilter, PairEvents, ProxyKind};
/// let mut store = ProxyStore::new();
/// let a = store.insert(Aabb::from_arrays([0.0; 3], [1.0; 3])?, ProxyKind::Dynamic, CollisionFilter::ALL)?;
/// let b = store.insert(Aabb::from_arrays([0.5; 3], [2.0; 3])?, ProxyKind::Dynamic, CollisionFilter::ALL)?;
/// store.pairs_mut().add(a.index(), b.index());
/// let mut events = PairEvents::new();
/// store.finish(&mut events)?;
/// assert_eq!(events.begun.len(), 1);
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct ProxyStore {
    pub(crate) proxies: ProxyTable,
    pub(crate) pairs: PairTracker,
    /// Boxes are stored grown by this much (0: exact).
    fat_margin: f32,
    /// Slots whose filter or kind changed since the last update, with scratch to
    /// re-evaluate their pairs.
    reevaluate: Vec<u32>,
    flags: Vec<bool>,
    changed_boxes: Vec<Aabb>,
    /// The live proxies' boxes and slots (removed slots keep stale boxes).
    live_boxes: Vec<Aabb>,
    live_slots: Vec<u32>,
    found: Vec<(u32, u32)>,
}

impl ProxyStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a proxy with key 0 and returns its id (its slot is `id.index()`).
    #[inline]
    pub fn insert(
        &mut self,
        aabb: Aabb,
        kind: ProxyKind,
        filter: CollisionFilter,
    ) -> Result<ProxyId> {
        self.insert_keyed(aabb, kind, filter, 0)
    }

    /// Adds a proxy with the caller's `key` and returns its id. With a fat margin the box
    /// is stored grown by it.
    #[inline]
    pub fn insert_keyed(
        &mut self,
        aabb: Aabb,
        kind: ProxyKind,
        filter: CollisionFilter,
        key: u64,
    ) -> Result<ProxyId> {
        self.proxies.insert(self.fattened(aabb), kind, filter, key)
    }

    /// Replaces the box of a live proxy; returns its slot, or `None` when a fat margin is set
    /// and the stored (fat) box already contains `aabb`, so that nothing changed.
    #[inline]
    pub fn set_aabb(&mut self, id: ProxyId, aabb: Aabb) -> Result<Option<usize>> {
        if self.fat_margin > 0.0 {
            let slot = self.proxies.index_of(id)?;
            if self.proxies.aabb(slot).contains(&aabb) {
                return Ok(None);
            }
        }
        self.proxies.set_aabb(id, self.fattened(aabb)).map(Some)
    }

    #[inline]
    fn fattened(&self, aabb: Aabb) -> Aabb {
        if self.fat_margin > 0.0 {
            aabb.expanded(self.fat_margin)
        } else {
            aabb
        }
    }

    /// The margin boxes are grown by (0: exact boxes).
    pub fn fat_margin(&self) -> f32 {
        self.fat_margin
    }

    /// Sets the margin boxes given from now on are grown by (see
    /// [`BroadPhase::set_fat_margin`](crate::BroadPhase::set_fat_margin)).
    pub fn set_fat_margin(&mut self, margin: f32) -> Result<()> {
        if !(margin.is_finite() && margin >= 0.0) {
            return Err(Error::InvalidOption(
                "the fat margin must be finite and at least 0",
            ));
        }
        self.fat_margin = margin;
        Ok(())
    }

    /// Marks a live proxy removed; returns its slot, which stays reserved until
    /// [`ProxyStore::finish`] so that its pairs can still be ended by slot. With `report`
    /// false, they end without events.
    #[inline]
    pub fn remove(&mut self, id: ProxyId, report: bool) -> Result<usize> {
        self.proxies.remove(id, report)
    }

    /// Replaces the filter of a live proxy and returns its slot; [`ProxyStore::finish`]
    /// re-evaluates its pairs.
    pub fn set_filter(&mut self, id: ProxyId, filter: CollisionFilter) -> Result<usize> {
        let slot = self.proxies.set_filter(id, filter)?;
        self.reevaluate.push(slot as u32);
        Ok(slot)
    }

    /// Replaces the kind of a live proxy and returns its slot; [`ProxyStore::finish`]
    /// re-evaluates its pairs. An algorithm that keeps static proxies apart moves it.
    pub fn set_kind(&mut self, id: ProxyId, kind: ProxyKind) -> Result<usize> {
        let slot = self.proxies.set_kind(id, kind)?;
        self.reevaluate.push(slot as u32);
        Ok(slot)
    }

    /// Makes [`ProxyStore::finish`] list every pair of a live proxy as begun.
    pub fn report_pairs_again(&mut self, id: ProxyId) -> Result<()> {
        let slot = self.proxies.index_of(id)?;
        self.pairs.report_again(slot as u32);
        Ok(())
    }

    /// Ends an update: re-evaluates the pairs of proxies whose filter or kind changed,
    /// writes the net pair changes into `events` (cleared first) and releases the slots of
    /// removed proxies.
    ///
    /// Fails with [`Error::PairLimit`](crate::Error::PairLimit) when the update found more
    /// pairs than the limit (see [`PairTracker`]); the removed slots are released all the
    /// same.
    pub fn finish(&mut self, events: &mut PairEvents) -> Result<()> {
        self.reevaluate_pairs();
        let result = self.pairs.finish(&self.proxies, events);
        self.proxies.release_removed();
        result
    }

    /// Copies the live boxes into `boxes`, passed through `map` (an axis rotation, or the
    /// identity), and their slots into `slots`: the non-static ones, then the static ones;
    /// returns where the static ones start. For a full update that sweeps every box with the
    /// statics tagged (`crate::prune::pairs_except_within_b`). Generic over `map`, so that
    /// each caller gets a loop without per-coordinate indexing.
    #[inline]
    pub(crate) fn gather_by_kind(
        &self,
        map: impl Fn(&Aabb) -> Aabb,
        boxes: &mut Vec<Aabb>,
        slots: &mut Vec<u32>,
    ) -> usize {
        boxes.clear();
        slots.clear();
        let mut first_static = 0;
        for statics in [false, true] {
            if statics {
                first_static = boxes.len();
            }
            for slot in self.proxies.live_slots() {
                if (self.proxies.kind(slot) == ProxyKind::Static) == statics {
                    boxes.push(map(self.proxies.aabb(slot)));
                    slots.push(slot as u32);
                }
            }
        }
        first_static
    }

    /// Makes the pair set of a full update the `candidates` (pairs of slots `slot(i)`,
    /// `slot(j)`) that filters and kinds allow, diffed with the last set.
    pub(crate) fn mark_allowed(&mut self, candidates: &[(u32, u32)], slot: impl Fn(u32) -> u32) {
        mark_pairs(
            (&self.proxies, &mut self.pairs),
            candidates,
            slot,
            None::<fn(u32) -> bool>,
        );
    }

    /// [`ProxyStore::mark_allowed`] for a step that changed only the slots in `moved` (and
    /// removed some): `candidates` must hold every overlapping pair with a moved slot; the
    /// pairs of two slots neither moved nor removed are kept as they are, which spares their
    /// sort and merge where most of the pairs lie between boxes at rest. Unchanged slots'
    /// filter changes are left to [`ProxyStore::finish`], as in every step. The full
    /// [`ProxyStore::mark_allowed`] when the last step lost the set or more than two thirds
    /// of the proxies moved.
    pub(crate) fn mark_allowed_among(
        &mut self,
        candidates: &[(u32, u32)],
        slot: impl Fn(u32) -> u32,
        moved: &MoveBuffer,
    ) {
        // With most boxes moved, few pairs lie between two that did not (in the scenes
        // measured): the restriction would cost its tests and a merge for little.
        if self.pairs.lost() || moved.len() * 3 > self.proxies.len() * 2 {
            return self.mark_allowed(candidates, slot);
        }
        // A slot that is not live was removed this step (the candidates are all live).
        let removed = !self.proxies.removed_slots().is_empty();
        let proxies = &self.proxies;
        let changed =
            |s: u32| moved.contains(s as usize) || (removed && !proxies.is_live(s as usize));
        mark_pairs((proxies, &mut self.pairs), candidates, slot, Some(changed));
    }

    /// Brings the pairs of the slots whose filter or kind changed in line with them: ends
    /// those now forbidden, begins the overlapping ones now allowed. The algorithm's own
    /// update has placed every box by now, so the set is exact for every other proxy, and
    /// algorithms add a pair only when it is allowed and drop it whenever the boxes part, so
    /// it stays exact afterwards.
    fn reevaluate_pairs(&mut self) {
        if self.reevaluate.is_empty() {
            return;
        }
        let proxies = &self.proxies;
        let mut slots = std::mem::take(&mut self.reevaluate);
        slots.retain(|&slot| proxies.is_live(slot as usize));
        slots.sort_unstable();
        slots.dedup();
        let flags = &mut self.flags;
        flags.clear();
        flags.resize(proxies.slot_count(), false);
        for &slot in &slots {
            flags[slot as usize] = true;
        }
        self.pairs.retain(|a, b| {
            !(flags[a as usize] || flags[b as usize]) || proxies.can_pair(a as usize, b as usize)
        });
        let limit = self.pairs.limit();
        let pairs = &mut self.pairs;
        // A pair of two changed slots is found from both; the second add is a no-op.
        let mut begin = |slot: usize, other: usize| {
            if proxies.is_live(other) && proxies.is_pair(slot, other) {
                pairs.add(slot as u32, other as u32);
            }
        };
        if slots.len() <= REEVALUATE_SCAN_MAX {
            for &slot in &slots {
                let aabb = proxies.aabb(slot as usize);
                for (other, other_aabb) in proxies.aabbs().iter().enumerate() {
                    if other_aabb.overlaps(aabb) {
                        begin(slot as usize, other);
                    }
                }
            }
        } else {
            self.changed_boxes.clear();
            self.changed_boxes
                .extend(slots.iter().map(|&slot| *proxies.aabb(slot as usize)));
            self.live_boxes.clear();
            self.live_slots.clear();
            for slot in proxies.live_slots() {
                self.live_boxes.push(*proxies.aabb(slot));
                self.live_slots.push(slot as u32);
            }
            // Against the live boxes, the search finds each changed box with itself and each
            // pair of two changed boxes twice: within the limit, it finds at most twice the
            // limit plus one per changed box.
            let options = PruneOptions {
                threads: 1,
                max_pairs: Some(
                    limit
                        .saturating_mul(2)
                        .saturating_add(slots.len())
                        .saturating_add(64),
                ),
                ..PruneOptions::default()
            };
            let found = &mut self.found;
            let result = bipartite_pairs_with(
                &self.changed_boxes,
                &self.live_boxes,
                &options,
                &mut PruneScratch::new(),
                found,
            );
            for &(changed, other) in found.iter() {
                let other = self.live_slots[other as usize] as usize;
                begin(slots[changed as usize] as usize, other);
            }
            found.clear();
            if result.is_err() {
                pairs.refuse();
            }
        }
        slots.clear();
        self.reevaluate = slots;
    }

    /// Removes every proxy and pair without events; outstanding ids become stale.
    pub fn clear(&mut self) {
        self.proxies.clear();
        self.pairs.clear();
        self.reevaluate.clear();
    }

    /// The proxies.
    #[inline]
    pub fn proxies(&self) -> &ProxyTable {
        &self.proxies
    }

    /// The pair tracker.
    #[inline]
    pub fn pairs(&self) -> &PairTracker {
        &self.pairs
    }

    /// The pair tracker, to record the changes of an update.
    #[inline]
    pub fn pairs_mut(&mut self) -> &mut PairTracker {
        &mut self.pairs
    }

    /// The proxies to read and the pair tracker to write at once.
    #[inline]
    pub fn split_mut(&mut self) -> (&ProxyTable, &mut PairTracker) {
        (&self.proxies, &mut self.pairs)
    }

    /// The pair set as of the last update.
    #[inline]
    pub fn pair_set(&self) -> &PairSet {
        self.pairs.set()
    }

    /// [`ProxyStore::insert_keyed`], and lists the new slot in `moved` (grown to the slot
    /// count) so that the next update places it.
    pub(crate) fn insert_moved(
        &mut self,
        aabb: Aabb,
        kind: ProxyKind,
        filter: CollisionFilter,
        key: u64,
        moved: &mut MoveBuffer,
    ) -> Result<ProxyId> {
        let id = self.insert_keyed(aabb, kind, filter, key)?;
        moved.grow(self.proxies.slot_count());
        moved.mark(id.index() as usize);
        Ok(id)
    }

    /// [`ProxyStore::set_aabb`], and lists the slot in `moved`.
    pub(crate) fn set_aabb_moved(
        &mut self,
        id: ProxyId,
        aabb: Aabb,
        moved: &mut MoveBuffer,
    ) -> Result<()> {
        if let Some(slot) = self.set_aabb(id, aabb)? {
            moved.mark(slot);
        }
        Ok(())
    }

    /// Makes an empty store number its slots like `template` (see
    /// [`ProxyTable::mirror_layout`]); `false` when it cannot.
    pub(crate) fn mirror_layout(&mut self, template: &ProxyTable) -> bool {
        self.proxies.mirror_layout(template)
    }

    /// Bytes of heap memory held (capacities).
    pub fn memory_bytes(&self) -> usize {
        self.proxies.memory_bytes()
            + self.pairs.memory_bytes()
            + self.reevaluate.capacity() * 4
            + self.flags.capacity()
            + (self.changed_boxes.capacity() + self.live_boxes.capacity())
                * std::mem::size_of::<Aabb>()
            + self.live_slots.capacity() * 4
            + self.found.capacity() * 8
    }
}

/// The full-recompute style over `candidates` (pairs of slots `slot(i)`, `slot(j)`): marks
/// those that filters and kinds allow and, with `changed`, that have a changed slot, then
/// ends the step ([`PairTracker::end_full_among`]).
fn mark_pairs(
    (proxies, pairs): (&ProxyTable, &mut PairTracker),
    candidates: &[(u32, u32)],
    slot: impl Fn(u32) -> u32,
    changed: Option<impl Fn(u32) -> bool>,
) {
    pairs.begin_full();
    for &(i, j) in candidates {
        let (a, b) = (slot(i), slot(j));
        let with_changed = changed
            .as_ref()
            .is_none_or(|changed| changed(a) || changed(b));
        if with_changed && proxies.can_pair(a as usize, b as usize) {
            pairs.mark(a, b);
        }
    }
    pairs.end_full_among(changed);
}

/// Inside an `impl BroadPhase` block: the accessors of the algorithm's embedded
/// [`ProxyStore`] (proxies, pairs, pair limit) and the settings that touch only the store
/// (pairs reported again, fat margin), named by its field path
/// (`store_accessors!(store)`).
macro_rules! store_accessors {
    ($($field:ident).+) => {
        fn proxies(&self) -> &$crate::backend::ProxyTable {
            self.$($field).+.proxies()
        }

        fn pair_set(&self) -> &$crate::backend::PairSet {
            self.$($field).+.pair_set()
        }

        fn set_pair_limit(&mut self, limit: Option<usize>) {
            self.$($field).+.pairs_mut().set_limit(limit);
        }

        fn report_pairs_again(&mut self, id: $crate::ProxyId) -> $crate::Result<()> {
            self.$($field).+.report_pairs_again(id)
        }

        fn set_fat_margin(&mut self, margin: f32) -> $crate::Result<()> {
            self.$($field).+.set_fat_margin(margin)
        }
    };
}
pub(crate) use store_accessors;

/// Inside an `impl BroadPhase` block of an algorithm that recomputes its pairs from the store
/// at every update and so keeps no bookkeeping of moves: `insert_keyed`, `set_aabb`,
/// `remove_with`, `set_filter` and `set_kind` forwarded to the embedded store, named by its field path (`store_edits!(store)`).
macro_rules! store_edits {
    ($($field:ident).+) => {
        fn insert_keyed(
            &mut self,
            aabb: $crate::Aabb,
            kind: $crate::ProxyKind,
            filter: $crate::CollisionFilter,
            key: u64,
        ) -> $crate::Result<$crate::ProxyId> {
            self.$($field).+.insert_keyed(aabb, kind, filter, key)
        }

        fn set_aabb(&mut self, id: $crate::ProxyId, aabb: $crate::Aabb) -> $crate::Result<()> {
            self.$($field).+.set_aabb(id, aabb).map(|_| ())
        }

        fn remove_with(&mut self, id: $crate::ProxyId, report: bool) -> $crate::Result<()> {
            self.$($field).+.remove(id, report).map(|_| ())
        }

        fn set_filter(
            &mut self,
            id: $crate::ProxyId,
            filter: $crate::CollisionFilter,
        ) -> $crate::Result<()> {
            self.$($field).+.set_filter(id, filter).map(|_| ())
        }

        fn set_kind(&mut self, id: $crate::ProxyId, kind: $crate::ProxyKind) -> $crate::Result<()> {
            self.$($field).+.set_kind(id, kind).map(|_| ())
        }
    };
}
pub(crate) use store_edits;

/// Inside an `impl BroadPhase` block of an algorithm that re-places the proxies listed in a
/// move buffer at its next update: `insert` (listing the new slot, then `grow_slots()` to
/// size the algorithm's per-slot arrays), `set_aabb` and `set_kind` (listing the slot, so
/// that a placement that depends on the kind is redone) and `remove` forwarded to the store
/// (`store_moved_edits!(store, moved)`).
macro_rules! store_moved_edits {
    ($store:ident, $moved:ident) => {
        fn insert_keyed(
            &mut self,
            aabb: $crate::Aabb,
            kind: $crate::ProxyKind,
            filter: $crate::CollisionFilter,
            key: u64,
        ) -> $crate::Result<$crate::ProxyId> {
            let id = self
                .$store
                .insert_moved(aabb, kind, filter, key, &mut self.$moved)?;
            self.grow_slots();
            Ok(id)
        }

        fn set_aabb(&mut self, id: $crate::ProxyId, aabb: $crate::Aabb) -> $crate::Result<()> {
            self.$store.set_aabb_moved(id, aabb, &mut self.$moved)
        }

        fn remove_with(&mut self, id: $crate::ProxyId, report: bool) -> $crate::Result<()> {
            self.$store.remove(id, report).map(|_| ())
        }

        fn set_filter(
            &mut self,
            id: $crate::ProxyId,
            filter: $crate::CollisionFilter,
        ) -> $crate::Result<()> {
            self.$store.set_filter(id, filter).map(|_| ())
        }

        fn set_kind(&mut self, id: $crate::ProxyId, kind: $crate::ProxyKind) -> $crate::Result<()> {
            let slot = self.$store.set_kind(id, kind)?;
            self.$moved.mark(slot);
            Ok(())
        }
    };
}
pub(crate) use store_moved_edits;

/// Makes an algorithm a candidate of [`crate::Adaptive`] through its embedded store, named by
/// its field path (`impl_candidate!(SortAndSweep, store)`).
macro_rules! impl_candidate {
    ($algorithm:ty, $($field:ident).+) => {
        impl $crate::Candidate for $algorithm {
            fn store_mut(&mut self) -> &mut $crate::backend::ProxyStore {
                &mut self.$($field).+
            }
        }
    };
}
pub(crate) use impl_candidate;
