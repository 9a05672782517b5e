//! Bulk build: many leaves into an empty tree at once, top-down, instead of one insertion
//! each. A broad phase that starts from many boxes (a first frame, a level load, a switch of
//! algorithm) pays O(n log n) sorting work rather than n surface-area descents with their
//! rotations, and gets a tree of compact subtrees.

use super::{leaf_ref, DynamicTree, Leaf, TreeLeaves, LEAF_BIT, LEAF_ROOT, MAX_NODES, NULL};
use crate::util::morton_code;
use crate::util::radix_sort::sort_distinct_keys;
use crate::{Aabb, Error, Result};

/// A leaf id and its enlarged box.
type Item = (u32, Aabb);

impl DynamicTree {
    /// Builds the tree over `items` (leaf id, enlarged box) at once: the leaves are ordered
    /// along a Morton curve through their centres and the order split top down where the
    /// codes' highest differing bit changes, so that each subtree is one cell of the octree
    /// the codes describe, compact in space (\[Karras12\]); leaves of equal codes are split
    /// in the middle. The height is at most 30 (the code's bits) plus `log2 n`. The tree
    /// must be empty. Deterministic for a given input.
    ///
    /// O(n log n) time (the sort), O(n) extra space kept by the tree for the next build. Fails with
    /// `InvalidOption` when the tree is not empty, a leaf is already in a tree or listed
    /// twice, and `CapacityExhausted` for leaf ids of 2^31 or more or more leaves than the
    /// tree can hold; the tree and the leaves are unchanged on error.
    ///
    /// ```
    /// use broadphase::tree::{DynamicTree, TreeLeaves};
    /// use broadphase::Aabb;
    /// let mut leaves = TreeLeaves::new();
    /// let mut tree = DynamicTree::new();
    /// let items: Vec<(u32, Aabb)> = (0..100u32)
    ///     .map(|i| (i, Aabb::from_arrays([i as f32, 0.0, 0.0], [i as f32 + 1.0, 1.0, 1.0]).unwrap()))
    ///     .collect();
    /// tree.build(&mut leaves, &items)?;
    /// tree.validate(&leaves).unwrap();
    /// assert_eq!((tree.len(), tree.height()), (100, 7));
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    pub fn build(&mut self, leaves: &mut TreeLeaves, items: &[Item]) -> Result<()> {
        if !self.is_empty() {
            return Err(Error::InvalidOption("bulk build needs an empty tree"));
        }
        if items.len() > MAX_NODES {
            return Err(Error::CapacityExhausted);
        }
        for &(leaf, _) in items.iter() {
            if leaf >= LEAF_BIT {
                return Err(Error::CapacityExhausted);
            }
            if leaves.contains(leaf) {
                return Err(Error::InvalidOption("leaf is already in a tree"));
            }
        }
        let Some(largest) = items.iter().map(|item| item.0).max() else {
            return Ok(());
        };
        leaves.ensure(largest);
        // Claim every leaf (parent = root marker) to find duplicates; undo on finding one.
        for (k, &(leaf, fat)) in items.iter().enumerate() {
            if leaves.leaves[leaf as usize].parent == LEAF_ROOT {
                for &(claimed, _) in &items[..k] {
                    leaves.leaves[claimed as usize].parent = super::NOT_IN_TREE;
                }
                return Err(Error::InvalidOption("leaf listed twice"));
            }
            leaves.leaves[leaf as usize] = Leaf {
                fat,
                parent: LEAF_ROOT,
            };
        }
        self.revision += 1;
        self.leaf_count = items.len();
        if items.len() == 1 {
            self.root = leaf_ref(items[0].0);
            return Ok(());
        }
        // The leaves in spatial order: by the Morton code of their centres (ties by listing
        // order), split into octree cells (see `split`).
        let mut order = std::mem::take(&mut self.build_keys);
        spatial_order(items, &mut order, &mut self.build_scratch);
        let leaf_at = |position: usize| items[order[position] as u32 as usize].0;
        // Internal nodes in creation order (parents before children), refitted in reverse.
        let mut created = std::mem::take(&mut self.build_order);
        created.clear();
        // Ranges still to split: (start, end, parent node, child side).
        let mut work = crate::tree::TraversalStack::<(usize, usize, u32, usize)>::new();
        work.push((0, items.len(), NULL, 0));
        while let Some((start, end, parent, side)) = work.pop() {
            let child = if end - start == 1 {
                let leaf = leaf_at(start);
                leaves.leaves[leaf as usize].parent =
                    if parent == NULL { LEAF_ROOT } else { parent };
                leaf_ref(leaf)
            } else {
                // At most n - 1 nodes, within MAX_NODES (checked above): cannot fail.
                let node = self.allocate_node()?;
                self.nodes[node as usize].set_parent(parent);
                created.push(node);
                let middle = split(&order[start..end]) + start;
                work.push((start, middle, node, 0));
                work.push((middle, end, node, 1));
                node
            };
            if parent == NULL {
                self.root = child;
            } else {
                self.nodes[parent as usize].children[side] = child;
            }
        }
        self.build_keys = order;
        for &node in created.iter().rev() {
            self.refit_node(leaves, node);
        }
        self.build_order = created;
        Ok(())
    }

    /// Rebuilds the tree at once over `items` (leaf id, new enlarged box), which must list
    /// exactly the leaves the tree holds: when most leaves left their boxes in one step, one
    /// bulk build costs less than as many removals and surface-area insertions with their
    /// rotations (the partial rebuild of Box2D v3's dynamic tree, taken to the whole tree).
    /// Keeps the node array's allocation.
    pub(crate) fn rebuild_held(&mut self, leaves: &mut TreeLeaves, items: &[Item]) {
        debug_assert_eq!(items.len(), self.leaf_count);
        for &(leaf, _) in items.iter() {
            leaves.leaves[leaf as usize].parent = super::NOT_IN_TREE;
        }
        let revision = self.revision;
        self.nodes.clear();
        self.root = NULL;
        self.free_list = NULL;
        self.leaf_count = 0;
        self.free_count = 0;
        self.revision = revision;
        // The items are the tree's own leaves, now detached, each once, with ids below
        // 2^31 (they were inserted) and at most as many as the tree held: cannot fail.
        let built = self.build(leaves, items);
        debug_assert!(built.is_ok(), "{built:?}");
    }

    /// Appends the ids of the leaves the tree holds to `out`, in node order.
    pub(crate) fn held_leaves(&self, out: &mut Vec<u32>) {
        if self.root != NULL && super::is_leaf(self.root) {
            out.push(super::leaf_id(self.root));
            return;
        }
        for node in &self.nodes {
            if node.children[1] == super::FREE {
                continue;
            }
            for child in node.children {
                if super::is_leaf(child) {
                    out.push(super::leaf_id(child));
                }
            }
        }
    }
}

/// Where to split a range of `order` (sorted keys from [`spatial_order`]): at the first key
/// with the highest bit in which the range's Morton codes differ, so that each half is one
/// cell of the octree the codes describe, compact in space even where the curve jumps; in
/// the middle when all codes are equal. The split is at least 1 and below the length.
fn split(order: &[u64]) -> usize {
    let (first, last) = (order[0] >> 32, order[order.len() - 1] >> 32);
    if first == last {
        return order.len() / 2;
    }
    let bit = 63 - (first ^ last).leading_zeros();
    // The codes ascend and share every bit above `bit`: those with it set come last.
    order.partition_point(|&key| (key >> 32) & (1 << bit) == 0)
}

/// Fills `order` with `morton code << 32 | index` of every item, sorted: the Morton code of
/// the item's centre quantised to 10 bits per axis within the centres' bounds.
fn spatial_order(items: &[Item], order: &mut Vec<u64>, scratch: &mut Vec<u64>) {
    order.clear();
    let (mut low, mut high) = (items[0].1.center(), items[0].1.center());
    for (_, aabb) in items {
        let c = aabb.center();
        low = low.min(c);
        high = high.max(c);
    }
    let extent = (high - low).as_dvec3();
    let scale = extent.map(|e| if e > 0.0 { 1023.0 / e } else { 0.0 });
    for (k, (_, aabb)) in items.iter().enumerate() {
        let q = ((aabb.center() - low).as_dvec3() * scale)
            .clamp(glam::DVec3::ZERO, glam::DVec3::splat(1023.0))
            .as_uvec3();
        order.push(morton_code(q) << 32 | k as u64);
    }
    // The indices ascend: the keys are distinct.
    sort_distinct_keys(order, scratch);
}
