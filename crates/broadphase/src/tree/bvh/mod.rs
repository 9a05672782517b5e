//! A bounding volume hierarchy built from a whole set of boxes ([Zych16, ch. 2.1]), stored as an
//! array in which every child comes after its parent, refitted bottom-up in one reverse pass.
//!
//! Four builders (median, binned SAH, bottom-up clustering, insertion), a self-collision
//! traversal with two descend rules, box and ray queries, and a structural check.

mod build_bottom_up;
mod build_insertion;
mod build_median;
mod build_sah;
mod inspect;
mod refit;
mod traverse;
mod validate;

use std::fmt;
use std::str::FromStr;

use crate::{Aabb, Error};

/// Marks a leaf's item in `BvhNode::children[0]`.
pub(crate) const LEAF_BIT: u32 = 1 << 31;
/// The item of a leaf whose object was removed: skipped by traversals until the next build.
pub(crate) const DEAD: u32 = u32::MAX;

/// How a [`Bvh`] is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BvhBuild {
    /// Top-down, split at the object median along the axis of largest centroid extent
    /// (`select_nth_unstable`; [Kaya16, ch. 4.5]). O(n log n), balanced.
    #[default]
    Median,
    /// Top-down, binned surface-area heuristic (16 bins per axis). O(n log n).
    Sah,
    /// Bottom-up agglomerative clustering: merge the pair with the smallest enclosing box
    /// ([Zych16, ch. 2.1.3]), searched among Morton-order neighbours (locally-ordered clustering:
    /// every mutually-best pair within 16 positions merges each round). O(n · 16 · rounds)
    /// after an O(n log n) sort; rounds are about log2 n when most clusters pair up, n in the
    /// worst case.
    BottomUp,
    /// One insertion per object with the cost rule of [Zych16, listing 2.3].
    Insertion,
}

impl BvhBuild {
    /// Every strategy, in CLI order.
    pub const ALL: [BvhBuild; 4] = [
        BvhBuild::Median,
        BvhBuild::Sah,
        BvhBuild::BottomUp,
        BvhBuild::Insertion,
    ];
}

impl fmt::Display for BvhBuild {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BvhBuild::Median => "median",
            BvhBuild::Sah => "sah",
            BvhBuild::BottomUp => "bottom-up",
            BvhBuild::Insertion => "insertion",
        })
    }
}

impl FromStr for BvhBuild {
    type Err = Error;

    /// Parses `median`, `sah`, `bottom-up` or `insertion`.
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "median" => Ok(BvhBuild::Median),
            "sah" => Ok(BvhBuild::Sah),
            "bottom-up" => Ok(BvhBuild::BottomUp),
            "insertion" => Ok(BvhBuild::Insertion),
            _ => Err(Error::InvalidOption(
                "bvh build must be median, sah, bottom-up or insertion",
            )),
        }
    }
}

/// Which node a pair traversal splits when both are internal ([Zych16, ch. 2.1.4]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum DescendRule {
    /// Split both: four child pairs ([Zych16, listing 2.7]).
    #[default]
    Simultaneous,
    /// Split the node with the larger box (by volume, then surface area; [Zych16, listing 2.6]).
    LargerVolume,
}

impl DescendRule {
    /// Both rules, in CLI order.
    pub const ALL: [DescendRule; 2] = [DescendRule::Simultaneous, DescendRule::LargerVolume];
}

impl fmt::Display for DescendRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DescendRule::Simultaneous => "simultaneous",
            DescendRule::LargerVolume => "larger-volume",
        })
    }
}

impl FromStr for DescendRule {
    type Err = Error;

    /// Parses `simultaneous` or `larger-volume`.
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "simultaneous" => Ok(DescendRule::Simultaneous),
            "larger-volume" => Ok(DescendRule::LargerVolume),
            _ => Err(Error::InvalidOption(
                "bvh descend rule must be simultaneous or larger-volume",
            )),
        }
    }
}

/// A node: its box and either two child indices (both greater than the node's own) or, for a
/// leaf, `[item | LEAF_BIT, 0]`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BvhNode {
    pub(crate) aabb: Aabb,
    pub(crate) children: [u32; 2],
}

impl BvhNode {
    #[inline]
    pub(crate) fn leaf(item: u32, aabb: Aabb) -> Self {
        Self {
            aabb,
            children: [item | LEAF_BIT, 0],
        }
    }

    #[inline]
    pub(crate) fn is_leaf(&self) -> bool {
        self.children[0] & LEAF_BIT != 0
    }

    /// The item of a leaf (`DEAD` once killed).
    #[inline]
    pub(crate) fn item(&self) -> u32 {
        if self.children[0] == DEAD {
            DEAD
        } else {
            self.children[0] & !LEAF_BIT
        }
    }

    fn placeholder() -> Self {
        Self {
            aabb: Aabb::new_unchecked(glam::Vec3::ZERO, glam::Vec3::ZERO),
            children: [0, 0],
        }
    }
}

/// The surface area in `f64`: finite for every valid box, so cost comparisons never see NaN.
#[inline]
pub(crate) fn area(aabb: &Aabb) -> f64 {
    let e = aabb.max().as_dvec3() - aabb.min().as_dvec3();
    2.0 * (e.x * e.y + e.y * e.z + e.z * e.x)
}

/// A bounding volume hierarchy over items (`u32` ids below 2^31, e.g. proxy slots), one item
/// per leaf, stored in an array with the root at 0 and children after their parents.
///
/// # When to use
/// A set of boxes known all at once and then moved together: built in one pass, refitted in
/// one reverse pass, for self pairs, box queries and ray casts; the structure inside
/// [`BvhBroadPhase`](crate::BvhBroadPhase). For boxes inserted and removed one at a time, use
/// a [`DynamicTree`](crate::tree::DynamicTree).
///
/// # Performance
/// Built in O(n log n) (median, SAH), O(n · height) (insertion) or as [`BvhBuild::BottomUp`]
/// describes; refitted in O(n). The self-pair traversal costs O(n + k) for k overlapping node
/// pairs, a box query O(log n + k) for k hits, on well-spread boxes. Memory: `2n - 1` nodes
/// of 32 bytes.
///
/// Worst case: O(n²) for the self pairs and O(n) per query when boxes overlap heavily, or
/// after refits that moved boxes far from their build-time neighbours; O(n²) for the
/// insertion build when the tree degenerates towards a list, and for the bottom-up build when
/// only one pair merges per round.
///
/// # Examples
/// ```
/// use broadphase::tree::{Bvh, BvhBuild, DescendRule, TraversalStack};
/// use broadphase::Aabb;
/// let boxes: Vec<Aabb> = (0..8)
///     .map(|i| Aabb::from_arrays([i as f32, 0.0, 0.0], [i as f32 + 1.0, 1.0, 1.0]).unwrap())
///     .collect();
/// let items: Vec<u32> = (0..8).collect();
/// let mut bvh = Bvh::new();
/// bvh.build(BvhBuild::Sah, &items, &boxes).unwrap();
/// bvh.validate().unwrap();
/// let mut pairs = Vec::new();
/// bvh.self_pairs(DescendRule::Simultaneous, &mut TraversalStack::new(), |a, b| pairs.push((a.min(b), a.max(b))));
/// pairs.sort();
/// assert_eq!(pairs, (0..7).map(|i| (i, i + 1)).collect::<Vec<_>>()); // touching neighbours
/// assert!(bvh.build(BvhBuild::Median, &items[..3], &boxes).is_err());
/// ```
#[derive(Debug, Clone, Default)]
pub struct Bvh {
    pub(crate) nodes: Vec<BvhNode>,
    leaf_count: usize,
    // Build scratch, reused across rebuilds.
    order: Vec<u32>,
    centroids: Vec<glam::Vec3>,
    build_nodes: Vec<BvhNode>,
    parents: Vec<u32>,
    clusters: Vec<u32>,
    next_clusters: Vec<u32>,
    nearest: Vec<u32>,
}

impl Bvh {
    /// An empty hierarchy.
    pub fn new() -> Self {
        Self::default()
    }

    /// Rebuilds from `items` with boxes `aabbs` (parallel slices), replacing the previous
    /// contents. Fails with `InvalidOption`, leaving the hierarchy unchanged, if the slices
    /// differ in length or an item is 2^31 or more.
    pub fn build(&mut self, method: BvhBuild, items: &[u32], aabbs: &[Aabb]) -> crate::Result<()> {
        if items.len() != aabbs.len() {
            return Err(Error::InvalidOption("bvh build needs one box per item"));
        }
        if items.iter().any(|&item| item >= LEAF_BIT) {
            return Err(Error::InvalidOption("bvh items must be below 2^31"));
        }
        self.nodes.clear();
        self.leaf_count = items.len();
        if items.is_empty() {
            return Ok(());
        }
        self.centroids.clear();
        self.centroids.extend(aabbs.iter().map(Aabb::center));
        self.order.clear();
        self.order.extend(0..items.len() as u32);
        match method {
            BvhBuild::Median => self.build_median(items, aabbs),
            BvhBuild::Sah => self.build_sah(items, aabbs),
            BvhBuild::BottomUp => self.build_bottom_up(items, aabbs),
            BvhBuild::Insertion => self.build_insertion(items, aabbs),
        }
        self.refit_internal();
        Ok(())
    }

    /// Number of leaves (dead ones included).
    pub fn len(&self) -> usize {
        self.leaf_count
    }

    /// True when there are no leaves.
    pub fn is_empty(&self) -> bool {
        self.leaf_count == 0
    }

    /// Number of nodes (`2n - 1` for n leaves).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// The longest root-to-leaf path in edges. O(n).
    pub fn height(&self) -> usize {
        // Children come after parents, so one forward pass computes depths.
        let mut depth = vec![0u32; self.nodes.len()];
        let mut deepest = 0;
        for (index, node) in self.nodes.iter().enumerate() {
            if node.is_leaf() {
                deepest = deepest.max(depth[index]);
            } else {
                for child in node.children {
                    depth[child as usize] = depth[index] + 1;
                }
            }
        }
        deepest as usize
    }

    /// Sum of the surface areas of the internal nodes (the SAH cost up to constants). O(n).
    pub fn internal_area(&self) -> f64 {
        self.nodes
            .iter()
            .filter(|n| !n.is_leaf())
            .map(|n| area(&n.aabb))
            .sum()
    }

    /// Bytes held (node array and build scratch, by capacity).
    pub fn memory_bytes(&self) -> usize {
        let node = std::mem::size_of::<BvhNode>();
        (self.nodes.capacity() + self.build_nodes.capacity()) * node
            + self.centroids.capacity() * 12
            + (self.order.capacity()
                + self.parents.capacity()
                + self.clusters.capacity()
                + self.next_clusters.capacity()
                + self.nearest.capacity())
                * 4
    }

    /// Marks the leaf at node `index` dead: traversals skip it until the next build.
    pub(crate) fn kill_leaf(&mut self, index: u32) {
        debug_assert!(self.nodes[index as usize].is_leaf());
        self.nodes[index as usize].children[0] = DEAD;
    }

    /// The leaf node index of every item, written into `out[item]` (grown with `u32::MAX`).
    pub(crate) fn leaf_indices(&self, out: &mut Vec<u32>) {
        for (index, node) in self.nodes.iter().enumerate() {
            if node.is_leaf() && node.item() != DEAD {
                let item = node.item() as usize;
                if out.len() <= item {
                    out.resize(item + 1, u32::MAX);
                }
                out[item] = index as u32;
            }
        }
    }

    /// Copies a tree built in `build_nodes` (any index order, root at `root`) into `nodes` in
    /// depth-first order with sibling pairs adjacent, so that children follow parents.
    fn flatten_from_build_nodes(&mut self, root: u32) {
        self.nodes.clear();
        self.nodes.push(BvhNode::placeholder());
        let mut stack = crate::tree::TraversalStack::<(u32, u32)>::new();
        stack.push((root, 0));
        while let Some((from, to)) = stack.pop() {
            let node = self.build_nodes[from as usize];
            if node.is_leaf() {
                self.nodes[to as usize] = node;
            } else {
                let first = self.nodes.len() as u32;
                self.nodes.push(BvhNode::placeholder());
                self.nodes.push(BvhNode::placeholder());
                self.nodes[to as usize] = BvhNode {
                    aabb: node.aabb,
                    children: [first, first + 1],
                };
                stack.push((node.children[1], first + 1));
                stack.push((node.children[0], first));
            }
        }
    }

    /// The axis (0, 1, 2) of largest extent of the centroids of `order[start..end]`, with
    /// that extent's bounds in `f64` (no overflow for far-apart centroids).
    fn centroid_bounds(&self, start: usize, end: usize) -> (glam::DVec3, glam::DVec3) {
        let mut lo = glam::DVec3::splat(f64::INFINITY);
        let mut hi = glam::DVec3::splat(f64::NEG_INFINITY);
        for &i in &self.order[start..end] {
            let c = self.centroids[i as usize].as_dvec3();
            lo = lo.min(c);
            hi = hi.max(c);
        }
        (lo, hi)
    }
}

#[inline]
pub(crate) fn largest_axis(extent: glam::DVec3) -> usize {
    if extent.x >= extent.y && extent.x >= extent.z {
        0
    } else if extent.y >= extent.z {
        1
    } else {
        2
    }
}
