//! Bulk build: many leaves into an empty tree at once, top-down, instead of one insertion
//! each. A broad phase that starts from many boxes (a first frame, a level load, a switch of
//! algorithm) pays O(n log n) sorting work rather than n surface-area descents with their
//! rotations, and gets a balanced tree.

use super::{leaf_ref, DynamicTree, Leaf, TreeLeaves, LEAF_BIT, LEAF_ROOT, MAX_NODES, NULL};
use crate::{Aabb, Error, Result};

/// A leaf id and its enlarged box.
type Item = (u32, Aabb);

impl DynamicTree {
    /// Builds the tree over `items` (leaf id, enlarged box) at once: top-down, each range of
    /// leaves split at the median of their centres along the longest axis of the centres'
    /// bounds. The tree must be empty. Reorders `items`; deterministic for a given input.
    ///
    /// O(n log n) time, O(log n) extra space (a growable work stack). Fails with
    /// `InvalidOption` when the tree is not empty, a leaf is already in a tree or listed
    /// twice, and `CapacityExhausted` for leaf ids of 2^31 or more or more leaves than the
    /// tree can hold; the tree and the leaves are unchanged on error.
    ///
    /// ```
    /// use broadphase::tree::{DynamicTree, TreeLeaves};
    /// use broadphase::Aabb;
    /// let mut leaves = TreeLeaves::new();
    /// let mut tree = DynamicTree::new();
    /// let mut items: Vec<(u32, Aabb)> = (0..100u32)
    ///     .map(|i| (i, Aabb::from_arrays([i as f32, 0.0, 0.0], [i as f32 + 1.0, 1.0, 1.0]).unwrap()))
    ///     .collect();
    /// tree.build(&mut leaves, &mut items)?;
    /// tree.validate(&leaves).unwrap();
    /// assert_eq!((tree.len(), tree.height()), (100, 7));
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    pub fn build(&mut self, leaves: &mut TreeLeaves, items: &mut [Item]) -> Result<()> {
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
        // Internal nodes in creation order (parents before children), refitted in reverse.
        let mut created = Vec::with_capacity(items.len() - 1);
        // Ranges still to split: (start, end, parent node, child side).
        let mut work = crate::tree::TraversalStack::<(usize, usize, u32, usize)>::new();
        work.push((0, items.len(), NULL, 0));
        while let Some((start, end, parent, side)) = work.pop() {
            let child = if end - start == 1 {
                let leaf = items[start].0;
                leaves.leaves[leaf as usize].parent =
                    if parent == NULL { LEAF_ROOT } else { parent };
                leaf_ref(leaf)
            } else {
                // At most n - 1 nodes, within MAX_NODES (checked above): cannot fail.
                let node = self.allocate_node()?;
                self.nodes[node as usize].set_parent(parent);
                created.push(node);
                let middle = split(&mut items[start..end]) + start;
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
        for &node in created.iter().rev() {
            self.refit_node(leaves, node);
        }
        Ok(())
    }
}

/// Orders `items` so that the first half (rounded down) has the smaller centres along the
/// longest axis of the centres' bounds, and returns the half's length (at least 1).
fn split(items: &mut [Item]) -> usize {
    let (mut low, mut high) = (items[0].1.center(), items[0].1.center());
    for (_, aabb) in items.iter() {
        let c = aabb.center();
        low = low.min(c);
        high = high.max(c);
    }
    let extent = high - low;
    let axis = if extent.x >= extent.y && extent.x >= extent.z {
        0
    } else if extent.y >= extent.z {
        1
    } else {
        2
    };
    let middle = items.len() / 2;
    // A total order (ties broken by leaf id), so the split never depends on float quirks.
    items.select_nth_unstable_by(middle, |a, b| {
        a.1.center()[axis]
            .total_cmp(&b.1.center()[axis])
            .then(a.0.cmp(&b.0))
    });
    middle
}
