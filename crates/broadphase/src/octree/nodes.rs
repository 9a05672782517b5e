//! The node storage, object lists, root fitting, queries and statistics shared by the octree and
//! the loose octree.

use std::ops::ControlFlow;

use glam::Vec3;

use crate::backend::ProxyTable;
use crate::query::Ray;
use crate::{Aabb, CollisionFilter, ProxyId, RayHit};

pub(crate) const NO_NODE: u32 = u32::MAX;
/// `node_of` value of a box outside the root (kept in the outside list).
pub(crate) const OUTSIDE: u32 = u32::MAX - 1;
/// Bit marking a "leave node" entry on a traversal stack.
pub(crate) const LEAVE: u32 = 1 << 31;

/// Object-list statistics of one depth of an octree (compare the thesis's Fig. 4.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LevelStatistics {
    /// Depth (0 is the root).
    pub depth: u32,
    /// Nodes that exist at this depth.
    pub nodes: usize,
    /// Nodes at this depth whose own list is not empty.
    pub occupied_nodes: usize,
    /// Objects stored in the lists of this depth.
    pub objects: usize,
    /// The longest list at this depth.
    pub longest_list: usize,
}

impl LevelStatistics {
    /// Mean list length over the occupied nodes of this depth (0 when none).
    pub fn mean_list_length(&self) -> f64 {
        if self.occupied_nodes == 0 {
            0.0
        } else {
            self.objects as f64 / self.occupied_nodes as f64
        }
    }
}

/// Octree nodes in flat arrays (children of a node are a block of 8 consecutive nodes, freed
/// blocks are reused), the object list of each node, the outside list, and each slot's place.
#[derive(Debug, Clone)]
pub(crate) struct OctreeNodes {
    /// The node's cell: the root cube split in halves at each depth.
    pub(crate) cell: Vec<Aabb>,
    /// The box every object of the node's subtree lies in: the cell, or the loose cell.
    pub(crate) bounds: Vec<Aabb>,
    pub(crate) first_child: Vec<u32>,
    pub(crate) parent: Vec<u32>,
    pub(crate) depth: Vec<u8>,
    pub(crate) items: Vec<Vec<u32>>,
    /// Objects in the node's subtree, its own list included.
    pub(crate) subtree: Vec<u32>,
    /// Bit `i` set when child `i` has a non-empty subtree, so walks skip empty children unseen.
    pub(crate) child_mask: Vec<u8>,
    free_blocks: Vec<u32>,
    /// Loose factor: node bounds are the cell scaled by it about the centre (1 = tight).
    looseness: f32,
    pub(crate) has_root: bool,
    /// Outside-list length right after the root was last fitted.
    pub(crate) outside_after_fit: usize,
    // Per slot.
    pub(crate) node_of: Vec<u32>,
    pub(crate) position: Vec<u32>,
    pub(crate) outside: Vec<u32>,
    // Scratch.
    pub(crate) stack: Vec<u32>,
    pub(crate) path: Vec<u32>,
    coordinates: Vec<f32>,
}

impl OctreeNodes {
    pub(crate) fn new(looseness: f32) -> Self {
        Self {
            cell: Vec::new(),
            bounds: Vec::new(),
            first_child: Vec::new(),
            parent: Vec::new(),
            depth: Vec::new(),
            items: Vec::new(),
            subtree: Vec::new(),
            child_mask: Vec::new(),
            free_blocks: Vec::new(),
            looseness,
            has_root: false,
            outside_after_fit: 0,
            node_of: Vec::new(),
            position: Vec::new(),
            outside: Vec::new(),
            stack: Vec::new(),
            path: Vec::new(),
            coordinates: Vec::new(),
        }
    }

    pub(crate) fn grow_slots(&mut self, slots: usize) {
        if self.node_of.len() < slots {
            self.node_of.resize(slots, NO_NODE);
            self.position.resize(slots, 0);
        }
    }

    /// The node's cell grown by the loose factor about its centre, saturating at ±`f32::MAX`.
    pub(crate) fn loosen(&self, cell: &Aabb) -> Aabb {
        if self.looseness == 1.0 {
            return *cell;
        }
        let half = cell.max() * 0.5 - cell.min() * 0.5;
        let grow = half * (self.looseness - 1.0);
        let limit = Vec3::splat(f32::MAX);
        Aabb::new_unchecked(
            (cell.min() - grow).max(-limit),
            (cell.max() + grow).min(limit),
        )
    }

    /// Cell of child `octant` (bit 0: upper x half, bit 1: y, bit 2: z).
    pub(crate) fn child_cell(cell: &Aabb, octant: usize) -> Aabb {
        let center = cell.center();
        let pick = |axis: usize| {
            if octant >> axis & 1 == 1 {
                (center[axis], cell.max()[axis])
            } else {
                (cell.min()[axis], center[axis])
            }
        };
        let (x, y, z) = (pick(0), pick(1), pick(2));
        Aabb::new_unchecked(Vec3::new(x.0, y.0, z.0), Vec3::new(x.1, y.1, z.1))
    }

    fn push_node(&mut self, cell: Aabb, parent: u32, depth: u8) -> u32 {
        let bounds = self.loosen(&cell);
        self.cell.push(cell);
        self.bounds.push(bounds);
        self.first_child.push(NO_NODE);
        self.parent.push(parent);
        self.depth.push(depth);
        if self.items.len() < self.cell.len() {
            self.items.push(Vec::new());
        }
        self.subtree.push(0);
        self.child_mask.push(0);
        (self.cell.len() - 1) as u32
    }

    /// Empties the tree and makes `root` the root cell. Slots must be re-placed by the caller.
    pub(crate) fn reset(&mut self, root: Aabb) {
        for list in &mut self.items {
            list.clear();
        }
        self.cell.clear();
        self.bounds.clear();
        self.first_child.clear();
        self.parent.clear();
        self.depth.clear();
        self.subtree.clear();
        self.child_mask.clear();
        self.free_blocks.clear();
        self.outside.clear();
        self.node_of.iter_mut().for_each(|n| *n = NO_NODE);
        self.push_node(root, NO_NODE, 0);
        self.has_root = true;
    }

    /// Gives `node` its 8 children (reusing a freed block when there is one).
    pub(crate) fn split(&mut self, node: u32) {
        debug_assert_eq!(self.first_child[node as usize], NO_NODE);
        let cell = self.cell[node as usize];
        let depth = self.depth[node as usize] + 1;
        let first = match self.free_blocks.pop() {
            Some(first) => {
                for octant in 0..8 {
                    let child = first as usize + octant;
                    let child_cell = Self::child_cell(&cell, octant);
                    self.bounds[child] = self.loosen(&child_cell);
                    self.cell[child] = child_cell;
                    self.first_child[child] = NO_NODE;
                    self.parent[child] = node;
                    self.depth[child] = depth;
                    self.subtree[child] = 0;
                    self.child_mask[child] = 0;
                }
                first
            }
            None => {
                let first = self.cell.len() as u32;
                for octant in 0..8 {
                    self.push_node(Self::child_cell(&cell, octant), node, depth);
                }
                first
            }
        };
        self.first_child[node as usize] = first;
    }

    /// Frees every node below `node`; their lists must already be empty.
    pub(crate) fn free_children(&mut self, node: u32) {
        let first = self.first_child[node as usize];
        if first == NO_NODE {
            return;
        }
        for child in first..first + 8 {
            debug_assert!(self.items[child as usize].is_empty());
            self.free_children(child);
        }
        self.first_child[node as usize] = NO_NODE;
        self.child_mask[node as usize] = 0;
        self.free_blocks.push(first);
    }

    /// Adds `slot` to the list of `node` (or the outside list for [`OUTSIDE`]).
    pub(crate) fn add_item(&mut self, node: u32, slot: usize) {
        self.node_of[slot] = node;
        if node == OUTSIDE {
            self.position[slot] = self.outside.len() as u32;
            self.outside.push(slot as u32);
            return;
        }
        self.position[slot] = self.items[node as usize].len() as u32;
        self.items[node as usize].push(slot as u32);
        self.count_change(node, NO_NODE, true);
    }

    /// Adds or removes one object to the subtree counts from `node` up to `stop` (excluded),
    /// keeping the parents' child masks in step.
    fn count_change(&mut self, node: u32, stop: u32, added: bool) {
        let mut up = node;
        while up != stop {
            let u = up as usize;
            let before = self.subtree[u];
            self.subtree[u] = if added { before + 1 } else { before - 1 };
            let parent = self.parent[u];
            if parent != NO_NODE && (before == 0 || self.subtree[u] == 0) {
                let bit = 1u8 << (up - self.first_child[parent as usize]);
                self.child_mask[parent as usize] ^= bit;
            }
            up = parent;
        }
    }

    /// Takes `slot` out of its list; returns the node it was in (or `OUTSIDE`/`NO_NODE`).
    pub(crate) fn remove_item(&mut self, slot: usize) -> u32 {
        let node = self.node_of[slot];
        if node == NO_NODE {
            return node;
        }
        let at = self.position[slot] as usize;
        let list = if node == OUTSIDE {
            &mut self.outside
        } else {
            &mut self.items[node as usize]
        };
        list.swap_remove(at);
        if let Some(&moved) = list.get(at) {
            self.position[moved as usize] = at as u32;
        }
        self.node_of[slot] = NO_NODE;
        if node != OUTSIDE {
            self.count_change(node, NO_NODE, false);
        }
        node
    }

    /// Moves `slot` (in `from`'s list) to `to`'s list, `to` being a descendant of `from`.
    pub(crate) fn move_down(&mut self, slot: usize, from: u32, to: u32) {
        let at = self.position[slot] as usize;
        let list = &mut self.items[from as usize];
        list.swap_remove(at);
        if let Some(&moved) = list.get(at) {
            self.position[moved as usize] = at as u32;
        }
        self.position[slot] = self.items[to as usize].len() as u32;
        self.items[to as usize].push(slot as u32);
        self.node_of[slot] = to;
        self.count_change(to, from, true);
    }

    /// Fits a root cube around the bulk of the live boxes: the 5th to 95th percentile of their
    /// centres on each axis, grown by the mean finite box edge and then by half, so that far
    /// outliers stay in the outside list instead of stretching every cell.
    pub(crate) fn fit_root(&mut self, proxies: &ProxyTable) -> Aabb {
        let (mut edge_sum, mut edge_count) = (0f64, 0usize);
        for i in proxies.live_slots() {
            let edge = proxies.aabb(i).extents().max_element();
            if edge.is_finite() {
                edge_sum += edge as f64;
                edge_count += 1;
            }
        }
        let margin = if edge_count > 0 {
            edge_sum / edge_count as f64
        } else {
            0.0
        };
        let mut lo = [0f64; 3];
        let mut hi = [0f64; 3];
        for axis in 0..3 {
            self.coordinates.clear();
            self.coordinates
                .extend(proxies.live_slots().map(|i| proxies.aabb(i).center()[axis]));
            if self.coordinates.is_empty() {
                continue;
            }
            let last = self.coordinates.len() - 1;
            lo[axis] = *self
                .coordinates
                .select_nth_unstable_by(last / 20, f32::total_cmp)
                .1 as f64;
            hi[axis] = *self
                .coordinates
                .select_nth_unstable_by(last - last / 20, f32::total_cmp)
                .1 as f64;
        }
        let side = (0..3).map(|a| hi[a] - lo[a]).fold(0f64, f64::max) + 2.0 * margin;
        let half = if side > 0.0 { side * 0.75 } else { 1.0 };
        let limit = f32::MAX as f64;
        let corner = |sign: f64| {
            Vec3::from_array(
                [0, 1, 2]
                    .map(|a| ((lo[a] + hi[a]) * 0.5 + sign * half).clamp(-limit, limit) as f32),
            )
        };
        Aabb::new_unchecked(corner(-1.0), corner(1.0))
    }

    /// Depth-first walk over the nodes whose bounds pass `enter`, calling `visit` with each
    /// stored slot; stops when `visit` breaks.
    fn walk(
        &self,
        mut enter: impl FnMut(&Aabb) -> bool,
        mut visit: impl FnMut(usize) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        for &slot in &self.outside {
            visit(slot as usize)?;
        }
        if !self.has_root {
            return ControlFlow::Continue(());
        }
        let mut stack = Vec::with_capacity(64);
        stack.push(0u32);
        while let Some(node) = stack.pop() {
            let n = node as usize;
            if self.subtree[n] == 0 || !enter(&self.bounds[n]) {
                continue;
            }
            for &slot in &self.items[n] {
                visit(slot as usize)?;
            }
            self.push_occupied_children(node, &mut stack);
        }
        ControlFlow::Continue(())
    }

    /// Box query over the stored boxes (exact test against the current boxes).
    pub(crate) fn query_aabb(
        &self,
        proxies: &ProxyTable,
        aabb: &Aabb,
        filter: CollisionFilter,
        visitor: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) {
        let _ = self.walk(
            |bounds| bounds.overlaps(aabb),
            |slot| {
                if proxies.is_live(slot)
                    && proxies.filter(slot).allows(filter)
                    && proxies.aabb(slot).overlaps(aabb)
                {
                    visitor(proxies.id(slot))
                } else {
                    ControlFlow::Continue(())
                }
            },
        );
    }

    /// Ray cast pruned by the node bounds (the exact slab test is monotone, so a node the ray
    /// misses holds no box it hits).
    pub(crate) fn raycast(
        &self,
        proxies: &ProxyTable,
        ray: &Ray,
        filter: CollisionFilter,
        visitor: &mut dyn FnMut(RayHit) -> ControlFlow<()>,
    ) {
        let _ = self.walk(
            |bounds| ray.hit_distance(bounds).is_some(),
            |slot| {
                if !proxies.is_live(slot) || !proxies.filter(slot).allows(filter) {
                    return ControlFlow::Continue(());
                }
                match ray.hit_distance(proxies.aabb(slot)) {
                    Some(distance) => visitor(RayHit {
                        id: proxies.id(slot),
                        distance,
                    }),
                    None => ControlFlow::Continue(()),
                }
            },
        );
    }

    /// Pushes the children of `node` whose subtree is not empty.
    #[inline]
    pub(crate) fn push_occupied_children(&self, node: u32, stack: &mut Vec<u32>) {
        let mut mask = self.child_mask[node as usize];
        let first = self.first_child[node as usize];
        while mask != 0 {
            stack.push(first + mask.trailing_zeros());
            mask &= mask - 1;
        }
    }

    /// List statistics per depth, root first.
    pub(crate) fn level_statistics(&self) -> Vec<LevelStatistics> {
        let mut levels: Vec<LevelStatistics> = Vec::new();
        if !self.has_root {
            return levels;
        }
        let mut stack = vec![0u32];
        while let Some(node) = stack.pop() {
            let n = node as usize;
            let depth = self.depth[n] as usize;
            while levels.len() <= depth {
                levels.push(LevelStatistics {
                    depth: levels.len() as u32,
                    ..Default::default()
                });
            }
            let level = &mut levels[depth];
            let length = self.items[n].len();
            level.nodes += 1;
            level.objects += length;
            level.occupied_nodes += (length > 0) as usize;
            level.longest_list = level.longest_list.max(length);
            let first = self.first_child[n];
            if first != NO_NODE {
                stack.extend(first..first + 8);
            }
        }
        levels
    }

    /// Checks every structural invariant against `proxies` right after an update: subtree
    /// counts and child masks, parent links, list positions, and every stored box inside its
    /// node's bounds. Panics with a description of the first violation.
    #[cfg(test)]
    pub(crate) fn validate(&self, proxies: &ProxyTable) {
        for (i, &slot) in self.outside.iter().enumerate() {
            assert_eq!(self.node_of[slot as usize], OUTSIDE, "outside slot {slot}");
            assert_eq!(self.position[slot as usize] as usize, i);
        }
        let mut stored = self.outside.len();
        if self.has_root {
            let mut stack = vec![0u32];
            while let Some(node) = stack.pop() {
                let n = node as usize;
                let mut count = self.items[n].len() as u32;
                for (i, &slot) in self.items[n].iter().enumerate() {
                    let s = slot as usize;
                    assert_eq!(
                        (self.node_of[s], self.position[s] as usize),
                        (node, i),
                        "slot {slot}"
                    );
                    assert!(proxies.is_live(s), "dead slot {slot} in node {node}");
                    assert!(
                        self.bounds[n].contains(proxies.aabb(s)),
                        "slot {slot} outside node {node}"
                    );
                }
                let first = self.first_child[n];
                if first != NO_NODE {
                    for child in first..first + 8 {
                        let c = child as usize;
                        assert_eq!(self.parent[c], node);
                        assert_eq!(self.depth[c], self.depth[n] + 1);
                        assert!(
                            self.bounds[n].contains(&self.bounds[c]),
                            "child {child} not nested"
                        );
                        let bit = self.child_mask[n] >> (child - first) & 1 == 1;
                        assert_eq!(bit, self.subtree[c] > 0, "mask bit of child {child}");
                        count += self.subtree[c];
                        stack.push(child);
                    }
                } else {
                    assert_eq!(self.child_mask[n], 0);
                }
                assert_eq!(self.subtree[n], count, "subtree count of node {node}");
            }
            stored += self.subtree[0] as usize;
        }
        assert_eq!(stored, proxies.len(), "every live proxy is stored once");
    }

    /// Nodes in use (allocated minus freed).
    pub(crate) fn node_count(&self) -> usize {
        self.cell.len() - self.free_blocks.len() * 8
    }

    /// Nodes allocated, in use or kept for reuse.
    pub(crate) fn allocated_nodes(&self) -> usize {
        self.cell.len()
    }

    pub(crate) fn clear(&mut self) {
        self.reset(Aabb::new_unchecked(Vec3::ZERO, Vec3::ZERO));
        self.has_root = false;
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        let aabb = std::mem::size_of::<Aabb>();
        (self.cell.capacity() + self.bounds.capacity()) * aabb
            + (self.first_child.capacity() + self.parent.capacity() + self.subtree.capacity()) * 4
            + self.depth.capacity()
            + self.child_mask.capacity()
            + self.items.capacity() * std::mem::size_of::<Vec<u32>>()
            + self.items.iter().map(|l| l.capacity() * 4).sum::<usize>()
            + (self.free_blocks.capacity()
                + self.node_of.capacity()
                + self.position.capacity()
                + self.outside.capacity()
                + self.stack.capacity()
                + self.path.capacity()
                + self.coordinates.capacity())
                * 4
    }
}
