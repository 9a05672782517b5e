//! Box queries and ray casts of [`DynamicTreeBroadPhase`]: the dynamic tree, then the static
//! one, each leaf filtered and tested against the exact box.

use std::ops::ControlFlow;

use super::DynamicTreeBroadPhase;
use crate::query::is_closer;
use crate::tree::dynamic::RayVisit;
use crate::tree::TraversalStack;
use crate::{Aabb, CollisionFilter, ProxyId, Ray, RayHit};

impl DynamicTreeBroadPhase {
    /// Calls `visit` with the live proxies in both trees whose leaves overlap `aabb`.
    pub(super) fn query_trees(
        &self,
        aabb: &Aabb,
        filter: CollisionFilter,
        visitor: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) {
        let proxies = &self.store.proxies;
        let mut stack = TraversalStack::new();
        let mut visit = |leaf: u32| {
            let slot = leaf as usize;
            if proxies.is_live(slot)
                && proxies.filter(slot).allows(filter)
                && proxies.aabb(slot).overlaps(aabb)
            {
                visitor(proxies.id(slot))?;
            }
            ControlFlow::Continue(())
        };
        if self
            .dynamic_tree
            .query(&self.leaves, aabb, &mut stack, &mut visit)
            .is_break()
        {
            return;
        }
        let _ = self
            .static_tree
            .query(&self.leaves, aabb, &mut stack, &mut visit);
    }

    /// Calls `visitor` with the live proxies in both trees whose boxes the ray hits, the
    /// dynamic tree first, until it breaks.
    pub(super) fn raycast_trees(
        &self,
        ray: &Ray,
        filter: CollisionFilter,
        visitor: &mut dyn FnMut(RayHit) -> ControlFlow<()>,
    ) {
        let proxies = &self.store.proxies;
        let mut stack = TraversalStack::new();
        let mut visit = |leaf: u32, ray: &Ray| {
            let slot = leaf as usize;
            if proxies.is_live(slot) && proxies.filter(slot).allows(filter) {
                if let Some(distance) = ray.hit_distance(proxies.aabb(slot)) {
                    if visitor(RayHit {
                        id: proxies.id(slot),
                        distance,
                    })
                    .is_break()
                    {
                        return RayVisit::Stop;
                    }
                }
            }
            RayVisit::Continue
        };
        if self
            .dynamic_tree
            .raycast(&self.leaves, ray, &mut stack, &mut visit)
            .is_continue()
        {
            let _ = self
                .static_tree
                .raycast(&self.leaves, ray, &mut stack, &mut visit);
        }
    }

    /// The closest hit of the ray among the live proxies in both trees.
    pub(super) fn raycast_closest_in_trees(
        &self,
        ray: &Ray,
        filter: CollisionFilter,
    ) -> Option<RayHit> {
        let proxies = &self.store.proxies;
        let mut stack = TraversalStack::new();
        let mut best: Option<RayHit> = None;
        let mut visit = |leaf: u32, ray: &Ray| {
            let slot = leaf as usize;
            if proxies.is_live(slot) && proxies.filter(slot).allows(filter) {
                if let Some(distance) = ray.hit_distance(proxies.aabb(slot)) {
                    let hit = RayHit {
                        id: proxies.id(slot),
                        distance,
                    };
                    if is_closer(&hit, &best) {
                        best = Some(hit);
                        return RayVisit::Clip(distance);
                    }
                }
            }
            RayVisit::Continue
        };
        // The visitor never stops, so both traversals continue; the second starts with the
        // ray as clipped by the first.
        if let ControlFlow::Continue(clipped) =
            self.dynamic_tree
                .raycast(&self.leaves, ray, &mut stack, &mut visit)
        {
            let _ = self
                .static_tree
                .raycast(&self.leaves, &clipped, &mut stack, &mut visit);
        }
        best
    }
}
