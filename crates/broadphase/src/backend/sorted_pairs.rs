//! The full-recompute style's diff: the pairs found in a step are sorted and merged with
//! the previous step's sorted pairs, so that a pair present in both steps costs a sequential
//! comparison, not a lookup in the hash table.
//!
//! A step with p pairs, of which c began or ended, costs O(p) sequential work (a radix sort
//! over the bits the slot indices use, a merge) plus c hash-table updates, where looking up
//! every pair would cost p random accesses into a table that outgrows the caches at a few
//! tens of thousands of pairs.

use crate::util::radix_sort::scatter_pass;

/// Below this many keys a comparison sort beats the radix passes' fixed costs.
const SMALL: usize = 1024;

/// Widest digit of a radix pass: 2,048 counters per pass stay in the first-level cache.
const MAX_DIGIT_BITS: u32 = 11;

/// The keys (see [`pair_key`](crate::backend::pair_key)) marked in a step, and the sorted
/// keys of the pair set they are diffed against.
#[derive(Debug, Clone, Default)]
pub(crate) struct SortedPairs {
    /// Keys marked this step, in marking order, duplicates allowed; sorted and deduplicated
    /// by [`SortedPairs::sort_marked`].
    marked: Vec<u64>,
    /// Largest slot index among the marked keys.
    max_slot: u32,
    /// The pair set's keys in ascending order, when `valid`.
    sorted: Vec<u64>,
    valid: bool,
    scratch: Vec<u64>,
    counts: Vec<u32>,
}

impl SortedPairs {
    /// Starts a step: no key marked.
    pub(crate) fn begin(&mut self) {
        self.marked.clear();
        self.max_slot = 0;
    }

    /// Keys marked so far, duplicates included.
    #[inline]
    pub(crate) fn marked_len(&self) -> usize {
        self.marked.len()
    }

    #[inline]
    pub(crate) fn mark(&mut self, key: u64) {
        // The larger index is the low half.
        self.max_slot = self.max_slot.max(key as u32);
        self.marked.push(key);
    }

    /// Sorts the marked keys and drops duplicates; returns how many distinct keys remain.
    pub(crate) fn sort_marked(&mut self) -> usize {
        sort_keys(
            &mut self.marked,
            &mut self.scratch,
            &mut self.counts,
            self.max_slot,
        );
        self.marked.dedup();
        self.marked.len()
    }

    /// Forgets the sorted copy of the pair set (the set changed by other means).
    #[inline]
    pub(crate) fn invalidate(&mut self) {
        self.valid = false;
    }

    /// Makes the sorted copy of the pair set from its keys `current`, unless the copy is
    /// valid (the set has not changed since the last [`SortedPairs::diff_among`]).
    pub(crate) fn take_sorted_copy(&mut self, current: &[u64]) {
        if self.valid {
            return;
        }
        self.sorted.clear();
        self.sorted.extend_from_slice(current);
        let max_slot = current.iter().map(|&k| k as u32).max().unwrap_or(0);
        sort_keys(
            &mut self.sorted,
            &mut self.scratch,
            &mut self.counts,
            max_slot,
        );
        self.valid = true;
    }

    /// Merges the marked keys, sorted by [`SortedPairs::sort_marked`], with the sorted copy
    /// of the pair set ([`SortedPairs::take_sorted_copy`]), in ascending key order:
    /// `change(key, false)` for every marked key not in the set (begun), `change(key, true)`
    /// for every key of the set not marked (ended) that has a slot for which `changed` holds
    /// (`None`: every slot). Afterwards the copy is the marked keys plus the unmarked keys
    /// of unchanged slots, which the caller makes the set: a step that changed a few slots
    /// marks only their pairs.
    pub(crate) fn diff_among(
        &mut self,
        changed: Option<impl Fn(u32) -> bool>,
        mut change: impl FnMut(u64, bool),
    ) {
        debug_assert!(self.valid);
        let (old, new) = (&self.sorted, &self.marked);
        let partial = changed.is_some();
        // A key of the set that is not marked ended unless neither of its slots changed.
        let ended = |key: u64| {
            changed
                .as_ref()
                .is_none_or(|changed| changed((key >> 32) as u32) || changed(key as u32))
        };
        // The radix sort's scratch, free here; left as it is when unused, so that the next
        // sort need not fill it again.
        let merged = &mut self.scratch;
        if partial {
            merged.clear();
            merged.reserve(old.len() + new.len());
        }
        let (mut i, mut j) = (0, 0);
        while i < old.len() && j < new.len() {
            let (o, n) = (old[i], new[j]);
            if o == n {
                if partial {
                    merged.push(o);
                }
                i += 1;
                j += 1;
            } else if o < n {
                if ended(o) {
                    change(o, true);
                } else {
                    merged.push(o);
                }
                i += 1;
            } else {
                change(n, false);
                if partial {
                    merged.push(n);
                }
                j += 1;
            }
        }
        for &o in &old[i..] {
            if ended(o) {
                change(o, true);
            } else {
                merged.push(o);
            }
        }
        for &n in &new[j..] {
            change(n, false);
            if partial {
                merged.push(n);
            }
        }
        if partial {
            std::mem::swap(&mut self.sorted, &mut self.scratch);
        } else {
            std::mem::swap(&mut self.sorted, &mut self.marked);
        }
        self.marked.clear();
        self.valid = true;
    }

    /// Lets the buffers shrink to `floor / 2` keys when they hold more than `floor`.
    pub(crate) fn shrink_above(&mut self, floor: usize) {
        for list in [&mut self.marked, &mut self.sorted, &mut self.scratch] {
            if list.capacity() > floor {
                list.shrink_to(floor / 2);
            }
        }
    }

    /// Drops everything, keeping the allocations.
    pub(crate) fn clear(&mut self) {
        self.marked.clear();
        self.sorted.clear();
        self.valid = false;
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        (self.marked.capacity() + self.sorted.capacity() + self.scratch.capacity()) * 8
            + self.counts.capacity() * 4
    }
}

/// Sorts pair keys whose slot indices are at most `max_slot` in ascending order: each key
/// is packed to the `2 * bits` bits its two indices use (`bits` for `max_slot`), radix sorted
/// with digits of at most [`MAX_DIGIT_BITS`] bits, and unpacked.
fn sort_keys(keys: &mut Vec<u64>, scratch: &mut Vec<u64>, counts: &mut Vec<u32>, max_slot: u32) {
    if keys.len() < SMALL {
        keys.sort_unstable();
        return;
    }
    let bits = u32::BITS - max_slot.leading_zeros();
    let total = 2 * bits;
    let passes = total.div_ceil(MAX_DIGIT_BITS).max(1);
    let width = total.div_ceil(passes);
    let buckets = 1usize << width;
    let mask = (buckets - 1) as u64;
    counts.clear();
    counts.resize(buckets * passes as usize, 0);
    // Pack and count every pass's digits in one read, with the pass count a constant so that
    // the digit loop unrolls.
    match passes {
        1 => pack_and_count::<1>(keys, counts, bits, width),
        2 => pack_and_count::<2>(keys, counts, bits, width),
        3 => pack_and_count::<3>(keys, counts, bits, width),
        4 => pack_and_count::<4>(keys, counts, bits, width),
        5 => pack_and_count::<5>(keys, counts, bits, width),
        _ => pack_and_count::<6>(keys, counts, bits, width),
    }
    scratch.resize(keys.len(), 0);
    let mut in_scratch = false;
    for pass in 0..passes as usize {
        let count = &mut counts[pass * buckets..(pass + 1) * buckets];
        let (from, to) = if in_scratch {
            (&*scratch, &mut *keys)
        } else {
            (&*keys, &mut *scratch)
        };
        if scatter_pass(count, from, to, pass as u32 * width, mask) {
            in_scratch = !in_scratch;
        }
    }
    if in_scratch {
        std::mem::swap(keys, scratch);
    }
    let low = (1u64 << bits) - 1;
    for key in keys.iter_mut() {
        *key = ((*key >> bits) << 32) | (*key & low);
    }
}

/// Packs each key to `2 * bits` bits (see [`sort_keys`]) and counts its `PASSES` digits of
/// `width` bits into `counts`, pass `p`'s counters at `p << width`.
fn pack_and_count<const PASSES: usize>(
    keys: &mut [u64],
    counts: &mut [u32],
    bits: u32,
    width: u32,
) {
    let mask = (1u64 << width) - 1;
    let counts = &mut counts[..PASSES << width];
    for key in keys.iter_mut() {
        let packed = ((*key >> 32) << bits) | (*key & 0xFFFF_FFFF);
        *key = packed;
        for pass in 0..PASSES {
            let digit = ((packed >> (pass as u32 * width)) & mask) as usize;
            counts[(pass << width) | digit] += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::pair_key;
    use crate::util::SplitMix64;

    /// The radix sort against the standard sort, for slot ranges from one bit to all 32
    /// (the passes and digit widths change with them) and for lengths around the threshold.
    #[test]
    fn sorts_keys_like_std_for_every_slot_range() {
        let mut rng = SplitMix64::new(5);
        let (mut scratch, mut counts) = (Vec::new(), Vec::new());
        for bits in [1u32, 2, 5, 11, 12, 17, 23, 31, 32] {
            for len in [0, 1, SMALL - 1, SMALL, 5000] {
                let top = if bits == 32 {
                    u32::MAX
                } else {
                    (1u32 << bits) - 1
                };
                let mut keys: Vec<u64> = (0..len)
                    .map(|_| {
                        let a = (rng.next_u64() as u32) & top;
                        let b = (rng.next_u64() as u32) & top;
                        pair_key(a, b)
                    })
                    .collect();
                let max_slot = keys.iter().map(|&k| k as u32).max().unwrap_or(0);
                let mut expected = keys.clone();
                expected.sort_unstable();
                sort_keys(&mut keys, &mut scratch, &mut counts, max_slot);
                assert_eq!(keys, expected, "{bits} bits, {len} keys");
            }
        }
    }

    const EVERY_SLOT: Option<fn(u32) -> bool> = None;

    #[test]
    fn diff_lists_ended_and_begun_keys_in_order() {
        let mut pairs = SortedPairs::default();
        let current = [pair_key(1, 2), pair_key(0, 5), pair_key(3, 4)];
        pairs.begin();
        for key in [
            pair_key(3, 4),
            pair_key(0, 1),
            pair_key(4, 3),
            pair_key(6, 2),
        ] {
            pairs.mark(key);
        }
        assert_eq!(pairs.sort_marked(), 3);
        let (mut ended, mut begun) = (Vec::new(), Vec::new());
        let mut record = |k, present_before| {
            if present_before {
                ended.push(k)
            } else {
                begun.push(k)
            }
        };
        pairs.take_sorted_copy(&current);
        pairs.diff_among(EVERY_SLOT, &mut record);
        assert_eq!(ended, vec![pair_key(0, 5), pair_key(1, 2)]);
        assert_eq!(begun, vec![pair_key(0, 1), pair_key(2, 6)]);
        // The copy is now the marked keys: the next diff does not read `current`.
        pairs.begin();
        pairs.mark(pair_key(0, 1));
        pairs.sort_marked();
        let (mut ended, mut begun) = (Vec::new(), Vec::new());
        pairs.take_sorted_copy(&[pair_key(9, 9)]); // ignored: the copy is valid
        pairs.diff_among(EVERY_SLOT, |k, present_before| {
            if present_before {
                ended.push(k)
            } else {
                begun.push(k)
            }
        });
        assert_eq!(ended, vec![pair_key(2, 6), pair_key(3, 4)]);
        assert!(begun.is_empty());
    }

    /// Restricted to changed slots, the diff ends only the unmarked keys with a changed slot
    /// and keeps the others, in order, in the copy the next diff starts from.
    #[test]
    fn restricted_diff_keeps_the_pairs_of_unchanged_slots() {
        let mut pairs = SortedPairs::default();
        let current = [
            pair_key(1, 2),
            pair_key(0, 5),
            pair_key(3, 4),
            pair_key(6, 7),
        ];
        // Slots 0 and 3 changed: (0, 5) ends, (3, 4) stays marked, (0, 3) begins; (1, 2) and
        // (6, 7) are not marked but kept.
        let changed = |slot: u32| slot == 0 || slot == 3;
        pairs.begin();
        for key in [pair_key(4, 3), pair_key(3, 0)] {
            pairs.mark(key);
        }
        pairs.sort_marked();
        pairs.take_sorted_copy(&current);
        let (mut ended, mut begun) = (Vec::new(), Vec::new());
        pairs.diff_among(Some(changed), |k, present_before| {
            if present_before {
                ended.push(k)
            } else {
                begun.push(k)
            }
        });
        assert_eq!(ended, vec![pair_key(0, 5)]);
        assert_eq!(begun, vec![pair_key(0, 3)]);
        let expected = [
            pair_key(0, 3),
            pair_key(1, 2),
            pair_key(3, 4),
            pair_key(6, 7),
        ];
        assert_eq!(pairs.sorted, expected);
        // Nothing marked and nothing changed: the copy stays.
        pairs.begin();
        pairs.sort_marked();
        pairs.diff_among(Some(|_: u32| false), |_, _| panic!("no change"));
        assert_eq!(pairs.sorted, expected);
    }
}
