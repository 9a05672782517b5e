//! The `dynamic-tree` broad phase: two [`DynamicTree`]s (dynamic and static proxies) with
//! enlarged leaves, a move buffer, and persistent pairs.

use std::ops::ControlFlow;

use crate::dynamic_tree::{DynamicTree, RayVisit, TreeLeaves};
use crate::pair_tracker::PairTracker;
use crate::query::is_closer;
use crate::{
    Aabb, BroadPhase, CollisionFilter, Error, PairEvents, PairSet, ProxyId, ProxyKind, ProxyTable, Ray, RayHit,
    Result, TraversalStack,
};

/// Default enlargement of every leaf box, in world units, on every side: proxies moving less
/// than this since their last re-insertion do not touch the tree (Box2D's `b2_aabbMargin`).
pub const DEFAULT_TREE_MARGIN: f32 = 0.1;

/// A leaf whose enlarged box exceeds the exact box grown by this many margins is re-inserted
/// with a fresh one, so that shrunk or slowed proxies do not keep oversized leaves.
const SHRINK_FACTOR: f32 = 4.0;

/// Broad phase over two incremental AABB trees, one for dynamic and one for static proxies.
///
/// Each step, only the proxies in the move buffer (moved or inserted since the last update)
/// do any work: a proxy whose new box left its enlarged leaf box is re-inserted (O(log n)), its
/// pairs are re-tested on exact boxes, and it queries the dynamic tree (and the static tree if
/// it is dynamic) for new pairs. Pairs of proxies that did not move stay as they are, so a step
/// costs O(m log n + pairs of the m movers) for m movers, plus one O(pairs) scan of the pair
/// array that drops ended pairs when something moved or was removed. Static-static pairs are
/// never searched, and the static tree is only modified when a static proxy changes.
///
/// ```
/// use broadphase::{Aabb, BroadPhase, CollisionFilter, DynamicTreeBroadPhase, PairEvents, ProxyKind};
/// let mut bp = DynamicTreeBroadPhase::new(0.1)?;
/// let ground = bp.insert(Aabb::from_arrays([-10.0, -1.0, -10.0], [10.0, 0.0, 10.0])?, ProxyKind::Static, CollisionFilter::ALL)?;
/// let ball = bp.insert(Aabb::from_arrays([0.0, 0.5, 0.0], [1.0, 1.5, 1.0])?, ProxyKind::Dynamic, CollisionFilter::ALL)?;
/// let mut events = PairEvents::new();
/// bp.update(&mut events);
/// assert!(events.is_empty());
/// bp.set_aabb(ball, Aabb::from_arrays([0.0, -0.5, 0.0], [1.0, 0.5, 1.0])?)?;
/// bp.update(&mut events);
/// assert_eq!(events.begun.len(), 1);
/// # let _ = ground;
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct DynamicTreeBroadPhase {
    proxies: ProxyTable,
    pairs: PairTracker,
    /// Leaves of both trees, indexed by proxy slot.
    leaves: TreeLeaves,
    dynamic_tree: DynamicTree,
    static_tree: DynamicTree,
    margin: f32,
    /// The move buffer: slots moved or inserted since the last update, each once.
    moved: Vec<u32>,
    /// Per slot: in `moved`.
    is_moved: Vec<bool>,
    stack: TraversalStack,
}

impl Default for DynamicTreeBroadPhase {
    fn default() -> Self {
        Self::new(DEFAULT_TREE_MARGIN).expect("the default margin is valid")
    }
}

impl DynamicTreeBroadPhase {
    /// An empty broad phase whose leaves are enlarged by `margin >= 0` (finite) on every side.
    pub fn new(margin: f32) -> Result<Self> {
        if !(margin.is_finite() && margin >= 0.0) {
            return Err(Error::InvalidOption("tree margin must be finite and non-negative"));
        }
        Ok(Self {
            proxies: ProxyTable::new(),
            pairs: PairTracker::new(),
            leaves: TreeLeaves::new(),
            dynamic_tree: DynamicTree::new(),
            static_tree: DynamicTree::new(),
            margin,
            moved: Vec::new(),
            is_moved: Vec::new(),
            stack: TraversalStack::new(),
        })
    }

    /// The leaf margin.
    pub fn margin(&self) -> f32 {
        self.margin
    }

    /// The tree of dynamic proxies.
    pub fn dynamic_tree(&self) -> &DynamicTree {
        &self.dynamic_tree
    }

    /// The tree of static proxies.
    pub fn static_tree(&self) -> &DynamicTree {
        &self.static_tree
    }

    /// The leaf table both trees share.
    pub fn leaves(&self) -> &TreeLeaves {
        &self.leaves
    }

    /// Bytes of the tree structure in use (both node arrays and the leaf table, by length):
    /// the figure to divide by the proxy count for memory per proxy, pairs excluded.
    pub fn tree_used_bytes(&self) -> usize {
        self.dynamic_tree.used_bytes() + self.static_tree.used_bytes() + self.leaves.used_bytes()
    }

    /// Checks both trees and that every live proxy's leaf (outside the move buffer) holds its
    /// exact box. For tests.
    pub fn validate(&self) -> std::result::Result<(), String> {
        self.dynamic_tree.validate(&self.leaves).map_err(|e| format!("dynamic tree: {e}"))?;
        self.static_tree.validate(&self.leaves).map_err(|e| format!("static tree: {e}"))?;
        let mut in_trees = 0;
        for slot in self.proxies.live_slots() {
            if self.is_moved[slot] {
                continue;
            }
            let Some(fat) = self.leaves.fat_aabb(slot as u32) else {
                return Err(format!("live proxy {slot} has no leaf"));
            };
            if !fat.contains(self.proxies.aabb(slot)) {
                return Err(format!("leaf of proxy {slot} does not contain its box"));
            }
            in_trees += 1;
        }
        let pending = self.moved.iter().filter(|&&s| self.proxies.is_live(s as usize) && self.leaves.contains(s)).count();
        let removed = self.proxies.removed_slots().iter().filter(|&&s| self.leaves.contains(s)).count();
        if in_trees + pending + removed != self.dynamic_tree.len() + self.static_tree.len() {
            return Err("trees hold leaves of dead proxies".to_string());
        }
        Ok(())
    }

    fn tree_of(&mut self, slot: usize) -> &mut DynamicTree {
        match self.proxies.kind(slot) {
            ProxyKind::Dynamic => &mut self.dynamic_tree,
            ProxyKind::Static => &mut self.static_tree,
        }
    }

    fn mark_moved(&mut self, slot: usize) {
        if !self.is_moved[slot] {
            self.is_moved[slot] = true;
            self.moved.push(slot as u32);
        }
    }

    /// Takes removed proxies out of their trees.
    fn remove_leaves(&mut self) {
        for k in 0..self.proxies.removed_slots().len() {
            let slot = self.proxies.removed_slots()[k];
            if self.leaves.contains(slot) {
                let mut leaves = std::mem::take(&mut self.leaves);
                let removed = self.tree_of(slot as usize).remove(&mut leaves, slot);
                self.leaves = leaves;
                debug_assert!(removed.is_ok());
            }
        }
    }

    /// Re-inserts moved proxies whose boxes left their leaves (or whose leaves are far too
    /// big), and inserts new ones.
    fn refit_moved_leaves(&mut self) -> Result<()> {
        for k in 0..self.moved.len() {
            let slot = self.moved[k];
            if !self.proxies.is_live(slot as usize) {
                continue;
            }
            let aabb = *self.proxies.aabb(slot as usize);
            let mut leaves = std::mem::take(&mut self.leaves);
            let result = match leaves.fat_aabb(slot) {
                None => {
                    let fat = aabb.expanded(self.margin);
                    self.tree_of(slot as usize).insert(&mut leaves, slot, fat)
                }
                Some(fat) if fat.contains(&aabb) && aabb.expanded(SHRINK_FACTOR * self.margin).contains(fat) => Ok(()),
                Some(_) => {
                    let fat = aabb.expanded(self.margin);
                    self.tree_of(slot as usize).move_leaf(&mut leaves, slot, fat)
                }
            };
            self.leaves = leaves;
            result?;
        }
        Ok(())
    }

    /// Finds the new pairs of every moved proxy by querying the trees with its exact box.
    fn find_new_pairs(&mut self) {
        let proxies = &self.proxies;
        let is_moved = &self.is_moved;
        let pairs = &mut self.pairs;
        for &slot in &self.moved {
            let m = slot as usize;
            if !proxies.is_live(m) {
                continue;
            }
            let aabb = proxies.aabb(m);
            let mut visit = |other: u32| {
                let o = other as usize;
                // Two movers find each other; the one with the smaller slot adds the pair.
                if !(is_moved[o] && o < m) && proxies.is_pair(m, o) {
                    pairs.add(slot, other);
                }
                ControlFlow::Continue(())
            };
            let _ = self.dynamic_tree.query(&self.leaves, aabb, &mut self.stack, &mut visit);
            if proxies.kind(m) == ProxyKind::Dynamic {
                let _ = self.static_tree.query(&self.leaves, aabb, &mut self.stack, &mut visit);
            }
        }
    }

    /// Calls `visit` with the live proxies in both trees whose leaves overlap `aabb`.
    fn query_trees(&self, aabb: &Aabb, filter: CollisionFilter, visitor: &mut dyn FnMut(ProxyId) -> ControlFlow<()>) {
        let proxies = &self.proxies;
        let mut stack = TraversalStack::new();
        let mut visit = |leaf: u32| {
            let slot = leaf as usize;
            if proxies.is_live(slot) && proxies.filter(slot).allows(filter) && proxies.aabb(slot).overlaps(aabb) {
                visitor(proxies.id(slot))?;
            }
            ControlFlow::Continue(())
        };
        if self.dynamic_tree.query(&self.leaves, aabb, &mut stack, &mut visit).is_break() {
            return;
        }
        let _ = self.static_tree.query(&self.leaves, aabb, &mut stack, &mut visit);
    }
}

impl BroadPhase for DynamicTreeBroadPhase {
    fn name(&self) -> &'static str {
        "dynamic-tree"
    }

    fn insert(&mut self, aabb: Aabb, kind: ProxyKind, filter: CollisionFilter) -> Result<ProxyId> {
        if self.proxies.slot_count() >= crate::dynamic_tree::MAX_NODES {
            return Err(Error::CapacityExhausted);
        }
        let id = self.proxies.insert(aabb, kind, filter)?;
        let slot = id.index() as usize;
        if self.is_moved.len() <= slot {
            self.is_moved.resize(slot + 1, false);
        }
        self.mark_moved(slot);
        Ok(id)
    }

    fn set_aabb(&mut self, id: ProxyId, aabb: Aabb) -> Result<()> {
        let slot = self.proxies.set_aabb(id, aabb)?;
        self.mark_moved(slot);
        Ok(())
    }

    fn remove(&mut self, id: ProxyId) -> Result<()> {
        self.proxies.remove(id).map(|_| ())
    }

    fn update(&mut self, events: &mut PairEvents) {
        self.remove_leaves();
        // Tree capacity is checked at insert (at most MAX_NODES slots), so this cannot fail.
        let refitted = self.refit_moved_leaves();
        debug_assert!(refitted.is_ok());
        if !self.moved.is_empty() || !self.proxies.removed_slots().is_empty() {
            let proxies = &self.proxies;
            let is_moved = &self.is_moved;
            self.pairs.retain(|a, b| {
                let (a, b) = (a as usize, b as usize);
                if proxies.is_removed(a) || proxies.is_removed(b) {
                    false
                } else if is_moved[a] || is_moved[b] {
                    proxies.aabb(a).overlaps(proxies.aabb(b))
                } else {
                    true
                }
            });
        }
        self.find_new_pairs();
        for &slot in &self.moved {
            self.is_moved[slot as usize] = false;
        }
        self.moved.clear();
        self.pairs.finish(&self.proxies, events);
        self.proxies.release_removed();
    }

    fn clear(&mut self) {
        self.proxies.clear();
        self.pairs.clear();
        self.leaves = TreeLeaves::new();
        self.dynamic_tree.clear();
        self.static_tree.clear();
        self.moved.clear();
        self.is_moved.iter_mut().for_each(|m| *m = false);
    }

    fn proxies(&self) -> &ProxyTable {
        &self.proxies
    }

    fn pair_set(&self) -> &PairSet {
        self.pairs.set()
    }

    fn memory_bytes(&self) -> usize {
        self.proxies.memory_bytes()
            + self.pairs.memory_bytes()
            + self.leaves.memory_bytes()
            + self.dynamic_tree.memory_bytes()
            + self.static_tree.memory_bytes()
            + self.moved.capacity() * 4
            + self.is_moved.capacity()
            + self.stack.memory_bytes()
    }

    fn query_aabb_with(
        &self,
        aabb: &Aabb,
        filter: CollisionFilter,
        visitor: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) {
        self.query_trees(aabb, filter, visitor);
    }

    fn raycast_with(&self, ray: &Ray, filter: CollisionFilter, visitor: &mut dyn FnMut(RayHit) -> ControlFlow<()>) {
        let proxies = &self.proxies;
        let mut stack = TraversalStack::new();
        let mut visit = |leaf: u32, ray: &Ray| {
            let slot = leaf as usize;
            if proxies.is_live(slot) && proxies.filter(slot).allows(filter) {
                if let Some(distance) = ray.hit_distance(proxies.aabb(slot)) {
                    if visitor(RayHit { id: proxies.id(slot), distance }).is_break() {
                        return RayVisit::Stop;
                    }
                }
            }
            RayVisit::Continue
        };
        if self.dynamic_tree.raycast(&self.leaves, ray, &mut stack, &mut visit).is_continue() {
            let _ = self.static_tree.raycast(&self.leaves, ray, &mut stack, &mut visit);
        }
    }

    fn raycast_closest(&self, ray: &Ray, filter: CollisionFilter) -> Option<RayHit> {
        let proxies = &self.proxies;
        let mut stack = TraversalStack::new();
        let mut best: Option<RayHit> = None;
        let mut visit = |leaf: u32, ray: &Ray| {
            let slot = leaf as usize;
            if proxies.is_live(slot) && proxies.filter(slot).allows(filter) {
                if let Some(distance) = ray.hit_distance(proxies.aabb(slot)) {
                    let hit = RayHit { id: proxies.id(slot), distance };
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
        if let ControlFlow::Continue(clipped) = self.dynamic_tree.raycast(&self.leaves, ray, &mut stack, &mut visit) {
            let _ = self.static_tree.raycast(&self.leaves, &clipped, &mut stack, &mut visit);
        }
        best
    }
}
