//! Incremental sweep and prune on three axes ([SapBlog]; [Zych16, ch. 2.3.1]).
//!
//! Each axis keeps the boxes' endpoints in one sorted array. Moving a box re-sorts only its
//! endpoints by insertion sort; each swap of a minimum with another box's maximum is an event.
//! When two intervals start overlapping on an axis, the pair is added if the boxes overlap on
//! all three axes. The cost of an update is proportional to the number of swaps, which
//! temporal coherence keeps small.
//!
//! Every box has its final value before any endpoint moves, so the overlap test at a swap sees
//! the final boxes: a pair added at any swap belongs to the result. A pair that begins to
//! overlap has its last change on some axis be such a swap, so it is found. Pairs that stop
//! overlapping are found by one pass over the pairs of moved boxes after the sort, instead of
//! a pair-set lookup at each separating swap (most of which concern pairs that never
//! overlapped on the other axes).

use crate::backend::ProxyStore;
use crate::prune::PruneScratch;
use crate::util::MoveBuffer;
use crate::{Aabb, BroadPhase, CollisionFilter, PairEvents, ProxyId, ProxyKind, Result};

/// An endpoint: the coordinate, and the slot index shifted left by one with the low bit set
/// for a maximum.
#[derive(Debug, Clone, Copy)]
struct Endpoint {
    value: f32,
    data: u32,
}

const SENTINEL: u32 = u32::MAX;

/// Moved boxes sampled to estimate an update's swaps: enough for a teleporting majority to
/// show, few enough to cost nothing beside the update.
const SWAP_SAMPLES: usize = 32;

impl Endpoint {
    #[inline]
    fn is_max(self) -> bool {
        self.data & 1 == 1
    }

    #[inline]
    fn slot(self) -> usize {
        (self.data >> 1) as usize
    }

    /// Sort order: by value, and a minimum before a maximum of equal value, so that touching
    /// intervals count as overlapping (closed boxes).
    #[inline]
    fn precedes(self, other: Endpoint) -> bool {
        self.value < other.value
            || (self.value == other.value && (self.data & 1) < (other.data & 1))
    }
}

#[inline]
fn endpoint(value: f32, slot: usize, is_max: bool) -> Endpoint {
    Endpoint {
        value: value + 0.0, // -0.0 becomes 0.0, so equal values compare equal in every order
        data: ((slot as u32) << 1) | is_max as u32,
    }
}

/// Incremental three-axis sweep and prune with insertion sort and pair events from swaps.
///
/// # When to use
/// Many proxies that move a little every step (temporal coherence), spread out along every
/// axis, with few insertions and removals per step: an update then only repairs the endpoint
/// lists where boxes moved. For scenes without coherence prefer [`SortAndSweep`]; for
/// scenes with many static proxies, queries or ray casts, [`DynamicTreeBroadPhase`].
///
/// # Performance
/// An update costs O(m + s + p) for m moved proxies, s endpoint swaps and p pair changes; with
/// coherence s is about the number of neighbours a moved box passes, so an update of a calm
/// scene costs close to O(m). Inserting or removing proxies costs one O(n) merge or compaction
/// per update in which it happens, whatever the count. Memory: six endpoints and their
/// positions per proxy, O(n), plus the pairs.
///
/// Worst case: boxes that jump across the scene would make insertion sort quadratic (each
/// moved box's endpoints passing O(n) others). An update therefore estimates its swaps
/// before sorting, from a sample of the moved boxes (how many positions a sampled box's
/// minimum on x moves, found by binary search), and when the estimate exceeds the work of
/// sorting every axis from scratch (`6 n log2(2n)` comparisons for n boxes), or the sort's
/// actual swaps exceed twice that, it sorts the three endpoint arrays again and finds all
/// pairs with one-shot box pruning, as [`SortAndSweep`] does: O(n log n + pairs), a small
/// factor above sort and sweep's. Boxes crowded on one plane share their intervals on that
/// axis, and every swap there tests for a pair: O(n²) pair tests when all of them overlap,
/// which the pairs themselves then cost too.
///
/// # Examples
/// ```
/// use broadphase::{Aabb, BroadPhase, CollisionFilter, PairEvents, ProxyKind, SweepAndPrune};
/// let mut bp = SweepAndPrune::new();
/// let a = bp.insert(Aabb::from_arrays([0.0; 3], [1.0; 3])?, ProxyKind::Dynamic, CollisionFilter::ALL)?;
/// let b = bp.insert(Aabb::from_arrays([3.0; 3], [4.0; 3])?, ProxyKind::Dynamic, CollisionFilter::ALL)?;
/// let mut events = PairEvents::new();
/// bp.update(&mut events);
/// assert!(events.is_empty());
/// bp.set_aabb(b, Aabb::from_arrays([0.5; 3], [1.5; 3])?)?; // b slides onto a
/// bp.update(&mut events);
/// assert_eq!(events.begun.len(), 1);
/// # let _ = a;
/// # Ok::<(), broadphase::Error>(())
/// ```
///
/// [`SortAndSweep`]: crate::SortAndSweep
/// [`DynamicTreeBroadPhase`]: crate::DynamicTreeBroadPhase
#[derive(Debug, Clone)]
pub struct SweepAndPrune {
    store: ProxyStore,
    /// Per axis, sorted endpoints between a `-inf` and a `+inf` sentinel.
    axes: [Vec<Endpoint>; 3],
    /// Per slot, the position of each endpoint: `[axis * 2 + is_max]`.
    positions: Vec<[u32; 6]>,
    /// Per slot, whether its endpoints are in the arrays.
    in_arrays: Vec<bool>,
    /// Per slot, whether it is being inserted (only during `insert_new`).
    is_new: Vec<bool>,
    /// Proxies moved since the last update.
    moved: MoveBuffer,
    inserted: Vec<u32>,
    // Scratch for merges and the insertion sweep.
    merged: Vec<Endpoint>,
    new_endpoints: Vec<Endpoint>,
    active_old: Vec<u32>,
    active_new: Vec<u32>,
    active_position: Vec<u32>,
    /// Endpoint swaps of the current update's insertion sort.
    swaps: usize,
    /// Updates that gave up insertion sort for a full rebuild.
    rebuilds: u64,
    // Scratch of a full rebuild: live boxes, their slots, box pruning's buffers and pairs.
    rebuild_boxes: Vec<Aabb>,
    rebuild_slots: Vec<u32>,
    prune: PruneScratch,
    found: Vec<(u32, u32)>,
}

impl Default for SweepAndPrune {
    fn default() -> Self {
        Self::new()
    }
}

impl SweepAndPrune {
    /// An empty sweep and prune.
    pub fn new() -> Self {
        let sentinels = || {
            vec![
                Endpoint {
                    value: f32::NEG_INFINITY,
                    data: SENTINEL - 1,
                },
                Endpoint {
                    value: f32::INFINITY,
                    data: SENTINEL,
                },
            ]
        };
        Self {
            store: ProxyStore::new(),
            axes: [sentinels(), sentinels(), sentinels()],
            positions: Vec::new(),
            in_arrays: Vec::new(),
            is_new: Vec::new(),
            moved: MoveBuffer::default(),
            inserted: Vec::new(),
            merged: Vec::new(),
            new_endpoints: Vec::new(),
            active_old: Vec::new(),
            active_new: Vec::new(),
            active_position: Vec::new(),
            swaps: 0,
            rebuilds: 0,
            rebuild_boxes: Vec::new(),
            rebuild_slots: Vec::new(),
            prune: PruneScratch::default(),
            found: Vec::new(),
        }
    }

    /// Updates so far that found the boxes too incoherent for insertion sort and rebuilt the
    /// endpoint arrays and the pairs from scratch (see the type's worst case).
    pub fn full_rebuilds(&self) -> u64 {
        self.rebuilds
    }

    fn grow_slots(&mut self) {
        let n = self.store.proxies.slot_count();
        if self.positions.len() < n {
            self.positions.resize(n, [0; 6]);
            self.in_arrays.resize(n, false);
            self.moved.grow(n);
            self.is_new.resize(n, false);
            self.active_position.resize(n, 0);
        }
    }

    fn reindex(&mut self) {
        for (axis, endpoints) in self.axes.iter().enumerate() {
            for (position, e) in endpoints
                .iter()
                .enumerate()
                .skip(1)
                .take(endpoints.len() - 2)
            {
                self.positions[e.slot()][axis * 2 + e.is_max() as usize] = position as u32;
            }
        }
    }

    fn remove_removed(&mut self) {
        if self.store.proxies.removed_slots().is_empty() {
            return;
        }
        self.store
            .pairs
            .remove_pairs_of_removed(&self.store.proxies);
        let mut any = false;
        for &slot in self.store.proxies.removed_slots() {
            any |= std::mem::replace(&mut self.in_arrays[slot as usize], false);
        }
        if !any {
            return; // only proxies inserted and removed within this step
        }
        let proxies = &self.store.proxies;
        for endpoints in &mut self.axes {
            endpoints.retain(|e| e.data >= SENTINEL - 1 || !proxies.is_removed(e.slot()));
        }
        self.reindex();
    }

    fn move_proxies(&mut self) {
        if self.moved.is_empty() {
            return;
        }
        self.swaps = 0;
        let budget = self.swap_budget();
        if self.estimated_swaps() > budget {
            self.rebuild();
            return;
        }
        for k in 0..self.moved.len() {
            if self.swaps > 2 * budget {
                self.rebuild();
                return;
            }
            let slot = self.moved.slot(k);
            if !self.store.proxies.is_live(slot) || !self.in_arrays[slot] {
                continue;
            }
            let aabb = *self.store.proxies.aabb(slot);
            for axis in 0..3 {
                let (new_min, new_max) = (aabb.min()[axis] + 0.0, aabb.max()[axis] + 0.0);
                let min_at = self.positions[slot][axis * 2] as usize;
                let max_at = self.positions[slot][axis * 2 + 1] as usize;
                let old_min = self.axes[axis][min_at].value;
                let old_max = self.axes[axis][max_at].value;
                // Outward first, then inward: the interval only ever grows before it
                // shrinks, so a box's own endpoints never cross.
                if new_min < old_min {
                    self.axes[axis][min_at].value = new_min;
                    self.sift_down(axis, min_at, slot);
                }
                if new_max > old_max {
                    self.axes[axis][max_at].value = new_max;
                    self.sift_up(axis, max_at, slot);
                }
                if new_min > old_min {
                    let at = self.positions[slot][axis * 2] as usize;
                    self.axes[axis][at].value = new_min;
                    self.sift_up(axis, at, slot);
                }
                if new_max < old_max {
                    let at = self.positions[slot][axis * 2 + 1] as usize;
                    self.axes[axis][at].value = new_max;
                    self.sift_down(axis, at, slot);
                }
            }
        }
        let (proxies, moved) = (&self.store.proxies, &self.moved);
        self.store.pairs.retain(|a, b| {
            let (a, b) = (a as usize, b as usize);
            !(moved.contains(a) || moved.contains(b)) || proxies.aabb(a).overlaps(proxies.aabb(b))
        });
        self.moved.clear();
    }

    /// Moves the endpoint at `at` towards the start until sorted, adding the pairs whose
    /// intervals begin to overlap on this axis and whose boxes overlap.
    fn sift_down(&mut self, axis: usize, mut at: usize, slot: usize) {
        let start = at;
        let endpoints = &mut self.axes[axis];
        let moving = endpoints[at];
        loop {
            let previous = endpoints[at - 1];
            if !moving.precedes(previous) {
                break;
            }
            let other = previous.slot();
            // A minimum passing below a maximum: the intervals begin to overlap.
            if !moving.is_max() && previous.is_max() && self.store.proxies.is_pair(slot, other) {
                self.store.pairs.add(slot as u32, other as u32);
            }
            endpoints[at] = previous;
            self.positions[other][axis * 2 + previous.is_max() as usize] = at as u32;
            at -= 1;
        }
        endpoints[at] = moving;
        self.positions[slot][axis * 2 + moving.is_max() as usize] = at as u32;
        self.swaps += start - at;
    }

    /// Moves the endpoint at `at` towards the end until sorted, adding the pairs whose
    /// intervals begin to overlap on this axis and whose boxes overlap.
    fn sift_up(&mut self, axis: usize, mut at: usize, slot: usize) {
        let start = at;
        let endpoints = &mut self.axes[axis];
        let moving = endpoints[at];
        loop {
            let next = endpoints[at + 1];
            if !next.precedes(moving) {
                break;
            }
            let other = next.slot();
            // A maximum passing above a minimum: the intervals begin to overlap.
            if moving.is_max() && !next.is_max() && self.store.proxies.is_pair(slot, other) {
                self.store.pairs.add(slot as u32, other as u32);
            }
            endpoints[at] = next;
            self.positions[other][axis * 2 + next.is_max() as usize] = at as u32;
            at += 1;
        }
        endpoints[at] = moving;
        self.positions[slot][axis * 2 + moving.is_max() as usize] = at as u32;
        self.swaps += at - start;
    }

    /// Merges the endpoints of the proxies inserted since the last update into the arrays
    /// (O(n + k log k)), then finds their pairs with one sweep along x.
    fn insert_new(&mut self) {
        let proxies = &self.store.proxies;
        self.inserted.retain(|&slot| proxies.is_live(slot as usize));
        if self.inserted.is_empty() {
            return;
        }
        for axis in 0..3 {
            self.new_endpoints.clear();
            for &slot in &self.inserted {
                let b = self.store.proxies.aabb(slot as usize);
                self.new_endpoints
                    .push(endpoint(b.min()[axis], slot as usize, false));
                self.new_endpoints
                    .push(endpoint(b.max()[axis], slot as usize, true));
            }
            self.new_endpoints.sort_unstable_by(|a, b| {
                a.value
                    .total_cmp(&b.value)
                    .then((a.data & 1).cmp(&(b.data & 1)))
            });
            let old = &self.axes[axis];
            self.merged.clear();
            self.merged.push(old[0]);
            let (mut i, mut j) = (1, 0);
            let old_end = old.len() - 1;
            while i < old_end || j < self.new_endpoints.len() {
                let take_new = i == old_end
                    || (j < self.new_endpoints.len() && self.new_endpoints[j].precedes(old[i]));
                if take_new {
                    self.merged.push(self.new_endpoints[j]);
                    j += 1;
                } else {
                    self.merged.push(old[i]);
                    i += 1;
                }
            }
            self.merged.push(old[old_end]);
            std::mem::swap(&mut self.axes[axis], &mut self.merged);
        }
        for &slot in &self.inserted {
            self.in_arrays[slot as usize] = true;
        }
        self.reindex();

        if self.inserted.len() == self.store.proxies.len() {
            // Every box is new (a first step, a bulk load): one-shot box pruning, whose y/z
            // grid avoids the single axis's false candidates (O(n^(5/3)) in a dense scene).
            // Not a steady-state path: its buffers are allocated here.
            let boxes: Vec<Aabb> = self
                .inserted
                .iter()
                .map(|&slot| *self.store.proxies.aabb(slot as usize))
                .collect();
            let mut found = Vec::new();
            // Fewer boxes than u32::MAX (the table hands out u32 slots): cannot fail.
            let pruned = crate::complete_pairs(&boxes, &mut found);
            debug_assert!(pruned.is_ok());
            for (i, j) in found {
                let (a, b) = (self.inserted[i as usize], self.inserted[j as usize]);
                if self.store.proxies.can_pair(a as usize, b as usize) {
                    self.store.pairs.add(a, b);
                }
            }
            self.inserted.clear();
            return;
        }
        // Sweep x: test each new box against every box whose x-interval is open where it
        // starts, and each old box against the open new ones: O(n + pairs of new boxes).
        for &slot in &self.inserted {
            self.is_new[slot as usize] = true;
        }
        self.active_old.clear();
        self.active_new.clear();
        let x = &self.axes[0];
        for e in &x[1..x.len() - 1] {
            let slot = e.slot();
            let fresh = self.is_new[slot];
            if e.is_max() {
                let list = if fresh {
                    &mut self.active_new
                } else {
                    &mut self.active_old
                };
                let at = self.active_position[slot] as usize;
                list.swap_remove(at);
                if let Some(&moved) = list.get(at) {
                    self.active_position[moved as usize] = at as u32;
                }
            } else {
                let a = self.store.proxies.aabb(slot);
                let old: &[u32] = if fresh { &self.active_old } else { &[] };
                for &other in old.iter().chain(self.active_new.iter()) {
                    let other = other as usize;
                    if a.overlaps(self.store.proxies.aabb(other))
                        && self.store.proxies.can_pair(slot, other)
                    {
                        self.store.pairs.add(slot as u32, other as u32);
                    }
                }
                let list = if fresh {
                    &mut self.active_new
                } else {
                    &mut self.active_old
                };
                self.active_position[slot] = list.len() as u32;
                list.push(slot as u32);
            }
        }
        for &slot in &self.inserted {
            self.is_new[slot as usize] = false;
        }
        self.inserted.clear();
    }
}

impl BroadPhase for SweepAndPrune {
    fn name(&self) -> &'static str {
        "sap"
    }

    fn insert_keyed(
        &mut self,
        aabb: Aabb,
        kind: ProxyKind,
        filter: CollisionFilter,
        key: u64,
    ) -> Result<ProxyId> {
        // Endpoints pack the slot into 31 bits; the top values are the sentinels'.
        if self.store.proxies.slot_count() >= (SENTINEL >> 1) as usize - 1 {
            return Err(crate::Error::CapacityExhausted);
        }
        let id = self.store.insert_keyed(aabb, kind, filter, key)?;
        self.grow_slots();
        self.inserted.push(id.index());
        Ok(id)
    }

    fn set_aabb(&mut self, id: ProxyId, aabb: Aabb) -> Result<()> {
        if let Some(slot) = self.store.set_aabb(id, aabb)? {
            self.moved.mark(slot);
        }
        Ok(())
    }

    fn remove_with(&mut self, id: ProxyId, report: bool) -> Result<()> {
        self.store.remove(id, report).map(|_| ())
    }

    fn set_filter(&mut self, id: ProxyId, filter: CollisionFilter) -> Result<()> {
        self.store.set_filter(id, filter).map(|_| ())
    }

    // The sweep keeps statics with the others.
    fn set_kind(&mut self, id: ProxyId, kind: ProxyKind) -> Result<()> {
        self.store.set_kind(id, kind).map(|_| ())
    }

    fn try_update(&mut self, events: &mut PairEvents) -> crate::Result<()> {
        // After an update that failed on the pair limit the swaps no longer tell every
        // change: the pairs are found again by a rebuild.
        let start_over = self.store.pairs.lost();
        self.remove_removed();
        self.move_proxies();
        self.insert_new();
        if start_over {
            self.rebuild();
        }
        self.store.finish(events)
    }

    fn clear(&mut self) {
        // The proxy table keeps its allocation and the pair tracker its limit.
        let mut store = std::mem::take(&mut self.store);
        store.clear();
        *self = Self::new();
        self.store = store;
    }

    crate::backend::store_accessors!(store);

    fn memory_bytes(&self) -> usize {
        let endpoints: usize = self.axes.iter().map(|a| a.capacity()).sum::<usize>()
            + self.merged.capacity()
            + self.new_endpoints.capacity();
        self.store.memory_bytes()
            + endpoints * std::mem::size_of::<Endpoint>()
            + self.positions.capacity() * 24
            + self.in_arrays.capacity()
            + self.moved.memory_bytes()
            + self.is_new.capacity()
            + self.rebuild_boxes.capacity() * std::mem::size_of::<Aabb>()
            + (self.rebuild_slots.capacity() + self.found.capacity() * 2) * 4
            + self.prune.memory_bytes()
            + (self.inserted.capacity()
                + self.active_old.capacity()
                + self.active_new.capacity()
                + self.active_position.capacity())
                * 4
    }
}
crate::backend::impl_candidate!(SweepAndPrune, store);

mod rebuild;
#[cfg(test)]
mod tests;
