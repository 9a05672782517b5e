//! The structural check of [`DynamicTreeBroadPhase`] for tests.

use super::{DynamicTreeBroadPhase, MOVED};

impl DynamicTreeBroadPhase {
    /// Checks both trees and that every live proxy's leaf (outside the move buffer) holds its
    /// exact box. For tests.
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
        Ok(())
    }
}
