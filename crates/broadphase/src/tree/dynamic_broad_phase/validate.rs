//! The structural check of [`DynamicTreeBroadPhase`] for tests.

use std::ops::ControlFlow;

use super::{DynamicTreeBroadPhase, MOVED};
use crate::tree::TraversalStack;
use crate::ProxyKind;

impl DynamicTreeBroadPhase {
    /// Checks both trees, that every live proxy's leaf (outside the move buffer) holds its
    /// exact box, and, unless the last update kept no candidates, that every pair of leaves
    /// that overlap and may pair is a candidate, that the leaves of every candidate overlap
    /// (a candidate may outlive a change of filter), and that each is marked a pair exactly
    /// when it is one. For tests.
    pub fn validate(&self) -> std::result::Result<(), String> {
        self.dynamic_tree
            .validate(&self.leaves)
            .map_err(|e| format!("dynamic tree: {e}"))?;
        self.static_tree
            .validate(&self.leaves)
            .map_err(|e| format!("static tree: {e}"))?;
        let mut in_trees = 0;
        for slot in self.store.proxies.live_slots() {
            if self.flags[slot] & MOVED != 0 {
                continue;
            }
            let Some(fat) = self.leaves.fat_aabb(slot as u32) else {
                return Err(format!("live proxy {slot} has no leaf"));
            };
            if !fat.contains(self.store.proxies.aabb(slot)) {
                return Err(format!("leaf of proxy {slot} does not contain its box"));
            }
            in_trees += 1;
        }
        let pending = self
            .moved
            .iter()
            .filter(|&&s| self.store.proxies.is_live(s as usize) && self.leaves.contains(s))
            .count();
        let removed = self
            .store
            .proxies
            .removed_slots()
            .iter()
            .filter(|&&s| self.leaves.contains(s))
            .count();
        if in_trees + pending + removed != self.dynamic_tree.len() + self.static_tree.len() {
            return Err("trees hold leaves of dead proxies".to_string());
        }
        if self.candidates_stale || !self.moved.is_empty() {
            return Ok(());
        }
        self.validate_candidates()
    }

    /// The candidate check of [`Self::validate`], between updates. O(n log n + candidates).
    fn validate_candidates(&self) -> std::result::Result<(), String> {
        let proxies = &self.store.proxies;
        if self.is_pair.len() != self.candidates.len() {
            return Err("candidate flags out of step with the candidates".to_string());
        }
        for (k, &key) in self.candidates.keys().iter().enumerate() {
            let (a, b) = crate::backend::key_indices(key);
            let (Some(fa), Some(fb)) = (self.leaves.fat_aabb(a), self.leaves.fat_aabb(b)) else {
                return Err(format!("candidate ({a}, {b}) without a leaf"));
            };
            if !fa.overlaps(fb) {
                return Err(format!("candidate ({a}, {b}) whose leaves part"));
            }
            if self.is_pair[k] != self.store.pairs.contains(a, b) {
                return Err(format!("candidate ({a}, {b}) with a wrong pair flag"));
            }
        }
        let mut stack = TraversalStack::new();
        let mut missing = None;
        for slot in proxies.live_slots() {
            if proxies.kind(slot) != ProxyKind::Dynamic {
                continue;
            }
            let fat = self.leaves.fat_aabb(slot as u32).copied();
            let mut check = |other: u32| {
                if proxies.can_pair(slot, other as usize)
                    && self
                        .candidates
                        .find_key(crate::backend::pair_key(slot as u32, other))
                        .is_none()
                {
                    missing = Some((slot, other));
                    return ControlFlow::Break(());
                }
                ControlFlow::Continue(())
            };
            if let Some(fat) = fat {
                let _ = self
                    .dynamic_tree
                    .query(&self.leaves, &fat, &mut stack, &mut check);
                let _ = self
                    .static_tree
                    .query(&self.leaves, &fat, &mut stack, &mut check);
            }
            if let Some((a, b)) = missing {
                return Err(format!("leaves of ({a}, {b}) overlap but are no candidate"));
            }
        }
        Ok(())
    }
}
