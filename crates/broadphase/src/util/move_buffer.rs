//! The move buffer: the proxies inserted or moved since the last update, so that an update
//! visits only them (Box2D's `moveBuffer`).

/// Slots listed once each, in the order they were first marked, with a per-slot flag for
/// O(1) membership tests. Invariant: a slot is flagged exactly when it is listed.
#[derive(Debug, Clone, Default)]
pub(crate) struct MoveBuffer {
    /// Per slot: whether it is listed.
    flags: Vec<bool>,
    slots: Vec<u32>,
}

impl MoveBuffer {
    /// Room for `slot_count` slots (the flags never shrink).
    pub(crate) fn grow(&mut self, slot_count: usize) {
        if self.flags.len() < slot_count {
            self.flags.resize(slot_count, false);
        }
    }

    /// Lists `slot` unless it is listed already. O(1).
    ///
    /// # Panics
    /// If `slot` is not below the count last passed to [`MoveBuffer::grow`].
    #[inline]
    pub(crate) fn mark(&mut self, slot: usize) {
        if !self.flags[slot] {
            self.flags[slot] = true;
            self.slots.push(slot as u32);
        }
    }

    /// Whether `slot` is listed.
    #[inline]
    pub(crate) fn contains(&self, slot: usize) -> bool {
        self.flags[slot]
    }

    /// The `k`-th listed slot, in marking order (loops by index, as their bodies need the
    /// owner mutably).
    #[inline]
    pub(crate) fn slot(&self, k: usize) -> usize {
        self.slots[k] as usize
    }

    /// Number of listed slots.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether no slot is listed.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Unlists the slots for which `keep` is false, keeping the others' order.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(usize) -> bool) {
        let flags = &mut self.flags;
        self.slots.retain(|&slot| {
            let kept = keep(slot as usize);
            flags[slot as usize] = kept;
            kept
        });
    }

    /// Unlists every slot. O(listed).
    pub(crate) fn clear(&mut self) {
        for &slot in &self.slots {
            self.flags[slot as usize] = false;
        }
        self.slots.clear();
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.flags.capacity() + self.slots.capacity() * std::mem::size_of::<u32>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_each_slot_once_in_marking_order() {
        let mut buffer = MoveBuffer::default();
        buffer.grow(8);
        for slot in [5, 2, 5, 7, 2, 0] {
            buffer.mark(slot);
        }
        let listed = |buffer: &MoveBuffer| {
            (0..buffer.len())
                .map(|k| buffer.slot(k))
                .collect::<Vec<_>>()
        };
        assert_eq!(listed(&buffer), [5, 2, 7, 0]);
        assert!(buffer.contains(7) && !buffer.contains(3));
        buffer.retain(|slot| slot != 2);
        assert_eq!(listed(&buffer), [5, 7, 0]);
        assert!(!buffer.contains(2));
        // Unlisted by `retain`, so marked again.
        buffer.mark(2);
        assert_eq!(buffer.slot(3), 2);
        buffer.clear();
        assert!(buffer.is_empty() && (0..8).all(|slot| !buffer.contains(slot)));
        buffer.mark(7);
        assert_eq!((buffer.len(), buffer.slot(0)), (1, 7));
    }
}
