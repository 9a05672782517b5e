//! Indexed binary min-heap holding exactly one predicted event per body.

/// One heap entry: a body's predicted event time. The tie key, needed only between equal
/// times, is kept per body outside the heap so that an entry is 16 bytes and the four children
/// of a node span one cache line.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HeapEntry {
    pub(crate) time: f64,
    pub(crate) body: u32,
}

/// The top of the heap: a body's predicted event time and tie key.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HeapTop {
    pub(crate) time: f64,
    pub(crate) key: u64,
    pub(crate) body: u32,
}

/// Children per heap node: a 4-ary heap halves the depth of a binary one, and the four
/// children of a node are adjacent in memory.
const ARITY: usize = 4;

/// 4-ary min-heap over `(time, key)` with one entry per body and a position index, so a body's
/// prediction is replaced in place in O(log n): memory stays O(n) however many events are
/// predicted (the thesis's objection to Sedgewick's O(n²) priority queue does not apply).
#[derive(Debug, Clone)]
pub(crate) struct EventHeap {
    /// The heap array is `storage[offset..offset + len]`; the offset (0 to 3 entries) puts
    /// every group of four children (positions `4 k + 1 ..= 4 k + 4`) in one 64-byte cache
    /// line instead of across two. (A clone may lose that alignment: only speed depends on it.)
    storage: Vec<HeapEntry>,
    offset: usize,
    len: usize,
    /// Per body: its tie key.
    key: Vec<u64>,
    /// Per body: its position in the heap array.
    slot: Vec<u32>,
}

/// `true` when `x` comes strictly before `y` in `(time, key)` order.
///
/// Written so that the coin-flip `<` is a value, not a branch (callers select with it); the
/// only branch is the rarely taken, well predicted one for equal times.
#[inline(always)]
fn before(key: &[u64], x: HeapEntry, y: HeapEntry) -> bool {
    if x.time == y.time {
        key[x.body as usize] < key[y.body as usize]
    } else {
        x.time < y.time
    }
}

impl EventHeap {
    /// A heap of `n` bodies, all with no predicted event (time +∞).
    pub(crate) fn new(n: usize) -> Self {
        let empty = HeapEntry {
            time: f64::INFINITY,
            body: 0,
        };
        let mut storage = vec![empty; n + ARITY - 1];
        // Entry size 16 divides 64, and allocations are at least 8-byte aligned: an offset
        // of 0 to 3 entries lines position 1 (the first child group) up with a cache line
        // whenever the allocation is 16-byte aligned, as large ones are.
        let first_child = storage.as_ptr() as usize + std::mem::size_of::<HeapEntry>();
        let offset = (64 - first_child % 64) % 64 / std::mem::size_of::<HeapEntry>();
        for (body, entry) in storage[offset..offset + n].iter_mut().enumerate() {
            entry.body = body as u32;
        }
        EventHeap {
            storage,
            offset,
            len: n,
            key: vec![u64::MAX; n],
            slot: (0..n as u32).collect(),
        }
    }

    /// The heap array.
    #[inline(always)]
    fn entries(&self) -> &[HeapEntry] {
        &self.storage[self.offset..self.offset + self.len]
    }

    #[inline]
    pub(crate) fn top(&self) -> HeapTop {
        let e = self.entries()[0];
        HeapTop {
            time: e.time,
            key: self.key[e.body as usize],
            body: e.body,
        }
    }

    /// Replaces body's entry and restores the heap order.
    #[inline]
    pub(crate) fn set(&mut self, body: usize, time: f64, key: u64) {
        let at = self.slot[body] as usize;
        let old_time = self.entries()[at].time;
        let old_key = self.key[body];
        self.key[body] = key;
        let entry = HeapEntry {
            time,
            body: body as u32,
        };
        if time < old_time || (time == old_time && key < old_key) {
            self.sift_up(at, entry);
        } else {
            self.sift_down(at, entry);
        }
    }

    fn sift_up(&mut self, mut at: usize, entry: HeapEntry) {
        let entries = &mut self.storage[self.offset..self.offset + self.len];
        let (key, slot) = (&self.key[..], &mut self.slot[..]);
        while at > 0 {
            let parent = (at - 1) / ARITY;
            let p = entries[parent];
            if !before(key, entry, p) {
                break;
            }
            entries[at] = p;
            slot[p.body as usize] = at as u32;
            at = parent;
        }
        entries[at] = entry;
        slot[entry.body as usize] = at as u32;
    }

    fn sift_down(&mut self, mut at: usize, entry: HeapEntry) {
        let entries = &mut self.storage[self.offset..self.offset + self.len];
        let (key, slot) = (&self.key[..], &mut self.slot[..]);
        let n = entries.len();
        loop {
            let first = ARITY * at + 1;
            // Touch the grandchildren (four adjacent cache lines) before choosing the child:
            // the next level's load then overlaps this level's instead of following it.
            let grandchildren = ARITY * first + 1;
            if grandchildren + ARITY * ARITY <= n {
                for line in 0..ARITY {
                    std::hint::black_box(entries[grandchildren + ARITY * line].time);
                }
            }
            let (child, c) = if first + ARITY <= n {
                // A full node (all but at most one node of the heap): the earliest of its
                // four children by a tournament, two independent comparisons then one.
                let kids: &[HeapEntry; ARITY] = entries[first..first + ARITY]
                    .try_into()
                    .expect("a full node has ARITY children");
                let k01 = usize::from(before(key, kids[1], kids[0]));
                let k23 = 2 + usize::from(before(key, kids[3], kids[2]));
                let k = if before(key, kids[k23], kids[k01]) {
                    k23
                } else {
                    k01
                };
                (first + k, kids[k])
            } else if first < n {
                let mut child = first;
                let mut c = entries[first];
                for k in first + 1..n {
                    let candidate = entries[k];
                    if before(key, candidate, c) {
                        (child, c) = (k, candidate);
                    }
                }
                (child, c)
            } else {
                break;
            };
            if !before(key, c, entry) {
                break;
            }
            entries[at] = c;
            slot[c.body as usize] = at as u32;
            at = child;
        }
        entries[at] = entry;
        slot[entry.body as usize] = at as u32;
    }

    /// Checks the heap order and the position index (for tests).
    #[cfg(test)]
    pub(crate) fn is_valid(&self) -> bool {
        let entries = self.entries();
        (1..entries.len()).all(|i| !before(&self.key, entries[i], entries[(i - 1) / ARITY]))
            && entries
                .iter()
                .enumerate()
                .all(|(at, e)| self.slot[e.body as usize] as usize == at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_minimum_on_top_under_arbitrary_updates() {
        let mut heap = EventHeap::new(50);
        let mut model = vec![(f64::INFINITY, u64::MAX); 50];
        let mut state = 12345u64;
        for step in 0..2000u64 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let body = (state >> 33) as usize % 50;
            let time = ((state >> 20) % 97) as f64;
            heap.set(body, time, step);
            model[body] = (time, step);
            assert!(heap.is_valid());
            let top = heap.top();
            let best = model
                .iter()
                .enumerate()
                .min_by(|a, b| a.1 .0.total_cmp(&b.1 .0).then(a.1 .1.cmp(&b.1 .1)))
                .unwrap();
            assert_eq!(top.body as usize, best.0);
        }
    }

    #[test]
    fn child_groups_start_on_cache_lines() {
        for n in [1, 5, 17, 1000, 100_000] {
            let heap = EventHeap::new(n);
            if heap.storage.as_ptr() as usize % 16 == 0 {
                let first_child = heap.entries().as_ptr() as usize + size_of::<HeapEntry>();
                assert_eq!(first_child % 64, 0, "n = {n}");
            }
            assert_eq!(heap.entries().len(), n);
            assert!(heap.is_valid());
        }
    }
}
