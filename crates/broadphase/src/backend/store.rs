//! The proxy store: the proxy table and the pair tracker that every algorithm embeds, with
//! the plumbing of insert, move, remove, clear and the end of an update written once.

use crate::backend::{PairSet, PairTracker, ProxyTable};
use crate::util::MoveBuffer;
use crate::{Aabb, CollisionFilter, PairEvents, ProxyId, ProxyKind, Result};

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
/// O(pairs) after a full recompute. Memory O(n + pairs).
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
}

impl ProxyStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a proxy and returns its id (its slot is `id.index()`).
    #[inline]
    pub fn insert(
        &mut self,
        aabb: Aabb,
        kind: ProxyKind,
        filter: CollisionFilter,
    ) -> Result<ProxyId> {
        self.proxies.insert(aabb, kind, filter)
    }

    /// Replaces the box of a live proxy; returns its slot.
    #[inline]
    pub fn set_aabb(&mut self, id: ProxyId, aabb: Aabb) -> Result<usize> {
        self.proxies.set_aabb(id, aabb)
    }

    /// Marks a live proxy removed; returns its slot, which stays reserved until
    /// [`ProxyStore::finish`] so that its pairs can still be ended by slot.
    #[inline]
    pub fn remove(&mut self, id: ProxyId) -> Result<usize> {
        self.proxies.remove(id)
    }

    /// Ends an update: writes the net pair changes into `events` (cleared first) and
    /// releases the slots of removed proxies.
    ///
    /// Fails with [`Error::PairLimit`](crate::Error::PairLimit) when the update found more
    /// pairs than the limit (see [`PairTracker`]); the removed slots are released all the
    /// same.
    pub fn finish(&mut self, events: &mut PairEvents) -> Result<()> {
        let result = self.pairs.finish(&self.proxies, events);
        self.proxies.release_removed();
        result
    }

    /// Removes every proxy and pair without events; outstanding ids become stale.
    pub fn clear(&mut self) {
        self.proxies.clear();
        self.pairs.clear();
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

    /// [`ProxyStore::insert`], and lists the new slot in `moved` (grown to the slot count) so
    /// that the next update places it.
    pub(crate) fn insert_moved(
        &mut self,
        aabb: Aabb,
        kind: ProxyKind,
        filter: CollisionFilter,
        moved: &mut MoveBuffer,
    ) -> Result<ProxyId> {
        let id = self.insert(aabb, kind, filter)?;
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
        let slot = self.set_aabb(id, aabb)?;
        moved.mark(slot);
        Ok(())
    }

    /// Makes an empty store number its slots like `template` (see
    /// [`ProxyTable::mirror_layout`]); `false` when it cannot.
    pub(crate) fn mirror_layout(&mut self, template: &ProxyTable) -> bool {
        self.proxies.mirror_layout(template)
    }

    /// Bytes of heap memory held (capacities).
    pub fn memory_bytes(&self) -> usize {
        self.proxies.memory_bytes() + self.pairs.memory_bytes()
    }
}

/// Inside an `impl BroadPhase` block: the accessors of the algorithm's embedded
/// [`ProxyStore`] (proxies, pairs, pair limit), named by its field path
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
    };
}
pub(crate) use store_accessors;

/// Inside an `impl BroadPhase` block of an algorithm that recomputes its pairs from the store
/// at every update and so keeps no bookkeeping of moves: `insert`, `set_aabb` and `remove`
/// forwarded to the embedded store, named by its field path (`store_edits!(store)`).
macro_rules! store_edits {
    ($($field:ident).+) => {
        fn insert(
            &mut self,
            aabb: $crate::Aabb,
            kind: $crate::ProxyKind,
            filter: $crate::CollisionFilter,
        ) -> $crate::Result<$crate::ProxyId> {
            self.$($field).+.insert(aabb, kind, filter)
        }

        fn set_aabb(&mut self, id: $crate::ProxyId, aabb: $crate::Aabb) -> $crate::Result<()> {
            self.$($field).+.set_aabb(id, aabb).map(|_| ())
        }

        fn remove(&mut self, id: $crate::ProxyId) -> $crate::Result<()> {
            self.$($field).+.remove(id).map(|_| ())
        }
    };
}
pub(crate) use store_edits;

/// Inside an `impl BroadPhase` block of an algorithm that re-places the proxies listed in a
/// move buffer at its next update: `insert` (listing the new slot, then `grow_slots()` to
/// size the algorithm's per-slot arrays), `set_aabb` (listing the slot) and `remove`
/// forwarded to the store (`store_moved_edits!(store, moved)`).
macro_rules! store_moved_edits {
    ($store:ident, $moved:ident) => {
        fn insert(
            &mut self,
            aabb: $crate::Aabb,
            kind: $crate::ProxyKind,
            filter: $crate::CollisionFilter,
        ) -> $crate::Result<$crate::ProxyId> {
            let id = self
                .$store
                .insert_moved(aabb, kind, filter, &mut self.$moved)?;
            self.grow_slots();
            Ok(id)
        }

        fn set_aabb(&mut self, id: $crate::ProxyId, aabb: $crate::Aabb) -> $crate::Result<()> {
            self.$store.set_aabb_moved(id, aabb, &mut self.$moved)
        }

        fn remove(&mut self, id: $crate::ProxyId) -> $crate::Result<()> {
            self.$store.remove(id).map(|_| ())
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
