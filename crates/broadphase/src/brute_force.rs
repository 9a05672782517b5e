//! Brute force: every pair tested at every update. The oracle of every test.

use crate::backend::ProxyStore;
use crate::{Aabb, BroadPhase, PairEvents, ProxyKind};

/// Tests all pairs of proxies at each update.
///
/// Simple enough to be obviously right, which makes it the reference the other algorithms are
/// checked against; not needlessly slow: boxes are gathered into flat arrays, static proxies
/// are only tested against dynamic ones, and the filter is checked after the box test.
///
/// # When to use
/// As the oracle in tests, and for scenes of a few dozen proxies, where any spatial structure
/// costs more to maintain than testing every pair.
///
/// # Performance
/// O(n²) box tests per update whatever moved (d · (d - 1) / 2 + d · s for d dynamic and s
/// static proxies), so the worst case is also its best: O(n²). Insert, move and remove are
/// O(1). Memory O(n) besides the pairs.
///
/// # Examples
/// ```
/// use broadphase::{Aabb, BroadPhase, BruteForce, CollisionFilter, PairEvents, ProxyKind};
/// let mut bp = BruteForce::new();
/// bp.insert(Aabb::from_arrays([0.0; 3], [1.0; 3])?, ProxyKind::Static, CollisionFilter::ALL)?;
/// bp.insert(Aabb::from_arrays([0.5; 3], [2.0; 3])?, ProxyKind::Static, CollisionFilter::ALL)?;
/// bp.insert(Aabb::from_arrays([1.5; 3], [3.0; 3])?, ProxyKind::Dynamic, CollisionFilter::ALL)?;
/// let mut events = PairEvents::new();
/// bp.update(&mut events);
/// assert_eq!(events.begun.len(), 1); // static-static pairs never form
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct BruteForce {
    store: ProxyStore,
    // Scratch, reused across updates: slots and boxes of dynamic then static proxies, the
    // x-intervals apart so that the inner loop's usual rejection reads one dense array.
    slots: Vec<u32>,
    x_intervals: Vec<[f32; 2]>,
    boxes: Vec<Aabb>,
}

impl BruteForce {
    /// An empty brute-force broad phase.
    pub fn new() -> Self {
        Self::default()
    }
}

impl BroadPhase for BruteForce {
    fn name(&self) -> &'static str {
        "brute-force"
    }

    crate::backend::store_edits!(store);

    fn try_update(&mut self, events: &mut PairEvents) -> crate::Result<()> {
        let proxies = &self.store.proxies;
        self.slots.clear();
        self.x_intervals.clear();
        self.boxes.clear();
        for kind in [ProxyKind::Dynamic, ProxyKind::Static] {
            for i in proxies.live_slots().filter(|&i| proxies.kind(i) == kind) {
                let b = proxies.aabb(i);
                self.slots.push(i as u32);
                self.x_intervals.push([b.min().x, b.max().x]);
                self.boxes.push(*b);
            }
        }
        let dynamic_count = self
            .slots
            .iter()
            .take_while(|&&i| proxies.kind(i as usize) == ProxyKind::Dynamic)
            .count();

        self.store.pairs.begin_full();
        for i in 0..dynamic_count {
            let [min_x, max_x] = self.x_intervals[i];
            let a = &self.boxes[i];
            for (j, x) in self.x_intervals.iter().enumerate().skip(i + 1) {
                if (x[0] <= max_x) & (min_x <= x[1]) && a.overlaps(&self.boxes[j]) {
                    let (sa, sb) = (self.slots[i], self.slots[j]);
                    if proxies.can_pair(sa as usize, sb as usize) {
                        self.store.pairs.mark(sa, sb);
                    }
                }
            }
        }
        self.store.pairs.end_full();
        self.store.finish(events)
    }

    fn clear(&mut self) {
        self.store.clear();
    }

    crate::backend::store_accessors!(store);

    fn memory_bytes(&self) -> usize {
        self.store.memory_bytes()
            + self.slots.capacity() * 4
            + self.x_intervals.capacity() * 8
            + self.boxes.capacity() * std::mem::size_of::<Aabb>()
    }
}
crate::backend::impl_candidate!(BruteForce, store);
