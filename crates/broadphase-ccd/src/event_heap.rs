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
    entries: Vec<HeapEntry>,
    /// Per body: its tie key.
    key: Vec<u64>,
    /// Per body: its position in `entries`.
    slot: Vec<u32>,
}

impl EventHeap {
    /// A heap of `n` bodies, all with no predicted event (time +∞).
    pub(crate) fn new(n: usize) -> Self {
        EventHeap {
            entries: (0..n as u32)
                .map(|body| HeapEntry {
                    time: f64::INFINITY,
                    body,
                })
                .collect(),
            key: vec![u64::MAX; n],
            slot: (0..n as u32).collect(),
        }
    }

    /// `true` when `x` comes strictly before `y` in `(time, key)` order.
    #[inline]
    fn before(&self, x: HeapEntry, y: HeapEntry) -> bool {
        x.time < y.time
            || (x.time == y.time && self.key[x.body as usize] < self.key[y.body as usize])
    }

    #[inline]
    pub(crate) fn top(&self) -> HeapTop {
        let e = self.entries[0];
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
        let old = HeapEntry {
            time: self.entries[at].time,
            body: body as u32,
        };
        let old_key = self.key[body];
        self.key[body] = key;
        let entry = HeapEntry {
            time,
            body: body as u32,
        };
        if time < old.time || (time == old.time && key < old_key) {
            self.sift_up(at, entry);
        } else {
            self.sift_down(at, entry);
        }
    }

    fn sift_up(&mut self, mut at: usize, entry: HeapEntry) {
        while at > 0 {
            let parent = (at - 1) / ARITY;
            let p = self.entries[parent];
            if !self.before(entry, p) {
                break;
            }
            self.entries[at] = p;
            self.slot[p.body as usize] = at as u32;
            at = parent;
        }
        self.entries[at] = entry;
        self.slot[entry.body as usize] = at as u32;
    }

    fn sift_down(&mut self, mut at: usize, entry: HeapEntry) {
        let n = self.entries.len();
        loop {
            let first = ARITY * at + 1;
            let (child, c) = if first + ARITY <= n {
                // A full node (all but at most one node of the heap): the earliest of its
                // four children by a tournament, two independent comparisons then one.
                let kids: &[HeapEntry; ARITY] = self.entries[first..first + ARITY]
                    .try_into()
                    .expect("a full node has ARITY children");
                let (k01, e01) = if self.before(kids[1], kids[0]) {
                    (1, kids[1])
                } else {
                    (0, kids[0])
                };
                let (k23, e23) = if self.before(kids[3], kids[2]) {
                    (3, kids[3])
                } else {
                    (2, kids[2])
                };
                if self.before(e23, e01) {
                    (first + k23, e23)
                } else {
                    (first + k01, e01)
                }
            } else if first < n {
                let mut child = first;
                let mut c = self.entries[first];
                for k in first + 1..n {
                    let candidate = self.entries[k];
                    if self.before(candidate, c) {
                        (child, c) = (k, candidate);
                    }
                }
                (child, c)
            } else {
                break;
            };
            if !self.before(c, entry) {
                break;
            }
            self.entries[at] = c;
            self.slot[c.body as usize] = at as u32;
            at = child;
        }
        self.entries[at] = entry;
        self.slot[entry.body as usize] = at as u32;
    }

    /// Checks the heap order and the position index (for tests).
    #[cfg(test)]
    pub(crate) fn is_valid(&self) -> bool {
        (1..self.entries.len())
            .all(|i| !self.before(self.entries[i], self.entries[(i - 1) / ARITY]))
            && self
                .entries
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
}
