//! Spatial masking: per-axis bitmasks of grid cells, compared a word at a time.

use crate::backend::ProxyStore;
use crate::{Aabb, BroadPhase, PairEvents, ProxyKind};

/// Most bins per axis: one 64-bit word per axis and object.
pub(crate) const MASKING_MAX_BINS: usize = 64;

/// Spatial masking after the adaptive broad-phase report: the world is cut into up to 64 slabs
/// per axis, each object gets one 64-bit mask per axis with a bit per slab it overlaps, and two
/// objects are candidates when their masks share a bit on all three axes — three ANDs, no
/// geometry — before the exact box test.
///
/// The masks are rebuilt at every update, as in [Owen18, spatial masking], from the current boxes: slabs cover
/// the 5th to the 95th percentile of the box centres, and their count is the extent of that range over the mean largest box edge, clamped to
/// 1..=64. Values outside the covered range fall into the first or last slab; the slab
/// function is monotone, so overlapping boxes always share a bit on every axis and the output
/// is exact whatever the distribution (far or huge boxes only cost candidates).
///
/// O(n²) per update by design, in the worst case as in the best: every dynamic object's masks are ANDed with those of all later objects (static
/// objects are never compared with each other), over flat arrays reused between updates, so the
/// steady state does not allocate. Queries use the provided linear scans.
///
/// ```
/// use broadphase::{Aabb, BroadPhase, CollisionFilter, PairEvents, ProxyKind, SpatialMasking};
/// let mut masking = SpatialMasking::new();
/// let all = CollisionFilter::ALL;
/// masking.insert(Aabb::from_arrays([0.0; 3], [1.0; 3])?, ProxyKind::Dynamic, all)?;
/// masking.insert(Aabb::from_arrays([1.0; 3], [2.0; 3])?, ProxyKind::Dynamic, all)?;
/// masking.insert(Aabb::from_arrays([5.0; 3], [6.0; 3])?, ProxyKind::Dynamic, all)?;
/// let mut events = PairEvents::new();
/// masking.update(&mut events);
/// assert_eq!(events.begun.len(), 1);
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct SpatialMasking {
    store: ProxyStore,
    // Scratch reused across updates, dynamic objects first.
    slots: Vec<u32>,
    boxes: Vec<Aabb>,
    centers: Vec<f32>,
    masks: [Vec<u64>; 3],
    bins: [usize; 3],
    candidates: usize,
}

/// The slabs of one axis: `bin(v) = clamp(floor((v - origin) · scale), 0, bins - 1)`.
#[derive(Debug, Clone, Copy)]
struct AxisBins {
    origin: f64,
    scale: f64,
    last: i64,
}

impl AxisBins {
    #[inline]
    fn bin(&self, v: f32) -> u32 {
        (((v as f64 - self.origin) * self.scale).floor() as i64).clamp(0, self.last) as u32
    }

    /// Bits `bin(lo)..=bin(hi)`.
    #[inline]
    fn mask(&self, lo: f32, hi: f32) -> u64 {
        let (first, last) = (self.bin(lo), self.bin(hi));
        (u64::MAX >> (63 - last)) & (u64::MAX << first)
    }
}

impl SpatialMasking {
    /// An empty spatial-masking broad phase.
    pub fn new() -> Self {
        Self::default()
    }

    /// Slabs per axis chosen by the last update.
    pub fn bins(&self) -> [usize; 3] {
        self.bins
    }

    /// Candidate pairs (all three masks share a bit) at the last update, before the box test.
    pub fn candidate_count(&self) -> usize {
        self.candidates
    }

    fn choose_bins(&mut self) -> [AxisBins; 3] {
        let (mut edge_sum, mut edge_count) = (0f64, 0usize);
        for b in &self.boxes {
            let edge = b.extents().max_element();
            if edge.is_finite() {
                edge_sum += edge as f64;
                edge_count += 1;
            }
        }
        let mean_edge = if edge_count > 0 {
            edge_sum / edge_count as f64
        } else {
            0.0
        };
        [0, 1, 2].map(|axis| {
            // The 5th and 95th percentiles of the centres: far outliers do not stretch the slabs.
            let centers = &mut self.centers;
            centers.clear();
            centers.extend(self.boxes.iter().map(|b| b.center()[axis]));
            let (lo, hi) = if centers.is_empty() {
                (0.0, 0.0)
            } else {
                let last = centers.len() - 1;
                let lo = *centers.select_nth_unstable_by(last / 20, f32::total_cmp).1 as f64;
                let hi = *centers
                    .select_nth_unstable_by(last - last / 20, f32::total_cmp)
                    .1 as f64;
                (lo, hi)
            };
            let span = hi - lo;
            let bins = if !(span > 0.0 && span.is_finite()) {
                1
            } else if mean_edge > 0.0 {
                ((span / mean_edge).ceil() as usize).clamp(1, MASKING_MAX_BINS)
            } else {
                MASKING_MAX_BINS
            };
            AxisBins {
                origin: lo,
                scale: if bins > 1 { bins as f64 / span } else { 0.0 },
                last: bins as i64 - 1,
            }
        })
    }
}

impl BroadPhase for SpatialMasking {
    fn name(&self) -> &'static str {
        "masking"
    }

    crate::backend::store_edits!(store);

    fn try_update(&mut self, events: &mut PairEvents) -> crate::Result<()> {
        self.slots.clear();
        self.boxes.clear();
        let proxies = &self.store.proxies;
        for kind in [ProxyKind::Dynamic, ProxyKind::Static] {
            for i in proxies.live_slots().filter(|&i| proxies.kind(i) == kind) {
                self.slots.push(i as u32);
                self.boxes.push(*proxies.aabb(i));
            }
        }
        let dynamic_count = self
            .slots
            .iter()
            .take_while(|&&i| proxies.kind(i as usize) == ProxyKind::Dynamic)
            .count();
        let axes = self.choose_bins();
        let proxies = &self.store.proxies;
        self.bins = axes.map(|a| a.last as usize + 1);
        for (axis, bins) in axes.iter().enumerate() {
            let masks = &mut self.masks[axis];
            masks.clear();
            masks.extend(
                self.boxes
                    .iter()
                    .map(|b| bins.mask(b.min()[axis], b.max()[axis])),
            );
        }

        self.store.pairs.begin_full();
        let [mx, my, mz] = &self.masks;
        let n = self.slots.len();
        let mut candidates = 0;
        for i in 0..dynamic_count {
            let (x, y, z) = (mx[i], my[i], mz[i]);
            let a = &self.boxes[i];
            for j in i + 1..n {
                // Three ANDs decide candidacy; no branch until all three are known.
                let shared = (x & mx[j] != 0) & (y & my[j] != 0) & (z & mz[j] != 0);
                if shared {
                    candidates += 1;
                    if a.overlaps(&self.boxes[j]) {
                        let (si, sj) = (self.slots[i], self.slots[j]);
                        if proxies.can_pair(si as usize, sj as usize) {
                            self.store.pairs.mark(si, sj);
                        }
                    }
                }
            }
        }
        self.candidates = candidates;
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
            + self.boxes.capacity() * std::mem::size_of::<Aabb>()
            + self.centers.capacity() * 4
            + self.masks.iter().map(|m| m.capacity() * 8).sum::<usize>()
    }
}

crate::backend::impl_candidate!(SpatialMasking, store);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::boxed;
    use crate::CollisionFilter;

    #[test]
    fn masks_cover_the_overlapped_slabs() {
        let bins = AxisBins {
            origin: 0.0,
            scale: 1.0,
            last: 63,
        };
        assert_eq!(bins.mask(0.0, 0.5), 1);
        assert_eq!(bins.mask(1.0, 2.0), 0b110);
        assert_eq!(bins.mask(-1e30, 1e30), u64::MAX);
        assert_eq!(bins.mask(63.5, f32::MAX), 1 << 63);
        let one = AxisBins {
            origin: 0.0,
            scale: 0.0,
            last: 0,
        };
        assert_eq!(one.mask(-f32::MAX, f32::MAX), 1);
    }

    #[test]
    fn candidates_prune_and_output_stays_exact() {
        let mut masking = SpatialMasking::new();
        let all = CollisionFilter::ALL;
        // A line of unit boxes one apart: each touches its neighbours only.
        for i in 0..40 {
            let x = i as f32;
            masking
                .insert(
                    boxed([x, 0.0, 0.0], [x + 1.0, 1.0, 1.0]),
                    ProxyKind::Dynamic,
                    all,
                )
                .unwrap();
        }
        // A far box and a huge one: covered by the edge slabs, still exact.
        masking
            .insert(boxed([1e30; 3], [1e30; 3]), ProxyKind::Dynamic, all)
            .unwrap();
        masking
            .insert(boxed([-f32::MAX; 3], [f32::MAX; 3]), ProxyKind::Static, all)
            .unwrap();
        let mut events = PairEvents::new();
        masking.update(&mut events);
        assert_eq!(masking.pair_count(), 39 + 41);
        assert!(masking.bins()[0] > 1);
        // Far fewer candidates than the 861 pairs of a brute-force pass.
        assert!(
            masking.candidate_count() < 300,
            "{}",
            masking.candidate_count()
        );
    }
}
