//! Box queries and ray casts over either octree: a walk down the nodes whose bounds pass a
//! test, with the outside list visited first.

use std::ops::ControlFlow;

use crate::backend::ProxyTable;
use crate::octree::nodes::OctreeNodes;
use crate::query::Ray;
use crate::{Aabb, CollisionFilter, ProxyId, RayHit};

impl OctreeNodes {
    /// Depth-first walk over the nodes whose bounds pass `enter`, calling `visit` with each
    /// stored slot; stops when `visit` breaks.
    fn walk(
        &self,
        mut enter: impl FnMut(&Aabb) -> bool,
        mut visit: impl FnMut(usize) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        for &slot in &self.outside {
            visit(slot as usize)?;
        }
        if !self.has_root {
            return ControlFlow::Continue(());
        }
        let mut stack = Vec::with_capacity(64);
        stack.push(0u32);
        while let Some(node) = stack.pop() {
            let n = node as usize;
            if self.subtree[n] == 0 || !enter(&self.bounds[n]) {
                continue;
            }
            for &slot in &self.items[n] {
                visit(slot as usize)?;
            }
            self.push_occupied_children(node, &mut stack);
        }
        ControlFlow::Continue(())
    }

    /// Box query over the stored boxes (exact test against the current boxes).
    pub(crate) fn query_aabb(
        &self,
        proxies: &ProxyTable,
        aabb: &Aabb,
        filter: CollisionFilter,
        visitor: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) {
        let _ = self.walk(
            |bounds| bounds.overlaps(aabb),
            |slot| {
                if proxies.is_live(slot)
                    && proxies.filter(slot).allows(filter)
                    && proxies.aabb(slot).overlaps(aabb)
                {
                    visitor(proxies.id(slot))
                } else {
                    ControlFlow::Continue(())
                }
            },
        );
    }

    /// Ray cast pruned by the node bounds (the exact slab test is monotone, so a node the ray
    /// misses holds no box it hits).
    pub(crate) fn raycast(
        &self,
        proxies: &ProxyTable,
        ray: &Ray,
        filter: CollisionFilter,
        visitor: &mut dyn FnMut(RayHit) -> ControlFlow<()>,
    ) {
        let _ = self.walk(
            |bounds| ray.hit_distance(bounds).is_some(),
            |slot| {
                if !proxies.is_live(slot) || !proxies.filter(slot).allows(filter) {
                    return ControlFlow::Continue(());
                }
                match ray.hit_distance(proxies.aabb(slot)) {
                    Some(distance) => visitor(RayHit {
                        id: proxies.id(slot),
                        distance,
                    }),
                    None => ControlFlow::Continue(()),
                }
            },
        );
    }

    /// Pushes the children of `node` whose subtree is not empty.
    #[inline]
    fn push_occupied_children(&self, node: u32, stack: &mut Vec<u32>) {
        let mut mask = self.child_mask[node as usize];
        let first = self.first_child[node as usize];
        while mask != 0 {
            stack.push(first + mask.trailing_zeros());
            mask &= mask - 1;
        }
    }
}
