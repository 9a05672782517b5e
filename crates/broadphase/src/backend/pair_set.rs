//! The pair manager of [Lecture04]: a hash table of `(id1, id2)` whose chains point into
//! a dense array ("bag") of pairs.
//!
//! Add, find and remove are O(1) on average; enumeration walks the dense array, O(pairs).
//! Removal moves the last pair into the hole, so the array never has gaps. The table doubles
//! when pairs outnumber buckets, which keeps the average chain shorter than one.
//!
//! Memory per pair: 8 bytes of key, 4 of chain link and 4 to 8 of bucket heads (the bucket
//! count is the power of two at or above the pair count), so 16 to 20 bytes,
//! plus the arrays' growth slack (up to twice that just after a doubling).

use crate::{Error, Result};

const NONE: u32 = u32::MAX;

/// The key of an unordered pair of slot indices: the smaller index in the high half.
#[inline]
pub fn pair_key(a: u32, b: u32) -> u64 {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    ((lo as u64) << 32) | hi as u64
}

/// The two slot indices of a key, smaller first.
#[inline]
pub fn key_indices(key: u64) -> (u32, u32) {
    ((key >> 32) as u32, key as u32)
}

/// A set of unordered slot-index pairs (the pair manager of [Lecture04, pair management]: a hash
/// table of keys pointing into a dense array, for O(1) add, remove and find and O(n) enumeration).
/// A broad phase's reported pairs are written through a
/// [`PairTracker`](crate::backend::PairTracker), which turns changes into events; a bare set
/// serves as scratch (candidate pairs, say).
///
/// ```
/// use broadphase::backend::PairTracker;
/// let mut tracker = PairTracker::new();
/// tracker.add(3, 1);
/// tracker.add(1, 3); // unordered: (1, 3) == (3, 1)
/// let set = tracker.set();
/// assert_eq!(set.len(), 1);
/// assert!(set.contains(1, 3));
/// ```
#[derive(Debug, Clone, Default)]
pub struct PairSet {
    keys: Vec<u64>,
    /// Next entry in the same bucket's chain, parallel to `keys`.
    next: Vec<u32>,
    /// First entry of each bucket's chain; the length is a power of two (or zero).
    heads: Vec<u32>,
}

impl PairSet {
    /// Most pairs a set holds: positions and chain links are `u32`, and `u32::MAX` marks the
    /// end of a chain. An insert beyond it fails with [`Error::PairLimit`].
    pub const MAX_LEN: usize = u32::MAX as usize - 1;

    /// An empty set; allocates on first insert.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of pairs.
    #[inline]
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True when there are no pairs.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The dense array of pair keys (see [`key_indices`]), in the set's internal order.
    #[inline]
    pub fn keys(&self) -> &[u64] {
        &self.keys
    }

    /// Iterates over the pairs as `(smaller, larger)` slot indices.
    pub fn iter(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.keys.iter().map(|&k| key_indices(k))
    }

    #[inline]
    fn bucket(&self, key: u64) -> usize {
        // Fibonacci hashing: multiply, keep the top bits. `heads.len()` is a power of two.
        let bits = self.heads.len().trailing_zeros();
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
    }

    /// Position of `key` in the dense array.
    #[inline]
    pub fn find_key(&self, key: u64) -> Option<usize> {
        if self.heads.is_empty() {
            return None;
        }
        let mut entry = self.heads[self.bucket(key)];
        while entry != NONE {
            if self.keys[entry as usize] == key {
                return Some(entry as usize);
            }
            entry = self.next[entry as usize];
        }
        None
    }

    /// True when the pair is present.
    #[inline]
    pub fn contains(&self, a: u32, b: u32) -> bool {
        self.find_key(pair_key(a, b)).is_some()
    }

    /// Inserts `key` if absent. Returns its position and whether it was inserted, or
    /// [`Error::PairLimit`] when the set holds [`PairSet::MAX_LEN`] pairs already.
    pub(crate) fn insert_key(&mut self, key: u64) -> Result<(usize, bool)> {
        if let Some(position) = self.find_key(key) {
            return Ok((position, false));
        }
        if self.keys.len() >= Self::MAX_LEN {
            return Err(Error::PairLimit {
                limit: Self::MAX_LEN,
            });
        }
        if self.keys.len() >= self.heads.len() {
            self.grow();
        }
        let position = self.keys.len();
        let bucket = self.bucket(key);
        self.keys.push(key);
        self.next.push(self.heads[bucket]);
        self.heads[bucket] = position as u32;
        Ok((position, true))
    }

    /// Inserts the pair `(a, b)` if absent. Returns its position and whether it was
    /// inserted, or [`Error::PairLimit`] when the set holds [`PairSet::MAX_LEN`] pairs
    /// already.
    #[inline]
    pub fn insert(&mut self, a: u32, b: u32) -> Result<(usize, bool)> {
        self.insert_key(pair_key(a, b))
    }

    /// Removes `key`; returns whether it was present.
    pub(crate) fn remove_key(&mut self, key: u64) -> bool {
        match self.find_key(key) {
            Some(position) => {
                self.remove_at(position);
                true
            }
            None => false,
        }
    }

    /// Removes the pair `(a, b)`; returns whether it was present.
    pub fn remove(&mut self, a: u32, b: u32) -> bool {
        self.remove_key(pair_key(a, b))
    }

    /// Removes the pair at `position` of the dense array; the last pair moves into its place.
    pub(crate) fn remove_at(&mut self, position: usize) {
        let key = self.keys[position];
        self.unlink(key, position as u32);
        let last = self.keys.len() - 1;
        if position != last {
            let moved_key = self.keys[last];
            // Redirect the link that pointed at `last` to `position`.
            let bucket = self.bucket(moved_key);
            if self.heads[bucket] == last as u32 {
                self.heads[bucket] = position as u32;
            } else {
                let mut entry = self.heads[bucket];
                while self.next[entry as usize] != last as u32 {
                    entry = self.next[entry as usize];
                }
                self.next[entry as usize] = position as u32;
            }
            self.keys[position] = moved_key;
            self.next[position] = self.next[last];
        }
        self.keys.pop();
        self.next.pop();
    }

    fn unlink(&mut self, key: u64, position: u32) {
        let bucket = self.bucket(key);
        if self.heads[bucket] == position {
            self.heads[bucket] = self.next[position as usize];
            return;
        }
        let mut entry = self.heads[bucket];
        while self.next[entry as usize] != position {
            entry = self.next[entry as usize];
        }
        self.next[entry as usize] = self.next[position as usize];
    }

    /// Gives memory back after the set has lost most of its pairs: when the arrays hold more
    /// than four times the pairs (and more than a small floor), they shrink to twice the
    /// pairs and the buckets are rehashed. The set must then lose half its pairs again before
    /// the next shrink, so the O(pairs) rehash is amortised over the removals.
    pub(crate) fn shrink_if_sparse(&mut self) {
        const FLOOR: usize = 1024;
        let len = self.keys.len();
        if self.keys.capacity() <= FLOOR.max(4 * len) && self.heads.len() <= FLOOR.max(4 * len) {
            return;
        }
        let target = FLOOR.max(2 * len);
        self.keys.shrink_to(target);
        self.next.shrink_to(target);
        let buckets = target.next_power_of_two();
        if buckets < self.heads.len() {
            self.heads = vec![NONE; buckets];
            for position in 0..len {
                let bucket = self.bucket(self.keys[position]);
                self.next[position] = self.heads[bucket];
                self.heads[bucket] = position as u32;
            }
        }
    }

    fn grow(&mut self) {
        // `MAX_LEN` pairs never need more than 2^32 buckets, so the count stays indexable.
        let buckets = (self.heads.len() * 2).max(64);
        self.heads.clear();
        self.heads.resize(buckets, NONE);
        for position in 0..self.keys.len() {
            let bucket = self.bucket(self.keys[position]);
            self.next[position] = self.heads[bucket];
            self.heads[bucket] = position as u32;
        }
    }

    /// Removes every pair for which `keep(a, b)` is false. O(pairs).
    pub fn retain(&mut self, mut keep: impl FnMut(u32, u32) -> bool) {
        let mut position = 0;
        while position < self.keys.len() {
            let (a, b) = key_indices(self.keys[position]);
            if keep(a, b) {
                position += 1;
            } else {
                // The last pair moves into `position`; look at it next.
                self.remove_at(position);
            }
        }
    }

    /// Removes all pairs, keeping the allocation.
    pub(crate) fn clear(&mut self) {
        self.keys.clear();
        self.next.clear();
        self.heads.fill(NONE);
    }

    /// Length of the longest chain (for tests and diagnostics).
    pub fn longest_chain(&self) -> usize {
        self.heads
            .iter()
            .map(|&head| {
                let mut length = 0;
                let mut entry = head;
                while entry != NONE {
                    length += 1;
                    entry = self.next[entry as usize];
                }
                length
            })
            .max()
            .unwrap_or(0)
    }

    /// Bytes held by the set's arrays.
    pub fn memory_bytes(&self) -> usize {
        self.keys.capacity() * 8 + (self.next.capacity() + self.heads.capacity()) * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn add_find_remove_against_btreeset() {
        let mut set = PairSet::new();
        let mut model = BTreeSet::new();
        let mut state = 12345u64;
        for step in 0..200_000u32 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let a = ((state >> 33) % 300) as u32;
            let b = ((state >> 13) % 300) as u32;
            if a == b {
                continue;
            }
            let key = pair_key(a, b);
            if step % 3 == 0 {
                assert_eq!(set.remove(a, b), model.remove(&key));
            } else {
                assert_eq!(set.insert(a, b).unwrap().1, model.insert(key));
            }
            if step % 10_000 == 0 {
                assert_eq!(set.len(), model.len());
                let listed: BTreeSet<u64> = set.keys().iter().copied().collect();
                assert_eq!(listed, model);
                for &key in &model {
                    let (x, y) = key_indices(key);
                    assert!(set.contains(y, x));
                }
            }
        }
        assert!(set.longest_chain() < 16, "chain {}", set.longest_chain());
    }

    #[test]
    fn shrinks_after_losing_most_pairs() {
        let mut set = PairSet::new();
        for i in 0..100_000u32 {
            set.insert(i, i + 1).unwrap();
        }
        let peak = set.memory_bytes();
        set.retain(|a, _| a % 100 == 0);
        set.shrink_if_sparse();
        assert!(
            set.memory_bytes() * 10 < peak,
            "{} of {peak}",
            set.memory_bytes()
        );
        assert_eq!(set.len(), 1000);
        for i in (0..100_000u32).step_by(100) {
            let position = set.find_key(pair_key(i, i + 1)).unwrap();
            assert_eq!(set.keys()[position], pair_key(i, i + 1));
        }
        assert!(!set.contains(1, 2));
    }

    #[test]
    fn grows_and_keeps_positions() {
        let mut set = PairSet::new();
        for i in 0..10_000u32 {
            set.insert(i, i + 1).unwrap();
        }
        assert_eq!(set.len(), 10_000);
        assert!(set.heads.len() >= 10_000);
        for i in 0..10_000u32 {
            let position = set.find_key(pair_key(i + 1, i)).unwrap();
            assert_eq!(set.keys()[position], pair_key(i, i + 1));
        }
        set.clear();
        assert!(set.is_empty());
        assert!(!set.contains(0, 1));
    }
}
