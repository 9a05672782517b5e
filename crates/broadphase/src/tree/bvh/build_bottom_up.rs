//! Bottom-up construction by agglomerative clustering ([Zych16, ch. 2.1.3]; [Walter08]).

use super::{area, Bvh, BvhNode};
use crate::util::morton_code;
use crate::Aabb;

/// How many neighbours on each side, in Morton order, a cluster considers merging with.
const SEARCH_RADIUS: usize = 16;

impl Bvh {
    /// Repeatedly merges the pair of clusters whose enclosing box has the smallest surface
    /// area, the clustering rule of [Zych16, ch. 2.1.3].
    ///
    /// Searching all pairs would cost O(n²) per merge (O(n³) in all). Instead this is
    /// locally-ordered clustering (PLOC, [Meister18]): clusters are kept in Morton
    /// order of their centres, each finds its best partner among the `SEARCH_RADIUS`
    /// neighbours on each side, and every mutually-best pair merges at once. The globally
    /// smallest candidate pair is always mutual, so each round merges at least one pair; a
    /// round costs O(k · radius) for k clusters. When most clusters find a mutual partner, k
    /// halves per round and the build is O(n · radius · log n) plus the sort; the worst case
    /// (one merge per round) is O(n² · radius), still below the O(n³) of the plain search.
    /// Ties (equal areas) prefer the nearer neighbour and then pairs starting at an even
    /// position, so that identical boxes pair off in one round (tested).
    pub(super) fn build_bottom_up(&mut self, items: &[u32], aabbs: &[Aabb]) {
        let n = items.len();
        self.build_nodes.clear();
        self.build_nodes.extend(
            items
                .iter()
                .zip(aabbs)
                .map(|(&item, &aabb)| BvhNode::leaf(item, aabb)),
        );
        self.sort_by_morton_code(n);
        self.clusters.clear();
        self.clusters.extend_from_slice(&self.order);
        while self.clusters.len() > 1 {
            self.find_nearest_neighbours();
            self.next_clusters.clear();
            for i in 0..self.clusters.len() {
                let j = self.nearest[i] as usize;
                if self.nearest[j] as usize != i {
                    self.next_clusters.push(self.clusters[i]);
                } else if i < j {
                    let (a, b) = (self.clusters[i], self.clusters[j]);
                    let aabb = self.build_nodes[a as usize]
                        .aabb
                        .union(&self.build_nodes[b as usize].aabb);
                    self.build_nodes.push(BvhNode {
                        aabb,
                        children: [a, b],
                    });
                    self.next_clusters.push(self.build_nodes.len() as u32 - 1);
                }
            }
            std::mem::swap(&mut self.clusters, &mut self.next_clusters);
        }
        let root = self.clusters[0];
        self.flatten_from_build_nodes(root);
    }

    /// Sorts `order[..n]` by the Morton code of the centroids (ties by index).
    fn sort_by_morton_code(&mut self, n: usize) {
        let (lo, hi) = self.centroid_bounds(0, n);
        let extent = (hi - lo).max(glam::DVec3::splat(f64::MIN_POSITIVE));
        let centroids = &self.centroids;
        let code = |i: u32| -> u64 {
            let t = (centroids[i as usize].as_dvec3() - lo) / extent;
            let q = (t * 1023.0)
                .clamp(glam::DVec3::ZERO, glam::DVec3::splat(1023.0))
                .as_uvec3();
            morton_code(q) << 32 | i as u64
        };
        self.order.sort_unstable_by_key(|&i| code(i));
    }

    /// For each cluster, the position of its best partner within the search window.
    fn find_nearest_neighbours(&mut self) {
        let k = self.clusters.len();
        self.nearest.clear();
        for i in 0..k {
            let box_i = &self.build_nodes[self.clusters[i] as usize].aabb;
            let mut best: Option<((f64, usize, bool, usize), usize)> = None;
            for j in i.saturating_sub(SEARCH_RADIUS)..(i + SEARCH_RADIUS + 1).min(k) {
                if j == i {
                    continue;
                }
                let cost = area(&box_i.union(&self.build_nodes[self.clusters[j] as usize].aabb));
                let lo = i.min(j);
                // A symmetric key: both ends of a pair rank it the same, so the global
                // minimum is mutual.
                let key = (cost, i.abs_diff(j), lo % 2 == 1, lo);
                if best.is_none_or(|(b, _)| key.partial_cmp(&b) == Some(std::cmp::Ordering::Less)) {
                    best = Some((key, j));
                }
            }
            self.nearest.push(best.map_or(i, |(_, j)| j) as u32);
        }
    }
}
