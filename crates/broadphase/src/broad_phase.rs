//! The trait every broad-phase algorithm implements.

use std::ops::ControlFlow;

use crate::adaptive::SwitchRecord;
use crate::backend::{key_indices, PairSet, ProxyStore, ProxyTable};
use crate::query::{is_closer, sort_hits, Ray, RayHit};
use crate::{Aabb, CollisionFilter, Pair, PairEvents, ProxyId, ProxyKind, Result};

/// A broad phase: keeps a set of boxes and the exact set of pairs among them that overlap.
///
/// After [`update`](BroadPhase::update), the pair set is exactly the set of proxy pairs whose
/// current closed boxes overlap, whose filters allow each other, and which are not both
/// static. Every algorithm gives the same set; only the order of pairs and events differs
/// between algorithms (never between two runs of the same calls).
///
/// The trait is object safe so that programs can hold any algorithm as `Box<dyn BroadPhase>`,
/// and requires `Send + Sync` so that such a box can move to another thread or be shared by
/// readers (an engine's systems run on a thread pool).
///
/// ```
/// use broadphase::{Aabb, BroadPhase, BruteForce, CollisionFilter, PairEvents, ProxyKind};
/// let mut bp = BruteForce::new();
/// let a = bp.insert(Aabb::from_arrays([0.0; 3], [1.0; 3])?, ProxyKind::Dynamic, CollisionFilter::ALL)?;
/// let b = bp.insert(Aabb::from_arrays([1.0; 3], [2.0; 3])?, ProxyKind::Dynamic, CollisionFilter::ALL)?;
/// let mut events = PairEvents::new();
/// bp.update(&mut events);
/// assert_eq!(events.begun.len(), 1);
/// bp.set_aabb(b, Aabb::from_arrays([5.0; 3], [6.0; 3])?)?;
/// bp.update(&mut events);
/// assert_eq!(events.ended.len(), 1);
/// # let _ = a;
/// # Ok::<(), broadphase::Error>(())
/// ```
pub trait BroadPhase: Send + Sync {
    /// The algorithm's name as used on the command line (`"sap"`, `"brute-force"`, …).
    fn name(&self) -> &'static str;

    /// Adds a proxy with key 0. Its pairs appear at the next `update`.
    fn insert(&mut self, aabb: Aabb, kind: ProxyKind, filter: CollisionFilter) -> Result<ProxyId> {
        self.insert_keyed(aabb, kind, filter, 0)
    }

    /// Adds a proxy that carries the caller's `key` (an entity, a collider handle): every
    /// [`Pair`] it is part of, in events and in [`BroadPhase::pairs`], names it, and
    /// [`BroadPhase::key`] reads it, so the caller needs no map from ids to its own handles.
    /// Keys need not be unique. Its pairs appear at the next `update`.
    ///
    /// ```
    /// use broadphase::{Aabb, BroadPhase, CollisionFilter, PairEvents, ProxyKind};
    /// let mut bp = broadphase::create("sap", &Default::default())?;
    /// for entity in [17_u64, 42] {
    ///     bp.insert_keyed(Aabb::from_arrays([0.0; 3], [1.0; 3])?, ProxyKind::Dynamic, CollisionFilter::ALL, entity)?;
    /// }
    /// let mut events = PairEvents::new();
    /// bp.update(&mut events);
    /// let pair = events.begun[0];
    /// assert_eq!((pair.key_a, pair.key_b), (17, 42));
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    fn insert_keyed(
        &mut self,
        aabb: Aabb,
        kind: ProxyKind,
        filter: CollisionFilter,
        key: u64,
    ) -> Result<ProxyId>;

    /// Moves or resizes a proxy. The pair set changes at the next `update`.
    fn set_aabb(&mut self, id: ProxyId, aabb: Aabb) -> Result<()>;

    /// Moves or resizes several proxies: the same as [`BroadPhase::set_aabb`] on each in
    /// order, in one call, so that a caller holding a `dyn BroadPhase` pays one dynamic call
    /// per batch, and wrappers pass the batch on whole. Stops at the first invalid id and
    /// returns its error; the moves before it are applied. O(moves).
    fn set_aabbs(&mut self, moves: &[(ProxyId, Aabb)]) -> Result<()> {
        for &(id, aabb) in moves {
            self.set_aabb(id, aabb)?;
        }
        Ok(())
    }

    /// Removes a proxy; the id is invalid at once. Its pairs are reported as ended at the
    /// next `update`.
    fn remove(&mut self, id: ProxyId) -> Result<()> {
        self.remove_with(id, true)
    }

    /// Removes a proxy whose pairs the caller drops itself (an engine that destroys a
    /// collider forgets its contacts at once): the id is invalid at once, and its pairs end
    /// at the next `update` without events.
    fn remove_without_events(&mut self, id: ProxyId) -> Result<()> {
        self.remove_with(id, false)
    }

    /// Removes a proxy, its pairs reported as ended at the next `update` when `report` is
    /// true ([`BroadPhase::remove`]), silently otherwise
    /// ([`BroadPhase::remove_without_events`]).
    fn remove_with(&mut self, id: ProxyId, report: bool) -> Result<()>;

    /// Replaces a proxy's filter. At the next `update` its pairs that the new filter forbids
    /// end and its overlapping pairs that it now allows begin, as if it had been inserted
    /// anew, but with the same id and without ending the pairs that stay.
    ///
    /// # Performance
    /// The next update also costs O(pairs) and O(n) per changed proxy (for up to 16 of them;
    /// O((n + k) log n) for k more), whatever the algorithm: filters change seldom, and a
    /// scan finds the new pairs without the algorithm's help.
    ///
    /// ```
    /// use broadphase::{Aabb, BroadPhase, CollisionFilter, PairEvents, ProxyKind};
    /// let mut bp = broadphase::create("dynamic-tree", &Default::default())?;
    /// let unit = Aabb::from_arrays([0.0; 3], [1.0; 3])?;
    /// let a = bp.insert(unit, ProxyKind::Dynamic, CollisionFilter::new(1, 1))?;
    /// let b = bp.insert(unit, ProxyKind::Dynamic, CollisionFilter::new(2, 2))?;
    /// let mut events = PairEvents::new();
    /// bp.update(&mut events);
    /// assert!(events.begun.is_empty()); // groups 1 and 2 do not collide
    /// bp.set_filter(b, CollisionFilter::new(2, 1 | 2))?;
    /// bp.set_filter(a, CollisionFilter::new(1, 1 | 2))?;
    /// bp.update(&mut events);
    /// assert_eq!(events.begun.len(), 1);
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    fn set_filter(&mut self, id: ProxyId, filter: CollisionFilter) -> Result<()>;

    /// Replaces a proxy's kind; its pairs are re-evaluated at the next `update` as for
    /// [`BroadPhase::set_filter`] (two static proxies never pair).
    fn set_kind(&mut self, id: ProxyId, kind: ProxyKind) -> Result<()>;

    /// Makes the next `update` list every pair of this proxy (as of after that update) in
    /// `events.begun`, those that were already pairs included: for a caller that dropped
    /// them on its side while the boxes still overlap (an engine's narrow phase that drops a
    /// body's contacts when it is disabled and re-enabled). O(pairs) at that update.
    fn report_pairs_again(&mut self, id: ProxyId) -> Result<()>;

    /// Grows the boxes given from now on ([`BroadPhase::insert`], [`BroadPhase::set_aabb`])
    /// by `margin` on every side before storing them; a box given to `set_aabb` that lies
    /// inside the stored (fat) box changes nothing. The pairs are then exactly the pairs of
    /// the stored fat boxes, a superset of the pairs of the boxes given, and
    /// [`BroadPhase::aabb`] returns the fat box. 0 (the default) stores the boxes as given.
    ///
    /// # When to use
    /// When objects jitter or move a little each step (resting piles, slow characters) and
    /// the caller's narrow phase tests the reported pairs anyway: most moves then stay inside
    /// the fat box and cost nothing, at the price of more (false) pairs. For fast or
    /// teleporting objects the margin only adds pairs. Measure with the workbench on your
    /// scene.
    ///
    /// Fails with [`Error::InvalidOption`](crate::Error::InvalidOption) for a negative or
    /// non-finite margin.
    fn set_fat_margin(&mut self, margin: f32) -> Result<()>;

    /// Brings the pair set up to date and writes what began and ended into `events`
    /// (cleared first).
    ///
    /// Never fails unless a pair limit is set ([`BroadPhase::set_pair_limit`]); with one, an
    /// update that would hold more pairs than the limit fails as [`BroadPhase::try_update`]
    /// describes, and this call ignores the error (call `try_update` to see it).
    fn update(&mut self, events: &mut PairEvents) {
        let _ = self.try_update(events);
    }

    /// [`BroadPhase::update`], failing with [`Error::PairLimit`](crate::Error::PairLimit)
    /// when the boxes overlap in more pairs than the pair limit.
    ///
    /// On that error the broad phase has not grown past the limit: it holds no pairs,
    /// `events` is empty, and the caller should drop every pair it holds (as if all had
    /// ended). Boxes, ids and removals are kept; the next update that succeeds reports every
    /// overlapping pair as begun. Worst case as for `update`, plus O(pairs) to start over.
    ///
    /// ```
    /// use broadphase::{Aabb, BroadPhase, CollisionFilter, Error, PairEvents, ProxyKind, SweepAndPrune};
    /// let mut bp = SweepAndPrune::new();
    /// bp.set_pair_limit(Some(2));
    /// for _ in 0..3 {
    ///     bp.insert(Aabb::from_arrays([0.0; 3], [1.0; 3])?, ProxyKind::Dynamic, CollisionFilter::ALL)?;
    /// }
    /// let mut events = PairEvents::new();
    /// // Three identical boxes make three pairs: one too many.
    /// assert_eq!(bp.try_update(&mut events), Err(Error::PairLimit { limit: 2 }));
    /// assert!(events.is_empty() && bp.pair_count() == 0);
    /// bp.set_pair_limit(None);
    /// bp.try_update(&mut events)?;
    /// assert_eq!(events.begun.len(), 3);
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    fn try_update(&mut self, events: &mut PairEvents) -> Result<()>;

    /// Sets the most pairs an update may find before it fails ([`BroadPhase::try_update`]);
    /// `None` (the default) leaves only the limit of the pair set's `u32` positions
    /// ([`PairSet::MAX_LEN`]), which no limit exceeds. The pair set costs 16 to 20 bytes
    /// per pair plus growth slack, and a step's events 32 bytes per begun or ended pair, so
    /// a limit bounds the memory an update can take whatever the boxes do.
    fn set_pair_limit(&mut self, limit: Option<usize>);

    /// Removes every proxy and pair without reporting events. All ids become stale.
    fn clear(&mut self);

    /// The proxies: boxes, kinds and filters by slot (see [`crate::backend`]).
    fn proxies(&self) -> &ProxyTable;

    /// The pair set as of the last `update`, keyed by slot indices.
    fn pair_set(&self) -> &PairSet;

    /// What the algorithm can tell about its own working beyond the pairs, for tools that
    /// report on it (the workbench); empty by default.
    fn diagnostics(&self) -> Diagnostics<'_> {
        Diagnostics::default()
    }

    /// Bytes of heap memory the structure holds (capacities, not lengths).
    fn memory_bytes(&self) -> usize;

    /// Calls `visitor` with every live proxy whose box overlaps `aabb` and whose filter and
    /// `filter` allow each other, until it returns `Break`.
    ///
    /// Exact after `update`; proxies inserted or moved since may be missed (never reported
    /// falsely). The provided version scans all proxies, O(n); algorithms with a spatial
    /// structure override it.
    fn query_aabb_with(
        &self,
        aabb: &Aabb,
        filter: CollisionFilter,
        visitor: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) {
        let proxies = self.proxies();
        for i in proxies.live_slots() {
            if proxies.filter(i).allows(filter)
                && proxies.aabb(i).overlaps(aabb)
                && visitor(proxies.id(i)).is_break()
            {
                return;
            }
        }
    }

    /// Calls `visitor` with every live proxy whose box the ray hits and whose filter and
    /// `filter` allow each other, with the entry distance, in no particular order, until it
    /// returns `Break`. Same freshness rule as [`BroadPhase::query_aabb_with`]. The provided
    /// version scans all proxies.
    fn raycast_with(
        &self,
        ray: &Ray,
        filter: CollisionFilter,
        visitor: &mut dyn FnMut(RayHit) -> ControlFlow<()>,
    ) {
        let proxies = self.proxies();
        for i in proxies.live_slots() {
            if !proxies.filter(i).allows(filter) {
                continue;
            }
            if let Some(distance) = ray.hit_distance(proxies.aabb(i)) {
                if visitor(RayHit {
                    id: proxies.id(i),
                    distance,
                })
                .is_break()
                {
                    return;
                }
            }
        }
    }

    /// The closest hit (smallest distance, then smallest slot index), if any. Algorithms with
    /// a spatial structure override it to stop early.
    fn raycast_closest(&self, ray: &Ray, filter: CollisionFilter) -> Option<RayHit> {
        let mut best = None;
        self.raycast_with(ray, filter, &mut |hit| {
            if is_closer(&hit, &best) {
                best = Some(hit);
            }
            ControlFlow::Continue(())
        });
        best
    }

    /// Appends to `out` (cleared first) every proxy whose box overlaps `aabb`, in increasing
    /// slot order. No allocation when `out` has room.
    fn query_aabb(&self, aabb: &Aabb, filter: CollisionFilter, out: &mut Vec<ProxyId>) {
        out.clear();
        self.query_aabb_with(aabb, filter, &mut |id| {
            out.push(id);
            ControlFlow::Continue(())
        });
        out.sort_unstable_by_key(|id| id.index());
    }

    /// Writes to `out` (cleared first) every hit, ordered by distance then slot index.
    fn raycast(&self, ray: &Ray, filter: CollisionFilter, out: &mut Vec<RayHit>) {
        out.clear();
        self.raycast_with(ray, filter, &mut |hit| {
            out.push(hit);
            ControlFlow::Continue(())
        });
        sort_hits(out);
    }

    /// Number of live proxies.
    fn len(&self) -> usize {
        self.proxies().len()
    }

    /// True when there are no proxies.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The current (stored) box of a live proxy.
    fn aabb(&self, id: ProxyId) -> Result<Aabb> {
        let proxies = self.proxies();
        Ok(*proxies.aabb(proxies.index_of(id)?))
    }

    /// The caller's key of a live proxy ([`BroadPhase::insert_keyed`]; 0 for
    /// [`BroadPhase::insert`]).
    fn key(&self, id: ProxyId) -> Result<u64> {
        let proxies = self.proxies();
        Ok(proxies.key(proxies.index_of(id)?))
    }

    /// Number of pairs as of the last `update`.
    fn pair_count(&self) -> usize {
        self.pair_set().len()
    }

    /// Writes the pairs as of the last `update` into `out` (cleared first), in the pair set's
    /// order.
    fn pairs(&self, out: &mut Vec<Pair>) {
        out.clear();
        let proxies = self.proxies();
        out.extend(self.pair_set().keys().iter().map(|&key| {
            let (a, b) = key_indices(key);
            Pair::of_slots(proxies, a as usize, b as usize)
        }));
    }
}

/// What a broad phase reports about its own working, beyond its pairs
/// ([`BroadPhase::diagnostics`]). Fields are empty for algorithms they do not apply to.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[non_exhaustive]
pub struct Diagnostics<'a> {
    /// The algorithm changes made so far, for broad phases that switch algorithm
    /// ([`crate::Adaptive`]).
    pub switches: &'a [SwitchRecord],
    /// Time spent choosing (trials and switches) against time spent in updates, for broad
    /// phases that choose their algorithm.
    pub choice_overhead: Option<ChoiceOverhead>,
}

/// Time a self-choosing broad phase spent choosing against time spent updating.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ChoiceOverhead {
    /// Seconds spent in trials and switches.
    pub choosing_seconds: f64,
    /// Seconds spent in updates.
    pub updating_seconds: f64,
}

/// A broad phase that an [`crate::Adaptive`] can switch to: one whose store can take over the
/// slot numbering of the algorithm it replaces, so that ids stay valid across a switch.
pub(crate) trait Candidate: BroadPhase {
    /// The store, to mirror another's layout before the proxies are inserted.
    fn store_mut(&mut self) -> &mut ProxyStore;

    /// Prepares an empty broad phase so that inserting the live proxies of `template` one by
    /// one, in ascending slot order, hands out exactly the ids `template` holds. `false` (and
    /// nothing changed) when this broad phase is not empty or `template` has removals not yet
    /// released by an update.
    fn mirror_ids(&mut self, template: &ProxyTable) -> bool {
        self.store_mut().mirror_layout(template)
    }
}
