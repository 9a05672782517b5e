//! Bottom-up refitting: one reverse pass over the array, since children follow parents.

use super::{area, Bvh, DEAD};
use crate::Aabb;

impl Bvh {
    /// Sets every internal box to the union of its children's. O(n).
    pub(super) fn refit_internal(&mut self) {
        for index in (0..self.nodes.len()).rev() {
            let node = self.nodes[index];
            if !node.is_leaf() {
                let [a, b] = node.children;
                self.nodes[index].aabb = self.nodes[a as usize]
                    .aabb
                    .union(&self.nodes[b as usize].aabb);
            }
        }
    }

    /// Sets each live leaf's box to `aabb_of(item)` and every internal box to the union of its
    /// children's; dead leaves keep their last box. Returns the sum of the internal nodes'
    /// surface areas (the quality measure). O(n).
    pub fn refit(&mut self, mut aabb_of: impl FnMut(u32) -> Aabb) -> f64 {
        let mut internal_area = 0.0;
        for index in (0..self.nodes.len()).rev() {
            let node = self.nodes[index];
            if node.is_leaf() {
                if node.item() != DEAD {
                    self.nodes[index].aabb = aabb_of(node.item());
                }
            } else {
                let [a, b] = node.children;
                let aabb = self.nodes[a as usize]
                    .aabb
                    .union(&self.nodes[b as usize].aabb);
                internal_area += area(&aabb);
                self.nodes[index].aabb = aabb;
            }
        }
        internal_area
    }
}
