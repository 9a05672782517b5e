//! The update of [`DynamicTreeBroadPhase`] that finds every pair again from the trees, for
//! steps in which most leaves moved: the dynamic tree against itself and against the static
//! tree, each pair of overlapping leaves tested on its exact boxes, and the pairs marked for
//! the pair tracker's sorted merge with the last step's.
//!
//! The incremental update pays per candidate of a re-inserted leaf (a tree query, a hashed
//! insert or removal per changed candidate) and a pass over all candidates; when most leaves
//! are re-inserted, nearly every candidate is such a candidate, and one pair traversal
//! ([Zych16, ch. 2.1.4]) of copies of the trees laid out for it (`FlatTree`) finds them all
//! for less. The candidate set is not kept on this path; the first incremental update after
//! it finds them all again by the same traversal of the leaf boxes.

use super::{small, DynamicTreeBroadPhase};
use crate::backend::{PairSet, ProxyTable};
use crate::tree::dynamic::FlatTree;
use crate::tree::TraversalStack;

impl DynamicTreeBroadPhase {
    /// Finds every pair from the trees, marking them with the pair tracker's full-recompute
    /// style. With `candidates`, traverses the leaf boxes, fills the candidate set with every
    /// allowed pair of overlapping leaves and `is_pair` with whether each is a pair, as the
    /// incremental update expects them; without, traverses the exact boxes (in a small
    /// scene, sorts and sweeps them instead: `small`) and leaves both empty and stale.
    pub(super) fn find_all_pairs(&mut self, candidates: bool) {
        if !candidates && self.store.proxies.len() <= small::MAX_PROXIES {
            self.candidates.clear();
            self.is_pair.clear();
            self.candidates_stale = true;
            self.small.mark_all(&mut self.store);
            return;
        }
        let proxies = &self.store.proxies;
        let leaves = &self.leaves;
        let leaf = |slot: u32| {
            let aabb = if candidates {
                leaves.fat(slot)
            } else {
                *proxies.aabb(slot as usize)
            };
            (aabb, proxies.filter(slot as usize))
        };
        self.flat_dynamic.copy_of(&self.dynamic_tree, leaf);
        // Static proxies seldom change: their copy is kept while they do not.
        let of = Some((self.static_tree.revision(), !candidates));
        if self.flat_static_of != of {
            self.flat_static.copy_of(&self.static_tree, leaf);
            self.flat_static_of = of;
        }
        let pairs = &mut self.store.pairs;
        pairs.begin_full();
        self.candidates.clear();
        self.is_pair.clear();
        let copies = (&self.flat_dynamic, &self.flat_static);
        if candidates {
            let mut keep = Keep {
                proxies,
                limit: pairs.limit(),
                candidates: &mut self.candidates,
                is_pair: &mut self.is_pair,
                refused: false,
            };
            traverse(copies, &mut self.pair_stack, |a, b| {
                if keep.candidate(a, b) == Some(true) {
                    pairs.mark(a, b);
                }
            });
            if keep.refused {
                pairs.refuse();
            }
        } else {
            // The copies hold the exact boxes, and the filters are applied: the leaves a
            // traversal meets are pairs (a tree holds the proxies of one kind, and static
            // proxies never meet each other).
            traverse(copies, &mut self.pair_stack, |a, b| pairs.mark(a, b));
        }
        self.candidates_stale = !candidates;
        pairs.end_full();
    }
}

/// Calls `visit` for every pair of leaves of the dynamic copy, and across the dynamic and
/// the static copy, whose boxes overlap and whose filters allow each other.
fn traverse(
    (dynamic, statics): (&FlatTree, &FlatTree),
    stack: &mut TraversalStack<(u32, u32)>,
    mut visit: impl FnMut(u32, u32),
) {
    dynamic.self_pairs(stack, &mut visit);
    dynamic.pairs_with(statics, stack, &mut visit);
}

/// The candidate set being filled again.
struct Keep<'a> {
    proxies: &'a ProxyTable,
    /// The candidates count against the pair limit too: they are the pairs of the leaf
    /// boxes, a superset of the pairs.
    limit: usize,
    candidates: &'a mut PairSet,
    is_pair: &'a mut Vec<bool>,
    refused: bool,
}

impl Keep<'_> {
    /// Adds `(a, b)`, two proxies that may pair, as a candidate; returns whether it is a
    /// pair, or `None` when the candidates reached the pair limit.
    #[inline]
    fn candidate(&mut self, a: u32, b: u32) -> Option<bool> {
        let (x, y) = (a as usize, b as usize);
        if self.candidates.len() >= self.limit {
            self.refused = true;
            return None;
        }
        // Each pair of leaves is met once, and the set was empty.
        let _ = self.candidates.insert(a, b);
        let pair = self.proxies.aabb(x).overlaps(self.proxies.aabb(y));
        self.is_pair.push(pair);
        Some(pair)
    }
}
