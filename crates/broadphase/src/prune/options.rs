//! The options of a pruning call and the scratch buffers it reuses.

use super::{Entry, SweepArrays};

/// How [`complete_pairs_with`](super::complete_pairs_with) and
/// [`bipartite_pairs_with`](super::bipartite_pairs_with) run.
///
/// ```
/// use broadphase::prune::PruneOptions;
/// let mut options = PruneOptions::default();
/// options.threads = 2;
/// assert!(!options.force_scalar);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PruneOptions {
    /// Worker threads for the sweep (rayon); 1 runs on the calling thread. From 1 to 1024.
    /// Without the `parallel` feature every value runs on the calling thread.
    pub threads: usize,
    /// Use the scalar sweep even when the CPU has AVX2 (same output, for testing and
    /// measuring).
    pub force_scalar: bool,
    /// Use the AVX-512 sweep (sixteen candidates per step) when the CPU has it; otherwise
    /// the AVX2 one (eight). On by default; same output either way.
    pub avx512: bool,
    /// Allow the coarse y/z grid that cuts false candidates in dense scenes (chosen
    /// automatically when allowed): the same pairs either way, in another order.
    pub bucketing: bool,
    /// The boxes are the previous call's (same count and indices, same scratch), moved a
    /// little: the sort starts from the previous order and finishes it by insertion sort,
    /// falling back to a full sort when the boxes moved too far. The same pairs either
    /// way; boxes with equal minima may sort, and so pair, in another order.
    /// For callers with temporal coherence (the `sort-and-sweep` broad phase); off by
    /// default, so that repeated calls on the same boxes measure the full sort.
    pub coherent: bool,
    /// With the grid and at least 20,000 boxes (and not `coherent`): bucket the boxes into
    /// the grid first and radix sort each cell on its own, rather than sort them all and
    /// then bucket them, so that the boxes are read in order and every pass runs on the
    /// threads, not only the sweep. On by default; same output either way.
    pub bucket_first: bool,
    /// Most pairs the call may write (default: no limit): beyond it the call stops, leaves
    /// `out` empty and fails with [`Error::PairLimit`](crate::Error::PairLimit), so that
    /// its memory stays bounded whatever the boxes. On the calling thread the sweep checks it
    /// every few boxes, so `out` never grows more than one block of rows past the limit;
    /// with `threads` above 1 it is checked after the sweep.
    pub max_pairs: Option<usize>,
}

impl Default for PruneOptions {
    fn default() -> Self {
        Self {
            threads: 1,
            force_scalar: false,
            avx512: true,
            bucketing: true,
            coherent: false,
            bucket_first: true,
            max_pairs: None,
        }
    }
}

/// Buffers reused across calls: once warmed up on inputs of a given size, a call allocates
/// nothing (except the thread pool, built on the first multi-threaded call).
#[derive(Default)]
pub struct PruneScratch {
    /// Sort items: the sortable min-x key in the upper 32 bits, the box index below.
    pub(super) keys: Vec<u64>,
    pub(super) keys_tmp: Vec<u64>,
    /// Calls left before the coherent sort is tried again (see [`PruneOptions::coherent`]).
    pub(super) coherent_wait: u32,
    /// Sorts the coherent path finished (tests check that it runs).
    #[cfg(test)]
    pub(super) coherent_sorts: usize,
    /// Per-cell entry counts, then write cursors.
    pub(super) cell_cursor: Vec<usize>,
    /// Per box, its packed grid cell range.
    pub(super) cell_ranges: Vec<u64>,
    /// The bucket-first order's buffers.
    pub(super) bucket: super::bucket_first::BucketScratch,
    /// Grid entries in cell order as records, before the transpose into `arrays`.
    pub(super) staging: Vec<Entry>,
    pub(super) arrays: SweepArrays,
    #[cfg(feature = "parallel")]
    pub(super) parallel: super::parallel::ParallelScratch,
}

impl std::fmt::Debug for PruneScratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PruneScratch")
            .field("entries", &self.arrays.swept)
            .field("cells", &self.arrays.cells)
            .finish_non_exhaustive()
    }
}

/// A clone is fresh, empty scratch: buffers hold no state worth copying.
impl Clone for PruneScratch {
    fn clone(&self) -> Self {
        Self::new()
    }
}

impl PruneScratch {
    /// Empty buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of y/z grid cells the last call used (1 = no bucketing).
    pub fn last_cell_count(&self) -> usize {
        self.arrays.cells
    }

    /// Bytes held by the buffers.
    pub fn memory_bytes(&self) -> usize {
        (self.keys.capacity() + self.keys_tmp.capacity()) * 8
            + self.cell_cursor.capacity() * 8
            + self.cell_ranges.capacity() * 8
            + self.staging.capacity() * std::mem::size_of::<Entry>()
            + self.bucket.memory_bytes()
            + self.arrays.memory_bytes()
    }
}
