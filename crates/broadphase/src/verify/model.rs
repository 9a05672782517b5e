//! The exact model the algorithms are compared with: every live proxy as inserted, and its
//! pairs by testing all of them directly (O(n²)).

use std::collections::BTreeSet;

use super::Verifier;
use crate::{Aabb, CollisionFilter, ProxyKind};

/// One proxy of the model.
#[derive(Debug, Clone, Copy)]
pub(super) struct ModelProxy {
    /// The box as the algorithms store it: as given, or grown by the fat margin.
    pub(super) aabb: Aabb,
    pub(super) kind: ProxyKind,
    pub(super) filter: CollisionFilter,
}

/// The key the verifier gives the proxy of a handle: distinct from the handle, so that a
/// key read back from an algorithm shows it was carried, not recomputed.
pub(super) fn key_of(handle: u32) -> u64 {
    u64::from(handle).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xB0A7
}

/// The box a broad phase with this fat margin stores for `aabb` given in place of `stored`
/// (`None` for an insert): unchanged while the stored box contains it.
pub(super) fn stored_box(margin: f32, stored: Option<Aabb>, aabb: Aabb) -> Aabb {
    if margin > 0.0 {
        match stored {
            Some(stored) if stored.contains(&aabb) => stored,
            _ => aabb.expanded(margin),
        }
    } else {
        aabb
    }
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
