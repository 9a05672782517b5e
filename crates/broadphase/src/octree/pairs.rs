//! Pair marking shared by both octrees: the exact test of two stored boxes, the list products
//! the tree walks are made of, and the outside list against every stored box.

use crate::backend::{PairTracker, ProxyTable};
use crate::octree::nodes::{OctreeNodes, NO_NODE, OUTSIDE};

/// The proxies to read and the pair tracker to mark during an update's full recompute.
pub(crate) struct PairMarker<'a> {
    pub(crate) proxies: &'a ProxyTable,
    pub(crate) pairs: &'a mut PairTracker,
}

impl PairMarker<'_> {
    /// Marks the pair of slots `a` and `b` when their boxes overlap and they may pair.
    #[inline]
    fn test(&mut self, a: u32, b: u32) {
        let proxies = self.proxies;
        if proxies.aabb(a as usize).overlaps(proxies.aabb(b as usize))
            && proxies.can_pair(a as usize, b as usize)
        {
            self.pairs.mark(a, b);
        }
    }

    /// Slot `a` against every slot of `list`, in order.
    #[inline]
    pub(crate) fn one_against(&mut self, a: u32, list: &[u32]) {
        for &b in list {
            self.test(a, b);
        }
    }

    /// Every pair within `list` once: each slot against the slots after it.
    #[inline]
    pub(crate) fn within(&mut self, list: &[u32]) {
        for (k, &a) in list.iter().enumerate() {
            for &b in &list[k + 1..] {
                self.test(a, b);
            }
        }
    }

    /// Every slot of `first` against every slot of `second`.
    #[inline]
    pub(crate) fn across(&mut self, first: &[u32], second: &[u32]) {
        for &a in first {
            for &b in second {
                self.test(a, b);
            }
        }
    }

    /// Each box of the outside list against every stored box, and against the outside boxes
    /// of higher slots only, so that each pair is tested once. O(outside × slots).
    pub(crate) fn outside_pairs(&mut self, nodes: &OctreeNodes) {
        let proxies = self.proxies;
        for &a in &nodes.outside {
            let aabb = proxies.aabb(a as usize);
            for b in 0..nodes.node_of.len() {
                let place = nodes.node_of[b];
                if place == NO_NODE || (place == OUTSIDE && b <= a as usize) {
                    continue;
                }
                if aabb.overlaps(proxies.aabb(b)) && proxies.can_pair(a as usize, b) {
                    self.pairs.mark(a, b as u32);
                }
            }
        }
    }
}
