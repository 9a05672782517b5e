//! The loose octree of \[Ulrich00\]: node bounds doubled, so a box's depth depends on its size
//! only.

use crate::backend::ProxyTable;
use crate::octree::base::{octree_broad_phase, OctreeBase};
use crate::octree::nodes::{check_depth_limit, OctreeNodes, NO_NODE};
use crate::octree::pairs::PairMarker;
use crate::octree::update::Placement;
use crate::{Aabb, Result};

/// Tuning of [`LooseOctree`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct LooseOctreeOptions {
    /// Depth limit, the root being depth 0 (at most 30; default 10).
    pub max_depth: u32,
}

impl Default for LooseOctreeOptions {
    fn default() -> Self {
        Self { max_depth: 10 }
    }
}

impl LooseOctreeOptions {
    /// `InvalidOption` when an option is out of range.
    fn check(&self) -> Result<()> {
        check_depth_limit(self.max_depth, "loose octree depth limit above 30")
    }

    /// The placement rule these options tune.
    fn placement(&self) -> BySizeAndCentre {
        BySizeAndCentre {
            max_depth: self.max_depth as u8,
            tasks: Vec::new(),
        }
    }
}

/// A loose octree \[Ulrich00\]: node bounds are the cells doubled about their centres, and a box
/// sits at the depth its size sets, in the node whose cell holds its centre.
///
/// A box descends towards the child cell holding its centre down to the deepest cell whose
/// edge is still at least the box's largest edge. Such a box always fits the loose bounds of
/// the cell holding its centre, so its depth is set by its size, not by where it sits relative
/// to the splitting planes: the fix for the straddling problem of the tight
/// [`Octree`](crate::Octree) [Zych16, ch. 4.2]. Nodes are created on the way down and freed
/// when their subtree empties (reused later), so memory follows the occupied space. Loose
/// bounds of neighbours overlap, so pairs come from a simultaneous walk over pairs of nodes
/// whose loose bounds overlap, which tests every pair of candidate boxes exactly once (a full
/// recompute after re-placing the boxes that changed node). The root and the outside list work
/// as in [`Octree`](crate::Octree). Box queries and ray casts walk the tree.
///
/// # When to use
/// Many small or medium boxes, of similar or varied sizes, over a bounded region: the depth of
/// each box follows its size, so no list near the root fills up with boxes that merely cross
/// a plane. [`LooseOctree::level_statistics`] gives the list lengths per depth to compare with
/// [`Octree`](crate::Octree).
///
/// # Performance
/// An update costs O(m × depth) to re-place the m boxes that moved, plus the pair walk,
/// O(overlapping node pairs + candidate box pairs), plus O(outside × n) for the outside list.
/// Queries cost O(visited nodes + boxes in them). Worst case: boxes whose largest edge is
/// close to the root's (long thin rods spanning the scene) all stay in the root's list however
/// few of them overlap, and every pair of them is tested: O(n²) per update, as brute force.
///
/// ```
/// use broadphase::{Aabb, BroadPhase, CollisionFilter, LooseOctree, PairEvents, ProxyKind};
/// let mut tree = LooseOctree::new();
/// let all = CollisionFilter::ALL;
/// for i in 0..100 {
///     let x = i as f32;
///     tree.insert(Aabb::from_arrays([x, 0.0, 0.0], [x + 1.0, 1.0, 1.0])?, ProxyKind::Dynamic, all)?;
/// }
/// let mut events = PairEvents::new();
/// tree.update(&mut events);
/// assert_eq!(events.begun.len(), 99);
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct LooseOctree {
    pub(super) base: OctreeBase<BySizeAndCentre>,
}

octree_broad_phase!(LooseOctree, LooseOctreeOptions, "loose-octree");

/// The loose octree's [`Placement`]: a box goes down towards its centre to the depth of its
/// size, creating the nodes on its way; nodes whose subtree holds only their own list lose
/// their children.
#[derive(Debug, Clone)]
pub(super) struct BySizeAndCentre {
    max_depth: u8,
    /// The pair walk's stack.
    tasks: Vec<Task>,
}

impl BySizeAndCentre {
    /// Walks from `node` towards the node `aabb` belongs in: returns it with `None`, or the
    /// deepest existing node on the way with `Some(octant)` of the child that is missing.
    fn descend(&self, nodes: &OctreeNodes, aabb: &Aabb, mut node: u32) -> (u32, Option<usize>) {
        let center = aabb.center();
        let edge = aabb.extents().max_element();
        while nodes.depth[node as usize] < self.max_depth {
            let cell = nodes.cell[node as usize];
            let split = cell.center();
            let octant = (0..3).fold(0, |o, axis| {
                o | ((center[axis] >= split[axis]) as usize) << axis
            });
            let child_cell = OctreeNodes::child_cell(&cell, octant);
            // Stop at the depth of the box's size (the child's cell would be smaller than the
            // box), or earlier if rounding made the child's loose bounds miss it.
            if child_cell.extents().min_element() < edge
                || !nodes.loosen(&child_cell).contains(aabb)
            {
                break;
            }
            let first = nodes.first_child[node as usize];
            if first == NO_NODE {
                return (node, Some(octant));
            }
            node = first + octant as u32;
        }
        (node, None)
    }
}

impl Placement for BySizeAndCentre {
    const LOOSENESS: f32 = 2.0;

    fn place(&mut self, nodes: &mut OctreeNodes, _: &ProxyTable, slot: usize, aabb: &Aabb) {
        let mut node = 0;
        loop {
            match self.descend(nodes, aabb, node) {
                (target, None) => {
                    nodes.add_item(target, slot);
                    return;
                }
                (deepest, Some(_)) => {
                    nodes.split(deepest);
                    node = deepest;
                }
            }
        }
    }

    fn existing_target(&self, nodes: &OctreeNodes, aabb: &Aabb) -> Option<u32> {
        match self.descend(nodes, aabb, 0) {
            (node, None) => Some(node),
            (_, Some(_)) => None,
        }
    }

    /// Frees the children of every node on the path whose subtree holds only its own list.
    fn prune(&mut self, nodes: &mut OctreeNodes, node: u32) {
        let mut up = node;
        while up != NO_NODE {
            let u = up as usize;
            if nodes.first_child[u] != NO_NODE && nodes.subtree[u] as usize == nodes.items[u].len()
            {
                nodes.free_children(up);
            }
            up = nodes.parent[u];
        }
    }

    /// Marks every overlapping pair in the tree exactly once with a simultaneous walk over pairs
    /// of nodes whose loose bounds overlap (see [`Task`]).
    fn mark_tree_pairs(&mut self, nodes: &mut OctreeNodes, mut marker: PairMarker<'_>) {
        let (nodes, tasks) = (&*nodes, &mut self.tasks);
        let children = |node: u32| {
            let (mut mask, first) = (
                nodes.child_mask[node as usize],
                nodes.first_child[node as usize],
            );
            std::iter::from_fn(move || {
                (mask != 0).then(|| {
                    let child = first + mask.trailing_zeros();
                    mask &= mask - 1;
                    child
                })
            })
        };
        tasks.clear();
        tasks.push(Task::Within(0));
        while let Some(task) = tasks.pop() {
            match task {
                Task::Within(node) => {
                    let items = &nodes.items[node as usize];
                    marker.within(items);
                    for child in children(node) {
                        tasks.push(Task::Within(child));
                        if !items.is_empty() {
                            tasks.push(Task::ListAgainst(node, child));
                        }
                        for sibling in children(node).filter(|&s| s > child) {
                            tasks.push(Task::Between(child, sibling));
                        }
                    }
                }
                Task::Between(a, b) => {
                    if !nodes.bounds[a as usize].overlaps(&nodes.bounds[b as usize]) {
                        continue;
                    }
                    marker.across(&nodes.items[a as usize], &nodes.items[b as usize]);
                    if !nodes.items[a as usize].is_empty() {
                        tasks.extend(children(b).map(|child| Task::ListAgainst(a, child)));
                    }
                    tasks.extend(children(a).map(|child| Task::Between(child, b)));
                }
                Task::ListAgainst(owner, node) => {
                    if !nodes.bounds[owner as usize].overlaps(&nodes.bounds[node as usize]) {
                        continue;
                    }
                    marker.across(&nodes.items[owner as usize], &nodes.items[node as usize]);
                    tasks.extend(children(node).map(|child| Task::ListAgainst(owner, child)));
                }
            }
        }
    }

    fn memory_bytes(&self) -> usize {
        self.tasks.capacity() * std::mem::size_of::<Task>()
    }
}

/// A step of the pair walk. Every pair of stored boxes is tested by exactly one task: boxes of
/// one node by `Within`, a node's list against its descendants by `ListAgainst`, and boxes of
/// two disjoint subtrees by the `Between` task of the two children of their lowest common
/// ancestor. Loose bounds nest (a child's lie inside its parent's), so a pair of nodes whose
/// loose bounds do not overlap prunes everything below them.
#[derive(Debug, Clone, Copy)]
enum Task {
    /// All pairs within the subtree of the node.
    Within(u32),
    /// The boxes of the first node's subtree against those of the second's (disjoint subtrees).
    Between(u32, u32),
    /// The list of the first node against the subtree of the second (a descendant).
    ListAgainst(u32, u32),
}
