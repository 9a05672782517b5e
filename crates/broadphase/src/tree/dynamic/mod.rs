//! An incremental binary AABB tree (the structure of Box2D's `b2DynamicTree` and Bullet's
//! `btDbvt`): leaves are inserted by surface-area cost with branch-and-bound, removed, and the
//! tree is kept balanced by rotations.
//!
//! Layout, chosen to stay within 64 bytes per leaf:
//! - internal nodes live in one `Vec<Node>` (36 bytes each) with `u32` indices and a free list
//!   threaded through unused slots;
//! - leaves live in a [`TreeLeaves`] table indexed by the caller's leaf id (28 bytes each: the
//!   enlarged box and the parent), which several trees may share as long as each leaf is in at
//!   most one of them. A broad phase uses the proxy slot as the leaf id, so no map from proxy
//!   to leaf is needed.
//!
//! A child reference is a `u32`: an internal node index, or a leaf id with [`LEAF_BIT`] set.
//! A tree of `n` leaves has `n - 1` internal nodes: 28 + 36 = 64 bytes per leaf.

mod build;
mod flat;
mod insert;
mod inspect;
mod query;
mod remove;
mod rotate;
mod validate;

pub(crate) use flat::FlatTree;
pub use query::RayVisit;

use crate::Aabb;

/// Marks a child reference as a leaf id.
pub(crate) const LEAF_BIT: u32 = 1 << 31;
/// "No node": an empty tree's root, the end of the free list.
pub(crate) const NULL: u32 = u32::MAX;
/// A leaf's parent when it is in no tree.
const NOT_IN_TREE: u32 = u32::MAX;
/// A leaf's parent when it is the root of its tree.
const LEAF_ROOT: u32 = u32::MAX - 1;

/// Bits of `Node::parent_and_height` holding the height.
const HEIGHT_BITS: u32 = 6;
const HEIGHT_MASK: u32 = (1 << HEIGHT_BITS) - 1;
/// The packed parent of the root node (and the largest internal node count + 1).
const NODE_ROOT: u32 = (1 << (32 - HEIGHT_BITS)) - 1;
/// Internal nodes a tree can hold: 2^26 - 1 (67 million leaves).
pub(crate) const MAX_NODES: usize = NODE_ROOT as usize;
/// Marks a free internal node (in `children[1]`).
const FREE: u32 = u32::MAX - 1;

#[inline]
pub(crate) fn is_leaf(child: u32) -> bool {
    child & LEAF_BIT != 0
}

#[inline]
pub(crate) fn leaf_ref(leaf: u32) -> u32 {
    leaf | LEAF_BIT
}

#[inline]
pub(crate) fn leaf_id(child: u32) -> u32 {
    child & !LEAF_BIT
}

/// Surface area in `f64`, finite for every valid box (an `f32` area overflows or turns NaN for
/// boxes spanning ±3e38, which would derail the cost comparisons).
#[inline]
pub(crate) fn area(aabb: &Aabb) -> f64 {
    let e = aabb.max().as_dvec3() - aabb.min().as_dvec3();
    2.0 * (e.x * e.y + e.y * e.z + e.z * e.x)
}

/// An internal node: its box, two child references, and the parent packed with the height.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Node {
    pub(crate) aabb: Aabb,
    /// Child references; for a free node, `[next free, FREE]`.
    pub(crate) children: [u32; 2],
    /// Parent node index in the high 26 bits (`NODE_ROOT` for the root), height in the low 6
    /// (saturating at 63; only balancing decisions read it).
    parent_and_height: u32,
}

impl Node {
    #[inline]
    fn parent(&self) -> u32 {
        match self.parent_and_height >> HEIGHT_BITS {
            NODE_ROOT => NULL,
            parent => parent,
        }
    }

    #[inline]
    fn set_parent(&mut self, parent: u32) {
        let packed = if parent == NULL { NODE_ROOT } else { parent };
        self.parent_and_height = (packed << HEIGHT_BITS) | (self.parent_and_height & HEIGHT_MASK);
    }

    #[inline]
    fn height(&self) -> u32 {
        self.parent_and_height & HEIGHT_MASK
    }

    #[inline]
    fn set_height(&mut self, height: u32) {
        self.parent_and_height = (self.parent_and_height & !HEIGHT_MASK) | height.min(HEIGHT_MASK);
    }
}

/// A leaf: its enlarged ("fat") box and its parent node.
#[derive(Debug, Clone, Copy)]
struct Leaf {
    fat: Aabb,
    /// Parent node index, `LEAF_ROOT`, or `NOT_IN_TREE`.
    parent: u32,
}

/// The leaves of one or more [`DynamicTree`]s, indexed by leaf id: each leaf's enlarged box
/// and its place in the tree that holds it.
///
/// ```
/// use broadphase::tree::{DynamicTree, TreeLeaves};
/// use broadphase::Aabb;
/// let mut leaves = TreeLeaves::new();
/// let mut tree = DynamicTree::new();
/// tree.insert(&mut leaves, 7, Aabb::from_arrays([0.0; 3], [1.0; 3])?)?;
/// assert!(leaves.contains(7) && !leaves.contains(3));
/// assert_eq!(leaves.fat_aabb(7).unwrap().max().x, 1.0);
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct TreeLeaves {
    leaves: Vec<Leaf>,
}

impl TreeLeaves {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// True when leaf `id` is in some tree.
    #[inline]
    pub fn contains(&self, id: u32) -> bool {
        self.leaves
            .get(id as usize)
            .is_some_and(|leaf| leaf.parent != NOT_IN_TREE)
    }

    /// The enlarged box of leaf `id`, if it is in a tree.
    #[inline]
    pub fn fat_aabb(&self, id: u32) -> Option<&Aabb> {
        self.leaves
            .get(id as usize)
            .filter(|leaf| leaf.parent != NOT_IN_TREE)
            .map(|leaf| &leaf.fat)
    }

    /// Number of leaf ids the table has room for.
    pub fn capacity_ids(&self) -> usize {
        self.leaves.len()
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.leaves.capacity() * std::mem::size_of::<Leaf>()
    }

    /// Bytes in use: one leaf per id up to the largest.
    pub fn used_bytes(&self) -> usize {
        self.leaves.len() * std::mem::size_of::<Leaf>()
    }

    /// The box of leaf `id`, which is in a tree.
    #[inline]
    pub(crate) fn fat(&self, id: u32) -> Aabb {
        self.leaves[id as usize].fat
    }

    /// Sets the enlarged box of held leaf `id` without touching its tree, whose node boxes
    /// are stale until the tree is rebuilt ([`DynamicTree::rebuild_held`]).
    #[inline]
    pub(crate) fn set_fat(&mut self, id: u32, fat: Aabb) {
        self.leaves[id as usize].fat = fat;
    }

    fn ensure(&mut self, id: u32) {
        let needed = id as usize + 1;
        if self.leaves.len() < needed {
            let filler = Leaf {
                fat: Aabb::new_unchecked(glam::Vec3::ZERO, glam::Vec3::ZERO),
                parent: NOT_IN_TREE,
            };
            self.leaves.resize(needed, filler);
        }
    }
}

/// An incremental binary AABB tree over leaves stored in a [`TreeLeaves`] table.
///
/// Queries report leaves whose enlarged boxes overlap; callers re-test their exact boxes.
///
/// # When to use
/// A spatial index of boxes that come and go or move one at a time, for box queries, ray
/// casts and pair traversals between updates; the structure inside
/// [`DynamicTreeBroadPhase`](crate::DynamicTreeBroadPhase). For a set of boxes that all
/// change together, a [`Bvh`](crate::tree::Bvh) rebuilt or refitted in one pass costs less.
///
/// # Performance
/// Insert and remove cost O(log n): the tree is kept balanced by rotations, its height at
/// most about `2·log2 n` (after a bulk [`DynamicTree::build`], at most 30 + `log2 n`). A box
/// query costs O(log n + k) for k hits on well-spread boxes; a bulk build costs O(n log n).
/// Memory: 64 bytes per leaf (node and leaf entry).
///
/// Worst case: O(n) per query and per insertion (the sibling search's branch and bound visits
/// every node) when the boxes all overlap, as in a pile of equal boxes.
///
/// # Examples
/// ```
/// use broadphase::tree::{DynamicTree, TraversalStack, TreeLeaves};
/// use broadphase::Aabb;
/// use std::ops::ControlFlow;
/// let mut leaves = TreeLeaves::new();
/// let mut tree = DynamicTree::new();
/// for i in 0..10u32 {
///     let x = i as f32 * 2.0;
///     tree.insert(&mut leaves, i, Aabb::from_arrays([x, 0.0, 0.0], [x + 1.0, 1.0, 1.0])?)?;
/// }
/// tree.validate(&leaves).unwrap();
/// let mut found = Vec::new();
/// let query = Aabb::from_arrays([3.5, 0.0, 0.0], [6.0, 1.0, 1.0])?;
/// tree.query(&leaves, &query, &mut TraversalStack::new(), |leaf| {
///     found.push(leaf);
///     ControlFlow::Continue(())
/// });
/// found.sort();
/// assert_eq!(found, vec![2, 3]);
/// tree.remove(&mut leaves, 2)?;
/// assert_eq!(tree.len(), 9);
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct DynamicTree {
    pub(crate) nodes: Vec<Node>,
    /// Child reference of the root, or `NULL` when empty.
    pub(crate) root: u32,
    free_list: u32,
    leaf_count: usize,
    free_count: usize,
    /// Incremented by every insertion and removal.
    revision: u64,
    /// Scratch of the bulk build: internal nodes in creation order, and the leaves' spatial
    /// order.
    build_order: Vec<u32>,
    build_keys: Vec<u64>,
    build_scratch: Vec<u64>,
}

impl Default for DynamicTree {
    fn default() -> Self {
        Self::new()
    }
}

impl DynamicTree {
    /// An empty tree.
    pub fn new() -> Self {
        Self {
            nodes: Vec::new(),
            root: NULL,
            free_list: NULL,
            leaf_count: 0,
            free_count: 0,
            revision: 0,
            build_order: Vec::new(),
            build_keys: Vec::new(),
            build_scratch: Vec::new(),
        }
    }

    /// Number of leaves.
    pub fn len(&self) -> usize {
        self.leaf_count
    }

    /// True when the tree has no leaves.
    pub fn is_empty(&self) -> bool {
        self.leaf_count == 0
    }

    /// Removes every node. The leaves must be cleared by the caller (or the table dropped).
    pub fn clear(&mut self) {
        let revision = self.revision + 1;
        *self = Self::new();
        self.revision = revision;
    }

    /// A counter that every insertion, removal and clear increments: equal revisions mean an
    /// unchanged tree.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// The height: 0 for an empty tree or a single leaf, else the longest root-to-leaf path in
    /// edges. O(n), by traversal (the stored heights saturate at 63).
    pub fn height(&self) -> usize {
        if self.root == NULL || is_leaf(self.root) {
            return 0;
        }
        let mut deepest = 0;
        let mut stack = crate::tree::TraversalStack::<(u32, u32)>::new();
        stack.push((self.root, 0));
        while let Some((node, depth)) = stack.pop() {
            if is_leaf(node) {
                deepest = deepest.max(depth as usize);
            } else {
                for child in self.nodes[node as usize].children {
                    stack.push((child, depth + 1));
                }
            }
        }
        deepest
    }

    /// The sum of the surface areas of the internal nodes, the usual measure of tree quality
    /// (the expected cost of a query is proportional to it). O(n).
    pub fn internal_area(&self) -> f64 {
        if self.root == NULL || is_leaf(self.root) {
            return 0.0;
        }
        let mut total = 0.0;
        let mut stack = crate::tree::TraversalStack::new();
        stack.push(self.root);
        while let Some(node) = stack.pop() {
            let node = &self.nodes[node as usize];
            total += area(&node.aabb);
            for child in node.children {
                if !is_leaf(child) {
                    stack.push(child);
                }
            }
        }
        total
    }

    /// The box around all leaves, if any.
    pub fn root_aabb(&self, leaves: &TreeLeaves) -> Option<Aabb> {
        (self.root != NULL).then(|| *self.child_aabb(leaves, self.root))
    }

    /// Bytes held by the node array (capacity).
    pub fn memory_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>()
            + self.build_order.capacity() * 4
            + (self.build_keys.capacity() + self.build_scratch.capacity()) * 8
    }

    /// Bytes of the node array in use (length, free nodes included).
    pub fn used_bytes(&self) -> usize {
        self.nodes.len() * std::mem::size_of::<Node>()
    }

    #[inline]
    pub(crate) fn child_aabb<'a>(&'a self, leaves: &'a TreeLeaves, child: u32) -> &'a Aabb {
        if is_leaf(child) {
            &leaves.leaves[leaf_id(child) as usize].fat
        } else {
            &self.nodes[child as usize].aabb
        }
    }

    #[inline]
    fn child_height(&self, child: u32) -> u32 {
        if is_leaf(child) {
            0
        } else {
            self.nodes[child as usize].height()
        }
    }

    /// The parent node of a child, or `NULL` for the root.
    #[inline]
    fn parent_of(&self, leaves: &TreeLeaves, child: u32) -> u32 {
        if is_leaf(child) {
            match leaves.leaves[leaf_id(child) as usize].parent {
                LEAF_ROOT => NULL,
                parent => parent,
            }
        } else {
            self.nodes[child as usize].parent()
        }
    }

    #[inline]
    fn set_parent_of(&mut self, leaves: &mut TreeLeaves, child: u32, parent: u32) {
        if is_leaf(child) {
            leaves.leaves[leaf_id(child) as usize].parent =
                if parent == NULL { LEAF_ROOT } else { parent };
        } else {
            self.nodes[child as usize].set_parent(parent);
        }
    }

    /// Makes `parent` (or the root, when `NULL`) point at `new_child` instead of `old_child`.
    #[inline]
    fn replace_child(&mut self, parent: u32, old_child: u32, new_child: u32) {
        if parent == NULL {
            self.root = new_child;
        } else {
            let children = &mut self.nodes[parent as usize].children;
            if children[0] == old_child {
                children[0] = new_child;
            } else {
                debug_assert_eq!(children[1], old_child);
                children[1] = new_child;
            }
        }
    }

    fn allocate_node(&mut self) -> crate::Result<u32> {
        if self.free_list != NULL {
            let index = self.free_list;
            self.free_list = self.nodes[index as usize].children[0];
            self.free_count -= 1;
            return Ok(index);
        }
        if self.nodes.len() >= MAX_NODES {
            return Err(crate::Error::CapacityExhausted);
        }
        self.nodes.push(Node {
            aabb: Aabb::new_unchecked(glam::Vec3::ZERO, glam::Vec3::ZERO),
            children: [NULL, NULL],
            parent_and_height: 0,
        });
        Ok(self.nodes.len() as u32 - 1)
    }

    fn free_node(&mut self, index: u32) {
        let node = &mut self.nodes[index as usize];
        node.children = [self.free_list, FREE];
        self.free_list = index;
        self.free_count += 1;
    }

    /// Recomputes box and height of `node` from its children.
    #[inline]
    fn refit_node(&mut self, leaves: &TreeLeaves, node: u32) {
        let [a, b] = self.nodes[node as usize].children;
        let aabb = self.child_aabb(leaves, a).union(self.child_aabb(leaves, b));
        let height = 1 + self.child_height(a).max(self.child_height(b));
        let node = &mut self.nodes[node as usize];
        node.aabb = aabb;
        node.set_height(height);
    }

    /// Walks from `node` towards the root, rebalancing and refitting each ancestor. Stops
    /// early at an ancestor (not `node` itself, which may be a new node with stale contents)
    /// whose box and height came out unchanged without a balancing rotation: nothing above it
    /// can change.
    fn refit_upwards(&mut self, leaves: &mut TreeLeaves, mut node: u32) {
        let mut first = true;
        while node != NULL {
            let before = self.nodes[node as usize];
            let top = self.balance(leaves, node);
            if top == node {
                self.rotate_for_area(leaves, node);
            }
            self.refit_node(leaves, top);
            let after = &self.nodes[top as usize];
            if !first
                && top == node
                && after.aabb == before.aabb
                && after.height() == before.height()
            {
                break;
            }
            first = false;
            node = after.parent();
        }
    }
}
