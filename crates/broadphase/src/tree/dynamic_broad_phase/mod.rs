//! The `dynamic-tree` broad phase: two [`DynamicTree`]s (dynamic and static proxies) with
//! enlarged leaves, a move buffer, and persistent pairs.
//!
//! The type, its options and the [`BroadPhase`] plumbing are here; the steps of an update are
//! in `update`, box queries and ray casts in `query`, the structural check in `validate`.

mod full;
mod query;
mod small;
mod update;
mod validate;

use std::ops::ControlFlow;

use crate::backend::{PairSet, ProxyStore};
use crate::tree::dynamic::{DynamicTree, FlatTree, TreeLeaves};
use crate::tree::TraversalStack;
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
/// Works in two layers, as Box2D does ([Catto, `broad_phase.c`]) plus an exact filter:
/// - candidate pairs: pairs whose enlarged leaf boxes overlap. They change only when a leaf is
///   re-inserted ("enlarged": its proxy left its leaf box, or is new), and only enlarged
///   proxies query the trees (the dynamic tree, and the static tree too if the proxy is
///   dynamic) for new candidates;
/// - exact pairs: the candidates whose current boxes overlap, re-tested only for candidates
///   with an endpoint in the move buffer.
///
/// When most proxies leave their leaves every step (a pile falling, teleports), nearly every
/// candidate changes, and the update instead finds every pair by one pair traversal of the
/// trees' leaves on their exact boxes, keeping no candidates until the motion calms down
/// ([`StepCounts::traversed`]).
///
/// # When to use
/// Scenes with many static proxies (level geometry) beside moving ones, boxes of very
/// different sizes, frequent insertions and removals, or box queries and ray casts between
/// updates. Proxies that rest or move within their margin cost nothing; the static tree is
/// only modified when a static proxy is inserted, removed, or leaves its leaf box, and
/// static-static pairs are never searched.
///
/// # Performance
/// An update costs O(e log n + c) for the e enlarged proxies and their c candidates (tree
/// re-insertions and queries), plus one scan of the candidate array (two flag lookups per
/// candidate, and a box test where an endpoint moved) when anything moved or was removed.
/// The hashed candidate and pair sets are touched only for new candidates and for pairs
/// that begin or end: a leaf a query meets that overlapped the proxy's old leaf box too is
/// a known candidate, and each candidate keeps whether it is a pair.
/// When more than an eighth of the dynamic tree's leaves (of at least 64) left their boxes,
/// the dynamic tree is rebuilt at once instead of re-inserting them one by one: O(n) plus a
/// radix sort, where a re-insertion's surface-area descent and rotations cost several times
/// a leaf's share of the build (Box2D v3's partial rebuild, [`StepCounts::rebuilt`]).
/// When the tree was rebuilt and the re-inserted leaves, each counted once plus twice the
/// pairs per leaf (their candidates), outnumber the leaves of both trees, the pairs are
/// found by a traversal instead: O(n + p log p) for the p pairs
/// (a copy of the trees with their child boxes in the nodes, the traversal, and the sorted
/// merge with the last update's pairs), after which the first update that takes the
/// incremental way again finds every candidate by the same traversal. In a scene of at most
/// 256 proxies that update sorts and sweeps their exact boxes instead of copying and
/// traversing the trees, which costs more at that size.
/// Insert, move and remove are O(1) until the update. A box query or ray cast costs
/// O(log n + k) for k hits when the leaves are well spread. Memory: at most 64 bytes of tree
/// per proxy, up to 60 more of scratch for an update that rebuilds the tree and about 80
/// for one that traverses the trees' copies, plus the candidate and exact pairs.
///
/// Worst case: O(n²) per update, when every proxy leaves its leaf box every step and the
/// leaf boxes overlap heavily (every re-insertion's query then visits O(n) leaves), and
/// O(n) per query.
///
/// # Examples
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
    /// Parallel to the candidates' keys: whether the candidate is an exact pair (in the
    /// store's pair set), so that an update touches the pair set only where that changes.
    is_pair: Vec<bool>,
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
    /// Per slot: `MOVED`, `ENLARGED` and `OLD_LEAF` bits.
    flags: Vec<u8>,
    /// Per slot with `OLD_LEAF` set: its leaf box before this update re-inserted it.
    old_fat: Vec<Aabb>,
    /// Scratch: sort keys of the enlarged proxies.
    sort_keys: Vec<u64>,
    /// Scratch of an update: the new leaf box of each moved proxy (parallel to `moved`), and
    /// the leaves of a tree rebuilt at once with their boxes.
    new_fat: Vec<Option<Aabb>>,
    held: Vec<u32>,
    rebuild_items: Vec<(u32, Aabb)>,
    last_step: StepCounts,
    stack: TraversalStack,
    pair_stack: TraversalStack<(u32, u32)>,
    /// Copies of the two trees for the update that finds every pair (see `full`).
    flat_dynamic: FlatTree,
    flat_static: FlatTree,
    /// What `flat_static` copies: the static tree's revision and whether with exact boxes
    /// (else leaf boxes); `None` once a static proxy moved, since then.
    flat_static_of: Option<(u64, bool)>,
    /// The candidate set is empty and `is_pair` too, after an update that found every pair
    /// from the trees without keeping candidates: the next incremental update finds them
    /// all again.
    candidates_stale: bool,
    /// The scratch of the same update in a small scene (see `small`).
    small: small::SmallSweep,
}

/// What the last update did, for measurements.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StepCounts {
    /// Proxies in the move buffer (moved or inserted).
    pub moved: usize,
    /// Of those, proxies whose leaves were (re-)inserted, which then queried the trees.
    pub enlarged: usize,
    /// Candidate pairs (leaf boxes overlap) after the update; 0 after an update that found
    /// the pairs without them ([`StepCounts::traversed`]).
    pub candidates: usize,
    /// True when so many leaves of the dynamic tree left their boxes that the tree was
    /// rebuilt at once rather than leaf by leaf.
    pub rebuilt: bool,
    /// True when the pairs were found by a pair traversal of the trees' leaves on their
    /// exact boxes, not from the candidates of the re-inserted proxies; no candidates are
    /// kept then.
    pub traversed: bool,
    /// True when every candidate was found again by a pair traversal of the trees' leaf
    /// boxes, after an update that kept none.
    pub found_candidates: bool,
}

/// Below this many leaves the dynamic tree is never rebuilt at once: re-inserting a few
/// leaves is cheap, and the first steps of a small scene keep their insertion-built tree.
const REBUILD_MIN_LEAVES: usize = 64;

/// The dynamic tree is rebuilt at once when more than one in this many of its leaves must
/// move: a re-insertion costs several times a leaf's share of a bulk build.
const REBUILD_SHARE: usize = 8;

/// See [`DynamicTreeBroadPhase::finds_all_pairs`].
const FULL_SHARE: f64 = 1.0;

const MOVED: u8 = 1;
const ENLARGED: u8 = 2;
/// The proxy's leaf was moved in its tree by this update, and `old_fat` holds its box from
/// before: its candidates before the update are the leaves that overlapped that box.
const OLD_LEAF: u8 = 4;

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
            is_pair: Vec::new(),
            leaves: TreeLeaves::new(),
            dynamic_tree: DynamicTree::new(),
            static_tree: DynamicTree::new(),
            margin,
            moved: Vec::new(),
            moved_from: Vec::new(),
            enlarged: Vec::new(),
            flags: Vec::new(),
            old_fat: Vec::new(),
            sort_keys: Vec::new(),
            new_fat: Vec::new(),
            held: Vec::new(),
            rebuild_items: Vec::new(),
            last_step: StepCounts::default(),
            stack: TraversalStack::new(),
            pair_stack: TraversalStack::new(),
            flat_dynamic: FlatTree::new(),
            flat_static: FlatTree::new(),
            flat_static_of: None,
            candidates_stale: false,
            small: small::SmallSweep::default(),
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

    fn tree_of(&mut self, slot: usize) -> &mut DynamicTree {
        match self.store.proxies.kind(slot) {
            ProxyKind::Dynamic => &mut self.dynamic_tree,
            ProxyKind::Static => &mut self.static_tree,
        }
    }

    /// Takes a live proxy's leaf out of its tree and lists it as moved, so that the next
    /// update inserts it again and finds its candidates anew (after a change of filter or
    /// kind, which decide which candidates it has and which tree holds it).
    fn reinsert_leaf(&mut self, slot: usize) {
        if self.leaves.contains(slot as u32) {
            let mut leaves = std::mem::take(&mut self.leaves);
            self.tree_of(slot).remove_held(&mut leaves, slot as u32);
            self.leaves = leaves;
        }
        let center = self.store.proxies.aabb(slot).center();
        self.mark_moved(slot, center);
    }

    fn mark_moved(&mut self, slot: usize, from: Vec3) {
        if self.flags[slot] & MOVED == 0 {
            self.flags[slot] |= MOVED;
            self.moved.push(slot as u32);
            self.moved_from.push(from);
        }
    }

    /// Whether this update finds every pair from the trees (see `full`) rather than from the
    /// candidates. The incremental update costs about a query and two candidates per pair
    /// for each re-inserted leaf; the pair traversal about as much for every leaf, the
    /// dynamic ones against both trees. The traversal is taken when the dynamic tree was
    /// rebuilt (most of its leaves left their boxes) and the first exceeds the second; once
    /// taken, it is kept until the first falls below a quarter of the second, since going
    /// back costs a traversal that finds every candidate again.
    fn finds_all_pairs(&self, rebuilt: bool) -> bool {
        let all = (self.dynamic_tree.len() + self.static_tree.len()).max(1) as f64;
        let per_leaf = 1.0 + 2.0 * self.store.pairs.len() as f64 / all;
        let share = self.enlarged.len() as f64 * per_leaf / all;
        if self.candidates_stale {
            share >= FULL_SHARE / 4.0
        } else {
            rebuilt && share >= FULL_SHARE
        }
    }

    /// What the last update did.
    pub fn last_step(&self) -> StepCounts {
        self.last_step
    }

    /// Number of candidate pairs (leaf boxes overlap).
    pub fn candidate_count(&self) -> usize {
        self.candidates.len()
    }
}

impl BroadPhase for DynamicTreeBroadPhase {
    fn name(&self) -> &'static str {
        "dynamic-tree"
    }

    fn insert_keyed(
        &mut self,
        aabb: Aabb,
        kind: ProxyKind,
        filter: CollisionFilter,
        key: u64,
    ) -> Result<ProxyId> {
        if self.store.proxies.slot_count() >= crate::tree::dynamic::MAX_NODES {
            return Err(Error::CapacityExhausted);
        }
        let id = self.store.insert_keyed(aabb, kind, filter, key)?;
        let slot = id.index() as usize;
        if self.flags.len() <= slot {
            self.flags.resize(slot + 1, 0);
            self.old_fat
                .resize(slot + 1, Aabb::new_unchecked(Vec3::ZERO, Vec3::ZERO));
        }
        self.mark_moved(slot, aabb.center());
        Ok(id)
    }

    fn set_aabb(&mut self, id: ProxyId, aabb: Aabb) -> Result<()> {
        let slot = self.store.proxies.index_of(id)?;
        let from = self.store.proxies.aabb(slot).center();
        if self.store.set_aabb(id, aabb)?.is_some() {
            if self.store.proxies.kind(slot) == ProxyKind::Static {
                self.flat_static_of = None;
            }
            self.mark_moved(slot, from);
        }
        Ok(())
    }

    fn remove_with(&mut self, id: ProxyId, report: bool) -> Result<()> {
        self.store.remove(id, report).map(|_| ())
    }

    fn set_filter(&mut self, id: ProxyId, filter: CollisionFilter) -> Result<()> {
        let slot = self.store.proxies.index_of(id)?;
        self.reinsert_leaf(slot);
        self.store.set_filter(id, filter).map(|_| ())
    }

    fn set_kind(&mut self, id: ProxyId, kind: ProxyKind) -> Result<()> {
        let slot = self.store.proxies.index_of(id)?;
        // Out of the tree of its old kind; the update inserts it into the tree of the new.
        self.reinsert_leaf(slot);
        self.store.set_kind(id, kind).map(|_| ())
    }

    fn try_update(&mut self, events: &mut PairEvents) -> crate::Result<()> {
        // After an update that failed on the pair limit, pairs and candidates are found again
        // from every leaf, not only from the moved ones.
        if self.store.pairs.lost() {
            self.candidates_stale = true;
        }
        self.remove_leaves();
        // Tree capacity is checked at insert (at most MAX_NODES slots), so this cannot fail.
        let refitted = self.refit_moved_leaves();
        debug_assert!(refitted.is_ok(), "{refitted:?}");
        let rebuilt = matches!(refitted, Ok(true));
        let (traversed, found_candidates) = if self.finds_all_pairs(rebuilt) {
            (true, false)
        } else {
            (false, self.candidates_stale)
        };
        if traversed || found_candidates {
            self.find_all_pairs(found_candidates);
        } else {
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
        }
        self.last_step = StepCounts {
            moved: self.moved.len(),
            enlarged: self.enlarged.len(),
            candidates: self.candidates.len(),
            rebuilt,
            traversed,
            found_candidates,
        };
        for &slot in self.moved.iter().chain(&self.enlarged) {
            self.flags[slot as usize] = 0;
        }
        self.moved.clear();
        self.moved_from.clear();
        self.enlarged.clear();
        self.store.finish(events)
    }

    fn clear(&mut self) {
        self.store.clear();
        self.leaves = TreeLeaves::new();
        self.dynamic_tree.clear();
        self.static_tree.clear();
        self.candidates.clear();
        self.is_pair.clear();
        self.candidates_stale = false;
        self.flat_static_of = None;
        self.moved.clear();
        self.moved_from.clear();
        self.enlarged.clear();
        self.flags.iter_mut().for_each(|f| *f = 0);
    }

    crate::backend::store_accessors!(store);

    fn memory_bytes(&self) -> usize {
        self.store.memory_bytes()
            + self.candidates.memory_bytes()
            + self.is_pair.capacity()
            + self.leaves.memory_bytes()
            + self.dynamic_tree.memory_bytes()
            + self.static_tree.memory_bytes()
            + (self.moved.capacity() + self.enlarged.capacity()) * 4
            + self.sort_keys.capacity() * 8
            + self.moved_from.capacity() * 12
            + self.flags.capacity()
            + self.old_fat.capacity() * std::mem::size_of::<Aabb>()
            + self.stack.memory_bytes()
            + self.pair_stack.memory_bytes()
            + self.flat_dynamic.memory_bytes()
            + self.flat_static.memory_bytes()
            + self.small.memory_bytes()
            + self.new_fat.capacity() * std::mem::size_of::<Option<Aabb>>()
            + self.held.capacity() * 4
            + self.rebuild_items.capacity() * std::mem::size_of::<(u32, Aabb)>()
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
        self.raycast_trees(ray, filter, visitor);
    }

    fn raycast_closest(&self, ray: &Ray, filter: CollisionFilter) -> Option<RayHit> {
        self.raycast_closest_in_trees(ray, filter)
    }
}

crate::backend::impl_candidate!(DynamicTreeBroadPhase, store);
