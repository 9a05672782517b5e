//! The `bvh` broad phase: a hierarchy built over all proxies, refitted every step, and
//! rebuilt when its quality drops.

use std::ops::ControlFlow;

use crate::backend::ProxyStore;
use crate::query::is_closer;
use crate::tree::bvh::{Bvh, BvhBuild, DescendRule};
use crate::tree::dynamic::RayVisit;
use crate::tree::TraversalStack;
use crate::{
    Aabb, BroadPhase, CollisionFilter, PairEvents, ProxyId, ProxyKind, Ray, RayHit, Result,
};

/// Tuning of [`BvhBroadPhase`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct BvhOptions {
    /// How the hierarchy is built.
    pub build: BvhBuild,
    /// The descend rule of the self-collision traversal.
    pub descend: DescendRule,
    /// Rebuild when the internal nodes' total surface area has grown by this factor since the
    /// last build, that is when objects drifted apart from their build-time neighbours
    /// (default 2).
    pub rebuild_area_growth: f64,
    /// Rebuild when more than `rebuild_change_base + n / rebuild_change_divisor` proxies were
    /// inserted or removed since the last build, n being the leaves at the last build
    /// (defaults 16 and 32; a divisor of 0 counts as 1).
    pub rebuild_change_base: usize,
    /// See [`BvhOptions::rebuild_change_base`].
    pub rebuild_change_divisor: usize,
}

impl Default for BvhOptions {
    fn default() -> Self {
        Self {
            build: BvhBuild::default(),
            descend: DescendRule::default(),
            rebuild_area_growth: 2.0,
            rebuild_change_base: 16,
            rebuild_change_divisor: 32,
        }
    }
}

const NO_LEAF: u32 = u32::MAX;

/// Broad phase over one [`Bvh`] of all proxies, in full-recompute style.
///
/// Each update refits the hierarchy to the current boxes and runs the self-collision
/// traversal, marking every overlapping pair; the tracker diffs against the previous set.
/// Proxies inserted since the last build wait in a pending list (tested against the tree and
/// each other); removed ones leave dead leaves. The hierarchy is rebuilt from scratch, with the
/// configured [`BvhBuild`], when
/// - insertions plus removals since the last build exceed
///   [`BvhOptions::rebuild_change_base`] + n / [`BvhOptions::rebuild_change_divisor`], or
/// - the refitted internal surface area exceeds [`BvhOptions::rebuild_area_growth`] times its
///   value right after the last build.
///
/// # When to use
/// Scenes where most proxies move every step but keep their neighbours (flocks, particles in
/// a flow, articulated bodies), with a stable population: a refit is cheaper than keeping the
/// tree incremental. With many insertions and removals or many resting proxies,
/// [`DynamicTreeBroadPhase`](crate::DynamicTreeBroadPhase) does less work.
///
/// # Performance
/// An update costs O(n) for the refit plus the traversal, O(n + k) for k overlapping node
/// pairs on a well-built tree, plus a tree query per pending proxy and O(p²) tests among the
/// p pending ones (p stays below the rebuild threshold). A rebuild costs what the
/// [`BvhBuild`] costs, O(n log n) for the default.
/// Memory: two nodes per proxy, O(n), plus the pairs.
///
/// Worst case: O(n²) per update, when proxies drift far from their build-time neighbours
/// without the area growth reaching the rebuild threshold (refitted nodes then overlap
/// widely and the traversal visits O(n²) node pairs), or when every pair overlaps.
///
/// # Examples
/// ```
/// use broadphase::tree::{BvhBuild, DescendRule};
/// use broadphase::{Aabb, BroadPhase, BvhBroadPhase, CollisionFilter, PairEvents, ProxyKind};
/// let mut bp = BvhBroadPhase::new(BvhBuild::Sah, DescendRule::LargerVolume);
/// for i in 0..4 {
///     let x = i as f32;
///     bp.insert(Aabb::from_arrays([x, 0.0, 0.0], [x + 1.0, 1.0, 1.0])?, ProxyKind::Dynamic, CollisionFilter::ALL)?;
/// }
/// let mut events = PairEvents::new();
/// bp.update(&mut events);
/// assert_eq!(events.begun.len(), 3);
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct BvhBroadPhase {
    options: BvhOptions,
    store: ProxyStore,
    bvh: Bvh,
    build: BvhBuild,
    descend: DescendRule,
    /// Per slot: the node index of its leaf, or `NO_LEAF`.
    leaf_of_slot: Vec<u32>,
    /// Live proxies inserted since the last build (not in the hierarchy).
    pending: Vec<u32>,
    dead_leaves: usize,
    built_area: f64,
    rebuilds: usize,
    // Scratch reused across updates.
    items: Vec<u32>,
    boxes: Vec<Aabb>,
    pair_stack: TraversalStack<(u32, u32)>,
    stack: TraversalStack,
}

impl Default for BvhBroadPhase {
    fn default() -> Self {
        Self::new(BvhBuild::default(), DescendRule::default())
    }
}

impl BvhBroadPhase {
    /// An empty broad phase with this build strategy and descend rule, other options at
    /// their defaults.
    pub fn new(build: BvhBuild, descend: DescendRule) -> Self {
        Self::with_options(&BvhOptions {
            build,
            descend,
            ..BvhOptions::default()
        })
    }

    /// An empty broad phase tuned by `options`.
    pub fn with_options(options: &BvhOptions) -> Self {
        let BvhOptions { build, descend, .. } = *options;
        Self {
            options: *options,
            store: ProxyStore::new(),
            bvh: Bvh::new(),
            build,
            descend,
            leaf_of_slot: Vec::new(),
            pending: Vec::new(),
            dead_leaves: 0,
            built_area: 0.0,
            rebuilds: 0,
            items: Vec::new(),
            boxes: Vec::new(),
            pair_stack: TraversalStack::new(),
            stack: TraversalStack::new(),
        }
    }

    /// The hierarchy (as of the last update).
    pub fn bvh(&self) -> &Bvh {
        &self.bvh
    }

    /// The build strategy.
    pub fn build_strategy(&self) -> BvhBuild {
        self.build
    }

    /// The descend rule.
    pub fn descend_rule(&self) -> DescendRule {
        self.descend
    }

    /// Number of full rebuilds so far.
    pub fn rebuilds(&self) -> usize {
        self.rebuilds
    }

    /// Checks the hierarchy and that every live proxy is in it exactly once or pending.
    pub fn validate(&self) -> std::result::Result<(), String> {
        self.bvh.validate()?;
        let mut seen = vec![0u8; self.store.proxies.slot_count()];
        for node in &self.bvh.nodes {
            if node.is_leaf() && node.item() != crate::tree::bvh::DEAD {
                let slot = node.item() as usize;
                if !self.store.proxies.is_live(slot) {
                    return Err(format!("leaf of dead proxy {slot}"));
                }
                seen[slot] += 1;
            }
        }
        for &slot in &self.pending {
            seen[slot as usize] += 1;
        }
        for slot in self.store.proxies.live_slots() {
            if seen[slot] != 1 {
                return Err(format!("proxy {slot} is held {} times", seen[slot]));
            }
        }
        Ok(())
    }

    fn rebuild(&mut self) {
        let proxies = &self.store.proxies;
        self.items.clear();
        self.boxes.clear();
        for slot in proxies.live_slots() {
            self.items.push(slot as u32);
            self.boxes.push(*proxies.aabb(slot));
        }
        // Slots are below 2^31 (checked at insert) and there is one box per slot.
        let built = self.bvh.build(self.build, &self.items, &self.boxes);
        debug_assert!(built.is_ok());
        self.leaf_of_slot.clear();
        self.leaf_of_slot
            .resize(self.store.proxies.slot_count(), NO_LEAF);
        self.bvh.leaf_indices(&mut self.leaf_of_slot);
        self.pending.clear();
        self.dead_leaves = 0;
        self.built_area = self.bvh.internal_area();
        self.rebuilds += 1;
    }

    fn is_live_and_allowed(&self, slot: usize, filter: CollisionFilter) -> bool {
        self.store.proxies.is_live(slot) && self.store.proxies.filter(slot).allows(filter)
    }
}

impl BroadPhase for BvhBroadPhase {
    fn name(&self) -> &'static str {
        "bvh"
    }

    fn insert_keyed(
        &mut self,
        aabb: Aabb,
        kind: ProxyKind,
        filter: CollisionFilter,
        key: u64,
    ) -> Result<ProxyId> {
        if self.store.proxies.slot_count() >= crate::tree::bvh::LEAF_BIT as usize {
            return Err(crate::Error::CapacityExhausted);
        }
        let id = self.store.insert_keyed(aabb, kind, filter, key)?;
        let slot = id.index() as usize;
        if self.leaf_of_slot.len() <= slot {
            self.leaf_of_slot.resize(slot + 1, NO_LEAF);
        }
        self.pending.push(slot as u32);
        Ok(id)
    }

    fn set_aabb(&mut self, id: ProxyId, aabb: Aabb) -> Result<()> {
        self.store.set_aabb(id, aabb).map(|_| ())
    }

    fn remove_with(&mut self, id: ProxyId, report: bool) -> Result<()> {
        self.store.remove(id, report).map(|_| ())
    }

    fn set_filter(&mut self, id: ProxyId, filter: CollisionFilter) -> Result<()> {
        self.store.set_filter(id, filter).map(|_| ())
    }

    // The hierarchy holds statics with the others.
    fn set_kind(&mut self, id: ProxyId, kind: ProxyKind) -> Result<()> {
        self.store.set_kind(id, kind).map(|_| ())
    }

    fn try_update(&mut self, events: &mut PairEvents) -> crate::Result<()> {
        for k in 0..self.store.proxies.removed_slots().len() {
            let slot = self.store.proxies.removed_slots()[k] as usize;
            let leaf = std::mem::replace(&mut self.leaf_of_slot[slot], NO_LEAF);
            if leaf != NO_LEAF {
                self.bvh.kill_leaf(leaf);
                self.dead_leaves += 1;
            }
        }
        let proxies = &self.store.proxies;
        self.pending.retain(|&slot| proxies.is_live(slot as usize));

        let changes = self.pending.len() + self.dead_leaves;
        let limit = self.options.rebuild_change_base
            + self.bvh.len() / self.options.rebuild_change_divisor.max(1);
        let mut rebuild = changes > limit;
        if !rebuild {
            let area = self.bvh.refit(|slot| *proxies.aabb(slot as usize));
            rebuild = area > self.options.rebuild_area_growth * self.built_area;
        }
        if rebuild {
            self.rebuild();
        }

        let proxies = &self.store.proxies;
        let pairs = &mut self.store.pairs;
        pairs.begin_full();
        // Leaf boxes are the exact current boxes (just refitted or rebuilt).
        self.bvh
            .self_pairs(self.descend, &mut self.pair_stack, |a, b| {
                if proxies.can_pair(a as usize, b as usize) {
                    pairs.mark(a, b);
                }
            });
        for (k, &p) in self.pending.iter().enumerate() {
            let aabb = proxies.aabb(p as usize);
            let _ = self.bvh.query(aabb, &mut self.stack, |other| {
                if proxies.can_pair(p as usize, other as usize) {
                    pairs.mark(p, other);
                }
                ControlFlow::Continue(())
            });
            for &q in &self.pending[k + 1..] {
                if proxies.is_pair(p as usize, q as usize) {
                    pairs.mark(p, q);
                }
            }
        }
        pairs.end_full();
        self.store.finish(events)
    }

    fn clear(&mut self) {
        self.store.clear();
        self.bvh = Bvh::new();
        self.leaf_of_slot.clear();
        self.pending.clear();
        self.dead_leaves = 0;
        self.built_area = 0.0;
    }

    crate::backend::store_accessors!(store);

    fn memory_bytes(&self) -> usize {
        self.store.memory_bytes()
            + self.bvh.memory_bytes()
            + (self.leaf_of_slot.capacity() + self.pending.capacity() + self.items.capacity()) * 4
            + self.boxes.capacity() * std::mem::size_of::<Aabb>()
            + self.pair_stack.memory_bytes()
            + self.stack.memory_bytes()
    }

    fn query_aabb_with(
        &self,
        aabb: &Aabb,
        filter: CollisionFilter,
        visitor: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) {
        let proxies = &self.store.proxies;
        let mut visit = |slot: u32| {
            let s = slot as usize;
            if self.is_live_and_allowed(s, filter) && proxies.aabb(s).overlaps(aabb) {
                visitor(proxies.id(s))?;
            }
            ControlFlow::Continue(())
        };
        if self
            .bvh
            .query(aabb, &mut TraversalStack::new(), &mut visit)
            .is_break()
        {
            return;
        }
        for &slot in &self.pending {
            if visit(slot).is_break() {
                return;
            }
        }
    }

    fn raycast_with(
        &self,
        ray: &Ray,
        filter: CollisionFilter,
        visitor: &mut dyn FnMut(RayHit) -> ControlFlow<()>,
    ) {
        let proxies = &self.store.proxies;
        let mut visit = |slot: u32, ray: &Ray| {
            let s = slot as usize;
            if self.is_live_and_allowed(s, filter) {
                if let Some(distance) = ray.hit_distance(proxies.aabb(s)) {
                    if visitor(RayHit {
                        id: proxies.id(s),
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
            .bvh
            .raycast(ray, &mut TraversalStack::new(), &mut visit)
            .is_break()
        {
            return;
        }
        for &slot in &self.pending {
            if visit(slot, ray) == RayVisit::Stop {
                return;
            }
        }
    }

    fn raycast_closest(&self, ray: &Ray, filter: CollisionFilter) -> Option<RayHit> {
        let proxies = &self.store.proxies;
        let mut best: Option<RayHit> = None;
        let mut visit = |slot: u32, ray: &Ray| {
            let s = slot as usize;
            if self.is_live_and_allowed(s, filter) {
                if let Some(distance) = ray.hit_distance(proxies.aabb(s)) {
                    let hit = RayHit {
                        id: proxies.id(s),
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
        let clipped = match self
            .bvh
            .raycast(ray, &mut TraversalStack::new(), &mut visit)
        {
            ControlFlow::Continue(clipped) => clipped,
            ControlFlow::Break(()) => *ray,
        };
        for &slot in &self.pending {
            visit(slot, &clipped);
        }
        best
    }
}
crate::backend::impl_candidate!(BvhBroadPhase, store);
