//! parry3d's dynamic BVH as a broad phase.

use std::ops::ControlFlow;

use broadphase::backend::{PairSet, ProxyStore, ProxyTable};
use broadphase::{Aabb, BroadPhase, CollisionFilter, PairEvents, ProxyId, ProxyKind, Result};
use parry3d::bounding_volume::Aabb as ParryAabb;
use parry3d::partitioning::{Bvh, BvhWorkspace};

/// parry3d's `Bvh` (binary, SAH insertion) kept up to date by
/// `insert_or_update_partially` + `optimize_incremental` + `refit`, with pairs from
/// `traverse_bvtt_single_tree`.
///
/// Leaves are the proxies' exact boxes (no margin), keyed by slot index, and the traversal
/// tests closed boxes, so the pairs found are exactly the overlapping ones; the step is a
/// full recompute of the pair set (refit O(n), traversal O(n log n + pairs) typically).
///
/// ```
/// use broadphase::{Aabb, BroadPhase, CollisionFilter, PairEvents, ProxyKind};
/// let mut bvh = broadphase_peers::ParryBvh::new();
/// bvh.insert(Aabb::from_arrays([0.0; 3], [1.0; 3])?, ProxyKind::Dynamic, CollisionFilter::ALL)?;
/// bvh.insert(Aabb::from_arrays([1.0; 3], [2.0; 3])?, ProxyKind::Dynamic, CollisionFilter::ALL)?;
/// let mut events = PairEvents::new();
/// bvh.update(&mut events);
/// assert_eq!(events.begun.len(), 1);
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Default)]
pub struct ParryBvh {
    store: ProxyStore,
    tree: Bvh,
    workspace: BvhWorkspace,
    /// Slots whose box changed (or that were inserted) since the last update.
    dirty: Vec<u32>,
    is_dirty: Vec<bool>,
}

impl std::fmt::Debug for ParryBvh {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParryBvh")
            .field("proxies", &self.store.proxies().len())
            .field("pairs", &self.store.pair_set().len())
            .finish()
    }
}

fn to_parry(aabb: &Aabb) -> ParryAabb {
    ParryAabb::new(aabb.min(), aabb.max())
}

impl ParryBvh {
    /// An empty BVH broad phase.
    pub fn new() -> Self {
        Self::default()
    }

    fn mark_dirty(&mut self, slot: usize) {
        if self.is_dirty.len() <= slot {
            self.is_dirty.resize(slot + 1, false);
        }
        if !self.is_dirty[slot] {
            self.is_dirty[slot] = true;
            self.dirty.push(slot as u32);
        }
    }
}

impl BroadPhase for ParryBvh {
    fn name(&self) -> &'static str {
        "parry-bvh"
    }

    fn insert_keyed(
        &mut self,
        aabb: Aabb,
        kind: ProxyKind,
        filter: CollisionFilter,
        key: u64,
    ) -> Result<ProxyId> {
        let id = self.store.insert_keyed(aabb, kind, filter, key)?;
        self.mark_dirty(id.index() as usize);
        Ok(id)
    }

    fn set_aabb(&mut self, id: ProxyId, aabb: Aabb) -> Result<()> {
        if let Some(slot) = self.store.set_aabb(id, aabb)? {
            self.mark_dirty(slot);
        }
        Ok(())
    }

    fn remove_with(&mut self, id: ProxyId, report: bool) -> Result<()> {
        self.store.remove(id, report).map(|_| ())
    }

    // The pair set is recomputed at every update with the current filters and kinds.
    fn set_filter(&mut self, id: ProxyId, filter: CollisionFilter) -> Result<()> {
        self.store.set_filter(id, filter).map(|_| ())
    }

    fn set_kind(&mut self, id: ProxyId, kind: ProxyKind) -> Result<()> {
        self.store.set_kind(id, kind).map(|_| ())
    }

    fn report_pairs_again(&mut self, id: ProxyId) -> Result<()> {
        self.store.report_pairs_again(id)
    }

    fn set_fat_margin(&mut self, margin: f32) -> Result<()> {
        self.store.set_fat_margin(margin)
    }

    fn try_update(&mut self, events: &mut PairEvents) -> Result<()> {
        for &slot in self.store.proxies().removed_slots() {
            self.tree.remove(slot);
        }
        for &slot in &self.dirty {
            let i = slot as usize;
            self.is_dirty[i] = false;
            if self.store.proxies().is_live(i) {
                self.tree.insert_or_update_partially(
                    to_parry(self.store.proxies().aabb(i)),
                    slot,
                    0.0,
                );
            }
        }
        self.dirty.clear();
        // In-place leaf updates degrade the tree as objects wander; parry's incremental
        // optimizer rebuilds a few subtrees per call (as rapier does), then the refit makes
        // every internal box enclose its children again.
        self.tree.optimize_incremental(&mut self.workspace);
        self.tree.refit(&mut self.workspace);

        let (proxies, pairs) = self.store.split_mut();
        pairs.begin_full();
        self.tree
            .traverse_bvtt_single_tree::<false>(&mut self.workspace, &mut |a, b| {
                if proxies.is_pair(a as usize, b as usize) {
                    pairs.mark(a, b);
                }
            });
        pairs.end_full();
        self.store.finish(events)
    }

    fn set_pair_limit(&mut self, limit: Option<usize>) {
        self.store.pairs_mut().set_limit(limit);
    }

    fn clear(&mut self) {
        self.store.clear();
        self.tree = Bvh::new();
        self.dirty.clear();
        self.is_dirty.clear();
    }

    fn proxies(&self) -> &ProxyTable {
        self.store.proxies()
    }

    fn pair_set(&self) -> &PairSet {
        self.store.pair_set()
    }

    /// Estimate: parry does not expose its capacities; a binary BVH of n leaves holds
    /// about n wide nodes of two child boxes each, plus the refit buffer of the same size.
    fn memory_bytes(&self) -> usize {
        let nodes = self.tree.leaf_count() as usize;
        self.store.memory_bytes()
            + 2 * nodes * 2 * std::mem::size_of::<parry3d::partitioning::BvhNode>()
            + self.dirty.capacity() * 4
            + self.is_dirty.capacity()
    }

    fn query_aabb_with(
        &self,
        aabb: &Aabb,
        filter: CollisionFilter,
        visitor: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) {
        let query = to_parry(aabb);
        for leaf in self.tree.intersect_aabb(&query) {
            let i = leaf as usize;
            // The tree is as of the last update: check liveness and the current box.
            if self.store.proxies().is_live(i)
                && self.store.proxies().filter(i).allows(filter)
                && self.store.proxies().aabb(i).overlaps(aabb)
                && visitor(self.store.proxies().id(i)).is_break()
            {
                return;
            }
        }
    }
}
