//! One update of [`DynamicTreeBroadPhase`], in the order [`BroadPhase::update`] runs it:
//! removed leaves out, moved leaves refitted or re-inserted, one pass over the candidates,
//! then the new candidates of every re-inserted proxy.
//!
//! [`BroadPhase::update`]: crate::BroadPhase::update

use std::ops::ControlFlow;

use super::{
    DynamicTreeBroadPhase, ENLARGED, OLD_LEAF, PREDICTED_STEPS, REBUILD_MIN_LEAVES, REBUILD_SHARE,
    SHRINK_FACTOR,
};
use crate::backend::pair_key;
use crate::util::morton_code;
use crate::{Aabb, ProxyKind, Result, Vec3};

impl DynamicTreeBroadPhase {
    /// The leaf box of a proxy with box `aabb` that moved by `displacement` in the last step,
    /// and the largest leaf box that is still acceptable for it.
    fn leaf_boxes(&self, aabb: &Aabb, displacement: Vec3) -> (Aabb, Aabb) {
        let base = aabb.expanded(self.margin);
        let cap = aabb.extents().max_element().min(f32::MAX) + self.margin;
        let stretch = (displacement * PREDICTED_STEPS).clamp(Vec3::splat(-cap), Vec3::splat(cap));
        if !stretch.is_finite() {
            return (base, aabb.expanded(SHRINK_FACTOR * self.margin));
        }
        let limit = Vec3::splat(f32::MAX);
        let fat = Aabb::new(
            (base.min() + stretch.min(Vec3::ZERO)).max(-limit),
            (base.max() + stretch.max(Vec3::ZERO)).min(limit),
        )
        .unwrap_or(base);
        (
            fat,
            aabb.expanded(SHRINK_FACTOR * self.margin + stretch.abs().max_element()),
        )
    }

    /// Takes removed proxies out of their trees.
    pub(super) fn remove_leaves(&mut self) {
        for k in 0..self.store.proxies.removed_slots().len() {
            let slot = self.store.proxies.removed_slots()[k];
            if self.leaves.contains(slot) {
                let mut leaves = std::mem::take(&mut self.leaves);
                // Each proxy's leaf is in the tree of its kind.
                self.tree_of(slot as usize).remove_held(&mut leaves, slot);
                self.leaves = leaves;
            }
        }
    }

    /// Re-inserts moved proxies whose boxes left their leaves (or whose leaves are far too
    /// big), and inserts new ones. When more than half the dynamic tree's leaves must move,
    /// they are given their new boxes in place and the tree is rebuilt at once instead;
    /// returns whether it was.
    pub(super) fn refit_moved_leaves(&mut self) -> Result<bool> {
        // New leaves of a tree that is empty are built at once (a first step, a bulk load).
        // Not a steady-state path: the lists allocate only then.
        let bulk_dynamic = self.dynamic_tree.is_empty();
        let bulk_static = self.static_tree.is_empty();
        let mut bulk: [Vec<(u32, Aabb)>; 2] = [Vec::new(), Vec::new()];
        // The new leaf box of every moved proxy that needs one, and how many of those are
        // leaves of the dynamic tree.
        let mut new_fat = std::mem::take(&mut self.new_fat);
        new_fat.clear();
        let mut leaving_dynamic = 0;
        for k in 0..self.moved.len() {
            let slot = self.moved[k] as usize;
            if !self.store.proxies.is_live(slot) {
                new_fat.push(None);
                continue;
            }
            let aabb = *self.store.proxies.aabb(slot);
            let (fat, largest) = self.leaf_boxes(&aabb, aabb.center() - self.moved_from[k]);
            match self.leaves.fat_aabb(slot as u32) {
                Some(old) if old.contains(&aabb) && largest.contains(old) => new_fat.push(None),
                old => {
                    // A held leaf of a dynamic proxy is in the dynamic tree (a kind change
                    // takes the leaf out of its old tree at once).
                    if old.is_some() && self.store.proxies.kind(slot) == ProxyKind::Dynamic {
                        leaving_dynamic += 1;
                    }
                    new_fat.push(Some(fat));
                }
            }
        }
        let rebuild_dynamic = !bulk_dynamic
            && self.dynamic_tree.len() >= REBUILD_MIN_LEAVES
            && leaving_dynamic * REBUILD_SHARE > self.dynamic_tree.len();
        for (k, fat) in new_fat.iter().enumerate() {
            let slot = self.moved[k];
            let Some(fat) = *fat else {
                continue;
            };
            // Only while a tree is empty (steady state skips the lookup).
            if (bulk_dynamic || bulk_static) && self.leaves.fat_aabb(slot).is_none() {
                let tree = match self.store.proxies.kind(slot as usize) {
                    ProxyKind::Dynamic if bulk_dynamic => Some(0),
                    ProxyKind::Static if bulk_static => Some(1),
                    _ => None,
                };
                if let Some(tree) = tree {
                    bulk[tree].push((slot, fat));
                    self.flags[slot as usize] |= ENLARGED;
                    self.enlarged.push(slot);
                    continue;
                }
            }
            let mut leaves = std::mem::take(&mut self.leaves);
            let held = leaves.fat_aabb(slot).copied();
            if let Some(old) = held {
                // The leaf moves within its tree (a change of kind or filter took it out of
                // its tree at once, so it has no held leaf): its old box tells its old
                // candidates.
                self.old_fat[slot as usize] = old;
                self.flags[slot as usize] |= OLD_LEAF;
            }
            let result = match held {
                None => self.tree_of(slot as usize).insert(&mut leaves, slot, fat),
                Some(_)
                    if rebuild_dynamic
                        && self.store.proxies.kind(slot as usize) == ProxyKind::Dynamic =>
                {
                    // The tree is rebuilt below, over the leaves' new boxes.
                    leaves.set_fat(slot, fat);
                    Ok(())
                }
                Some(_) => self
                    .tree_of(slot as usize)
                    .move_held_leaf(&mut leaves, slot, fat),
            };
            self.leaves = leaves;
            result?;
            self.flags[slot as usize] |= ENLARGED;
            self.enlarged.push(slot);
        }
        self.new_fat = new_fat;
        if rebuild_dynamic {
            let mut held = std::mem::take(&mut self.held);
            held.clear();
            self.dynamic_tree.held_leaves(&mut held);
            let mut items = std::mem::take(&mut self.rebuild_items);
            items.clear();
            // Every held leaf has a box.
            items.extend(
                held.iter()
                    .filter_map(|&leaf| Some((leaf, *self.leaves.fat_aabb(leaf)?))),
            );
            self.dynamic_tree.rebuild_held(&mut self.leaves, &items);
            self.rebuild_items = items;
            self.held = held;
        }
        let [dynamic_items, static_items] = &bulk;
        for (tree, items) in [
            (&mut self.dynamic_tree, dynamic_items),
            (&mut self.static_tree, static_items),
        ] {
            if !items.is_empty() {
                tree.build(&mut self.leaves, items)?;
            }
        }
        Ok(rebuild_dynamic)
    }

    /// One pass over the candidates: drops those of removed proxies and those whose leaf
    /// boxes separated (an endpoint was re-inserted), and re-tests the exact boxes of those
    /// with a moved endpoint. The pair set is touched only where a candidate became or
    /// stopped being a pair: `is_pair` follows the set, which changes only here, in
    /// [`Self::find_new_candidates`], and in the store's `finish`, where a change of filter
    /// or kind ends the pairs it forbids (this pass already found them not to be pairs, as
    /// the new filter and kind apply at once) and a removal those of the removed proxy
    /// (whose candidates this pass drops).
    pub(super) fn update_candidates(&mut self) {
        let proxies = &self.store.proxies;
        let flags = &self.flags;
        let leaves = &self.leaves;
        let mut position = 0;
        while position < self.candidates.len() {
            let (a, b) = crate::backend::key_indices(self.candidates.keys()[position]);
            let (x, y) = (a as usize, b as usize);
            let changed = flags[x] | flags[y];
            if changed == 0 {
                position += 1;
                continue;
            }
            let keep = if proxies.is_removed(x) || proxies.is_removed(y) {
                false
            } else if changed & ENLARGED != 0 {
                match (leaves.fat_aabb(a), leaves.fat_aabb(b)) {
                    (Some(fa), Some(fb)) => fa.overlaps(fb),
                    _ => false,
                }
            } else {
                true
            };
            if keep {
                // A candidate found under an earlier filter or kind may be forbidden now.
                let now = proxies.aabb(x).overlaps(proxies.aabb(y)) && proxies.can_pair(x, y);
                if now != self.is_pair[position] {
                    if now {
                        self.store.pairs.add(a, b);
                    } else {
                        self.store.pairs.remove(a, b);
                    }
                    self.is_pair[position] = now;
                }
                position += 1;
            } else {
                if self.is_pair[position] {
                    self.store.pairs.remove(a, b);
                }
                // The last candidate moves into `position`; look at it next.
                self.candidates.remove_at(position);
                self.is_pair.swap_remove(position);
            }
        }
    }

    /// Orders the enlarged proxies along a Morton curve, so that consecutive queries walk
    /// nearby paths of the trees and find their nodes in cache.
    fn sort_enlarged_spatially(&mut self) {
        if self.enlarged.len() < 64 {
            return;
        }
        let Some(bounds) = self.dynamic_tree.root_aabb(&self.leaves) else {
            return;
        };
        let lo = bounds.min().as_dvec3();
        let extent = (bounds.max().as_dvec3() - lo).max(glam::DVec3::splat(f64::MIN_POSITIVE));
        self.sort_keys.clear();
        for &slot in &self.enlarged {
            let t = (self.store.proxies.aabb(slot as usize).center().as_dvec3() - lo) / extent;
            let q = (t * 1023.0)
                .clamp(glam::DVec3::ZERO, glam::DVec3::splat(1023.0))
                .as_uvec3();
            let code = morton_code(q);
            self.sort_keys.push(code << 32 | slot as u64);
        }
        self.sort_keys.sort_unstable();
        self.enlarged.clear();
        self.enlarged
            .extend(self.sort_keys.iter().map(|&key| key as u32));
    }

    /// Finds the new candidates of every enlarged proxy by querying the trees with its leaf
    /// box, and adds those whose exact boxes overlap as pairs. The candidates are those of
    /// the last update as far as [`Self::update_candidates`] kept them: a pair whose leaf
    /// boxes overlapped before the update too is one of them already (and
    /// `update_candidates` re-tested its exact boxes), so it is passed over without a
    /// lookup in the candidate set.
    pub(super) fn find_new_candidates(&mut self) {
        self.sort_enlarged_spatially();
        let proxies = &self.store.proxies;
        let flags = &self.flags;
        let (old_fat, leaves) = (&self.old_fat, &self.leaves);
        // A leaf's box before the update: unchanged if it was not re-inserted, else saved
        // if it was moved within its tree; `None` for a leaf new to its tree.
        let old_leaf = |slot: usize| match flags[slot] {
            f if f & ENLARGED == 0 => leaves.fat_aabb(slot as u32),
            f if f & OLD_LEAF != 0 => Some(&old_fat[slot]),
            _ => None,
        };
        let candidates = &mut self.candidates;
        let is_pair = &mut self.is_pair;
        let pairs = &mut self.store.pairs;
        for &slot in &self.enlarged {
            let e = slot as usize;
            let Some(fat) = self.leaves.fat_aabb(slot) else {
                continue;
            };
            let old = old_leaf(e);
            let mut visit = |other: u32| {
                let o = other as usize;
                // A pair whose leaf boxes overlapped before the update too is a candidate
                // already (tested first: most pairs a re-inserted proxy meets are).
                if old.is_some_and(|old| old_leaf(o).is_some_and(|b| b.overlaps(old))) {
                    return ControlFlow::Continue(());
                }
                // Two enlarged proxies find each other; the one with the smaller slot adds.
                if o != e && !(flags[o] & ENLARGED != 0 && o < e) && proxies.can_pair(e, o) {
                    // The candidates count against the pair limit too: they are the pairs of
                    // the leaf boxes, a superset of the pairs.
                    if candidates.len() >= pairs.limit() {
                        if candidates.find_key(pair_key(slot, other)).is_none() {
                            pairs.refuse();
                        }
                    } else if let Ok((_, true)) = candidates.insert(slot, other) {
                        let pair = proxies.aabb(e).overlaps(proxies.aabb(o));
                        if pair {
                            pairs.add(slot, other);
                        }
                        is_pair.push(pair);
                    }
                }
                ControlFlow::Continue(())
            };
            let _ = self
                .dynamic_tree
                .query(&self.leaves, fat, &mut self.stack, &mut visit);
            if proxies.kind(e) == ProxyKind::Dynamic {
                let _ = self
                    .static_tree
                    .query(&self.leaves, fat, &mut self.stack, &mut visit);
            }
        }
    }
}
