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

    /// Adds a proxy. Its pairs appear at the next `update`.
    fn insert(&mut self, aabb: Aabb, kind: ProxyKind, filter: CollisionFilter) -> Result<ProxyId>;

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
    fn remove(&mut self, id: ProxyId) -> Result<()>;

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
    /// ([`PairSet::MAX_LEN`]), which no limit exceeds. The pair set costs 20 to 24 bytes
    /// per pair plus growth slack, and a step's events 16 bytes per begun or ended pair, so
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

    /// The current box of a live proxy.
    fn aabb(&self, id: ProxyId) -> Result<Aabb> {
        let proxies = self.proxies();
        Ok(*proxies.aabb(proxies.index_of(id)?))
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
            Pair {
                a: proxies.id(a as usize),
                b: proxies.id(b as usize),
            }
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
