//! Read-only walks over the hierarchy's nodes, for tools that draw it.

use super::{Bvh, DEAD};
use crate::Aabb;

impl Bvh {
    /// Calls `visit(depth, aabb, is_leaf)` for the nodes, parents before children (root at
    /// depth 0), descending into a node's children only when `visit` returns `true` for it.
    /// Leaves of removed items (kept until the next build) are skipped. O(nodes visited).
    ///
    /// ```
    /// use broadphase::tree::{Bvh, BvhBuild};
    /// use broadphase::Aabb;
    /// let boxes: Vec<Aabb> = (0..4)
    ///     .map(|i| Aabb::from_arrays([i as f32, 0.0, 0.0], [i as f32 + 1.0, 1.0, 1.0]).unwrap())
    ///     .collect();
    /// let mut bvh = Bvh::new();
    /// bvh.build(BvhBuild::Median, &[0, 1, 2, 3], &boxes).unwrap();
    /// let mut depths = Vec::new();
    /// bvh.for_each_node(|depth, _, _| {
    ///     depths.push(depth);
    ///     depth < 1
    /// });
    /// assert_eq!(depths, [0, 1, 1]);
    /// ```
    pub fn for_each_node(&self, mut visit: impl FnMut(u32, &Aabb, bool) -> bool) {
        if self.nodes.is_empty() {
            return;
        }
        let mut stack = vec![(0u32, 0u32)];
        while let Some((index, depth)) = stack.pop() {
            let node = &self.nodes[index as usize];
            if node.is_leaf() {
                if node.item() != DEAD {
                    visit(depth, &node.aabb, true);
                }
                continue;
            }
            if visit(depth, &node.aabb, false) {
                // Pushed right first: the left subtree is visited first.
                stack.push((node.children[1], depth + 1));
                stack.push((node.children[0], depth + 1));
            }
        }
    }
}
