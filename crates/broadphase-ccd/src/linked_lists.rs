//! Doubly linked lists of bodies stored in two arrays (each body in at most one list):
//! O(1) insertion and removal, no allocation after construction. The cell grid's overflow
//! lists are such lists; their heads are kept by their owner. (The event queue keeps its
//! bucket lists' links in its per-body entries instead, beside the event they file.)

/// No body: the end of a list, or an empty list's head.
pub(crate) const NONE: u32 = u32::MAX;

/// The links of `n` bodies.
#[derive(Debug, Clone)]
pub(crate) struct LinkedLists {
    next: Vec<u32>,
    prev: Vec<u32>,
}

impl LinkedLists {
    pub(crate) fn new(n: usize) -> Self {
        LinkedLists {
            next: vec![NONE; n],
            prev: vec![NONE; n],
        }
    }

    /// The body after `body` in its list, or [`NONE`].
    #[inline(always)]
    pub(crate) fn next(&self, body: u32) -> u32 {
        self.next[body as usize]
    }

    /// Puts `body` (in no list) first in the list whose first body is `head`.
    #[inline(always)]
    pub(crate) fn push_front(&mut self, head: &mut u32, body: u32) {
        let first = *head;
        self.next[body as usize] = first;
        self.prev[body as usize] = NONE;
        if first != NONE {
            self.prev[first as usize] = body;
        }
        *head = body;
    }

    /// Takes `body` out of the list whose first body is `head`.
    #[inline(always)]
    pub(crate) fn remove(&mut self, head: &mut u32, body: u32) {
        let (p, n) = (self.prev[body as usize], self.next[body as usize]);
        if p != NONE {
            self.next[p as usize] = n;
        } else {
            *head = n;
        }
        if n != NONE {
            self.prev[n as usize] = p;
        }
    }
}
