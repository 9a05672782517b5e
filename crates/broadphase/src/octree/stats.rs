//! Object-list statistics per depth, to see where an octree keeps its boxes.

use crate::octree::nodes::{OctreeNodes, NO_NODE};

/// Object-list statistics of one depth of an octree (compare [Zych16, Fig. 4.9], where the
/// octree's boxes pile up near the root).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LevelStatistics {
    /// Depth (0 is the root).
    pub depth: u32,
    /// Nodes that exist at this depth.
    pub nodes: usize,
    /// Nodes at this depth whose own list is not empty.
    pub occupied_nodes: usize,
    /// Objects stored in the lists of this depth.
    pub objects: usize,
    /// The longest list at this depth.
    pub longest_list: usize,
}

impl LevelStatistics {
    /// Mean list length over the occupied nodes of this depth (0 when none).
    pub fn mean_list_length(&self) -> f64 {
        if self.occupied_nodes == 0 {
            0.0
        } else {
            self.objects as f64 / self.occupied_nodes as f64
        }
    }
}

impl OctreeNodes {
    /// List statistics per depth, root first.
    pub(crate) fn level_statistics(&self) -> Vec<LevelStatistics> {
        let mut levels: Vec<LevelStatistics> = Vec::new();
        if !self.has_root {
            return levels;
        }
        let mut stack = vec![0u32];
        while let Some(node) = stack.pop() {
            let n = node as usize;
            let depth = self.depth[n] as usize;
            while levels.len() <= depth {
                levels.push(LevelStatistics {
                    depth: levels.len() as u32,
                    ..Default::default()
                });
            }
            let level = &mut levels[depth];
            let length = self.items[n].len();
            level.nodes += 1;
            level.objects += length;
            level.occupied_nodes += (length > 0) as usize;
            level.longest_list = level.longest_list.max(length);
            let first = self.first_child[n];
            if first != NO_NODE {
                stack.extend(first..first + 8);
            }
        }
        levels
    }
}
