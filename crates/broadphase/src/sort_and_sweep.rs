//! Sort and sweep: the non-incremental sweep and prune. Every update sorts all boxes on one
//! axis and sweeps, then diffs the result with the previous pair set.

use crate::pair_tracker::PairTracker;
use crate::radix_sort::{radix_sort_keys, sortable_key};
use crate::{
    Aabb, BroadPhase, CollisionFilter, PairEvents, PairSet, ProxyId, ProxyKind, ProxyTable, Result,
};

/// Sort and sweep with radix sort on the axis of largest variance of the box centres
/// (Ericson, via the thesis ch. 2.3.1).
///
/// O(n + k) per update for n boxes and k candidate pairs along the sweep axis, whatever moved:
/// the right choice when there is little temporal coherence.
#[derive(Debug, Clone, Default)]
pub struct SortAndSweep {
    proxies: ProxyTable,
    pairs: PairTracker,
    // Scratch reused across updates.
    items: Vec<u64>,
    scratch: Vec<u64>,
    sorted: Vec<SweepBox>,
    axis: usize,
}

/// A box gathered in sweep order: sweep-axis interval first, then the two other axes.
#[derive(Debug, Clone, Copy)]
struct SweepBox {
    min: f32,
    max: f32,
    other_min: [f32; 2],
    other_max: [f32; 2],
    slot: u32,
}

impl SortAndSweep {
    /// An empty sort-and-sweep broad phase.
    pub fn new() -> Self {
        Self::default()
    }

    /// The axis chosen by the last update (0 = x, 1 = y, 2 = z).
    pub fn sweep_axis(&self) -> usize {
        self.axis
    }

    fn choose_axis(&self) -> usize {
        let mut sum = [0f64; 3];
        let mut sum_sq = [0f64; 3];
        let mut n = 0f64;
        for i in self.proxies.live_slots() {
            let c = self.proxies.aabb(i).center();
            for axis in 0..3 {
                let v = c[axis] as f64;
                sum[axis] += v;
                sum_sq[axis] += v * v;
            }
            n += 1.0;
        }
        if n == 0.0 {
            return 0;
        }
        let variance = |axis: usize| sum_sq[axis] / n - (sum[axis] / n).powi(2);
        let mut best = 0;
        for axis in 1..3 {
            if variance(axis) > variance(best) {
                best = axis;
            }
        }
        best
    }
}

impl BroadPhase for SortAndSweep {
    fn name(&self) -> &'static str {
        "sort-and-sweep"
    }

    fn insert(&mut self, aabb: Aabb, kind: ProxyKind, filter: CollisionFilter) -> Result<ProxyId> {
        self.proxies.insert(aabb, kind, filter)
    }

    fn set_aabb(&mut self, id: ProxyId, aabb: Aabb) -> Result<()> {
        self.proxies.set_aabb(id, aabb).map(|_| ())
    }

    fn remove(&mut self, id: ProxyId) -> Result<()> {
        self.proxies.remove(id).map(|_| ())
    }

    fn update(&mut self, events: &mut PairEvents) {
        let axis = self.choose_axis();
        self.axis = axis;
        let (o1, o2) = ((axis + 1) % 3, (axis + 2) % 3);
        let proxies = &self.proxies;
        self.items.clear();
        self.items.extend(
            proxies
                .live_slots()
                .map(|i| ((sortable_key(proxies.aabb(i).min()[axis]) as u64) << 32) | i as u64),
        );
        radix_sort_keys(&mut self.items, &mut self.scratch);
        self.sorted.clear();
        self.sorted.extend(self.items.iter().map(|&item| {
            let slot = item as u32;
            let b = proxies.aabb(slot as usize);
            SweepBox {
                min: b.min()[axis],
                max: b.max()[axis],
                other_min: [b.min()[o1], b.min()[o2]],
                other_max: [b.max()[o1], b.max()[o2]],
                slot,
            }
        }));

        self.pairs.begin_full();
        for (i, a) in self.sorted.iter().enumerate() {
            for b in &self.sorted[i + 1..] {
                if b.min > a.max {
                    break;
                }
                if a.other_min[0] <= b.other_max[0]
                    && b.other_min[0] <= a.other_max[0]
                    && a.other_min[1] <= b.other_max[1]
                    && b.other_min[1] <= a.other_max[1]
                    && proxies.can_pair(a.slot as usize, b.slot as usize)
                {
                    self.pairs.mark(a.slot, b.slot);
                }
            }
        }
        self.pairs.end_full();
        self.pairs.finish(&self.proxies, events);
        self.proxies.release_removed();
    }

    fn clear(&mut self) {
        self.proxies.clear();
        self.pairs.clear();
    }

    fn proxies(&self) -> &ProxyTable {
        &self.proxies
    }

    fn pair_set(&self) -> &PairSet {
        self.pairs.set()
    }

    fn memory_bytes(&self) -> usize {
        self.proxies.memory_bytes()
            + self.pairs.memory_bytes()
            + (self.items.capacity() + self.scratch.capacity()) * 8
            + self.sorted.capacity() * std::mem::size_of::<SweepBox>()
    }
}
