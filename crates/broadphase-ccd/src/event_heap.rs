//! Indexed binary min-heap holding exactly one predicted event per body.

/// One heap entry: a body's predicted event time and tie key.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HeapEntry {
    pub(crate) time: f64,
    pub(crate) key: u64,
    pub(crate) body: u32,
}

impl HeapEntry {
    #[inline]
    fn before(&self, other: &HeapEntry) -> bool {
        self.time < other.time || (self.time == other.time && self.key < other.key)
    }
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
    slot: Vec<u32>,
}

impl EventHeap {
    /// A heap of `n` bodies, all with no predicted event (time +∞).
    pub(crate) fn new(n: usize) -> Self {
        EventHeap {
            entries: (0..n as u32)
                .map(|body| HeapEntry {
                    time: f64::INFINITY,
                    key: u64::MAX,
                    body,
                })
                .collect(),
            slot: (0..n as u32).collect(),
        }
    }

    #[inline]
    pub(crate) fn top(&self) -> HeapEntry {
        self.entries[0]
    }

    /// Replaces body's entry and restores the heap order.
    #[inline]
    pub(crate) fn set(&mut self, body: usize, time: f64, key: u64) {
        let at = self.slot[body] as usize;
        let entry = HeapEntry {
            time,
            key,
            body: body as u32,
        };
        let old = self.entries[at];
        if entry.before(&old) {
            self.sift_up(at, entry);
        } else {
            self.sift_down(at, entry);
        }
    }

    fn sift_up(&mut self, mut at: usize, entry: HeapEntry) {
        while at > 0 {
            let parent = (at - 1) / ARITY;
            let p = self.entries[parent];
            if !entry.before(&p) {
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
            if first >= n {
                break;
            }
            let mut child = first;
            for c in first + 1..(first + ARITY).min(n) {
                if self.entries[c].before(&self.entries[child]) {
                    child = c;
                }
            }
            let c = self.entries[child];
            if !c.before(&entry) {
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
        (1..self.entries.len()).all(|i| !self.entries[i].before(&self.entries[(i - 1) / ARITY]))
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
