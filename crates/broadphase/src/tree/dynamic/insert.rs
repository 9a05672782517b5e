//! Leaf insertion: the sibling is chosen by surface-area cost with branch-and-bound (Box2D v3).

use super::{
    area, is_leaf, leaf_ref, DynamicTree, Leaf, TreeLeaves, LEAF_BIT, LEAF_ROOT, NOT_IN_TREE, NULL,
};
use crate::{Aabb, Error, Result};

impl DynamicTree {
    /// Inserts leaf `leaf` with the (already enlarged) box `fat`. O(log n) on balanced trees.
    ///
    /// Fails with `InvalidOption` if the leaf is already in a tree, and `CapacityExhausted`
    /// for leaf ids of 2^31 or more or more than 2^26 - 1 internal nodes. The tree is
    /// unchanged on error.
    pub fn insert(&mut self, leaves: &mut TreeLeaves, leaf: u32, fat: Aabb) -> Result<()> {
        if leaf >= LEAF_BIT {
            return Err(Error::CapacityExhausted);
        }
        if leaves.contains(leaf) {
            return Err(Error::InvalidOption("leaf is already in a tree"));
        }
        leaves.ensure(leaf);
        self.revision += 1;
        let new_ref = leaf_ref(leaf);
        if self.root == NULL {
            leaves.leaves[leaf as usize] = Leaf {
                fat,
                parent: LEAF_ROOT,
            };
            self.root = new_ref;
            self.leaf_count += 1;
            return Ok(());
        }
        let parent = self.allocate_node()?;
        leaves.leaves[leaf as usize] = Leaf {
            fat,
            parent: NOT_IN_TREE,
        };
        let sibling = self.best_sibling(leaves, &fat);
        let old_parent = self.parent_of(leaves, sibling);

        let node = &mut self.nodes[parent as usize];
        node.children = [sibling, new_ref];
        node.set_parent(old_parent);
        self.replace_child(old_parent, sibling, parent);
        self.set_parent_of(leaves, sibling, parent);
        self.set_parent_of(leaves, new_ref, parent);
        self.leaf_count += 1;
        self.refit_upwards(leaves, parent);
        Ok(())
    }

    /// The node whose new parent with the box `aabb` adds the least total surface area to the
    /// tree: the new parent's area plus the area growth of every ancestor.
    ///
    /// Branch and bound: descending into a child costs at least the inherited growth plus the
    /// child's own growth plus the area of `aabb` (every candidate inside creates a parent at
    /// least that big), so subtrees whose bound is no better than the best are skipped.
    fn best_sibling(&self, leaves: &TreeLeaves, aabb: &Aabb) -> u32 {
        let area_new = area(aabb);
        let root_box = self.child_aabb(leaves, self.root);
        let mut best = self.root;
        let mut best_cost = area(&root_box.union(aabb));
        // Growth of the ancestors of `node`'s children if the leaf goes below them.
        let mut inherited = 0.0;
        let mut node = self.root;
        while !is_leaf(node) {
            let node_box = &self.nodes[node as usize].aabb;
            let direct = area(&node_box.union(aabb));
            let cost = direct + inherited;
            if cost < best_cost {
                best = node;
                best_cost = cost;
            }
            inherited += direct - area(node_box);

            let children = self.nodes[node as usize].children;
            let mut lower = [f64::INFINITY; 2];
            for (k, &child) in children.iter().enumerate() {
                let child_box = self.child_aabb(leaves, child);
                let child_area = area(child_box);
                let child_direct = area(&child_box.union(aabb));
                if is_leaf(child) {
                    let cost = child_direct + inherited;
                    if cost < best_cost {
                        best = child;
                        best_cost = cost;
                    }
                } else {
                    // The child itself costs `inherited + child_direct`; its descendants at
                    // least `inherited + (child_direct - child_area) + area_new`.
                    lower[k] = inherited + child_direct + (area_new - child_area).min(0.0);
                }
            }
            let [first, second] = children;
            if is_leaf(first) && is_leaf(second) {
                break;
            }
            if best_cost <= lower[0] && best_cost <= lower[1] {
                break;
            }
            node = if is_leaf(first) {
                second
            } else if is_leaf(second) || lower[0] < lower[1] {
                first
            } else if lower[1] < lower[0] {
                second
            } else {
                // A tie: go towards the closer centre.
                let c = aabb.center();
                let d0 = (self.child_aabb(leaves, first).center() - c).length_squared();
                let d1 = (self.child_aabb(leaves, second).center() - c).length_squared();
                if d1 < d0 {
                    second
                } else {
                    first
                }
            };
        }
        best
    }
}
