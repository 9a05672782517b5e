//! The `dynamic-tree` broad phase: two [`DynamicTree`]s (dynamic and static proxies) with
//! enlarged leaves, a move buffer, and persistent pairs.

use std::ops::ControlFlow;

use crate::backend::{PairSet, ProxyStore, ProxyTable};
use crate::query::is_closer;
use crate::tree::dynamic::{DynamicTree, RayVisit, TreeLeaves};
use crate::tree::TraversalStack;
use crate::util::morton_code;
use crate::Candidate;
use crate::{
    Aabb, BroadPhase, CollisionFilter, Error, PairEvents, ProxyId, ProxyKind, Ray, RayHit, Result,
    Vec3,
};

/// Tuning of [`DynamicTreeBroadPhase`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct DynamicTreeOptions {
    /// Enlargement of every leaf box, in world units, on every side (finite, ≥ 0; default
    /// 0.1): proxies moving less than this since their last re-insertion do not touch the
    /// tree (Box2D's `b2_aabbMargin`).
    pub margin: f32,
}

impl Default for DynamicTreeOptions {
    fn default() -> Self {
        Self { margin: 0.1 }
    }
}

/// A leaf whose enlarged box exceeds the exact box grown by this many margins (plus the
/// predicted motion) is re-inserted with a fresh one, so that shrunk or stopped proxies do not
/// keep oversized leaves.
const SHRINK_FACTOR: f32 = 4.0;

/// Leaf boxes are also stretched in the direction of the last step's displacement, by this
/// many steps (Box2D's `b2_aabbMultiplier`), so that steadily moving proxies are re-inserted
/// less often. The stretch is capped per axis at the box's largest edge plus the margin, so a
/// teleport does not leave a huge leaf.
const PREDICTED_STEPS: f32 = 2.0;

/// Broad phase over two incremental AABB trees, one for dynamic and one for static proxies.
///
/// Works in two layers, as Box2D does plus an exact filter:
/// - candidate pairs: pairs whose enlarged leaf boxes overlap. They change only when a leaf is
///   re-inserted ("enlarged": its proxy left its leaf box, or is new), and only enlarged
///   proxies query the trees (the dynamic tree, and the static tree too if the proxy is
///   dynamic) for new candidates;
/// - exact pairs: the candidates whose current boxes overlap, re-tested only for candidates
///   with an endpoint in the move buffer.
///
/// A step costs O(e log n + candidates of the e enlarged proxies) for the trees and queries,
/// plus one scan of the candidate array (two flag lookups per candidate, and a box test where
/// an endpoint moved) when anything moved or was removed. Proxies that
/// did not move cost nothing else; static-static pairs are never searched; the static tree is
/// only modified when a static proxy is inserted, removed, or leaves its leaf box.
///
/// ```
/// use broadphase::{Aabb, BroadPhase, CollisionFilter, DynamicTreeBroadPhase, PairEvents, ProxyKind};
/// let mut bp = DynamicTreeBroadPhase::new();
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
    /// The proxies and their exact pairs.
    store: ProxyStore,
    /// Pairs whose leaf boxes overlap (and that may pair): a superset of the exact pairs.
    candidates: PairSet,
    /// Leaves of both trees, indexed by proxy slot.
    leaves: TreeLeaves,
    dynamic_tree: DynamicTree,
    static_tree: DynamicTree,
    margin: f32,
    /// The move buffer: slots moved or inserted since the last update, each once.
    moved: Vec<u32>,
    /// Parallel to `moved`: each proxy's box centre before its first move in this step.
    moved_from: Vec<Vec3>,
    /// Slots whose leaves were (re-)inserted during this update.
    enlarged: Vec<u32>,
    /// Per slot: `MOVED` and `ENLARGED` bits.
    flags: Vec<u8>,
    /// Scratch: sort keys of the enlarged proxies.
    sort_keys: Vec<u64>,
    last_step: StepCounts,
    stack: TraversalStack,
}

/// What the last update did, for measurements.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StepCounts {
    /// Proxies in the move buffer (moved or inserted).
    pub moved: usize,
    /// Of those, proxies whose leaves were (re-)inserted, which then queried the trees.
    pub enlarged: usize,
    /// Candidate pairs (leaf boxes overlap) after the update.
    pub candidates: usize,
}

const MOVED: u8 = 1;
const ENLARGED: u8 = 2;

impl Default for DynamicTreeBroadPhase {
    fn default() -> Self {
        Self::new()
    }
}

impl DynamicTreeBroadPhase {
    /// An empty broad phase with the default options.
    pub fn new() -> Self {
        Self::with_margin(DynamicTreeOptions::default().margin)
    }

    /// An empty broad phase tuned by `options`; `InvalidOption` for a negative or non-finite
    /// margin.
    pub fn with_options(options: &DynamicTreeOptions) -> Result<Self> {
        let margin = options.margin;
        if !(margin.is_finite() && margin >= 0.0) {
            return Err(Error::InvalidOption(
                "tree margin must be finite and non-negative",
            ));
        }
        Ok(Self::with_margin(margin))
    }

    /// An empty broad phase with a margin already checked.
    fn with_margin(margin: f32) -> Self {
        Self {
            store: ProxyStore::new(),
            candidates: PairSet::new(),
            leaves: TreeLeaves::new(),
            dynamic_tree: DynamicTree::new(),
            static_tree: DynamicTree::new(),
            margin,
            moved: Vec::new(),
            moved_from: Vec::new(),
            enlarged: Vec::new(),
            flags: Vec::new(),
            sort_keys: Vec::new(),
            last_step: StepCounts::default(),
            stack: TraversalStack::new(),
        }
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

    fn tree_of(&mut self, slot: usize) -> &mut DynamicTree {
        match self.store.proxies.kind(slot) {
            ProxyKind::Dynamic => &mut self.dynamic_tree,
            ProxyKind::Static => &mut self.static_tree,
        }
    }

    fn mark_moved(&mut self, slot: usize, from: Vec3) {
        if self.flags[slot] & MOVED == 0 {
            self.flags[slot] |= MOVED;
            self.moved.push(slot as u32);
            self.moved_from.push(from);
        }
    }

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

    /// What the last update did.
    pub fn last_step(&self) -> StepCounts {
        self.last_step
    }

    /// Number of candidate pairs (leaf boxes overlap).
    pub fn candidate_count(&self) -> usize {
        self.candidates.len()
    }

    /// Takes removed proxies out of their trees.
    fn remove_leaves(&mut self) {
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
    /// big), and inserts new ones.
    fn refit_moved_leaves(&mut self) -> Result<()> {
        // New leaves of a tree that is empty are built at once (a first step, a bulk load).
        // Not a steady-state path: the lists allocate only then.
        let bulk_dynamic = self.dynamic_tree.is_empty();
        let bulk_static = self.static_tree.is_empty();
        let mut bulk: [Vec<(u32, Aabb)>; 2] = [Vec::new(), Vec::new()];
        for k in 0..self.moved.len() {
            let slot = self.moved[k];
            if !self.store.proxies.is_live(slot as usize) {
                continue;
            }
            let aabb = *self.store.proxies.aabb(slot as usize);
            let (fat, largest) = self.leaf_boxes(&aabb, aabb.center() - self.moved_from[k]);
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
            let result = match leaves.fat_aabb(slot) {
                None => self.tree_of(slot as usize).insert(&mut leaves, slot, fat),
                Some(old) if old.contains(&aabb) && largest.contains(old) => {
                    self.leaves = leaves;
                    continue;
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
        let [dynamic_items, static_items] = &mut bulk;
        for (tree, items) in [
            (&mut self.dynamic_tree, dynamic_items),
            (&mut self.static_tree, static_items),
        ] {
            if !items.is_empty() {
                tree.build(&mut self.leaves, items)?;
            }
        }
        Ok(())
    }

    /// One pass over the candidates: drops those of removed proxies and those whose leaf
    /// boxes separated (an endpoint was re-inserted), and re-tests the exact boxes of those
    /// with a moved endpoint.
    fn update_candidates(&mut self) {
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
                if proxies.aabb(x).overlaps(proxies.aabb(y)) {
                    self.store.pairs.add(a, b);
                } else {
                    self.store.pairs.remove(a, b);
                }
                position += 1;
            } else {
                self.store.pairs.remove(a, b);
                // The last candidate moves into `position`; look at it next.
                self.candidates.remove_at(position);
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
    /// box, and adds those whose exact boxes overlap as pairs.
    fn find_new_candidates(&mut self) {
        self.sort_enlarged_spatially();
        let proxies = &self.store.proxies;
        let flags = &self.flags;
        let candidates = &mut self.candidates;
        let pairs = &mut self.store.pairs;
        for &slot in &self.enlarged {
            let e = slot as usize;
            let Some(fat) = self.leaves.fat_aabb(slot) else {
                continue;
            };
            let mut visit = |other: u32| {
                let o = other as usize;
                // Two enlarged proxies find each other; the one with the smaller slot adds.
                if o != e && !(flags[o] & ENLARGED != 0 && o < e) && proxies.can_pair(e, o) {
                    let (_, inserted) = candidates.insert(slot, other, 0);
                    if inserted && proxies.aabb(e).overlaps(proxies.aabb(o)) {
                        pairs.add(slot, other);
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

    /// Calls `visit` with the live proxies in both trees whose leaves overlap `aabb`.
    fn query_trees(
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
}

impl BroadPhase for DynamicTreeBroadPhase {
    fn name(&self) -> &'static str {
        "dynamic-tree"
    }

    fn insert(&mut self, aabb: Aabb, kind: ProxyKind, filter: CollisionFilter) -> Result<ProxyId> {
        if self.store.proxies.slot_count() >= crate::tree::dynamic::MAX_NODES {
            return Err(Error::CapacityExhausted);
        }
        let id = self.store.insert(aabb, kind, filter)?;
        let slot = id.index() as usize;
        if self.flags.len() <= slot {
            self.flags.resize(slot + 1, 0);
        }
        self.mark_moved(slot, aabb.center());
        Ok(id)
    }

    fn set_aabb(&mut self, id: ProxyId, aabb: Aabb) -> Result<()> {
        let slot = self.store.proxies.index_of(id)?;
        let from = self.store.proxies.aabb(slot).center();
        self.store.set_aabb(id, aabb)?;
        self.mark_moved(slot, from);
        Ok(())
    }

    fn remove(&mut self, id: ProxyId) -> Result<()> {
        self.store.remove(id).map(|_| ())
    }

    fn update(&mut self, events: &mut PairEvents) {
        self.remove_leaves();
        // Tree capacity is checked at insert (at most MAX_NODES slots), so this cannot fail.
        let refitted = self.refit_moved_leaves();
        debug_assert!(refitted.is_ok(), "{refitted:?}");
        if !self.moved.is_empty() || !self.store.proxies.removed_slots().is_empty() {
            for k in 0..self.store.proxies.removed_slots().len() {
                let slot = self.store.proxies.removed_slots()[k] as usize;
                self.flags[slot] |= MOVED;
            }
            self.update_candidates();
            for k in 0..self.store.proxies.removed_slots().len() {
                let slot = self.store.proxies.removed_slots()[k] as usize;
                self.flags[slot] = 0;
            }
        }
        self.find_new_candidates();
        self.last_step = StepCounts {
            moved: self.moved.len(),
            enlarged: self.enlarged.len(),
            candidates: self.candidates.len(),
        };
        for &slot in &self.moved {
            self.flags[slot as usize] = 0;
        }
        self.moved.clear();
        self.moved_from.clear();
        self.enlarged.clear();
        self.store.finish(events);
    }

    fn clear(&mut self) {
        self.store.clear();
        self.leaves = TreeLeaves::new();
        self.dynamic_tree.clear();
        self.static_tree.clear();
        self.candidates.clear();
        self.moved.clear();
        self.moved_from.clear();
        self.enlarged.clear();
        self.flags.iter_mut().for_each(|f| *f = 0);
    }

    fn proxies(&self) -> &ProxyTable {
        self.store.proxies()
    }

    fn pair_set(&self) -> &PairSet {
        self.store.pair_set()
    }

    fn memory_bytes(&self) -> usize {
        self.store.memory_bytes()
            + self.candidates.memory_bytes()
            + self.leaves.memory_bytes()
            + self.dynamic_tree.memory_bytes()
            + self.static_tree.memory_bytes()
            + (self.moved.capacity() + self.enlarged.capacity()) * 4
            + self.sort_keys.capacity() * 8
            + self.moved_from.capacity() * 12
            + self.flags.capacity()
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

    fn raycast_with(
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

    fn raycast_closest(&self, ray: &Ray, filter: CollisionFilter) -> Option<RayHit> {
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
impl Candidate for DynamicTreeBroadPhase {
    fn store_mut(&mut self) -> &mut ProxyStore {
        &mut self.store
    }
}
