//! Traversals: the self-collision pair traversal ([Zych16, ch. 2.1.4]), box queries, ray casts.

use std::ops::ControlFlow;

use super::{area, Bvh, DescendRule, DEAD};
use crate::tree::dynamic::RayVisit;
use crate::tree::TraversalStack;
use crate::{Aabb, Ray};

impl Bvh {
    /// Calls `visitor(a, b)` once for every unordered pair of distinct live leaves whose
    /// boxes overlap (closed).
    ///
    /// Each node is paired with itself (its two children are then tested against each other
    /// and each against itself), and each pair of disjoint subtrees is tested once: pairs
    /// whose boxes do not overlap are pruned; when both are internal, `rule` decides whether
    /// to split both (four child pairs) or the one with the larger box. A leaf is always
    /// paired with the other node's children. O(n + pairs of overlapping nodes).
    pub fn self_pairs(
        &self,
        rule: DescendRule,
        stack: &mut TraversalStack<(u32, u32)>,
        mut visitor: impl FnMut(u32, u32),
    ) {
        if self.nodes.is_empty() {
            return;
        }
        stack.clear();
        stack.push((0, 0));
        // A pair of distinct nodes is pushed only when their boxes overlap: most pairs a
        // node splits into are disjoint, and testing them before the push spares the stack
        // traffic and a second load of the nodes.
        let nodes = &self.nodes;
        let push_if_overlapping = |stack: &mut TraversalStack<(u32, u32)>, a: u32, b: u32| {
            if nodes[a as usize].aabb.overlaps(&nodes[b as usize].aabb) {
                stack.push((a, b));
            }
        };
        while let Some((x, y)) = stack.pop() {
            let node_x = &nodes[x as usize];
            if x == y {
                if !node_x.is_leaf() {
                    let [a, b] = node_x.children;
                    stack.push((a, a));
                    stack.push((b, b));
                    push_if_overlapping(stack, a, b);
                }
                continue;
            }
            let node_y = &nodes[y as usize];
            match (node_x.is_leaf(), node_y.is_leaf()) {
                (true, true) => {
                    let (a, b) = (node_x.item(), node_y.item());
                    if a != DEAD && b != DEAD {
                        visitor(a, b);
                    }
                }
                (false, true) => {
                    for child in node_x.children {
                        push_if_overlapping(stack, child, y);
                    }
                }
                (true, false) => {
                    for child in node_y.children {
                        push_if_overlapping(stack, x, child);
                    }
                }
                (false, false) => match rule {
                    DescendRule::Simultaneous => {
                        for a in node_x.children {
                            for b in node_y.children {
                                push_if_overlapping(stack, a, b);
                            }
                        }
                    }
                    DescendRule::LargerVolume => {
                        if larger(&node_x.aabb, &node_y.aabb) {
                            for child in node_x.children {
                                push_if_overlapping(stack, child, y);
                            }
                        } else {
                            for child in node_y.children {
                                push_if_overlapping(stack, x, child);
                            }
                        }
                    }
                },
            }
        }
    }

    /// Calls `visitor` with the item of every live leaf whose box overlaps `aabb`, until it
    /// breaks. O(log n + k) on well-spread boxes.
    pub fn query(
        &self,
        aabb: &Aabb,
        stack: &mut TraversalStack,
        mut visitor: impl FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        if self.nodes.is_empty() {
            return ControlFlow::Continue(());
        }
        stack.clear();
        stack.push(0);
        while let Some(index) = stack.pop() {
            let node = &self.nodes[index as usize];
            if !node.aabb.overlaps(aabb) {
                continue;
            }
            if node.is_leaf() {
                if node.item() != DEAD {
                    visitor(node.item())?;
                }
            } else {
                stack.push(node.children[1]);
                stack.push(node.children[0]);
            }
        }
        ControlFlow::Continue(())
    }

    /// Calls `visitor` with every live leaf whose box the ray hits, nearer subtrees first; the
    /// visitor may shorten the ray or stop (see [`RayVisit`]). Returns `Break` if stopped, else the ray as shortened. Pruning uses the monotone
    /// [`Ray::hit_distance`], so no hit within the current length is skipped.
    pub fn raycast(
        &self,
        ray: &Ray,
        stack: &mut TraversalStack,
        mut visitor: impl FnMut(u32, &Ray) -> RayVisit,
    ) -> ControlFlow<(), Ray> {
        if self.nodes.is_empty() {
            return ControlFlow::Continue(*ray);
        }
        let mut ray = *ray;
        stack.clear();
        stack.push(0);
        while let Some(index) = stack.pop() {
            let node = &self.nodes[index as usize];
            if ray.hit_distance(&node.aabb).is_none() {
                continue;
            }
            if node.is_leaf() {
                if node.item() == DEAD {
                    continue;
                }
                match visitor(node.item(), &ray) {
                    RayVisit::Continue => {}
                    RayVisit::Clip(distance) => ray = ray.with_max_distance(distance),
                    RayVisit::Stop => return ControlFlow::Break(()),
                }
            } else {
                let [a, b] = node.children;
                let da = ray.hit_distance(&self.nodes[a as usize].aabb);
                let db = ray.hit_distance(&self.nodes[b as usize].aabb);
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
}

/// True when `x` is at least as large as `y`: by volume, then (flat boxes) by surface area.
/// Computed in `f64`, so huge boxes compare without overflow.
#[inline]
fn larger(x: &Aabb, y: &Aabb) -> bool {
    let volume = |b: &Aabb| {
        let e = b.max().as_dvec3() - b.min().as_dvec3();
        e.x * e.y * e.z
    };
    let (vx, vy) = (volume(x), volume(y));
    if vx != vy {
        vx > vy
    } else {
        area(x) >= area(y)
    }
}
