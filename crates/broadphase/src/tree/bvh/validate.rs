//! Structural checks, for tests and debugging.

use super::{Bvh, DEAD};

impl Bvh {
    /// Checks that every node is reached exactly once from the root, children come after
    /// their parent, every internal box contains its children's, and the number of leaves
    /// matches. O(n). Returns a description of the first violation.
    pub fn validate(&self) -> Result<(), String> {
        if self.nodes.is_empty() {
            return if self.leaf_count == 0 {
                Ok(())
            } else {
                Err(format!("no nodes but {} leaves counted", self.leaf_count))
            };
        }
        let mut reached = vec![false; self.nodes.len()];
        reached[0] = true;
        let mut leaves = 0;
        for (index, node) in self.nodes.iter().enumerate() {
            if !reached[index] {
                return Err(format!("node {index} is not reachable from the root"));
            }
            if node.is_leaf() {
                leaves += 1;
                if node.item() != DEAD && node.children[1] != 0 {
                    return Err(format!("leaf {index} has a second child"));
                }
                continue;
            }
            for child in node.children {
                let c = child as usize;
                if c <= index || c >= self.nodes.len() {
                    return Err(format!("node {index} has child {c} out of order"));
                }
                if reached[c] {
                    return Err(format!("node {c} has two parents"));
                }
                reached[c] = true;
                if !node.aabb.contains(&self.nodes[c].aabb) {
                    return Err(format!("node {index} does not contain child {c}"));
                }
            }
        }
        if leaves != self.leaf_count {
            return Err(format!("{leaves} leaves, {} counted", self.leaf_count));
        }
        if self.nodes.len() != 2 * leaves - 1 {
            return Err(format!("{} nodes for {leaves} leaves", self.nodes.len()));
        }
        Ok(())
    }
}
