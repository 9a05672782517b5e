//! Read-only walks over the tree's nodes, for tools that draw it.

use super::{is_leaf, DynamicTree, TreeLeaves, NULL};
use crate::Aabb;

impl DynamicTree {
    /// Calls `visit(depth, aabb, is_leaf)` for the nodes, parents before children (root at
    /// depth 0; a leaf's box is its enlarged box in `leaves`), descending into a node's
    /// children only when `visit` returns `true` for it. O(nodes visited).
    ///
    /// ```
    /// use broadphase::tree::{DynamicTree, TreeLeaves};
    /// use broadphase::Aabb;
    /// let (mut leaves, mut tree) = (TreeLeaves::new(), DynamicTree::new());
    /// for i in 0..3u32 {
    ///     let x = i as f32 * 2.0;
    ///     tree.insert(&mut leaves, i, Aabb::from_arrays([x, 0.0, 0.0], [x + 1.0, 1.0, 1.0])?)?;
    /// }
    /// let mut leaf_count = 0;
    /// tree.for_each_node(&leaves, |_, _, leaf| {
    ///     leaf_count += usize::from(leaf);
    ///     true
    /// });
    /// assert_eq!(leaf_count, 3);
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    pub fn for_each_node(
        &self,
        leaves: &TreeLeaves,
        mut visit: impl FnMut(u32, &Aabb, bool) -> bool,
    ) {
        if self.root == NULL {
            return;
        }
        let mut stack = vec![(self.root, 0u32)];
        while let Some((child, depth)) = stack.pop() {
            let leaf = is_leaf(child);
            if visit(depth, self.child_aabb(leaves, child), leaf) && !leaf {
                let [left, right] = self.nodes[child as usize].children;
                stack.push((right, depth + 1));
                stack.push((left, depth + 1));
            }
        }
    }
}
