//! Structural checks, for tests and debugging.

use super::{is_leaf, leaf_id, DynamicTree, TreeLeaves, FREE, HEIGHT_MASK, LEAF_ROOT, NULL};

impl DynamicTree {
    /// Checks every invariant: parent and child links agree, each node's box contains its
    /// children's and its height is one more than its taller child's, every node is reached
    /// once, the leaf count matches, and the free list holds exactly the other nodes. O(n).
    ///
    /// Returns a description of the first violation.
    pub fn validate(&self, leaves: &TreeLeaves) -> Result<(), String> {
        let mut reached = vec![false; self.nodes.len()];
        let mut leaf_count = 0;
        if self.root != NULL {
            if is_leaf(self.root) {
                let id = leaf_id(self.root) as usize;
                match leaves.leaves.get(id) {
                    Some(leaf) if leaf.parent == LEAF_ROOT => {}
                    _ => return Err(format!("root leaf {id} does not know it is the root")),
                }
                leaf_count = 1;
            } else {
                let root = self.root as usize;
                if root >= self.nodes.len() {
                    return Err(format!("root {root} out of range"));
                }
                if self.nodes[root].parent() != NULL {
                    return Err(format!("root node {root} has a parent"));
                }
                let mut stack = vec![self.root];
                while let Some(node) = stack.pop() {
                    let index = node as usize;
                    if reached[index] {
                        return Err(format!("node {index} reached twice"));
                    }
                    reached[index] = true;
                    let n = &self.nodes[index];
                    if n.children[1] == FREE {
                        return Err(format!("free node {index} is in the tree"));
                    }
                    let mut height = 0;
                    for child in n.children {
                        if is_leaf(child) {
                            let id = leaf_id(child) as usize;
                            let Some(leaf) = leaves.leaves.get(id) else {
                                return Err(format!("leaf {id} of node {index} not in the table"));
                            };
                            if leaf.parent != node {
                                return Err(format!(
                                    "leaf {id} has parent {} instead of {index}",
                                    leaf.parent
                                ));
                            }
                            leaf_count += 1;
                        } else {
                            if child as usize >= self.nodes.len() {
                                return Err(format!("child {child} of node {index} out of range"));
                            }
                            if self.nodes[child as usize].parent() != node {
                                return Err(format!(
                                    "node {child} does not point back to parent {index}"
                                ));
                            }
                            height = height.max(self.nodes[child as usize].height());
                            stack.push(child);
                        }
                        if !n.aabb.contains(self.child_aabb(leaves, child)) {
                            return Err(format!("node {index} does not contain child {child:#x}"));
                        }
                    }
                    let expected = (height + 1).min(HEIGHT_MASK);
                    if n.height() != expected {
                        return Err(format!(
                            "node {index} has height {}, expected {expected}",
                            n.height()
                        ));
                    }
                }
            }
        }
        if leaf_count != self.leaf_count {
            return Err(format!(
                "{leaf_count} leaves reached, {} counted",
                self.leaf_count
            ));
        }
        let mut free = 0;
        let mut next = self.free_list;
        while next != NULL {
            let index = next as usize;
            if index >= self.nodes.len() || reached[index] || free > self.nodes.len() {
                return Err(format!("free list broken at {index}"));
            }
            if self.nodes[index].children[1] != FREE {
                return Err(format!("node {index} on the free list is not marked free"));
            }
            reached[index] = true;
            free += 1;
            next = self.nodes[index].children[0];
        }
        if free != self.free_count {
            return Err(format!(
                "{free} free nodes listed, {} counted",
                self.free_count
            ));
        }
        if let Some(lost) = reached.iter().position(|&r| !r) {
            return Err(format!("node {lost} is neither in the tree nor free"));
        }
        Ok(())
    }
}
