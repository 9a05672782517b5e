//! The node storage both octrees share: flat node arrays with reused blocks of eight
//! children, the object list of each node, the outside list, and each slot's place.

use glam::Vec3;

use crate::{Aabb, Error, Result};

/// Largest accepted depth limit for both octrees (depths are stored in a byte, and cells
/// halve at each depth).
const MAX_DEPTH_LIMIT: u32 = 30;

/// `Ok` for a depth limit both octrees accept, else `InvalidOption(error)`.
pub(crate) fn check_depth_limit(max_depth: u32, error: &'static str) -> Result<()> {
    if max_depth > MAX_DEPTH_LIMIT {
        return Err(Error::InvalidOption(error));
    }
    Ok(())
}
/// "No node": a missing child, the root's parent, or a slot that is not stored.
pub(crate) const NO_NODE: u32 = u32::MAX;
/// `node_of` value of a box outside the root (kept in the outside list).
pub(crate) const OUTSIDE: u32 = u32::MAX - 1;

/// Octree nodes in flat arrays (children of a node are a block of 8 consecutive nodes, freed
/// blocks are reused), the object list of each node, the outside list, and each slot's place.
#[derive(Debug, Clone)]
pub(crate) struct OctreeNodes {
    /// The node's cell: the root cube split in halves at each depth.
    pub(crate) cell: Vec<Aabb>,
    /// The box every object of the node's subtree lies in: the cell, or the loose cell.
    pub(crate) bounds: Vec<Aabb>,
    /// The first of the node's 8 children (a block), or [`NO_NODE`] for a leaf.
    pub(crate) first_child: Vec<u32>,
    /// [`NO_NODE`] for the root.
    pub(crate) parent: Vec<u32>,
    /// 0 for the root.
    pub(crate) depth: Vec<u8>,
    /// The node's own object list (slots).
    pub(crate) items: Vec<Vec<u32>>,
    /// Objects in the node's subtree, its own list included.
    pub(crate) subtree: Vec<u32>,
    /// Bit `i` set when child `i` has a non-empty subtree, so walks skip empty children unseen.
    pub(crate) child_mask: Vec<u8>,
    /// First nodes of freed blocks of 8, reused by the next splits.
    free_blocks: Vec<u32>,
    /// Loose factor: node bounds are the cell scaled by it about the centre (1 = tight).
    looseness: f32,
    /// False until the root is first fitted, and again after [`OctreeNodes::clear`].
    pub(crate) has_root: bool,
    /// Outside-list length right after the root was last fitted.
    pub(crate) outside_after_fit: usize,
    /// Updates since the root was last checked for being oversized.
    pub(crate) updates_since_check: u32,
    /// Per slot: the node whose list holds it, [`OUTSIDE`], or [`NO_NODE`].
    pub(crate) node_of: Vec<u32>,
    /// Per slot: its index in that list.
    pub(crate) position: Vec<u32>,
    /// The boxes that do not fit in the root's bounds.
    pub(crate) outside: Vec<u32>,
    // Scratch: a traversal stack, the ancestors on a walk's way down, box centres.
    pub(crate) stack: Vec<u32>,
    pub(crate) path: Vec<u32>,
    pub(super) coordinates: Vec<f32>,
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
            updates_since_check: 0,
            node_of: Vec::new(),
            position: Vec::new(),
            outside: Vec::new(),
            stack: Vec::new(),
            path: Vec::new(),
            coordinates: Vec::new(),
        }
    }

    /// Room for `slots` slots in the per-slot arrays.
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

    /// Nodes in use (allocated minus freed).
    pub(crate) fn node_count(&self) -> usize {
        self.cell.len() - self.free_blocks.len() * 8
    }

    /// Nodes allocated, in use or kept for reuse.
    pub(crate) fn allocated_nodes(&self) -> usize {
        self.cell.len()
    }

    /// Empties the tree and forgets the root (capacities are kept).
    pub(crate) fn clear(&mut self) {
        self.reset(Aabb::new_unchecked(Vec3::ZERO, Vec3::ZERO));
        self.has_root = false;
    }

    /// Bytes of heap memory held (capacities).
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
