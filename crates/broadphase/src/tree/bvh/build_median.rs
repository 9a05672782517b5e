//! Top-down construction split at the object median ([Kaya16, ch. 4.5–4.6]).

use super::{largest_axis, Bvh, BvhNode};
use crate::Aabb;

impl Bvh {
    /// Splits each range of objects in half at the median centroid along the axis of largest
    /// centroid extent (`select_nth_unstable`, O(k) per range of k), so the tree is balanced:
    /// height `ceil(log2 n)`, O(n log n) in all. Ties are broken by input position, so the
    /// result depends only on the input.
    pub(super) fn build_median(&mut self, items: &[u32], aabbs: &[Aabb]) {
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
            let mid = self.split_at_median(start, end);
            let first = self.push_children(node);
            tasks.push((first + 1, mid as u32, end as u32));
            tasks.push((first, start as u32, mid as u32));
        }
    }

    /// Reorders `order[start..end]` so that its first half has the smaller centroids on the
    /// axis of largest extent; returns the middle.
    pub(super) fn split_at_median(&mut self, start: usize, end: usize) -> usize {
        let (lo, hi) = self.centroid_bounds(start, end);
        let axis = largest_axis(hi - lo);
        let mid = (start + end) / 2;
        let centroids = &self.centroids;
        self.order[start..end].select_nth_unstable_by(mid - start, |&a, &b| {
            centroids[a as usize][axis]
                .total_cmp(&centroids[b as usize][axis])
                .then(a.cmp(&b))
        });
        mid
    }

    /// Appends two child placeholders for internal node `node`; returns the first's index.
    pub(super) fn push_children(&mut self, node: u32) -> u32 {
        let first = self.nodes.len() as u32;
        self.nodes.push(BvhNode::placeholder());
        self.nodes.push(BvhNode::placeholder());
        self.nodes[node as usize].children = [first, first + 1];
        first
    }
}
