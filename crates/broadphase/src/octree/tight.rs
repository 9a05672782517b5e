//! The thesis's octree: each box in the smallest node that fully contains it.

use std::ops::ControlFlow;

use crate::backend::PairTracker;
use crate::backend::{PairSet, ProxyStore, ProxyTable};
use crate::octree::nodes::{LevelStatistics, OctreeNodes, LEAVE, NO_NODE, OUTSIDE};
use crate::query::Ray;
use crate::util::MoveBuffer;
use crate::Candidate;
use crate::{
    Aabb, BroadPhase, CollisionFilter, Error, PairEvents, ProxyId, ProxyKind, RayHit, Result,
};

/// Tuning of [`Octree`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct OctreeOptions {
    /// Depth limit, the root being depth 0 (at most 30; default 8).
    pub max_depth: u32,
    /// A leaf splits when its list grows beyond this (at least 1; default 16).
    pub split_threshold: usize,
}

impl Default for OctreeOptions {
    fn default() -> Self {
        Self {
            max_depth: 8,
            split_threshold: 16,
        }
    }
}

/// Largest accepted depth limit for both octrees.
pub(crate) const OCTREE_MAX_DEPTH_LIMIT: u32 = 30;

/// The octree of the thesis (ch. 2.2.3, Bullet's `btOctreeBroadphase`): each box is stored in
/// the list of the smallest node that fully contains it; a leaf whose list grows beyond the
/// split threshold gets eight children (up to the depth limit) and hands down the boxes that fit
/// in one of them; a subtree that shrinks to half the threshold collapses back into its root.
///
/// A box that touches or crosses a node's splitting plane stays in that node, so small boxes
/// straddling the planes near the root pile up in the top lists — the weakness the thesis
/// measured (ch. 4.2) and [`LooseOctree`](crate::LooseOctree) fixes; [`Octree::level_statistics`]
/// shows it. Because boxes in sibling subtrees are strictly separated by a plane, a box can only
/// overlap boxes of its own node, its ancestors and its descendants: each update walks the tree
/// depth-first and tests every box against its own node's later boxes and its ancestors' lists
/// (full recompute; moved boxes are re-inserted first). Cost: O(Σ boxes × ancestor list lengths).
///
/// The root cube is fitted at the first update around the bulk of the boxes (5th to 95th
/// percentile of the centres, plus margins); boxes outside it live in an outside list tested
/// against everything, and the root is re-fitted when that list grows by more than a quarter of
/// the objects. Emptied subtrees are freed and their nodes reused, so memory stays bounded.
/// Box queries and ray casts walk the tree.
///
/// ```
/// use broadphase::{Aabb, BroadPhase, CollisionFilter, Octree, PairEvents, ProxyKind};
/// let mut tree = Octree::new();
/// let all = CollisionFilter::ALL;
/// for i in 0..100 {
///     let x = i as f32;
///     tree.insert(Aabb::from_arrays([x, 0.0, 0.0], [x + 1.0, 1.0, 1.0])?, ProxyKind::Dynamic, all)?;
/// }
/// let mut events = PairEvents::new();
/// tree.update(&mut events);
/// assert_eq!(events.begun.len(), 99);
/// assert!(tree.level_statistics().len() > 1);
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Octree {
    store: ProxyStore,
    nodes: OctreeNodes,
    max_depth: u8,
    split_threshold: usize,
    /// Proxies inserted or moved since the last update.
    moved: MoveBuffer,
}

impl Default for Octree {
    fn default() -> Self {
        Self::new()
    }
}

impl Octree {
    /// An octree with the default depth limit and split threshold.
    pub fn new() -> Self {
        Self {
            store: ProxyStore::new(),
            nodes: OctreeNodes::new(1.0),
            max_depth: OctreeOptions::default().max_depth as u8,
            split_threshold: OctreeOptions::default().split_threshold,
            moved: MoveBuffer::default(),
        }
    }

    /// An octree tuned by `options`; `InvalidOption` when one is out of range.
    pub fn with_options(options: &OctreeOptions) -> Result<Self> {
        let OctreeOptions {
            max_depth,
            split_threshold,
        } = *options;
        if max_depth > OCTREE_MAX_DEPTH_LIMIT {
            return Err(Error::InvalidOption("octree depth limit above 30"));
        }
        if split_threshold == 0 {
            return Err(Error::InvalidOption(
                "octree split threshold must be at least 1",
            ));
        }
        Ok(Self {
            max_depth: max_depth as u8,
            split_threshold,
            ..Self::new()
        })
    }

    /// Object-list statistics per depth as of the last update, root first (the outside list
    /// is not included: see [`Octree::outside_count`]).
    pub fn level_statistics(&self) -> Vec<LevelStatistics> {
        self.nodes.level_statistics()
    }

    /// Number of boxes outside the root cube.
    pub fn outside_count(&self) -> usize {
        self.nodes.outside.len()
    }

    /// Nodes in use.
    pub fn node_count(&self) -> usize {
        self.nodes.node_count()
    }

    /// Nodes allocated, in use or kept for reuse.
    pub fn allocated_nodes(&self) -> usize {
        self.nodes.allocated_nodes()
    }

    /// The child of `node` that strictly contains `aabb` (not touching the splitting planes).
    fn strict_child(&self, node: u32, aabb: &Aabb) -> Option<u32> {
        let first = self.nodes.first_child[node as usize];
        if first == NO_NODE {
            return None;
        }
        let center = self.nodes.cell[node as usize].center();
        let mut octant = 0;
        for axis in 0..3 {
            if aabb.max()[axis] < center[axis] {
                continue;
            } else if aabb.min()[axis] > center[axis] {
                octant |= 1 << axis;
            } else {
                return None;
            }
        }
        Some(first + octant)
    }

    /// The node `aabb` belongs in among the existing nodes (`OUTSIDE` beyond the root).
    fn existing_target(&self, aabb: &Aabb) -> u32 {
        if !self.nodes.cell[0].contains(aabb) {
            return OUTSIDE;
        }
        let mut node = 0;
        while let Some(child) = self.strict_child(node, aabb) {
            node = child;
        }
        node
    }

    fn place(&mut self, slot: usize) {
        let aabb = *self.store.proxies.aabb(slot);
        if !self.nodes.cell[0].contains(&aabb) {
            self.nodes.add_item(OUTSIDE, slot);
            return;
        }
        let mut node = 0;
        while let Some(child) = self.strict_child(node, &aabb) {
            node = child;
        }
        self.nodes.add_item(node, slot);
        self.split_if_full(node);
    }

    fn split_if_full(&mut self, node: u32) {
        let n = node as usize;
        if self.nodes.first_child[n] != NO_NODE
            || self.nodes.items[n].len() <= self.split_threshold
            || self.nodes.depth[n] >= self.max_depth
        {
            return;
        }
        self.nodes.split(node);
        let mut at = 0;
        while at < self.nodes.items[n].len() {
            let slot = self.nodes.items[n][at] as usize;
            match self.strict_child(node, self.store.proxies.aabb(slot)) {
                Some(child) => self.nodes.move_down(slot, node, child),
                None => at += 1,
            }
        }
        let first = self.nodes.first_child[n];
        for child in first..first + 8 {
            self.split_if_full(child);
        }
    }

    fn unplace(&mut self, slot: usize) {
        let node = self.nodes.remove_item(slot);
        if node == NO_NODE || node == OUTSIDE {
            return;
        }
        // Collapse the highest ancestor whose subtree shrank to half the threshold.
        let mut highest = NO_NODE;
        let mut up = node;
        while up != NO_NODE {
            let u = up as usize;
            if self.nodes.first_child[u] != NO_NODE
                && self.nodes.subtree[u] as usize <= self.split_threshold / 2
            {
                highest = up;
            }
            up = self.nodes.parent[u];
        }
        if highest != NO_NODE {
            self.collapse(highest);
        }
    }

    /// Moves every box of the subtree below `node` into its list and frees the children.
    fn collapse(&mut self, node: u32) {
        self.nodes.stack.clear();
        let first = self.nodes.first_child[node as usize];
        self.nodes.stack.extend(first..first + 8);
        while let Some(descendant) = self.nodes.stack.pop() {
            let d = descendant as usize;
            while let Some(&slot) = self.nodes.items[d].last() {
                let slot = slot as usize;
                self.nodes.remove_item(slot);
                self.nodes.add_item(node, slot);
            }
            let first = self.nodes.first_child[d];
            if first != NO_NODE {
                self.nodes.stack.extend(first..first + 8);
            }
        }
        self.nodes.free_children(node);
    }

    /// Fits a new root around the current boxes and re-inserts them all.
    fn rebuild(&mut self) {
        let root = self.nodes.fit_root(&self.store.proxies);
        self.nodes.reset(root);
        for slot in 0..self.store.proxies.slot_count() {
            if self.store.proxies.is_live(slot) {
                self.place(slot);
            }
        }
        self.nodes.outside_after_fit = self.nodes.outside.len();
    }

    #[inline]
    fn test(pairs: &mut PairTracker, proxies: &ProxyTable, a: u32, b: u32) {
        if proxies.aabb(a as usize).overlaps(proxies.aabb(b as usize))
            && proxies.can_pair(a as usize, b as usize)
        {
            pairs.mark(a, b);
        }
    }

    /// Every box against its node's later boxes and its ancestors' boxes.
    fn mark_tree_pairs(&mut self) {
        let nodes = &mut self.nodes;
        let (proxies, pairs) = (&self.store.proxies, &mut self.store.pairs);
        nodes.stack.clear();
        nodes.path.clear();
        nodes.stack.push(0);
        while let Some(entry) = nodes.stack.pop() {
            if entry & LEAVE != 0 {
                nodes.path.pop();
                continue;
            }
            let n = entry as usize;
            if nodes.subtree[n] == 0 {
                continue;
            }
            let items = &nodes.items[n];
            for (k, &a) in items.iter().enumerate() {
                for &b in &items[k + 1..] {
                    Self::test(pairs, proxies, a, b);
                }
                for &ancestor in &nodes.path {
                    for &b in &nodes.items[ancestor as usize] {
                        Self::test(pairs, proxies, a, b);
                    }
                }
            }
            let mut mask = nodes.child_mask[n];
            if mask != 0 {
                nodes.path.push(entry);
                nodes.stack.push(entry | LEAVE);
                let first = nodes.first_child[n];
                while mask != 0 {
                    nodes.stack.push(first + mask.trailing_zeros());
                    mask &= mask - 1;
                }
            }
        }
    }
}

/// Marks the pairs of the outside list: each outside box against every stored box.
pub(crate) fn mark_outside_pairs(
    nodes: &OctreeNodes,
    proxies: &ProxyTable,
    pairs: &mut PairTracker,
) {
    for &a in &nodes.outside {
        let aabb = proxies.aabb(a as usize);
        for b in 0..nodes.node_of.len() {
            let place = nodes.node_of[b];
            if place == NO_NODE || (place == OUTSIDE && b <= a as usize) {
                continue;
            }
            if aabb.overlaps(proxies.aabb(b)) && proxies.can_pair(a as usize, b) {
                pairs.mark(a, b as u32);
            }
        }
    }
}

impl BroadPhase for Octree {
    fn name(&self) -> &'static str {
        "octree"
    }

    fn insert(&mut self, aabb: Aabb, kind: ProxyKind, filter: CollisionFilter) -> Result<ProxyId> {
        let id = self.store.insert(aabb, kind, filter)?;
        let slots = self.store.proxies.slot_count();
        self.nodes.grow_slots(slots);
        self.moved.grow(slots);
        self.moved.mark(id.index() as usize);
        Ok(id)
    }

    fn set_aabb(&mut self, id: ProxyId, aabb: Aabb) -> Result<()> {
        let slot = self.store.set_aabb(id, aabb)?;
        self.moved.mark(slot);
        Ok(())
    }

    fn remove(&mut self, id: ProxyId) -> Result<()> {
        self.store.remove(id).map(|_| ())
    }

    fn update(&mut self, events: &mut PairEvents) {
        for k in 0..self.store.proxies.removed_slots().len() {
            let slot = self.store.proxies.removed_slots()[k] as usize;
            self.unplace(slot);
        }
        if !self.nodes.has_root && !self.store.proxies.is_empty() {
            self.moved.clear();
            self.rebuild();
        }
        for k in 0..self.moved.len() {
            let slot = self.moved.slot(k);
            if self.store.proxies.is_live(slot)
                && self.existing_target(self.store.proxies.aabb(slot)) != self.nodes.node_of[slot]
            {
                self.unplace(slot);
                self.place(slot);
            }
        }
        self.moved.clear();
        if self.nodes.outside.len()
            > self.nodes.outside_after_fit + 16 + self.store.proxies.len() / 4
        {
            self.rebuild();
        }
        self.store.pairs.begin_full();
        if self.nodes.has_root {
            self.mark_tree_pairs();
        }
        mark_outside_pairs(&self.nodes, &self.store.proxies, &mut self.store.pairs);
        self.store.pairs.end_full();
        self.store.finish(events);
    }

    fn clear(&mut self) {
        self.store.clear();
        self.nodes.clear();
        self.moved.clear();
    }

    fn proxies(&self) -> &ProxyTable {
        self.store.proxies()
    }

    fn pair_set(&self) -> &PairSet {
        self.store.pair_set()
    }

    fn memory_bytes(&self) -> usize {
        self.store.memory_bytes() + self.nodes.memory_bytes() + self.moved.memory_bytes()
    }

    fn query_aabb_with(
        &self,
        aabb: &Aabb,
        filter: CollisionFilter,
        visitor: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) {
        self.nodes
            .query_aabb(&self.store.proxies, aabb, filter, visitor);
    }

    fn raycast_with(
        &self,
        ray: &Ray,
        filter: CollisionFilter,
        visitor: &mut dyn FnMut(RayHit) -> ControlFlow<()>,
    ) {
        self.nodes
            .raycast(&self.store.proxies, ray, filter, visitor);
    }
}

impl Candidate for Octree {
    fn store_mut(&mut self) -> &mut ProxyStore {
        &mut self.store
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    fn boxed(min: [f32; 3], max: [f32; 3]) -> Aabb {
        Aabb::from_arrays(min, max).unwrap()
    }

    #[test]
    fn boxes_touching_splitting_planes_stay_exact() {
        let mut tree = Octree::with_options(&OctreeOptions {
            max_depth: 6,
            split_threshold: 1,
        })
        .unwrap();
        let all = CollisionFilter::ALL;
        // A lattice of unit boxes touching face to face: many lie on splitting planes.
        for i in 0..6 {
            for j in 0..6 {
                let (x, y) = (i as f32, j as f32);
                tree.insert(
                    boxed([x, y, 0.0], [x + 1.0, y + 1.0, 1.0]),
                    ProxyKind::Dynamic,
                    all,
                )
                .unwrap();
            }
        }
        let mut events = PairEvents::new();
        tree.update(&mut events);
        // 6×6 lattice: 2·6·5 face pairs and 2·5·5 diagonal (edge) pairs.
        assert_eq!(tree.pair_count(), 60 + 50);
        assert!(tree.node_count() > 1);
        let stats = tree.level_statistics();
        assert_eq!(
            stats.iter().map(|s| s.objects).sum::<usize>() + tree.outside_count(),
            36
        );
    }

    #[test]
    fn outside_boxes_pair_and_trigger_a_refit() {
        let mut tree = Octree::with_options(&OctreeOptions {
            max_depth: 8,
            split_threshold: 2,
        })
        .unwrap();
        let all = CollisionFilter::ALL;
        let ids: Vec<_> = (0..40)
            .map(|i| {
                let x = (i % 10) as f32;
                let z = (i / 10) as f32 * 3.0;
                tree.insert(
                    boxed([x, 0.0, z], [x + 0.5, 0.5, z + 0.5]),
                    ProxyKind::Dynamic,
                    all,
                )
                .unwrap()
            })
            .collect();
        let far = tree
            .insert(boxed([1e30; 3], [1e30; 3]), ProxyKind::Dynamic, all)
            .unwrap();
        let huge = tree
            .insert(
                boxed([-f32::MAX; 3], [f32::MAX; 3]),
                ProxyKind::Dynamic,
                all,
            )
            .unwrap();
        let mut events = PairEvents::new();
        tree.update(&mut events);
        assert_eq!(tree.outside_count(), 2);
        assert_eq!(tree.pair_count(), 41);
        // Everything moves far away: the root is re-fitted and pairs stay exact.
        for (i, &id) in ids.iter().enumerate() {
            let x = 1e6 + i as f32 * 0.25;
            tree.set_aabb(id, boxed([x, 0.0, 0.0], [x + 0.5, 0.5, 0.5]))
                .unwrap();
        }
        tree.update(&mut events);
        assert!(tree.outside_count() <= 2, "root refitted");
        // Each box overlaps the next two (spacing 0.25, width 0.5), plus the huge box.
        assert_eq!(tree.pair_count(), 39 + 38 + 41);
        let mut found = Vec::new();
        tree.query_aabb(&boxed([1e30; 3], [1e30; 3]), all, &mut found);
        assert_eq!(found, vec![far, huge]);
    }

    #[test]
    fn wandering_objects_keep_memory_bounded() {
        let mut tree = Octree::with_options(&OctreeOptions {
            max_depth: 8,
            split_threshold: 4,
        })
        .unwrap();
        let all = CollisionFilter::ALL;
        let ids: Vec<_> = (0..64)
            .map(|i| {
                let (x, z) = ((i % 8) as f32, (i / 8) as f32);
                tree.insert(
                    boxed([x, 0.0, z], [x + 0.4, 0.4, z + 0.4]),
                    ProxyKind::Dynamic,
                    all,
                )
                .unwrap()
            })
            .collect();
        let mut events = PairEvents::new();
        tree.update(&mut events);
        let mut peak = 0;
        for step in 1..1500 {
            for (i, &id) in ids.iter().enumerate() {
                let (x, z) = ((i % 8) as f32, (i / 8) as f32);
                let y = -(step as f32) * (1.0 + 0.05 * i as f32);
                tree.set_aabb(id, boxed([x, y, z], [x + 0.4, y + 0.4, z + 0.4]))
                    .unwrap();
            }
            tree.update(&mut events);
            peak = peak.max(tree.allocated_nodes());
        }
        // Internal nodes hold more than threshold / 2 boxes in their subtree (else they collapse),
        // so at most 64 / 3 per depth, each with 8 children; freed nodes are reused first.
        assert!(peak <= 1 + 8 * 8 * 64 / 3, "nodes allocated {peak}");
        assert!(tree.outside_count() <= 16 + 64 / 4 + 64);
    }

    #[test]
    fn limits_are_validated() {
        assert!(Octree::with_options(&OctreeOptions {
            max_depth: 31,
            split_threshold: 4
        })
        .is_err());
        assert!(Octree::with_options(&OctreeOptions {
            max_depth: 4,
            split_threshold: 0
        })
        .is_err());
        assert!(Octree::with_options(&OctreeOptions {
            max_depth: 0,
            split_threshold: 1
        })
        .is_ok());
    }

    #[test]
    fn invariants_hold_under_random_operations() {
        use crate::util::SplitMix64;
        let mut rng = SplitMix64::new(11);
        let mut tree = Octree::with_options(&OctreeOptions {
            max_depth: 6,
            split_threshold: 3,
        })
        .unwrap();
        let mut ids = Vec::new();
        let mut events = PairEvents::new();
        for step in 0..300 {
            for _ in 0..rng.below(6) {
                let c = Vec3::new(
                    rng.range(0.0, 50.0),
                    rng.range(0.0, 50.0),
                    rng.range(0.0, 50.0),
                );
                let h = Vec3::splat(if rng.chance(0.05) {
                    30.0
                } else {
                    rng.range(0.0, 2.0)
                });
                ids.push(
                    tree.insert(
                        Aabb::new(c - h, c + h).unwrap(),
                        ProxyKind::Dynamic,
                        CollisionFilter::ALL,
                    )
                    .unwrap(),
                );
            }
            for _ in 0..rng.below(ids.len() / 2 + 1) {
                let id = ids[rng.below(ids.len())];
                let b = tree.aabb(id).unwrap();
                // Drift away over time so that the root is re-fitted now and then.
                let d = Vec3::new(
                    rng.range(-1.0, 3.0),
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                ) * (1.0 + step as f32 * 0.05);
                tree.set_aabb(id, Aabb::new(b.min() + d, b.max() + d).unwrap())
                    .unwrap();
            }
            if ids.len() > 40 && rng.chance(0.5) {
                let id = ids.swap_remove(rng.below(ids.len()));
                tree.remove(id).unwrap();
            }
            tree.update(&mut events);
            tree.nodes.validate(tree.store.proxies());
        }
    }
}
