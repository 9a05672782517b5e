//! Construction by insertion, one object at a time ([Zych16, ch. 2.1.3, listing 2.3];
//! [Goldsmith87]).

use super::{area, Bvh, BvhNode, LEAF_BIT};
use crate::util::SplitMix64;
use crate::Aabb;

const NO_PARENT: u32 = u32::MAX;

impl Bvh {
    /// Inserts the objects one by one, in a fixed pseudo-random order ([Zych16, ch. 2.1.3]
    /// advises shuffling, as sorted input degenerates the tree). Each insertion follows
    /// listing 2.3: descend from the root into the child whose box grows the least (smallest
    /// surface area of child ∪ object; the listing compares volumes, which vanish for flat
    /// boxes), then pick on that path the node with the smallest insertion cost, the area of
    /// node ∪ object plus the area growth of all its ancestors, and make the object its
    /// sibling.
    /// O(n · height).
    pub(super) fn build_insertion(&mut self, items: &[u32], aabbs: &[Aabb]) {
        let n = items.len();
        let mut rng = SplitMix64::new(0x5EED_B0C5);
        for k in (1..n).rev() {
            let j = rng.below(k + 1);
            self.order.swap(k, j);
        }
        self.build_nodes.clear();
        self.parents.clear();
        let mut root = NO_PARENT;
        for k in 0..n {
            let i = self.order[k] as usize;
            let aabb = aabbs[i];
            let leaf = self.build_nodes.len() as u32;
            self.build_nodes.push(BvhNode::leaf(items[i], aabb));
            self.parents.push(NO_PARENT);
            if root == NO_PARENT {
                root = leaf;
                continue;
            }
            let target = self.insertion_target(root, &aabb);
            // A new parent of `target` and the leaf takes `target`'s place.
            let parent = self.build_nodes.len() as u32;
            let grandparent = self.parents[target as usize];
            let parent_box = self.build_nodes[target as usize].aabb.union(&aabb);
            self.build_nodes.push(BvhNode {
                aabb: parent_box,
                children: [target, leaf],
            });
            self.parents.push(grandparent);
            self.parents[target as usize] = parent;
            self.parents[leaf as usize] = parent;
            if grandparent == NO_PARENT {
                root = parent;
            } else {
                let children = &mut self.build_nodes[grandparent as usize].children;
                let side = usize::from(children[1] == target);
                children[side] = parent;
            }
            let mut up = grandparent;
            while up != NO_PARENT {
                let node = &mut self.build_nodes[up as usize];
                node.aabb = node.aabb.union(&aabb);
                up = self.parents[up as usize];
            }
        }
        self.flatten_from_build_nodes(root);
    }

    /// The node on the greedy root-to-leaf path with the least insertion cost for `aabb`.
    fn insertion_target(&self, root: u32, aabb: &Aabb) -> u32 {
        let nodes = &self.build_nodes;
        let mut node = root;
        let mut best = root;
        let mut best_cost = f64::INFINITY;
        // Area growth of the ancestors of `node`.
        let mut inherited = 0.0;
        loop {
            let node_box = &nodes[node as usize].aabb;
            let enclosing = area(&node_box.union(aabb));
            let cost = enclosing + inherited;
            if cost < best_cost {
                best = node;
                best_cost = cost;
            }
            let [a, b] = nodes[node as usize].children;
            if a & LEAF_BIT != 0 {
                return best;
            }
            inherited += enclosing - area(node_box);
            let grow_a = area(&nodes[a as usize].aabb.union(aabb));
            let grow_b = area(&nodes[b as usize].aabb.union(aabb));
            node = if grow_a < grow_b { a } else { b };
        }
    }
}
