//! The update that finds every pair, in a scene of a few hundred proxies: one sort and sweep
//! of their exact boxes instead of a traversal of copies of the trees. A small scene's trees
//! are a few levels deep, and copying them to traverse costs more than sorting the boxes;
//! the sweep keeps static boxes from meeting each other as the trees do.

use crate::backend::ProxyStore;
use crate::prune::{pairs_except_within_b, PruneOptions, PruneScratch};
use crate::Aabb;

/// Scenes of at most this many proxies find every pair by [`SmallSweep`].
pub(super) const MAX_PROXIES: usize = 256;

/// Scratch of the sweep: the live boxes (the static ones last) with their slots, the
/// kernel's buffers and the pairs it found (indices into the boxes).
#[derive(Debug, Clone, Default)]
pub(super) struct SmallSweep {
    boxes: Vec<Aabb>,
    slots: Vec<u32>,
    prune: PruneScratch,
    found: Vec<(u32, u32)>,
}

impl SmallSweep {
    /// Marks in `store`'s pair tracker every pair of live proxies whose exact boxes overlap
    /// and that may pair, as a full recompute; refuses the step when they pass the pair
    /// limit.
    pub(super) fn mark_all(&mut self, store: &mut ProxyStore) {
        let first_static = store.gather_by_kind(|b| *b, &mut self.boxes, &mut self.slots);
        // The candidates are the pairs before filters, a superset of the pairs: no more than
        // the limit may be kept. The options are valid and the boxes few, so the kernel fails
        // only on the limit.
        let options = PruneOptions {
            max_pairs: Some(store.pairs.limit()),
            ..PruneOptions::default()
        };
        let (moving, statics) = self.boxes.split_at(first_static);
        if pairs_except_within_b(moving, statics, &options, &mut self.prune, &mut self.found)
            .is_err()
        {
            store.pairs.refuse();
        }
        let slots = &self.slots;
        store.mark_allowed(&self.found, |i| slots[i as usize]);
    }

    pub(super) fn memory_bytes(&self) -> usize {
        self.boxes.capacity() * std::mem::size_of::<Aabb>()
            + (self.slots.capacity() + self.found.capacity() * 2) * 4
            + self.prune.memory_bytes()
    }
}
