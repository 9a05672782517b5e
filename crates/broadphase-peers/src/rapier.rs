//! rapier3d's broad phase, driven standalone.

use broadphase::backend::{PairSet, ProxyStore, ProxyTable};
use broadphase::{Aabb, BroadPhase, CollisionFilter, PairEvents, ProxyId, ProxyKind, Result, Vec3};
use rapier3d::dynamics::{IntegrationParameters, IslandManager, RigidBodySet, SoftBodySet};
use rapier3d::geometry::{
    ActiveCollisionTypes, BroadPhaseBvh, BroadPhasePairEvent, ColliderBuilder, ColliderHandle,
    ColliderSet,
};

/// Length unit given to rapier: its leaves are fattened by 4% of it, so a tiny unit keeps
/// its candidate pairs close to the exact ones.
const LENGTH_UNIT: f32 = 1e-4;

/// rapier3d's `BroadPhaseBvh` with one cuboid collider (no rigid body) per proxy.
///
/// Settings: `normalized_prediction_distance = 0`, `length_unit = 1e-4`,
/// `ActiveCollisionTypes::all()` on every collider. Each collider is the proxy's box (clamped
/// to ±1e37) rounded outward by a few ulps, so rapier's candidates are a superset of the overlapping pairs;
/// every update filters the candidates with the exact box test and the proxies' kinds and
/// filters (O(candidates)). rapier drops the pairs of removed colliders silently; they are
/// dropped from the candidates here.
///
/// ```
/// use broadphase::{Aabb, BroadPhase, CollisionFilter, PairEvents, ProxyKind};
/// let mut rapier = broadphase_peers::RapierBroadPhase::new();
/// rapier.insert(Aabb::from_arrays([0.0; 3], [1.0; 3])?, ProxyKind::Dynamic, CollisionFilter::ALL)?;
/// rapier.insert(Aabb::from_arrays([1.0; 3], [2.0; 3])?, ProxyKind::Dynamic, CollisionFilter::ALL)?;
/// let mut events = PairEvents::new();
/// rapier.update(&mut events);
/// assert_eq!(events.begun.len(), 1);
/// # Ok::<(), broadphase::Error>(())
/// ```
pub struct RapierBroadPhase {
    store: ProxyStore,
    params: IntegrationParameters,
    broad_phase: BroadPhaseBvh,
    colliders: ColliderSet,
    bodies: RigidBodySet,
    islands: IslandManager,
    soft_bodies: SoftBodySet,
    /// Collider of each slot.
    handles: Vec<Option<ColliderHandle>>,
    /// Slot of each collider, by collider arena index.
    slot_of_collider: Vec<u32>,
    /// rapier's candidate pairs, by slot indices.
    candidates: PairSet,
    modified: Vec<ColliderHandle>,
    modified_slots: Vec<u32>,
    is_modified: Vec<bool>,
    removed: Vec<ColliderHandle>,
    rapier_events: Vec<BroadPhasePairEvent>,
}

impl Default for RapierBroadPhase {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for RapierBroadPhase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RapierBroadPhase")
            .field("proxies", &self.store.proxies().len())
            .field("pairs", &self.store.pair_set().len())
            .field("candidates", &self.candidates.len())
            .finish()
    }
}

/// Coordinates are clamped to ±this before they reach rapier: its cuboid AABBs are
/// `center ± half`, which would overflow to infinity near `f32::MAX`, and rapier skips
/// non-finite boxes. Clamping is monotone, so overlapping boxes stay overlapping (the
/// candidates stay a superset; the exact test removes the extra ones).
const COORDINATE_LIMIT: f32 = 1e37;

/// Center and half extents of a cuboid that contains `aabb` (clamped) despite rounding.
fn outward_cuboid(aabb: &Aabb) -> (Vec3, Vec3) {
    let limit = Vec3::splat(COORDINATE_LIMIT);
    let (lo, hi) = (
        aabb.min().clamp(-limit, limit),
        aabb.max().clamp(-limit, limit),
    );
    // Halves first, so that nothing overflows.
    let center = lo * 0.5 + hi * 0.5;
    let half = hi * 0.5 - lo * 0.5;
    let slack = (center.abs() + half) * (4.0 * f32::EPSILON) + Vec3::splat(f32::MIN_POSITIVE);
    (center, half + slack)
}

impl RapierBroadPhase {
    /// An empty rapier broad phase.
    pub fn new() -> Self {
        let params = IntegrationParameters {
            length_unit: LENGTH_UNIT,
            normalized_prediction_distance: 0.0,
            ..Default::default()
        };
        Self {
            store: ProxyStore::new(),
            params,
            broad_phase: BroadPhaseBvh::new(),
            colliders: ColliderSet::new(),
            bodies: RigidBodySet::new(),
            islands: IslandManager::new(),
            soft_bodies: SoftBodySet::new(),
            handles: Vec::new(),
            slot_of_collider: Vec::new(),
            candidates: PairSet::new(),
            modified: Vec::new(),
            modified_slots: Vec::new(),
            is_modified: Vec::new(),
            removed: Vec::new(),
            rapier_events: Vec::new(),
        }
    }

    fn mark_modified(&mut self, slot: usize, handle: ColliderHandle) {
        if !self.is_modified[slot] {
            self.is_modified[slot] = true;
            self.modified.push(handle);
            self.modified_slots.push(slot as u32);
        }
    }

    fn slot_of(&self, handle: ColliderHandle) -> u32 {
        self.slot_of_collider[handle.into_raw_parts().0 as usize]
    }
}

impl BroadPhase for RapierBroadPhase {
    fn name(&self) -> &'static str {
        "rapier"
    }

    fn insert_keyed(
        &mut self,
        aabb: Aabb,
        kind: ProxyKind,
        filter: CollisionFilter,
        key: u64,
    ) -> Result<ProxyId> {
        let id = self.store.insert_keyed(aabb, kind, filter, key)?;
        let slot = id.index() as usize;
        // The stored box: the given one, or grown by the fat margin.
        let (center, half) = outward_cuboid(self.store.proxies().aabb(slot));
        let collider = ColliderBuilder::cuboid(half.x, half.y, half.z)
            .translation(center)
            .active_collision_types(ActiveCollisionTypes::all())
            .build();
        let handle = self.colliders.insert(collider);
        let index = handle.into_raw_parts().0 as usize;
        if self.slot_of_collider.len() <= index {
            self.slot_of_collider.resize(index + 1, u32::MAX);
        }
        self.slot_of_collider[index] = slot as u32;
        if self.handles.len() <= slot {
            self.handles.resize(slot + 1, None);
            self.is_modified.resize(slot + 1, false);
        }
        self.handles[slot] = Some(handle);
        self.mark_modified(slot, handle);
        Ok(id)
    }

    fn set_aabb(&mut self, id: ProxyId, aabb: Aabb) -> Result<()> {
        let Some(slot) = self.store.set_aabb(id, aabb)? else {
            return Ok(());
        };
        let Some(handle) = self.handles[slot] else {
            return Ok(());
        };
        let (center, half) = outward_cuboid(self.store.proxies().aabb(slot));
        if let Some(collider) = self.colliders.get_mut(handle) {
            collider.set_translation(center);
            let resized = collider
                .shape()
                .as_cuboid()
                .is_none_or(|c| c.half_extents != half);
            if resized {
                if let Some(cuboid) = collider.shape_mut().as_cuboid_mut() {
                    cuboid.half_extents = half;
                }
            }
        }
        self.mark_modified(slot, handle);
        Ok(())
    }

    fn remove_with(&mut self, id: ProxyId, report: bool) -> Result<()> {
        let slot = self.store.remove(id, report)?;
        if let Some(handle) = self.handles[slot].take() {
            self.colliders.remove(
                handle,
                &mut self.islands,
                &mut self.bodies,
                &mut self.soft_bodies,
                false,
            );
            self.removed.push(handle);
        }
        Ok(())
    }

    // Rapier's candidates are filtered with the current filters and kinds at every update.
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
        self.rapier_events.clear();
        self.broad_phase.update(
            &self.params,
            &self.colliders,
            &self.bodies,
            &self.modified,
            &self.removed,
            &mut self.rapier_events,
        );
        self.modified.clear();
        for slot in self.modified_slots.drain(..) {
            self.is_modified[slot as usize] = false;
        }
        self.removed.clear();
        // Nobody runs rapier's pipeline, which would consume this list.
        drop(self.colliders.take_modified());
        for event in &self.rapier_events {
            match event {
                BroadPhasePairEvent::AddPair(pair) => {
                    let (a, b) = (self.slot_of(pair.collider1), self.slot_of(pair.collider2));
                    if self.candidates.insert(a, b).is_err() {
                        // More candidates than a pair set indexes: the update fails.
                        self.store.pairs_mut().refuse();
                    }
                }
                BroadPhasePairEvent::DeletePair(pair) => {
                    let (a, b) = (self.slot_of(pair.collider1), self.slot_of(pair.collider2));
                    self.candidates.remove(a, b);
                }
            }
        }

        let (proxies, pairs) = self.store.split_mut();
        pairs.begin_full();
        self.candidates.retain(|a, b| {
            let (a_, b_) = (a as usize, b as usize);
            if proxies.is_removed(a_) || proxies.is_removed(b_) {
                return false;
            }
            if proxies.is_pair(a_, b_) {
                pairs.mark(a, b);
            }
            true
        });
        pairs.end_full();
        self.store.finish(events)
    }

    fn set_pair_limit(&mut self, limit: Option<usize>) {
        self.store.pairs_mut().set_limit(limit);
    }

    fn clear(&mut self) {
        *self = Self {
            store: std::mem::take(&mut self.store),
            ..Self::new()
        };
        self.store.clear();
    }

    fn proxies(&self) -> &ProxyTable {
        self.store.proxies()
    }

    fn pair_set(&self) -> &PairSet {
        self.store.pair_set()
    }

    /// Estimate: rapier does not expose its capacities; counts our tables plus one
    /// collider, two BVH node halves and one pair-map entry per candidate, by their sizes.
    fn memory_bytes(&self) -> usize {
        let n = self.colliders.len();
        self.store.memory_bytes()
            + self.candidates.memory_bytes()
            + n * (std::mem::size_of::<rapier3d::geometry::Collider>()
                + 2 * std::mem::size_of::<parry3d::partitioning::BvhNode>())
            + self.candidates.len() * 24
            + self.handles.capacity() * std::mem::size_of::<Option<ColliderHandle>>()
            + self.slot_of_collider.capacity() * 4
    }
}
