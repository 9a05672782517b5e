//! Top-down construction with the binned surface-area heuristic.

use glam::DVec3;

use super::{area, Bvh, BvhNode};
use crate::Aabb;

/// Bins per axis.
const BINS: usize = 16;

impl Bvh {
    /// Splits each range where the surface-area heuristic `area(L)·|L| + area(R)·|R|` is
    /// smallest among the `BINS - 1` bin boundaries of each axis (centroids binned uniformly
    /// over their bounds). Ranges whose centroids all coincide, or whose best split leaves a
    /// side empty, are split at the median instead. O(n log n) for reasonable inputs; the work
    /// stack is explicit, so unbalanced splits cannot overflow the call stack.
    pub(super) fn build_sah(&mut self, items: &[u32], aabbs: &[Aabb]) {
        self.nodes.push(BvhNode::placeholder());
        let mut tasks = crate::tree::TraversalStack::<(u32, u32, u32)>::new();
        tasks.push((0, 0, items.len() as u32));
        while let Some((node, start, end)) = tasks.pop() {
            let (start, end) = (start as usize, end as usize);
            if end - start == 1 {
                let i = self.order[start] as usize;
                self.nodes[node as usize] = BvhNode::leaf(items[i], aabbs[i]);
                continue;
            }
            let mid = match self.split_by_sah(start, end, aabbs) {
                Some(mid) => mid,
                None => self.split_at_median(start, end),
            };
            let first = self.push_children(node);
            tasks.push((first + 1, mid as u32, end as u32));
            tasks.push((first, start as u32, mid as u32));
        }
    }

    /// Partitions `order[start..end]` at the best binned SAH split; `None` if there is none.
    fn split_by_sah(&mut self, start: usize, end: usize, aabbs: &[Aabb]) -> Option<usize> {
        if end - start <= 2 {
            return None;
        }
        let (lo, hi) = self.centroid_bounds(start, end);
        let extent = hi - lo;
        let bin_of = |c: DVec3, axis: usize| -> usize {
            let t = (c[axis] - lo[axis]) / extent[axis] * BINS as f64;
            (t as usize).min(BINS - 1)
        };
        let mut best: Option<(f64, usize, usize)> = None; // (cost, axis, last bin on the left)
        for axis in 0..3 {
            if extent[axis] <= 0.0 {
                continue;
            }
            let mut counts = [0usize; BINS];
            let mut bounds: [Option<Aabb>; BINS] = [None; BINS];
            for &i in &self.order[start..end] {
                let b = bin_of(self.centroids[i as usize].as_dvec3(), axis);
                counts[b] += 1;
                let aabb = &aabbs[i as usize];
                bounds[b] = Some(bounds[b].map_or(*aabb, |u| u.union(aabb)));
            }
            // Right-to-left prefix: cost of the right side for a split after bin `k`.
            let mut right_cost = [0f64; BINS];
            let (mut acc, mut count) = (None::<Aabb>, 0usize);
            for k in (1..BINS).rev() {
                if let Some(b) = bounds[k] {
                    acc = Some(acc.map_or(b, |u| u.union(&b)));
                }
                count += counts[k];
                right_cost[k - 1] = acc.map_or(0.0, |u| area(&u) * count as f64);
            }
            let (mut acc, mut count) = (None::<Aabb>, 0usize);
            for k in 0..BINS - 1 {
                if let Some(b) = bounds[k] {
                    acc = Some(acc.map_or(b, |u| u.union(&b)));
                }
                count += counts[k];
                if count == 0 || count == end - start {
                    continue;
                }
                let cost = acc.map_or(0.0, |u| area(&u) * count as f64) + right_cost[k];
                if best.is_none_or(|(c, _, _)| cost < c) {
                    best = Some((cost, axis, k));
                }
            }
        }
        let (_, axis, last_left) = best?;
        // Partition in place, stably enough for determinism (two-pointer scan).
        let (mut i, mut j) = (start, end);
        while i < j {
            let c = self.centroids[self.order[i] as usize].as_dvec3();
            if bin_of(c, axis) <= last_left {
                i += 1;
            } else {
                j -= 1;
                self.order.swap(i, j);
            }
        }
        (i > start && i < end).then_some(i)
    }
}
