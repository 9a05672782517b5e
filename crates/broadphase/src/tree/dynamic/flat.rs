//! A read-only copy of a [`DynamicTree`]'s shape laid out for pair traversals, with boxes
//! the caller chooses for the leaves (the exact boxes, say, where the tree holds enlarged
//! ones).
//!
//! The tree keeps its leaves in a table indexed by leaf id, so that a broad phase needs no
//! map from proxy to leaf; a traversal that meets every leaf then reads that table in
//! proxy order, at random. The copy stores each node's two child boxes in the node
//! itself, nodes and leaves in depth-first order, as parry's BVH does: a pair of nodes is
//! two loads, and the leaves of a subtree are adjacent. Subtrees of at most four leaves
//! become buckets, runs of adjacent leaves whose pairs with another bucket are tested one by
//! one: in a dense scene most leaf pairs lie at the bottom of the tree, where a node pair
//! per leaf pair costs more than the tests it saves.

use super::{is_leaf, leaf_id, DynamicTree, NULL};
use crate::tree::TraversalStack;
use crate::{Aabb, CollisionFilter};
use glam::Vec3A;

/// Marks a child reference of a [`FlatTree`] as a bucket: a run of at most [`BUCKET`]
/// adjacent leaves (see the module docs).
const BUCKET_BIT: u32 = 1 << 31;

/// Bits of a bucket reference that hold its leaf count minus one; the bits above, below
/// [`BUCKET_BIT`], hold the index of its first leaf.
const COUNT_BITS: u32 = 2;
/// The most leaves of a bucket: those of a subtree of height 2 at most.
const BUCKET: u32 = 1 << COUNT_BITS;
/// Leaves a copy can hold: bucket references index them with the bits left.
pub(crate) const MAX_FLAT_LEAVES: usize = 1 << (31 - COUNT_BITS);

/// A box with its corners in SIMD lanes, so that an overlap test is two vector comparisons
/// and one branch: the traversal's tests are about as likely to pass as to fail, and one
/// branch mispredicts less often than up to six.
#[derive(Debug, Clone, Copy)]
struct FlatBox {
    min: Vec3A,
    max: Vec3A,
}

impl FlatBox {
    const EMPTY: FlatBox = FlatBox {
        min: Vec3A::ZERO,
        max: Vec3A::ZERO,
    };

    #[inline]
    fn of(aabb: &Aabb) -> Self {
        Self {
            min: aabb.min().into(),
            max: aabb.max().into(),
        }
    }

    #[inline]
    fn union(&self, other: &FlatBox) -> FlatBox {
        FlatBox {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }
}

/// Whether two closed boxes overlap.
#[inline(always)]
fn overlap(a: &FlatBox, b: &FlatBox) -> bool {
    (a.min.cmple(b.max) & b.min.cmple(a.max)).all()
}

/// The leaves of a bucket reference, as a range of leaf indices.
#[inline]
fn bucket(reference: u32) -> std::ops::Range<usize> {
    let first = ((reference & !BUCKET_BIT) >> COUNT_BITS) as usize;
    first..first + (reference & (BUCKET - 1)) as usize + 1
}

/// A node: the boxes of its two children and their references (a node index, or a bucket).
#[derive(Debug, Clone, Copy)]
struct FlatNode {
    boxes: [FlatBox; 2],
    children: [u32; 2],
}

/// A [`DynamicTree`]'s shape with chosen leaf boxes, for the self and cross pair
/// traversals; see the module docs. Keeps its allocations from one copy to the next.
#[derive(Debug, Clone, Default)]
pub(crate) struct FlatTree {
    /// Internal nodes above the buckets, in depth-first order: a child's index exceeds its
    /// parent's.
    nodes: Vec<FlatNode>,
    /// The leaves' boxes, ids and filters, in depth-first order.
    leaf_boxes: Vec<FlatBox>,
    leaf_ids: Vec<u32>,
    leaf_filters: Vec<CollisionFilter>,
    /// The root's reference, or `NULL` when empty.
    root: u32,
    /// Scratch of the copy: (tree child reference, parent node, side).
    work: Vec<(u32, u32, u8)>,
    bucket_work: Vec<u32>,
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
    /// internal box is the union of its children's. O(n). The tree holds at most
    /// [`MAX_FLAT_LEAVES`] leaves.
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
        debug_assert!(tree.len() <= MAX_FLAT_LEAVES);
        let placeholder = FlatNode {
            boxes: [FlatBox::EMPTY; 2],
            children: [NULL; 2],
        };
        let mut work = std::mem::take(&mut self.work);
        let mut bucket_work = std::mem::take(&mut self.bucket_work);
        work.clear();
        work.push((tree.root, NULL, 0));
        while let Some((child, parent, side)) = work.pop() {
            let reference = if is_leaf(child) || tree.nodes[child as usize].height() <= 2 {
                // A subtree of at most four leaves: its leaves in a run.
                let first = self.leaf_ids.len();
                bucket_work.clear();
                bucket_work.push(child);
                while let Some(next) = bucket_work.pop() {
                    if is_leaf(next) {
                        let id = leaf_id(next);
                        let (aabb, filter) = leaf(id);
                        self.leaf_ids.push(id);
                        self.leaf_boxes.push(FlatBox::of(&aabb));
                        self.leaf_filters.push(filter);
                    } else {
                        let [a, b] = tree.nodes[next as usize].children;
                        bucket_work.push(b);
                        bucket_work.push(a);
                    }
                }
                let count = (self.leaf_ids.len() - first) as u32;
                BUCKET_BIT | (first as u32) << COUNT_BITS | (count - 1)
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
        self.bucket_work = bucket_work;
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
            + self.leaf_boxes.capacity() * std::mem::size_of::<FlatBox>()
            + self.leaf_ids.capacity() * 4
            + self.leaf_filters.capacity() * std::mem::size_of::<CollisionFilter>()
            + self.work.capacity() * std::mem::size_of::<(u32, u32, u8)>()
            + self.bucket_work.capacity() * 4
    }

    /// The box of a child reference whose box is known.
    #[inline]
    fn box_of(&self, child: u32) -> FlatBox {
        if child & BUCKET_BIT != 0 {
            let leaves = &self.leaf_boxes[bucket(child)];
            leaves[1..]
                .iter()
                .fold(leaves[0], |union, aabb| union.union(aabb))
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
        if self.root == NULL {
            return;
        }
        if self.root & BUCKET_BIT != 0 {
            self.bucket_pairs(self.root, &mut visitor);
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
            if overlap(&node.boxes[0], &node.boxes[1]) {
                meet(self, self, a, b, stack, &mut visitor);
            }
            for child in [a, b] {
                if child & BUCKET_BIT == 0 {
                    stack.push((child, child));
                } else {
                    self.bucket_pairs(child, &mut visitor);
                }
            }
        }
    }

    /// The pairs within a bucket.
    #[inline]
    fn bucket_pairs(&self, reference: u32, visitor: &mut impl FnMut(u32, u32)) {
        let range = bucket(reference);
        for i in range.clone() {
            for j in i + 1..range.end {
                if overlap(&self.leaf_boxes[i], &self.leaf_boxes[j])
                    && self.leaf_filters[i].allows(self.leaf_filters[j])
                {
                    visitor(self.leaf_ids[i], self.leaf_ids[j]);
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
        if !overlap(&self.box_of(self.root), &other.box_of(other.root)) {
            return;
        }
        stack.clear();
        meet(self, other, self.root, other.root, stack, &mut visitor);
        while let Some((x, y)) = stack.pop() {
            descend(self, other, x, y, stack, &mut visitor);
        }
    }
}

/// Two children whose boxes overlap: the pairs of two buckets tested at once, other pairs
/// left for later.
#[inline]
fn meet(
    left: &FlatTree,
    right: &FlatTree,
    x: u32,
    y: u32,
    stack: &mut TraversalStack<(u32, u32)>,
    visitor: &mut impl FnMut(u32, u32),
) {
    if x & y & BUCKET_BIT == 0 {
        stack.push((x, y));
        return;
    }
    for i in bucket(x) {
        let (aabb, filter) = (&left.leaf_boxes[i], left.leaf_filters[i]);
        for j in bucket(y) {
            if overlap(aabb, &right.leaf_boxes[j]) && filter.allows(right.leaf_filters[j]) {
                visitor(left.leaf_ids[i], right.leaf_ids[j]);
            }
        }
    }
}

/// A pair of overlapping children, not both buckets, one from each copy: the children of
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
    match (x & BUCKET_BIT != 0, y & BUCKET_BIT != 0) {
        (true, _) => {
            let leaf = left.box_of(x);
            let node = &right.nodes[y as usize];
            for side in 0..2 {
                if overlap(&leaf, &node.boxes[side]) {
                    meet(left, right, x, node.children[side], stack, visitor);
                }
            }
        }
        (false, true) => {
            let leaf = right.box_of(y);
            let node = &left.nodes[x as usize];
            for side in 0..2 {
                if overlap(&node.boxes[side], &leaf) {
                    meet(left, right, node.children[side], y, stack, visitor);
                }
            }
        }
        (false, false) => {
            let (a, b) = (&left.nodes[x as usize], &right.nodes[y as usize]);
            for i in 0..2 {
                for j in 0..2 {
                    if overlap(&a.boxes[i], &b.boxes[j]) {
                        meet(left, right, a.children[i], b.children[j], stack, visitor);
                    }
                }
            }
        }
    }
}
