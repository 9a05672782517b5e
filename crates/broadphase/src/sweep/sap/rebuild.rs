//! The fallback for incoherent updates: estimating an update's swaps before sorting, and
//! rebuilding the endpoint arrays and the pairs from scratch when insertion sort would cost
//! more than a sort.

use crate::prune::{complete_pairs_with, PruneOptions};

use super::*;

impl SweepAndPrune {
    /// Swaps beyond which insertion sort costs more than sorting every axis again: about
    /// the comparisons of sorting the 2n endpoints of each of the three axes.
    pub(super) fn swap_budget(&self) -> usize {
        let endpoints = 2 * self.store.proxies.len().max(1);
        let budget = 3 * endpoints * (usize::BITS - endpoints.leading_zeros()) as usize;
        if cfg!(fuzzing) {
            budget / 64 // small inputs reach the rebuild too
        } else {
            budget.max(256)
        }
    }

    /// The swaps insertion sort would make for the moved boxes, estimated from up to
    /// [`SWAP_SAMPLES`] of them spread evenly over the move buffer: for each, how many
    /// positions its minimum on x moves (a binary search of the new value in the sorted
    /// array), times the six endpoints of a box. O(samples × log n).
    pub(super) fn estimated_swaps(&self) -> usize {
        let moved = self.moved.len();
        let samples = moved.min(SWAP_SAMPLES);
        let stride = moved / samples.max(1);
        let x = &self.axes[0];
        let mut displaced = 0usize;
        for k in 0..samples {
            let slot = self.moved.slot(k * stride);
            if !self.store.proxies.is_live(slot) || !self.in_arrays[slot] {
                continue;
            }
            let new_min = self.store.proxies.aabb(slot).min().x + 0.0;
            let rank = x.partition_point(|e| e.value < new_min);
            displaced += rank.abs_diff(self.positions[slot][0] as usize);
        }
        displaced * 6 * moved / samples.max(1)
    }

    /// Gives up insertion sort for this update: every endpoint in the arrays takes its box's
    /// current value, each axis is sorted again, and the pairs of the boxes in the arrays are
    /// recomputed whole by one-shot box pruning. Pairs the interrupted sort added overlap
    /// (the boxes had their final values), so the recomputation marks them again. Proxies
    /// inserted this update are not in the arrays yet: `insert_new` adds them after.
    pub(super) fn rebuild(&mut self) {
        self.rebuilds += 1;
        let proxies = &self.store.proxies;
        for (axis, endpoints) in self.axes.iter_mut().enumerate() {
            let last = endpoints.len() - 1;
            for e in &mut endpoints[1..last] {
                let b = proxies.aabb(e.slot());
                let value = if e.is_max() { b.max() } else { b.min() };
                e.value = value[axis] + 0.0;
            }
            // Ties are broken by the slot so that the order depends only on the boxes.
            endpoints[1..last].sort_unstable_by(|a, b| {
                a.value
                    .total_cmp(&b.value)
                    .then((a.data & 1).cmp(&(b.data & 1)))
                    .then(a.data.cmp(&b.data))
            });
        }
        self.reindex();

        let proxies = &self.store.proxies;
        self.rebuild_boxes.clear();
        self.rebuild_slots.clear();
        for slot in proxies.live_slots() {
            if self.in_arrays[slot] {
                self.rebuild_boxes.push(*proxies.aabb(slot));
                self.rebuild_slots.push(slot as u32);
            }
        }
        // Fewer boxes than u32::MAX (the table hands out u32 slots) and valid options: fails
        // only on the pair limit (the boxes' pairs before filters, a superset of the pairs).
        let options = PruneOptions {
            max_pairs: Some(self.store.pairs.limit()),
            ..PruneOptions::default()
        };
        let (proxies, pairs) = self.store.split_mut();
        if complete_pairs_with(
            &self.rebuild_boxes,
            &options,
            &mut self.prune,
            &mut self.found,
        )
        .is_err()
        {
            pairs.refuse();
        }
        pairs.begin_full();
        for &(i, j) in &self.found {
            let (a, b) = (
                self.rebuild_slots[i as usize],
                self.rebuild_slots[j as usize],
            );
            if proxies.can_pair(a as usize, b as usize) {
                pairs.mark(a, b);
            }
        }
        pairs.end_full();
        self.moved.clear();
    }
}
