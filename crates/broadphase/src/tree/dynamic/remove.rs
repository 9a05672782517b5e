//! Leaf removal and re-insertion.

use super::{is_leaf, leaf_ref, DynamicTree, TreeLeaves, NOT_IN_TREE, NULL};
use crate::{Aabb, Error, Result};

impl DynamicTree {
    /// Removes leaf `leaf`; its sibling takes the place of their parent. O(log n).
    ///
    /// Fails with `InvalidOption` (and changes nothing) if the leaf is not in this tree.
    pub fn remove(&mut self, leaves: &mut TreeLeaves, leaf: u32) -> Result<()> {
        if !self.holds(leaves, leaf) {
            return Err(Error::InvalidOption("leaf is not in this tree"));
        }
        self.remove_held(leaves, leaf);
        Ok(())
    }

    /// Removes a leaf the caller knows is in this tree (skips the O(height) check).
    pub(crate) fn remove_held(&mut self, leaves: &mut TreeLeaves, leaf: u32) {
        debug_assert!(self.holds(leaves, leaf));
        self.revision += 1;
        let this = leaf_ref(leaf);
        let parent = self.parent_of(leaves, this);
        leaves.leaves[leaf as usize].parent = NOT_IN_TREE;
        self.leaf_count -= 1;
        if parent == NULL {
            self.root = NULL;
            return;
        }
        let children = self.nodes[parent as usize].children;
        let sibling = if children[0] == this {
            children[1]
        } else {
            children[0]
        };
        let grandparent = self.nodes[parent as usize].parent();
        self.replace_child(grandparent, parent, sibling);
        self.set_parent_of(leaves, sibling, grandparent);
        self.free_node(parent);
        self.refit_upwards(leaves, grandparent);
    }

    /// Moves leaf `leaf` to the enlarged box `fat`: removal and re-insertion, O(log n).
    pub fn move_leaf(&mut self, leaves: &mut TreeLeaves, leaf: u32, fat: Aabb) -> Result<()> {
        self.remove(leaves, leaf)?;
        self.insert(leaves, leaf, fat)
    }

    /// [`DynamicTree::move_leaf`] for a leaf the caller knows is in this tree.
    pub(crate) fn move_held_leaf(
        &mut self,
        leaves: &mut TreeLeaves,
        leaf: u32,
        fat: Aabb,
    ) -> Result<()> {
        self.remove_held(leaves, leaf);
        self.insert(leaves, leaf, fat)
    }

    /// True when leaf `leaf` is in this tree (not another tree sharing the table). O(height).
    pub fn holds(&self, leaves: &TreeLeaves, leaf: u32) -> bool {
        if !leaves.contains(leaf) || self.root == NULL {
            return false;
        }
        let mut child = leaf_ref(leaf);
        loop {
            let parent = self.parent_of(leaves, child);
            if parent == NULL {
                return child == self.root;
            }
            if parent as usize >= self.nodes.len() || is_leaf(parent) {
                return false;
            }
            let children = self.nodes[parent as usize].children;
            if children[0] != child && children[1] != child {
                return false;
            }
            child = parent;
        }
    }
}
