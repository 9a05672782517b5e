//! Traversals: box queries, ray casts with closest-hit shrinking, and pair traversals.

use std::ops::ControlFlow;

use super::{is_leaf, leaf_id, DynamicTree, TreeLeaves, NULL};
use crate::tree::TraversalStack;
use crate::{Aabb, Ray};

/// What a ray-cast visitor asks the traversal to do next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RayVisit {
    /// Keep going with the current ray.
    Continue,
    /// Keep going, but only up to this distance (a closest-hit search found a hit there).
    Clip(f32),
    /// Stop now.
    Stop,
}

impl DynamicTree {
    /// Calls `visitor` with every leaf whose enlarged box overlaps `aabb`, until it breaks.
    /// O(log n + k) on well-spread boxes.
    pub fn query(
        &self,
        leaves: &TreeLeaves,
        aabb: &Aabb,
        stack: &mut TraversalStack,
        mut visitor: impl FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        if self.root == NULL {
            return ControlFlow::Continue(());
        }
        if !self.child_aabb(leaves, self.root).overlaps(aabb) {
            return ControlFlow::Continue(());
        }
        if is_leaf(self.root) {
            return visitor(leaf_id(self.root));
        }
        // Only internal nodes whose boxes overlap are pushed: children are tested before the
        // push, and overlapping leaves visited at once, which spares most stack traffic.
        stack.clear();
        stack.push(self.root);
        while let Some(node) = stack.pop() {
            let [a, b] = self.nodes[node as usize].children;
            for child in [b, a] {
                if self.child_aabb(leaves, child).overlaps(aabb) {
                    if is_leaf(child) {
                        visitor(leaf_id(child))?;
                    } else {
                        stack.push(child);
                    }
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// Calls `visitor` with the ray as it stands and every leaf whose enlarged box the ray
    /// hits, nearer subtrees first. The visitor tests its exact box and may shorten the ray
    /// ([`RayVisit::Clip`]) so that farther subtrees are pruned, or stop.
    ///
    /// Pruning uses [`Ray::hit_distance`], which is monotone under box containment, so no
    /// leaf whose exact box the (shortened) ray hits is skipped.
    pub fn raycast(
        &self,
        leaves: &TreeLeaves,
        ray: &Ray,
        stack: &mut TraversalStack,
        mut visitor: impl FnMut(u32, &Ray) -> RayVisit,
    ) -> ControlFlow<(), Ray> {
        if self.root == NULL {
            return ControlFlow::Continue(*ray);
        }
        let mut ray = *ray;
        stack.clear();
        stack.push(self.root);
        while let Some(child) = stack.pop() {
            if ray.hit_distance(self.child_aabb(leaves, child)).is_none() {
                continue;
            }
            if is_leaf(child) {
                match visitor(leaf_id(child), &ray) {
                    RayVisit::Continue => {}
                    RayVisit::Clip(distance) => ray = ray.with_max_distance(distance),
                    RayVisit::Stop => return ControlFlow::Break(()),
                }
            } else {
                let [a, b] = self.nodes[child as usize].children;
                let da = ray.hit_distance(self.child_aabb(leaves, a));
                let db = ray.hit_distance(self.child_aabb(leaves, b));
                // Push the farther child first so that the nearer one is visited first.
                match (da, db) {
                    (Some(da), Some(db)) if db < da => {
                        stack.push(a);
                        stack.push(b);
                    }
                    (Some(_), Some(_)) => {
                        stack.push(b);
                        stack.push(a);
                    }
                    (Some(_), None) => stack.push(a),
                    (None, Some(_)) => stack.push(b),
                    (None, None) => {}
                }
            }
        }
        ControlFlow::Continue(ray)
    }

    /// Calls `visitor(x, y)` once for every unordered pair of distinct leaves whose enlarged
    /// boxes overlap (the self-collision traversal: each pair of subtrees is tested once).
    pub fn self_pairs(
        &self,
        leaves: &TreeLeaves,
        stack: &mut TraversalStack<(u32, u32)>,
        mut visitor: impl FnMut(u32, u32),
    ) {
        if self.root == NULL {
            return;
        }
        stack.clear();
        stack.push((self.root, self.root));
        while let Some((x, y)) = stack.pop() {
            if x == y {
                if !is_leaf(x) {
                    let [a, b] = self.nodes[x as usize].children;
                    stack.push((a, a));
                    stack.push((b, b));
                    stack.push((a, b));
                }
                continue;
            }
            self.descend_pair(self, leaves, x, y, stack, &mut visitor);
        }
    }

    /// Calls `visitor(leaf of self, leaf of other)` for every pair across the two trees whose
    /// enlarged boxes overlap. Both trees may share `leaves`.
    pub fn pairs_with(
        &self,
        other: &DynamicTree,
        leaves: &TreeLeaves,
        stack: &mut TraversalStack<(u32, u32)>,
        mut visitor: impl FnMut(u32, u32),
    ) {
        if self.root == NULL || other.root == NULL {
            return;
        }
        stack.clear();
        stack.push((self.root, other.root));
        while let Some((x, y)) = stack.pop() {
            self.descend_pair(other, leaves, x, y, stack, &mut visitor);
        }
    }

    /// One step of a pair traversal: prune, report two leaves, or split the larger node.
    #[inline]
    fn descend_pair(
        &self,
        other: &DynamicTree,
        leaves: &TreeLeaves,
        x: u32,
        y: u32,
        stack: &mut TraversalStack<(u32, u32)>,
        visitor: &mut impl FnMut(u32, u32),
    ) {
        let box_x = self.child_aabb(leaves, x);
        let box_y = other.child_aabb(leaves, y);
        if !box_x.overlaps(box_y) {
            return;
        }
        match (is_leaf(x), is_leaf(y)) {
            (true, true) => visitor(leaf_id(x), leaf_id(y)),
            (false, true) => {
                for child in self.nodes[x as usize].children {
                    stack.push((child, y));
                }
            }
            (true, false) => {
                for child in other.nodes[y as usize].children {
                    stack.push((x, child));
                }
            }
            (false, false) => {
                if super::area(box_x) >= super::area(box_y) {
                    for child in self.nodes[x as usize].children {
                        stack.push((child, y));
                    }
                } else {
                    for child in other.nodes[y as usize].children {
                        stack.push((x, child));
                    }
                }
            }
        }
    }
}
