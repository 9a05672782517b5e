//! What both octrees keep besides their placement rule (proxies and pairs, nodes, the boxes
//! moved since the last update) and their [`BroadPhase`](crate::BroadPhase) implementation,
//! written once.

use crate::backend::ProxyStore;
use crate::octree::nodes::OctreeNodes;
use crate::octree::update::Placement;
use crate::util::MoveBuffer;
use crate::{Aabb, CollisionFilter, ProxyId, ProxyKind, Result};

/// The state of an octree with placement rule `P`; [`Octree`](crate::Octree) and
/// [`LooseOctree`](crate::LooseOctree) each hold one and hand it every call.
#[derive(Debug, Clone)]
pub(crate) struct OctreeBase<P> {
    pub(super) store: ProxyStore,
    pub(super) nodes: OctreeNodes,
    /// Proxies inserted or moved since the last update.
    pub(super) moved: MoveBuffer,
    pub(super) placement: P,
}

impl<P: Placement> OctreeBase<P> {
    /// An empty octree placing boxes by `placement`.
    pub(crate) fn new(placement: P) -> Self {
        Self {
            store: ProxyStore::new(),
            nodes: OctreeNodes::new(P::LOOSENESS),
            moved: MoveBuffer::default(),
            placement,
        }
    }

    /// [`BroadPhase::insert`](crate::BroadPhase::insert): the new box is placed at the next
    /// update, as a moved one.
    pub(crate) fn insert(
        &mut self,
        aabb: Aabb,
        kind: ProxyKind,
        filter: CollisionFilter,
        key: u64,
    ) -> Result<ProxyId> {
        let id = self.store.insert_keyed(aabb, kind, filter, key)?;
        let slots = self.store.proxies.slot_count();
        self.nodes.grow_slots(slots);
        self.moved.grow(slots);
        self.moved.mark(id.index() as usize);
        Ok(id)
    }

    /// [`BroadPhase::set_aabb`](crate::BroadPhase::set_aabb): the box is re-placed at the
    /// next update if it left its node.
    pub(crate) fn set_aabb(&mut self, id: ProxyId, aabb: Aabb) -> Result<()> {
        if let Some(slot) = self.store.set_aabb(id, aabb)? {
            self.moved.mark(slot);
        }
        Ok(())
    }

    /// [`BroadPhase::remove_with`](crate::BroadPhase::remove_with): the box leaves its list
    /// at the next update.
    pub(crate) fn remove(&mut self, id: ProxyId, report: bool) -> Result<()> {
        self.store.remove(id, report).map(|_| ())
    }

    /// Removes every box and forgets the root.
    pub(crate) fn clear(&mut self) {
        self.store.clear();
        self.nodes.clear();
        self.moved.clear();
    }

    /// Bytes of heap memory held (capacities).
    pub(crate) fn memory_bytes(&self) -> usize {
        self.store.memory_bytes()
            + self.nodes.memory_bytes()
            + self.moved.memory_bytes()
            + self.placement.memory_bytes()
    }
}

/// Gives `$octree`, a struct whose only field `base` is an [`OctreeBase`], tuned by `$options`
/// (which have a `check` for their ranges and give the `placement`): its constructors and
/// `Default`, the inspection methods both octrees offer, and its
/// [`BroadPhase`](crate::BroadPhase) (named `$name`) and [`Candidate`](crate::Candidate)
/// implementations, each call handed to the base. One definition, not a copy per octree.
macro_rules! octree_broad_phase {
    ($octree:ident, $options:ident, $name:literal) => {
        impl Default for $octree {
            fn default() -> Self {
                Self::new()
            }
        }

        impl $octree {
            #[doc = concat!("With the default options ([`", stringify!($options), "::default`]).")]
            pub fn new() -> Self {
                let placement = $options::default().placement();
                Self {
                    base: $crate::octree::base::OctreeBase::new(placement),
                }
            }

            /// Tuned by `options`; `InvalidOption` when one is out of range.
            pub fn with_options(options: &$options) -> $crate::Result<Self> {
                options.check()?;
                Ok(Self {
                    base: $crate::octree::base::OctreeBase::new(options.placement()),
                })
            }

            /// Object-list statistics per depth as of the last update, root first (the outside
            /// list is not included: see [`Self::outside_count`]).
            pub fn level_statistics(&self) -> Vec<$crate::octree::LevelStatistics> {
                self.base.nodes.level_statistics()
            }

            /// Number of boxes outside the root node's bounds, kept in the outside list and
            /// tested against every box.
            pub fn outside_count(&self) -> usize {
                self.base.nodes.outside.len()
            }

            /// Nodes in use.
            pub fn node_count(&self) -> usize {
                self.base.nodes.node_count()
            }

            /// Nodes allocated, in use or kept for reuse.
            pub fn allocated_nodes(&self) -> usize {
                self.base.nodes.allocated_nodes()
            }
        }

        impl $crate::BroadPhase for $octree {
            fn name(&self) -> &'static str {
                $name
            }

            fn insert_keyed(
                &mut self,
                aabb: $crate::Aabb,
                kind: $crate::ProxyKind,
                filter: $crate::CollisionFilter,
                key: u64,
            ) -> $crate::Result<$crate::ProxyId> {
                self.base.insert(aabb, kind, filter, key)
            }

            fn set_aabb(&mut self, id: $crate::ProxyId, aabb: $crate::Aabb) -> $crate::Result<()> {
                self.base.set_aabb(id, aabb)
            }

            fn remove_with(&mut self, id: $crate::ProxyId, report: bool) -> $crate::Result<()> {
                self.base.remove(id, report)
            }

            fn set_filter(
                &mut self,
                id: $crate::ProxyId,
                filter: $crate::CollisionFilter,
            ) -> $crate::Result<()> {
                self.base.store.set_filter(id, filter).map(|_| ())
            }

            // The octrees place boxes by size and position only.
            fn set_kind(
                &mut self,
                id: $crate::ProxyId,
                kind: $crate::ProxyKind,
            ) -> $crate::Result<()> {
                self.base.store.set_kind(id, kind).map(|_| ())
            }

            fn try_update(&mut self, events: &mut $crate::PairEvents) -> $crate::Result<()> {
                self.base.try_update(events)
            }

            fn clear(&mut self) {
                self.base.clear();
            }

            $crate::backend::store_accessors!(base.store);

            fn memory_bytes(&self) -> usize {
                self.base.memory_bytes()
            }

            fn query_aabb_with(
                &self,
                aabb: &$crate::Aabb,
                filter: $crate::CollisionFilter,
                visitor: &mut dyn FnMut($crate::ProxyId) -> std::ops::ControlFlow<()>,
            ) {
                let base = &self.base;
                base.nodes
                    .query_aabb(&base.store.proxies, aabb, filter, visitor);
            }

            fn raycast_with(
                &self,
                ray: &$crate::Ray,
                filter: $crate::CollisionFilter,
                visitor: &mut dyn FnMut($crate::RayHit) -> std::ops::ControlFlow<()>,
            ) {
                let base = &self.base;
                base.nodes
                    .raycast(&base.store.proxies, ray, filter, visitor);
            }
        }

        $crate::backend::impl_candidate!($octree, base.store);
    };
}

pub(crate) use octree_broad_phase;
