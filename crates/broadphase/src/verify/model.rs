//! The exact model the algorithms are compared with: every live proxy as inserted, and its
//! pairs by testing all of them directly (O(n²)).

use std::collections::BTreeSet;

use super::Verifier;
use crate::{Aabb, CollisionFilter, ProxyKind};

/// One proxy of the model.
#[derive(Debug, Clone, Copy)]
pub(super) struct ModelProxy {
    pub(super) aabb: Aabb,
    pub(super) kind: ProxyKind,
    pub(super) filter: CollisionFilter,
}

impl Verifier {
    /// The exact pair set of the live proxies, as sorted handle pairs.
    pub(super) fn exact_pairs(&self) -> BTreeSet<(u32, u32)> {
        let mut pairs = BTreeSet::new();
        for (x, &a) in self.live.iter().enumerate() {
            let pa = self.model[a as usize].expect("live handle");
            for &b in &self.live[x + 1..] {
                let pb = self.model[b as usize].expect("live handle");
                let both_static = pa.kind == ProxyKind::Static && pb.kind == ProxyKind::Static;
                if !both_static && pa.filter.allows(pb.filter) && pa.aabb.overlaps(&pb.aabb) {
                    pairs.insert((a.min(b), a.max(b)));
                }
            }
        }
        pairs
    }
}
