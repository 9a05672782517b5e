//! The tight octree of [Zych16, ch. 2.2.3]: each box in the smallest node that contains it.

use crate::backend::ProxyTable;
use crate::octree::base::{octree_broad_phase, OctreeBase};
use crate::octree::nodes::{check_depth_limit, OctreeNodes, NO_NODE};
use crate::octree::pairs::PairMarker;
use crate::octree::update::Placement;
use crate::{Aabb, Error, Result};

/// Tuning of [`Octree`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct OctreeOptions {
    /// Depth limit, the root being depth 0 (at most 30; default 8).
    pub max_depth: u32,
    /// A leaf splits when its list grows beyond this (at least 1; default 16).
    pub split_threshold: usize,
}

impl Default for OctreeOptions {
    fn default() -> Self {
        Self {
            max_depth: 8,
            split_threshold: 16,
        }
    }
}

impl OctreeOptions {
    /// `InvalidOption` when an option is out of range.
    fn check(&self) -> Result<()> {
        check_depth_limit(self.max_depth, "octree depth limit above 30")?;
        if self.split_threshold == 0 {
            return Err(Error::InvalidOption(
                "octree split threshold must be at least 1",
            ));
        }
        Ok(())
    }

    /// The placement rule these options tune.
    fn placement(&self) -> SmallestNode {
        SmallestNode {
            max_depth: self.max_depth as u8,
            split_threshold: self.split_threshold,
        }
    }
}

/// An octree that stores each box in the smallest node fully containing it: the octree of
/// [Zych16, ch. 2.2.3] (Bullet's `btOctreeBroadphase`).
///
/// A leaf whose list grows beyond the split threshold gets eight children (up to the depth
/// limit) and hands down the boxes that fit in one of them; a subtree that shrinks to half the
/// threshold collapses back into its root. A box that touches or crosses a node's splitting
/// plane stays in that node, so small boxes straddling the planes near the root pile up in the
/// top lists: the straddling problem of [Zych16, ch. 4.2], which
/// [`LooseOctree`](crate::LooseOctree) fixes and [`Octree::level_statistics`] shows. Because
/// boxes in sibling subtrees are strictly separated by a plane, a box can only overlap boxes of
/// its own node, its ancestors and its descendants: each update re-places the moved boxes, then
/// walks the tree depth-first and tests every box against its own node's later boxes and its
/// ancestors' lists (a full recompute).
///
/// The root cube is fitted at the first update around the bulk of the boxes (5th to 95th
/// percentile of the centres, plus margins); boxes outside it live in an outside list tested
/// against everything, and the root is re-fitted when that list grows by more than a quarter
/// of the boxes. Emptied subtrees are freed and their nodes reused, so memory follows the
/// boxes. Box queries and ray casts walk the tree.
///
/// # When to use
/// Boxes of similar sizes spread over a bounded region, few of them on the planes that split
/// the upper levels; and as the baseline that shows what [`LooseOctree`](crate::LooseOctree)
/// gains. Prefer the loose octree when [`Octree::level_statistics`] shows long lists near the
/// root.
///
/// # Performance
/// An update costs O(m × depth) to re-place the m moved boxes, plus the pair walk, O(Σ over
/// the stored boxes of the lengths of their node's and its ancestors' lists), plus
/// O(outside × n) for the outside list. Queries cost O(visited nodes + boxes in them).
/// Worst case: boxes that all touch or cross the root's splitting planes (a scene centred on
/// a plane, or long boxes crossing the centre) all stay in the root's list, and every pair of
/// them is tested: O(n²) per update, as brute force.
///
/// ```
/// use broadphase::{Aabb, BroadPhase, CollisionFilter, Octree, PairEvents, ProxyKind};
/// let mut tree = Octree::new();
/// let all = CollisionFilter::ALL;
/// for i in 0..100 {
///     let x = i as f32;
///     tree.insert(Aabb::from_arrays([x, 0.0, 0.0], [x + 1.0, 1.0, 1.0])?, ProxyKind::Dynamic, all)?;
/// }
/// let mut events = PairEvents::new();
/// tree.update(&mut events);
/// assert_eq!(events.begun.len(), 99);
/// assert!(tree.level_statistics().len() > 1);
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Octree {
    pub(super) base: OctreeBase<SmallestNode>,
}

octree_broad_phase!(Octree, OctreeOptions, "octree");

/// The tight octree's [`Placement`]: a box goes to the smallest existing node that contains
/// it; a leaf whose list outgrows the threshold splits, and a subtree that shrinks to half the
/// threshold collapses.
#[derive(Debug, Clone)]
pub(super) struct SmallestNode {
    max_depth: u8,
    split_threshold: usize,
}

/// Bit marking a "leave node" entry on the pair walk's stack.
const LEAVE: u32 = 1 << 31;

impl SmallestNode {
    /// The child of `node` that strictly contains `aabb` (not touching the splitting planes).
    fn strict_child(nodes: &OctreeNodes, node: u32, aabb: &Aabb) -> Option<u32> {
        let first = nodes.first_child[node as usize];
        if first == NO_NODE {
            return None;
        }
        let center = nodes.cell[node as usize].center();
        let mut octant = 0;
        for axis in 0..3 {
            if aabb.max()[axis] < center[axis] {
                continue;
            } else if aabb.min()[axis] > center[axis] {
                octant |= 1 << axis;
            } else {
                return None;
            }
        }
        Some(first + octant)
    }

    /// The smallest existing node containing `aabb` (which lies in the root).
    fn smallest_node(nodes: &OctreeNodes, aabb: &Aabb) -> u32 {
        let mut node = 0;
        while let Some(child) = Self::strict_child(nodes, node, aabb) {
            node = child;
        }
        node
    }

    /// Splits `node` if it is a leaf above the threshold and the depth limit allows, hands
    /// down the boxes that fit in a child, and goes on with the children.
    fn split_if_full(&self, nodes: &mut OctreeNodes, proxies: &ProxyTable, node: u32) {
        let n = node as usize;
        if nodes.first_child[n] != NO_NODE
            || nodes.items[n].len() <= self.split_threshold
            || nodes.depth[n] >= self.max_depth
        {
            return;
        }
        nodes.split(node);
        let mut at = 0;
        while at < nodes.items[n].len() {
            let slot = nodes.items[n][at] as usize;
            match Self::strict_child(nodes, node, proxies.aabb(slot)) {
                Some(child) => nodes.move_down(slot, node, child),
                None => at += 1,
            }
        }
        let first = nodes.first_child[n];
        for child in first..first + 8 {
            self.split_if_full(nodes, proxies, child);
        }
    }

    /// Moves every box of the subtree below `node` into its list and frees the children.
    fn collapse(nodes: &mut OctreeNodes, node: u32) {
        nodes.stack.clear();
        let first = nodes.first_child[node as usize];
        nodes.stack.extend(first..first + 8);
        while let Some(descendant) = nodes.stack.pop() {
            let d = descendant as usize;
            while let Some(&slot) = nodes.items[d].last() {
                let slot = slot as usize;
                nodes.remove_item(slot);
                nodes.add_item(node, slot);
            }
            let first = nodes.first_child[d];
            if first != NO_NODE {
                nodes.stack.extend(first..first + 8);
            }
        }
        nodes.free_children(node);
    }
}

impl Placement for SmallestNode {
    const LOOSENESS: f32 = 1.0;

    fn place(&mut self, nodes: &mut OctreeNodes, proxies: &ProxyTable, slot: usize, aabb: &Aabb) {
        let node = Self::smallest_node(nodes, aabb);
        nodes.add_item(node, slot);
        self.split_if_full(nodes, proxies, node);
    }

    fn existing_target(&self, nodes: &OctreeNodes, aabb: &Aabb) -> Option<u32> {
        Some(Self::smallest_node(nodes, aabb))
    }

    /// Collapses the highest ancestor whose subtree shrank to half the threshold.
    fn prune(&mut self, nodes: &mut OctreeNodes, node: u32) {
        let mut highest = NO_NODE;
        let mut up = node;
        while up != NO_NODE {
            let u = up as usize;
            if nodes.first_child[u] != NO_NODE
                && nodes.subtree[u] as usize <= self.split_threshold / 2
            {
                highest = up;
            }
            up = nodes.parent[u];
        }
        if highest != NO_NODE {
            Self::collapse(nodes, highest);
        }
    }

    /// Every box against its node's later boxes and its ancestors' boxes, depth-first, with
    /// the ancestors of the current node kept on `nodes.path`.
    fn mark_tree_pairs(&mut self, nodes: &mut OctreeNodes, mut marker: PairMarker<'_>) {
        nodes.stack.clear();
        nodes.path.clear();
        nodes.stack.push(0);
        while let Some(entry) = nodes.stack.pop() {
            if entry & LEAVE != 0 {
                nodes.path.pop();
                continue;
            }
            let n = entry as usize;
            if nodes.subtree[n] == 0 {
                continue;
            }
            let items = &nodes.items[n];
            for (k, &a) in items.iter().enumerate() {
                marker.one_against(a, &items[k + 1..]);
                for &ancestor in &nodes.path {
                    marker.one_against(a, &nodes.items[ancestor as usize]);
                }
            }
            let mut mask = nodes.child_mask[n];
            if mask != 0 {
                nodes.path.push(entry);
                nodes.stack.push(entry | LEAVE);
                let first = nodes.first_child[n];
                while mask != 0 {
                    nodes.stack.push(first + mask.trailing_zeros());
                    mask &= mask - 1;
                }
            }
        }
    }
}
