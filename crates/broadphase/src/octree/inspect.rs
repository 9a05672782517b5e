//! Read-only walks over both octrees' nodes, for tools that draw them.

use super::nodes::{OctreeNodes, NO_NODE};
use super::{LooseOctree, Octree};
use crate::Aabb;

impl OctreeNodes {
    /// See [`Octree::for_each_node`].
    fn for_each_node(&self, mut visit: impl FnMut(u32, &Aabb, usize) -> bool) {
        if !self.has_root {
            return;
        }
        let mut stack = vec![0u32];
        while let Some(node) = stack.pop() {
            let n = node as usize;
            let first = self.first_child[n];
            if visit(
                u32::from(self.depth[n]),
                &self.bounds[n],
                self.items[n].len(),
            ) && first != NO_NODE
            {
                // Children with an empty subtree hold nothing to draw.
                for child in (first..first + 8).rev() {
                    if self.child_mask[n] & (1 << (child - first)) != 0 {
                        stack.push(child);
                    }
                }
            }
        }
    }
}

impl Octree {
    /// Calls `visit(depth, bounds, objects)` for the nodes with a non-empty subtree (and the
    /// root), parents before children, with the node's box and the length of its own object
    /// list, descending into a node's children only when `visit` returns `true` for it. As of
    /// the last update. O(nodes visited).
    ///
    /// ```
    /// use broadphase::{Aabb, BroadPhase, CollisionFilter, Octree, PairEvents, ProxyKind};
    /// let mut tree = Octree::new();
    /// for i in 0..40 {
    ///     let x = i as f32 * 2.0;
    ///     tree.insert(Aabb::from_arrays([x, 0.0, 0.0], [x + 1.0, 1.0, 1.0])?, ProxyKind::Dynamic, CollisionFilter::ALL)?;
    /// }
    /// tree.update(&mut PairEvents::new());
    /// let mut objects = 0;
    /// tree.for_each_node(|_, _, n| {
    ///     objects += n;
    ///     true
    /// });
    /// assert_eq!(objects + tree.outside_count(), 40);
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    pub fn for_each_node(&self, visit: impl FnMut(u32, &Aabb, usize) -> bool) {
        self.base.nodes.for_each_node(visit);
    }
}

impl LooseOctree {
    /// As [`Octree::for_each_node`]; the boxes are the loose bounds (the cell enlarged about
    /// its centre, \[Ulrich00\]).
    pub fn for_each_node(&self, visit: impl FnMut(u32, &Aabb, usize) -> bool) {
        self.base.nodes.for_each_node(visit);
    }
}
