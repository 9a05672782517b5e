//! The loose octree: node boxes enlarged ×2, so a box's depth depends on its size only.

use std::ops::ControlFlow;

use crate::backend::PairTracker;
use crate::backend::{PairSet, ProxyStore, ProxyTable};
use crate::octree::nodes::{LevelStatistics, OctreeNodes, NO_NODE, OUTSIDE};
use crate::octree::tight::{mark_outside_pairs, OCTREE_MAX_DEPTH_LIMIT};
use crate::query::Ray;
use crate::util::MoveBuffer;
use crate::Candidate;
use crate::{
    Aabb, BroadPhase, CollisionFilter, Error, PairEvents, ProxyId, ProxyKind, RayHit, Result,
};

/// Tuning of [`LooseOctree`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct LooseOctreeOptions {
    /// Depth limit, the root being depth 0 (at most 30; default 10).
    pub max_depth: u32,
}

impl Default for LooseOctreeOptions {
    fn default() -> Self {
        Self { max_depth: 10 }
    }
}

/// A loose octree (Ulrich's, the fix for the straddling problem the thesis found in ch. 4.2):
/// every node's box is its cell doubled about the centre, and a box descends towards the child
/// cell holding its centre down to the deepest cell whose edge is still at least the box's
/// largest edge. Such a box always fits the loose box of the cell holding its centre, so its
/// depth is set by its size, not by where it sits relative to splitting planes.
///
/// Nodes are created on the way down and freed when their subtree empties (reused later), so
/// memory follows the occupied space. Loose boxes of neighbours overlap, so pairs come from a
/// simultaneous walk over pairs of nodes whose loose boxes overlap, which tests every pair of
/// candidate boxes exactly once (full recompute after re-inserting the boxes that changed node).
/// Cost: O(overlapping node pairs + candidate box pairs).
/// [`LooseOctree::level_statistics`] gives the list lengths per depth to compare with
/// [`Octree`](crate::Octree). The root and the outside list work as in [`Octree`](crate::Octree).
/// Box queries and ray casts walk the tree.
///
/// ```
/// use broadphase::{Aabb, BroadPhase, CollisionFilter, LooseOctree, PairEvents, ProxyKind};
/// let mut tree = LooseOctree::new();
/// let all = CollisionFilter::ALL;
/// for i in 0..100 {
///     let x = i as f32;
///     tree.insert(Aabb::from_arrays([x, 0.0, 0.0], [x + 1.0, 1.0, 1.0])?, ProxyKind::Dynamic, all)?;
/// }
/// let mut events = PairEvents::new();
/// tree.update(&mut events);
/// assert_eq!(events.begun.len(), 99);
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct LooseOctree {
    store: ProxyStore,
    nodes: OctreeNodes,
    max_depth: u8,
    /// Proxies inserted or moved since the last update.
    moved: MoveBuffer,
    tasks: Vec<Task>,
}

impl Default for LooseOctree {
    fn default() -> Self {
        Self::new()
    }
}

impl LooseOctree {
    /// A loose octree with the default depth limit.
    pub fn new() -> Self {
        Self {
            store: ProxyStore::new(),
            nodes: OctreeNodes::new(2.0),
            max_depth: LooseOctreeOptions::default().max_depth as u8,
            moved: MoveBuffer::default(),
            tasks: Vec::new(),
        }
    }

    /// A loose octree tuned by `options`; `InvalidOption` when one is out of range.
    pub fn with_options(options: &LooseOctreeOptions) -> Result<Self> {
        let max_depth = options.max_depth;
        if max_depth > OCTREE_MAX_DEPTH_LIMIT {
            return Err(Error::InvalidOption("loose octree depth limit above 30"));
        }
        Ok(Self {
            max_depth: max_depth as u8,
            ..Self::new()
        })
    }

    /// Object-list statistics per depth as of the last update, root first (the outside list is
    /// not included: see [`LooseOctree::outside_count`]).
    pub fn level_statistics(&self) -> Vec<LevelStatistics> {
        self.nodes.level_statistics()
    }

    /// Number of boxes outside the root's loose box.
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

    /// Walks from `node` towards the node `aabb` belongs in: returns it with `None`, or the
    /// deepest existing node on the way with `Some(octant)` of the child that is missing.
    fn descend(&self, aabb: &Aabb, mut node: u32) -> (u32, Option<usize>) {
        let center = aabb.center();
        let edge = aabb.extents().max_element();
        while self.nodes.depth[node as usize] < self.max_depth {
            let cell = self.nodes.cell[node as usize];
            let split = cell.center();
            let octant = (0..3).fold(0, |o, axis| {
                o | ((center[axis] >= split[axis]) as usize) << axis
            });
            let child_cell = OctreeNodes::child_cell(&cell, octant);
            // Stop at the depth of the box's size (the child's cell would be smaller than the
            // box), or earlier if rounding made the child's loose box miss it.
            if child_cell.extents().min_element() < edge
                || !self.nodes.loosen(&child_cell).contains(aabb)
            {
                break;
            }
            let first = self.nodes.first_child[node as usize];
            if first == NO_NODE {
                return (node, Some(octant));
            }
            node = first + octant as u32;
        }
        (node, None)
    }

    /// The node `aabb` belongs in if it exists (`OUTSIDE` beyond the root), else `None`.
    fn existing_target(&self, aabb: &Aabb) -> Option<u32> {
        if !self.nodes.bounds[0].contains(aabb) {
            return Some(OUTSIDE);
        }
        match self.descend(aabb, 0) {
            (node, None) => Some(node),
            (_, Some(_)) => None,
        }
    }

    fn place(&mut self, slot: usize) {
        let aabb = *self.store.proxies.aabb(slot);
        if !self.nodes.bounds[0].contains(&aabb) {
            self.nodes.add_item(OUTSIDE, slot);
            return;
        }
        let mut node = 0;
        loop {
            match self.descend(&aabb, node) {
                (target, None) => {
                    self.nodes.add_item(target, slot);
                    return;
                }
                (deepest, Some(_)) => {
                    self.nodes.split(deepest);
                    node = deepest;
                }
            }
        }
    }

    fn unplace(&mut self, slot: usize) {
        let node = self.nodes.remove_item(slot);
        if node == NO_NODE || node == OUTSIDE {
            return;
        }
        // Free the children of every node on the path whose subtree holds only its own list.
        let mut up = node;
        while up != NO_NODE {
            let u = up as usize;
            if self.nodes.first_child[u] != NO_NODE
                && self.nodes.subtree[u] as usize == self.nodes.items[u].len()
            {
                self.nodes.free_children(up);
            }
            up = self.nodes.parent[u];
        }
    }

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

    /// Marks every overlapping pair in the tree exactly once with a simultaneous walk over pairs
    /// of nodes whose loose boxes overlap (see [`Task`]).
    fn mark_tree_pairs(&mut self) {
        let (nodes, proxies, pairs, tasks) = (
            &self.nodes,
            &self.store.proxies,
            &mut self.store.pairs,
            &mut self.tasks,
        );
        let test = |pairs: &mut PairTracker, a: u32, b: u32| {
            if proxies.aabb(a as usize).overlaps(proxies.aabb(b as usize))
                && proxies.can_pair(a as usize, b as usize)
            {
                pairs.mark(a, b);
            }
        };
        let children = |node: u32| {
            let (mut mask, first) = (
                nodes.child_mask[node as usize],
                nodes.first_child[node as usize],
            );
            std::iter::from_fn(move || {
                (mask != 0).then(|| {
                    let child = first + mask.trailing_zeros();
                    mask &= mask - 1;
                    child
                })
            })
        };
        tasks.clear();
        tasks.push(Task::Within(0));
        while let Some(task) = tasks.pop() {
            match task {
                Task::Within(node) => {
                    let items = &nodes.items[node as usize];
                    for (k, &a) in items.iter().enumerate() {
                        for &b in &items[k + 1..] {
                            test(pairs, a, b);
                        }
                    }
                    for child in children(node) {
                        tasks.push(Task::Within(child));
                        if !items.is_empty() {
                            tasks.push(Task::ListAgainst(node, child));
                        }
                        for sibling in children(node).filter(|&s| s > child) {
                            tasks.push(Task::Between(child, sibling));
                        }
                    }
                }
                Task::Between(a, b) => {
                    if !nodes.bounds[a as usize].overlaps(&nodes.bounds[b as usize]) {
                        continue;
                    }
                    for &x in &nodes.items[a as usize] {
                        for &y in &nodes.items[b as usize] {
                            test(pairs, x, y);
                        }
                    }
                    if !nodes.items[a as usize].is_empty() {
                        tasks.extend(children(b).map(|child| Task::ListAgainst(a, child)));
                    }
                    tasks.extend(children(a).map(|child| Task::Between(child, b)));
                }
                Task::ListAgainst(owner, node) => {
                    if !nodes.bounds[owner as usize].overlaps(&nodes.bounds[node as usize]) {
                        continue;
                    }
                    for &x in &nodes.items[owner as usize] {
                        for &y in &nodes.items[node as usize] {
                            test(pairs, x, y);
                        }
                    }
                    tasks.extend(children(node).map(|child| Task::ListAgainst(owner, child)));
                }
            }
        }
    }
}

/// A step of the pair walk. Every pair of stored boxes is tested by exactly one task: boxes of
/// one node by `Within`, a node's list against its descendants by `ListAgainst`, and boxes of
/// two disjoint subtrees by the `Between` task of the two children of their lowest common
/// ancestor. Loose boxes nest (a child's lies inside its parent's), so a pair of nodes whose
/// loose boxes do not overlap prunes everything below them.
#[derive(Debug, Clone, Copy)]
enum Task {
    /// All pairs within the subtree of the node.
    Within(u32),
    /// The boxes of the first node's subtree against those of the second's (disjoint subtrees).
    Between(u32, u32),
    /// The list of the first node against the subtree of the second (a descendant).
    ListAgainst(u32, u32),
}

impl BroadPhase for LooseOctree {
    fn name(&self) -> &'static str {
        "loose-octree"
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
                && self.existing_target(self.store.proxies.aabb(slot))
                    != Some(self.nodes.node_of[slot])
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
        self.store.memory_bytes()
            + self.nodes.memory_bytes()
            + self.moved.memory_bytes()
            + self.tasks.capacity() * std::mem::size_of::<Task>()
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

impl Candidate for LooseOctree {
    fn store_mut(&mut self) -> &mut ProxyStore {
        &mut self.store
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::octree::OctreeOptions;
    use crate::Octree;
    use glam::Vec3;

    fn boxed(min: [f32; 3], max: [f32; 3]) -> Aabb {
        Aabb::from_arrays(min, max).unwrap()
    }

    /// Equal small boxes at pseudo-random positions: some straddle splitting planes at every depth.
    fn straddling_scene(bp: &mut dyn BroadPhase) {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32 * 60.0
        };
        for _ in 0..400 {
            let (x, y, z) = (next(), next(), next());
            bp.insert(
                boxed([x, y, z], [x + 0.4, y + 0.4, z + 0.4]),
                ProxyKind::Dynamic,
                CollisionFilter::ALL,
            )
            .unwrap();
        }
        let mut events = PairEvents::new();
        bp.update(&mut events);
    }

    #[test]
    fn depth_follows_size_not_position() {
        let mut loose = LooseOctree::new();
        straddling_scene(&mut loose);
        let mut tight = Octree::with_options(&OctreeOptions {
            max_depth: 10,
            split_threshold: 1,
        })
        .unwrap();
        straddling_scene(&mut tight);
        let pairs = |bp: &dyn BroadPhase| {
            let mut p: Vec<_> = bp.pair_set().iter().collect();
            p.sort_unstable();
            p
        };
        assert_eq!(pairs(&loose), pairs(&tight));
        // Same-size boxes all land on one depth of the loose octree.
        let loose_stats = loose.level_statistics();
        let loose_levels: Vec<_> = loose_stats.iter().filter(|s| s.objects > 0).collect();
        assert_eq!(loose_levels.len(), 1, "{loose_stats:?}");
        assert_eq!(loose_levels[0].objects + loose.outside_count(), 400);
        // The tight octree keeps straddling boxes near the root, on several depths.
        let tight_stats = tight.level_statistics();
        assert!(
            tight_stats.iter().filter(|s| s.objects > 0).count() > 3,
            "{tight_stats:?}"
        );
        assert!(tight_stats[0].objects > 0, "{tight_stats:?}");
    }

    #[test]
    fn empty_subtrees_are_freed_and_memory_stays_bounded() {
        let mut tree = LooseOctree::with_options(&LooseOctreeOptions { max_depth: 12 }).unwrap();
        let all = CollisionFilter::ALL;
        let ids: Vec<_> = (0..64)
            .map(|i| {
                let (x, z) = ((i % 8) as f32, (i / 8) as f32);
                tree.insert(
                    boxed([x, 0.0, z], [x + 0.1, 0.1, z + 0.1]),
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
                tree.set_aabb(id, boxed([x, y, z], [x + 0.1, y + 0.1, z + 0.1]))
                    .unwrap();
            }
            tree.update(&mut events);
            peak = peak.max(tree.allocated_nodes());
        }
        // Each box keeps at most one path of blocks alive.
        assert!(peak <= 1 + 8 * 12 * 64, "nodes allocated {peak}");
        for &id in &ids {
            tree.remove(id).unwrap();
        }
        tree.update(&mut events);
        assert_eq!(tree.node_count(), 1);
        assert_eq!(events.ended.len(), 0);
    }

    #[test]
    fn depth_limit_is_validated() {
        assert!(LooseOctree::with_options(&LooseOctreeOptions { max_depth: 31 }).is_err());
        assert!(LooseOctree::with_options(&LooseOctreeOptions { max_depth: 0 }).is_ok());
    }

    #[test]
    fn invariants_hold_under_random_operations() {
        use crate::util::SplitMix64;
        let mut rng = SplitMix64::new(11);
        let mut tree = LooseOctree::with_options(&LooseOctreeOptions { max_depth: 8 }).unwrap();
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
