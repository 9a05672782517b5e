//! The depth-first traversal stack shared by the tree structures.

/// A LIFO stack of `T` that keeps its first 64 entries inline and spills the rest into a heap
/// `Vec`, so that traversals of balanced trees never allocate and deep ones never skip work.
///
/// Create one on the Rust stack per query, or keep one as reusable scratch.
///
/// ```
/// use broadphase::tree::TraversalStack;
/// let mut stack = TraversalStack::new();
/// for i in 0..100u32 {
///     stack.push(i);
/// }
/// assert_eq!(stack.len(), 100);
/// assert_eq!(stack.pop(), Some(99));
/// ```
#[derive(Debug, Clone)]
pub struct TraversalStack<T: Copy + Default = u32> {
    inline: [T; INLINE],
    inline_len: usize,
    /// Entries pushed while `inline` was full; non-empty only when `inline` is full.
    spill: Vec<T>,
}

const INLINE: usize = 64;

impl<T: Copy + Default> Default for TraversalStack<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy + Default> TraversalStack<T> {
    /// An empty stack; allocates only past 64 entries.
    pub fn new() -> Self {
        Self {
            inline: [T::default(); INLINE],
            inline_len: 0,
            spill: Vec::new(),
        }
    }

    /// Pushes an entry.
    #[inline]
    pub fn push(&mut self, value: T) {
        if self.inline_len < INLINE {
            self.inline[self.inline_len] = value;
            self.inline_len += 1;
        } else {
            self.spill.push(value);
        }
    }

    /// Pops the most recently pushed entry.
    #[inline]
    pub fn pop(&mut self) -> Option<T> {
        if let Some(value) = self.spill.pop() {
            return Some(value);
        }
        if self.inline_len == 0 {
            return None;
        }
        self.inline_len -= 1;
        Some(self.inline[self.inline_len])
    }

    /// Number of entries.
    #[inline]
    pub fn len(&self) -> usize {
        self.inline_len + self.spill.len()
    }

    /// True when empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Removes every entry, keeping the spill allocation.
    #[inline]
    pub fn clear(&mut self) {
        self.inline_len = 0;
        self.spill.clear();
    }

    /// Heap bytes held by the spill vector.
    pub fn memory_bytes(&self) -> usize {
        self.spill.capacity() * std::mem::size_of::<T>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifo_across_the_spill_boundary() {
        let mut stack = TraversalStack::<u32>::new();
        for i in 0..200 {
            stack.push(i);
        }
        for i in (0..200).rev() {
            assert_eq!(stack.pop(), Some(i));
        }
        assert!(stack.pop().is_none());
        stack.push(5);
        stack.clear();
        assert!(stack.is_empty());
    }
}
