//! Tree rotations, applied to every ancestor of an inserted or removed leaf:
//! - balancing rotations keep the heights of siblings within one of each other (AVL style, as
//!   in Box2D v2.3's `b2DynamicTree::Balance`). Surface-area insertion alone degenerates into a
//!   list for boxes inserted in a row (each new box is cheapest as a sibling of the root); with
//!   these rotations the height is bounded like an AVL tree's (about `1.44·log2 n`), inside
//!   the `2·log2 n` the tests check for rows, grids and long runs of moves;
//! - where the node is balanced, an area rotation (Box2D v3's `b2RotateNodes`) swaps a child
//!   with a grandchild when that shrinks the internal node between them and keeps the heights
//!   balanced, lowering the total internal surface area that balancing alone would leave.

use super::{area, is_leaf, DynamicTree, TreeLeaves};

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

    /// Swaps a child of `a` with a grandchild under its sibling when that reduces the surface
    /// area of the sibling (the only internal node whose box changes) and leaves both changed
    /// nodes with children of heights within one of each other.
    pub(super) fn rotate_for_area(&mut self, leaves: &mut TreeLeaves, a: u32) {
        let children = self.nodes[a as usize].children;
        // (area change, side of the internal child, position of the grandchild to swap)
        let mut best: Option<(f64, usize, usize)> = None;
        for side in 0..2 {
            let (inner, outer) = (children[side], children[1 - side]);
            if is_leaf(inner) {
                continue;
            }
            let grandchildren = self.nodes[inner as usize].children;
            let old_area = area(&self.nodes[inner as usize].aabb);
            let outer_box = *self.child_aabb(leaves, outer);
            let outer_height = self.child_height(outer);
            for k in 0..2 {
                let (give, keep) = (grandchildren[k], grandchildren[1 - k]);
                let keep_height = self.child_height(keep);
                let new_inner_height = 1 + outer_height.max(keep_height);
                if outer_height.abs_diff(keep_height) > 1
                    || self.child_height(give).abs_diff(new_inner_height) > 1
                {
                    continue;
                }
                let change = area(&outer_box.union(self.child_aabb(leaves, keep))) - old_area;
                if change < -1e-6 * old_area && best.is_none_or(|(b, _, _)| change < b) {
                    best = Some((change, side, k));
                }
            }
        }
        let Some((_, side, k)) = best else {
            return;
        };
        let (inner, outer) = (children[side], children[1 - side]);
        let give = self.nodes[inner as usize].children[k];
        self.nodes[inner as usize].children[k] = outer;
        self.nodes[a as usize].children[1 - side] = give;
        self.set_parent_of(leaves, outer, inner);
        self.set_parent_of(leaves, give, a);
        self.refit_node(leaves, inner);
        self.refit_node(leaves, a);
    }
}
