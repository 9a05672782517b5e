//! Tree rotations that keep the heights of siblings within one of each other (AVL style, as in
//! Box2D v2.3's `b2DynamicTree::Balance`).
//!
//! Surface-area insertion alone degenerates into a list for boxes inserted in a row (each new
//! box is cheapest as a sibling of the root); a rotation after every insertion and removal on
//! the path to the root bounds the height by about `1.44·log2 n`, well inside `2·log2 n`.

use super::{DynamicTree, TreeLeaves};

impl DynamicTree {
    /// Rotates the taller child of internal node `a` up if the children's heights differ by
    /// more than one; returns the node now at `a`'s place (refitted).
    pub(super) fn balance(&mut self, leaves: &mut TreeLeaves, a: u32) -> u32 {
        let [b, c] = self.nodes[a as usize].children;
        let (height_b, height_c) = (self.child_height(b), self.child_height(c));
        if height_c > height_b + 1 {
            self.rotate_up(leaves, a, 1)
        } else if height_b > height_c + 1 {
            self.rotate_up(leaves, a, 0)
        } else {
            a
        }
    }

    /// Makes child `side` of `a` (an internal node `up` with children `x` and `y`) the parent
    /// of `a`: `up` keeps its taller child, `a` takes the shorter one in place of `up`.
    fn rotate_up(&mut self, leaves: &mut TreeLeaves, a: u32, side: usize) -> u32 {
        let up = self.nodes[a as usize].children[side];
        let [x, y] = self.nodes[up as usize].children;
        let grandparent = self.nodes[a as usize].parent();

        self.replace_child(grandparent, a, up);
        self.nodes[up as usize].set_parent(grandparent);
        self.nodes[a as usize].set_parent(up);
        let (keep, give) = if self.child_height(x) > self.child_height(y) {
            (x, y)
        } else {
            (y, x)
        };
        self.nodes[up as usize].children = [a, keep];
        self.nodes[a as usize].children[side] = give;
        self.set_parent_of(leaves, give, a);

        self.refit_node(leaves, a);
        self.refit_node(leaves, up);
        up
    }
}
