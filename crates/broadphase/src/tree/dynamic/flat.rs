//! A read-only copy of a [`DynamicTree`]'s shape laid out for pair traversals, with boxes
//! the caller chooses for the leaves (the exact boxes, say, where the tree holds enlarged
//! ones).
//!
//! The tree keeps its leaves in a table indexed by leaf id, so that a broad phase needs no
//! map from proxy to leaf; a traversal that meets every leaf then reads that table in
//! proxy order, at random. The copy stores each node's two child boxes in the node
//! itself, nodes and leaves in depth-first order, as parry's BVH does: a pair of nodes is
//! two loads, and the leaves of a subtree are adjacent.

use super::{is_leaf, leaf_id, DynamicTree, NULL};
use crate::tree::TraversalStack;
use crate::{Aabb, CollisionFilter};

/// Marks a child reference of a [`FlatTree`] as an index into its leaves.
const FLAT_LEAF: u32 = 1 << 31;

/// A node: the boxes of its two children and their references (a node index, or a leaf
/// index with [`FLAT_LEAF`] set).
#[derive(Debug, Clone, Copy)]
struct FlatNode {
    boxes: [Aabb; 2],
    children: [u32; 2],
}

/// A [`DynamicTree`]'s shape with chosen leaf boxes, for the self and cross pair
/// traversals; see the module docs. Keeps its allocations from one copy to the next.
#[derive(Debug, Clone, Default)]
pub(crate) struct FlatTree {
    /// Internal nodes in depth-first order: a child's index exceeds its parent's.
    nodes: Vec<FlatNode>,
    /// The leaves' boxes, ids and filters, in depth-first order.
    leaf_boxes: Vec<Aabb>,
    leaf_ids: Vec<u32>,
    leaf_filters: Vec<CollisionFilter>,
    /// The root's reference, or `NULL` when empty.
    root: u32,
    /// Scratch of the copy: (tree child reference, parent node, side).
    work: Vec<(u32, u32, u8)>,
}

impl FlatTree {
    /// An empty copy.
    pub(crate) fn new() -> Self {
        Self {
            root: NULL,
            ..Self::default()
        }
    }

    /// Copies `tree`'s shape, giving each leaf the box and filter `leaf(leaf id)`; every
    /// internal box is the union of its children's. O(n).
    pub(crate) fn copy_of(
        &mut self,
        tree: &DynamicTree,
        mut leaf: impl FnMut(u32) -> (Aabb, CollisionFilter),
    ) {
        self.nodes.clear();
        self.leaf_boxes.clear();
        self.leaf_ids.clear();
        self.leaf_filters.clear();
        self.root = NULL;
        if tree.root == NULL {
            return;
        }
        let placeholder = FlatNode {
            boxes: [Aabb::new_unchecked(glam::Vec3::ZERO, glam::Vec3::ZERO); 2],
            children: [NULL; 2],
        };
        let mut work = std::mem::take(&mut self.work);
        work.clear();
        work.push((tree.root, NULL, 0));
        while let Some((child, parent, side)) = work.pop() {
            let reference = if is_leaf(child) {
                let id = leaf_id(child);
                let (aabb, filter) = leaf(id);
                self.leaf_ids.push(id);
                self.leaf_boxes.push(aabb);
                self.leaf_filters.push(filter);
                (self.leaf_ids.len() - 1) as u32 | FLAT_LEAF
            } else {
                let index = self.nodes.len() as u32;
                self.nodes.push(placeholder);
                let [a, b] = tree.nodes[child as usize].children;
                // The first child is taken first, so it comes first in the order.
                work.push((b, index, 1));
                work.push((a, index, 0));
                index
            };
            if parent == NULL {
                self.root = reference;
            } else {
                self.nodes[parent as usize].children[side as usize] = reference;
            }
        }
        self.work = work;
        // Children after their parents: in reverse, every child's box is known.
        for index in (0..self.nodes.len()).rev() {
            for side in 0..2 {
                let child = self.nodes[index].children[side];
                self.nodes[index].boxes[side] = self.box_of(child);
            }
        }
    }

    /// Bytes allocated.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<FlatNode>()
            + self.leaf_boxes.capacity() * std::mem::size_of::<Aabb>()
            + self.leaf_ids.capacity() * 4
            + self.leaf_filters.capacity() * std::mem::size_of::<CollisionFilter>()
            + self.work.capacity() * std::mem::size_of::<(u32, u32, u8)>()
    }

    /// The box of a child reference whose box is known.
    #[inline]
    fn box_of(&self, child: u32) -> Aabb {
        if child & FLAT_LEAF != 0 {
            self.leaf_boxes[(child & !FLAT_LEAF) as usize]
        } else {
            let [a, b] = self.nodes[child as usize].boxes;
            a.union(&b)
        }
    }

    /// Calls `visitor(x, y)` with the ids of every unordered pair of distinct leaves whose
    /// boxes overlap and whose filters allow each other, once each.
    pub(crate) fn self_pairs(
        &self,
        stack: &mut TraversalStack<(u32, u32)>,
        mut visitor: impl FnMut(u32, u32),
    ) {
        if self.root == NULL || self.root & FLAT_LEAF != 0 {
            return;
        }
        stack.clear();
        stack.push((self.root, self.root));
        while let Some((x, y)) = stack.pop() {
            if x != y {
                descend(self, self, x, y, stack, &mut visitor);
                continue;
            }
            // A node against itself: its children against each other and each against
            // itself.
            let node = &self.nodes[x as usize];
            let [a, b] = node.children;
            if node.boxes[0].overlaps(&node.boxes[1]) {
                meet(self, self, a, b, stack, &mut visitor);
            }
            for child in [a, b] {
                if child & FLAT_LEAF == 0 {
                    stack.push((child, child));
                }
            }
        }
    }

    /// Calls `visitor(leaf of self, leaf of other)` with the ids of every pair across the
    /// two copies whose boxes overlap and whose filters allow each other.
    pub(crate) fn pairs_with(
        &self,
        other: &FlatTree,
        stack: &mut TraversalStack<(u32, u32)>,
        mut visitor: impl FnMut(u32, u32),
    ) {
        if self.root == NULL || other.root == NULL {
            return;
        }
        if !self.box_of(self.root).overlaps(&other.box_of(other.root)) {
            return;
        }
        stack.clear();
        meet(self, other, self.root, other.root, stack, &mut visitor);
        while let Some((x, y)) = stack.pop() {
            descend(self, other, x, y, stack, &mut visitor);
        }
    }
}

/// Two children whose boxes overlap: reported if both are leaves that may pair, else left
/// for later.
#[inline]
fn meet(
    left: &FlatTree,
    right: &FlatTree,
    x: u32,
    y: u32,
    stack: &mut TraversalStack<(u32, u32)>,
    visitor: &mut impl FnMut(u32, u32),
) {
    if x & y & FLAT_LEAF != 0 {
        let (x, y) = ((x & !FLAT_LEAF) as usize, (y & !FLAT_LEAF) as usize);
        if left.leaf_filters[x].allows(right.leaf_filters[y]) {
            visitor(left.leaf_ids[x], right.leaf_ids[y]);
        }
    } else {
        stack.push((x, y));
    }
}

/// A pair of overlapping children, not both leaves, one from each copy: the children of
/// the nodes among them tested against each other (both split at once, as in [Zych16,
/// listing 2.7]).
#[inline]
fn descend(
    left: &FlatTree,
    right: &FlatTree,
    x: u32,
    y: u32,
    stack: &mut TraversalStack<(u32, u32)>,
    visitor: &mut impl FnMut(u32, u32),
) {
    match (x & FLAT_LEAF != 0, y & FLAT_LEAF != 0) {
        (true, _) => {
            let leaf = left.leaf_boxes[(x & !FLAT_LEAF) as usize];
            let node = &right.nodes[y as usize];
            for side in 0..2 {
                if leaf.overlaps(&node.boxes[side]) {
                    meet(left, right, x, node.children[side], stack, visitor);
                }
            }
        }
        (false, true) => {
            let leaf = right.leaf_boxes[(y & !FLAT_LEAF) as usize];
            let node = &left.nodes[x as usize];
            for side in 0..2 {
                if node.boxes[side].overlaps(&leaf) {
                    meet(left, right, node.children[side], y, stack, visitor);
                }
            }
        }
        (false, false) => {
            let (a, b) = (&left.nodes[x as usize], &right.nodes[y as usize]);
            for i in 0..2 {
                for j in 0..2 {
                    if a.boxes[i].overlaps(&b.boxes[j]) {
                        meet(left, right, a.children[i], b.children[j], stack, visitor);
                    }
                }
            }
        }
    }
}
