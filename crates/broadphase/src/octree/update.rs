//! The update both octrees run, written once: removals, the first root fit, moves, the refit
//! rule and the pair recompute, in that order, with a [`Placement`] for what differs.

use crate::backend::ProxyTable;
use crate::octree::base::OctreeBase;
use crate::octree::nodes::{OctreeNodes, NO_NODE, OUTSIDE};
use crate::octree::pairs::PairMarker;
use crate::{Aabb, PairEvents};

/// What differs between the octrees: where a box goes among the nodes, how the tree grows on
/// the way and shrinks when boxes leave, and how the stored boxes are paired. The
/// [`Octree`](crate::Octree) puts a box in the smallest node containing it and splits full
/// leaves; the [`LooseOctree`](crate::LooseOctree) puts it by its size and centre, creating
/// the nodes on its way.
///
/// Every method sees only boxes inside the root's bounds; the outside list is handled by
/// [`OctreeBase`].
pub(crate) trait Placement {
    /// Node bounds are the cells scaled by this about their centres: 1 for the tight octree,
    /// 2 for the loose one.
    const LOOSENESS: f32;

    /// Stores `slot`, whose box is `aabb`, in the list of the node it belongs in, creating or
    /// splitting nodes as the rule wants.
    fn place(&mut self, nodes: &mut OctreeNodes, proxies: &ProxyTable, slot: usize, aabb: &Aabb);

    /// The existing node a box `aabb` belongs in, or `None` when placing it would create nodes
    /// (then it cannot be where it belongs yet).
    fn existing_target(&self, nodes: &OctreeNodes, aabb: &Aabb) -> Option<u32>;

    /// Shrinks the tree after a box left the list of `node`.
    fn prune(&mut self, nodes: &mut OctreeNodes, node: u32);

    /// Marks every overlapping pair of boxes stored in the tree (the root exists).
    fn mark_tree_pairs(&mut self, nodes: &mut OctreeNodes, marker: PairMarker<'_>);

    /// Bytes of heap memory the rule holds itself.
    fn memory_bytes(&self) -> usize {
        0
    }
}

impl<P: Placement> OctreeBase<P> {
    /// Brings the tree and the pair set up to date and writes the pair events.
    ///
    /// The order is fixed: removed boxes leave their lists first (so that the tree shrinks
    /// before anything is placed), then the root is fitted if there is none yet, then the
    /// boxes inserted or moved since the last update that no longer belong where they are
    /// are placed again, then the refit rule may rebuild the tree, and last every pair is
    /// recomputed: the tree's by the placement's walk, then the outside list's.
    pub(crate) fn try_update(&mut self, events: &mut PairEvents) -> crate::Result<()> {
        for k in 0..self.store.proxies.removed_slots().len() {
            let slot = self.store.proxies.removed_slots()[k] as usize;
            self.unplace(slot);
        }
        if !self.nodes.has_root && !self.store.proxies.is_empty() {
            // The fit places every box, so the moves are done too.
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
        if self.nodes.root_outgrown(self.store.proxies.len())
            || self.nodes.root_oversized(&self.store.proxies)
        {
            self.rebuild();
        }
        self.store.pairs.begin_full();
        if self.nodes.has_root {
            let marker = PairMarker {
                proxies: &self.store.proxies,
                pairs: &mut self.store.pairs,
            };
            self.placement.mark_tree_pairs(&mut self.nodes, marker);
        }
        PairMarker {
            proxies: &self.store.proxies,
            pairs: &mut self.store.pairs,
        }
        .outside_pairs(&self.nodes);
        self.store.pairs.end_full();
        self.store.finish(events)
    }

    /// The existing node `aabb` belongs in: [`OUTSIDE`] beyond the root's bounds, `None` when
    /// placing it would create nodes.
    fn existing_target(&self, aabb: &Aabb) -> Option<u32> {
        if !self.nodes.bounds[0].contains(aabb) {
            return Some(OUTSIDE);
        }
        self.placement.existing_target(&self.nodes, aabb)
    }

    /// Stores a live `slot` in the outside list or, inside the root, where the placement says.
    fn place(&mut self, slot: usize) {
        let aabb = *self.store.proxies.aabb(slot);
        if !self.nodes.bounds[0].contains(&aabb) {
            self.nodes.add_item(OUTSIDE, slot);
            return;
        }
        self.placement
            .place(&mut self.nodes, &self.store.proxies, slot, &aabb);
    }

    /// Takes `slot` out of its list, and lets the placement shrink the tree if it was in one.
    fn unplace(&mut self, slot: usize) {
        let node = self.nodes.remove_item(slot);
        if node != NO_NODE && node != OUTSIDE {
            self.placement.prune(&mut self.nodes, node);
        }
    }

    /// Fits a new root around the current boxes and places them all again.
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
}
