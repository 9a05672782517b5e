//! One-shot "complete box pruning": every overlapping pair of a slice of boxes, with no state
//! kept between calls (particles, query batches, first frames, teleports).
//!
//! The pipeline, per call:
//! 1. radix sort of the minimum x of every box as order-preserving integer keys ([`sort`]);
//! 2. when the scene is dense enough, a coarse y/z grid: each box goes into every cell it
//!    touches, and a pair is reported only in the cell holding the low corner of the two boxes'
//!    y/z intersection, so each pair once ([`grid`]);
//! 3. the boxes gathered in sweep order into structure-of-arrays, each cell followed by
//!    `+inf` sentinels so the sweep needs no bounds checks;
//! 4. the sweep: for each box, the following boxes while their minimum x does not exceed its
//!    maximum x, with branchless y/z interval tests, eight at a time with AVX2 when the CPU has
//!    it ([`sweep_avx2`]) or one at a time otherwise ([`sweep_scalar`]), same output;
//! 5. with more than one thread, the sweep positions are cut into chunks swept in parallel and
//!    concatenated in position order, so the output does not depend on the thread count
//!    ([`parallel`]).
//!
//! With many boxes, steps 1 to 3 run in the other order, every pass on the threads: the
//! boxes are bucketed into the grid first and each cell is sorted on its own
//! ([`bucket_first`]), giving the same arrays.

mod bipartite;
mod bucket_first;
mod grid;
#[cfg(feature = "parallel")]
mod parallel;
mod sort;
#[cfg(target_arch = "x86_64")]
mod sweep_avx2;
#[cfg(target_arch = "x86_64")]
mod sweep_avx512;
mod sweep_scalar;
mod transpose;

use std::ops::Range;

use crate::{Aabb, Error, Result};

pub use bipartite::{bipartite_pairs, bipartite_pairs_with};

/// How [`complete_pairs_with`] and [`bipartite_pairs_with`] run.
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
    /// Worker threads for the sweep (rayon); 1 runs on the calling thread. Must be at least 1.
    /// Without the `parallel` feature every value runs on the calling thread.
    pub threads: usize,
    /// Use the scalar sweep even when the CPU has AVX2 (same output, for testing and
    /// measuring).
    pub force_scalar: bool,
    /// Use the AVX-512 sweep (sixteen candidates per step) when the CPU has it; otherwise
    /// the AVX2 one (eight). On by default; same output either way.
    pub avx512: bool,
    /// Allow the coarse y/z grid that cuts false candidates in dense scenes (chosen
    /// automatically when allowed; same output either way).
    pub bucketing: bool,
    /// The boxes are the previous call's (same count and indices, same scratch), moved a
    /// little: the sort starts from the previous order and finishes it by insertion sort,
    /// falling back to the radix sort when the boxes moved too far. Same output either way.
    /// For callers with temporal coherence (the `sort-and-sweep` broad phase); off by
    /// default, so that repeated calls on the same boxes measure the full sort.
    pub coherent: bool,
    /// With the grid and at least 20,000 boxes (and not `coherent`): bucket the boxes into
    /// the grid first and radix sort each cell on its own, rather than sort them all and
    /// then bucket them, so that the boxes are read in order and every pass runs on the
    /// threads, not only the sweep. On by default; same output either way.
    pub bucket_first: bool,
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
        }
    }
}

/// Buffers reused across calls: once warmed up on inputs of a given size, a call allocates
/// nothing (except the thread pool, built on the first multi-threaded call).
#[derive(Default)]
pub struct PruneScratch {
    /// Sort items: the sortable min-x key in the upper 32 bits, the box index below.
    keys: Vec<u64>,
    keys_tmp: Vec<u64>,
    /// Calls left before the coherent sort is tried again (see [`PruneOptions::coherent`]).
    coherent_wait: u32,
    /// Sorts the coherent path finished (tests check that it runs).
    #[cfg(test)]
    coherent_sorts: usize,
    /// Per-cell entry counts, then write cursors.
    cell_cursor: Vec<usize>,
    /// Per box, its packed grid cell range.
    cell_ranges: Vec<u64>,
    /// The bucket-first order's buffers.
    bucket: bucket_first::BucketScratch,
    /// Grid entries in cell order as records, before the transpose into `arrays`.
    staging: Vec<Entry>,
    arrays: SweepArrays,
    #[cfg(feature = "parallel")]
    parallel: parallel::ParallelScratch,
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

/// Boxes in sweep order as structure-of-arrays. Every cell's run of entries is followed by
/// [`PADDING`] sentinels (`min_x = +inf`, `max_x = -inf`), and the arrays hold [`PADDING`]
/// more entries after the last swept position, so a sweep that reads eight entries past any
/// swept position stays in bounds and stops at the end of its cell.
#[derive(Debug, Default, Clone)]
pub(crate) struct SweepArrays {
    pub(crate) min_x: Vec<f32>,
    pub(crate) max_x: Vec<f32>,
    pub(crate) min_y: Vec<f32>,
    pub(crate) max_y: Vec<f32>,
    pub(crate) min_z: Vec<f32>,
    pub(crate) max_z: Vec<f32>,
    /// Bit flags; a pair is reported only when the two entries' codes share no bit (bits 0-1:
    /// the box starts in an earlier grid cell on y / z; bits 2-3: bipartite set tags).
    pub(crate) code: Vec<u32>,
    /// The box index (bipartite: `b` indices are offset by `a.len()`).
    pub(crate) index: Vec<u32>,
    /// Positions to sweep: `0..swept` (sentinel positions included; they report nothing).
    pub(crate) swept: usize,
    /// Grid cells used.
    pub(crate) cells: usize,
}

/// One entry of [`SweepArrays`] as a record, half a cache line.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(32))]
pub(crate) struct Entry {
    min_x: f32,
    max_x: f32,
    min_y: f32,
    max_y: f32,
    min_z: f32,
    max_z: f32,
    code: u32,
    index: u32,
}

impl Entry {
    const SENTINEL: Entry = Entry {
        min_x: f32::INFINITY,
        max_x: f32::NEG_INFINITY,
        min_y: 0.0,
        max_y: 0.0,
        min_z: 0.0,
        max_z: 0.0,
        code: 0,
        index: 0,
    };

    #[inline]
    fn new(aabb: &Aabb, code: u32, index: u32) -> Self {
        let (min, max) = (aabb.min(), aabb.max());
        Entry {
            min_x: min.x,
            max_x: max.x,
            min_y: min.y,
            max_y: max.y,
            min_z: min.z,
            max_z: max.z,
            code,
            index,
        }
    }
}

/// An [`Entry`] without its code, for writing several copies of a box that differ only in
/// the code: on x86_64 it sits in two SSE registers, so a copy is two 16-byte stores rather
/// than eight scalar ones (measured: the scatter wrote each field on its own).
#[derive(Clone, Copy)]
pub(crate) struct EntryParts {
    #[cfg(target_arch = "x86_64")]
    halves: [std::arch::x86_64::__m128; 2],
    #[cfg(not(target_arch = "x86_64"))]
    entry: Entry,
}

impl EntryParts {
    #[inline(always)]
    pub(crate) fn new(aabb: &Aabb, index: u32) -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::*;
            let (min, max) = (aabb.min(), aabb.max());
            // SAFETY: SSE2 register operations only (no memory access); SSE2 is part of the
            // x86_64 baseline.
            let halves = unsafe {
                [
                    _mm_setr_ps(min.x, max.x, min.y, max.y),
                    _mm_setr_ps(min.z, max.z, 0.0, f32::from_bits(index)),
                ]
            };
            EntryParts { halves }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            EntryParts {
                entry: Entry::new(aabb, 0, index),
            }
        }
    }

    /// The entry with `code`.
    #[inline(always)]
    pub(crate) fn with_code(self, code: u32) -> Entry {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::*;
            let [xy, z] = self.halves;
            // SAFETY: SSE2 register operations (baseline on x86_64). The transmute turns 32
            // bytes into an `Entry`, 32 bytes of f32 and u32 fields in this order (repr(C),
            // checked below), for which every bit pattern is valid.
            unsafe {
                let code = _mm_castsi128_ps(_mm_setr_epi32(0, 0, code as i32, 0));
                std::mem::transmute::<[__m128; 2], Entry>([xy, _mm_or_ps(z, code)])
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            Entry { code, ..self.entry }
        }
    }
}

const _: () = assert!(
    std::mem::offset_of!(Entry, min_x) == 0
        && std::mem::offset_of!(Entry, max_x) == 4
        && std::mem::offset_of!(Entry, min_y) == 8
        && std::mem::offset_of!(Entry, max_y) == 12
        && std::mem::offset_of!(Entry, min_z) == 16
        && std::mem::offset_of!(Entry, max_z) == 20
        && std::mem::offset_of!(Entry, code) == 24
        && std::mem::offset_of!(Entry, index) == 28
        && size_of::<Entry>() == 32
);

/// Sentinels after each cell: one AVX-512 vector of candidates.
pub(crate) const PADDING: usize = 16;

impl SweepArrays {
    /// Resizes every array to `len` entries without clearing the ones kept: callers write
    /// every position (a fill pass would cost as much as the gather itself at a million
    /// boxes).
    fn set_len(&mut self, len: usize) {
        for array in [
            &mut self.min_x,
            &mut self.max_x,
            &mut self.min_y,
            &mut self.max_y,
            &mut self.min_z,
            &mut self.max_z,
        ] {
            array.resize(len, 0.0);
        }
        self.code.resize(len, 0);
        self.index.resize(len, 0);
    }

    /// Writes a sentinel at `position`.
    fn write_sentinel(&mut self, position: usize) {
        ArraysView::of(self).write(position, &Entry::SENTINEL);
    }

    /// Copies `entries` into the arrays (resized to match). One sequential pass.
    fn transpose_from(&mut self, entries: &[Entry]) {
        self.set_len(entries.len());
        transpose::transpose(entries, &mut ArraysView::of(self), 0);
    }

    #[inline]
    fn write(&mut self, position: usize, aabb: &Aabb, code: u32, index: u32) {
        ArraysView::of(self).write(position, &Entry::new(aabb, code, index));
    }

    /// Asserts what the unchecked vector sweeps rely on: every array as long as `min_x`,
    /// `range` within the swept positions, and [`PADDING`] positions after the last one.
    #[cfg(target_arch = "x86_64")]
    #[inline]
    pub(crate) fn assert_sweepable(&self, range: &Range<usize>) {
        let len = self.min_x.len();
        let lengths_agree = [
            &self.max_x,
            &self.min_y,
            &self.max_y,
            &self.min_z,
            &self.max_z,
        ]
        .iter()
        .all(|array| array.len() == len)
            && self.code.len() == len
            && self.index.len() == len;
        assert!(lengths_agree && range.end <= self.swept && self.swept + PADDING <= len);
    }

    fn memory_bytes(&self) -> usize {
        (self.min_x.capacity()
            + self.max_x.capacity()
            + self.min_y.capacity()
            + self.max_y.capacity()
            + self.min_z.capacity()
            + self.max_z.capacity()
            + self.code.capacity()
            + self.index.capacity())
            * 4
    }

    /// Checks the layout invariants the unchecked sweeps rely on. O(entries).
    #[cfg(test)]
    pub(crate) fn validate(&self) {
        let len = self.min_x.len();
        for array in [
            &self.max_x,
            &self.min_y,
            &self.max_y,
            &self.min_z,
            &self.max_z,
        ] {
            assert_eq!(array.len(), len);
        }
        assert_eq!(self.code.len(), len);
        assert_eq!(self.index.len(), len);
        assert!(self.swept + PADDING <= len);
        // Real entries are sorted on min x within their run, every run is followed by at
        // least PADDING sentinels, and nothing real lies beyond the swept positions.
        for position in 0..len {
            let x = self.min_x[position];
            if x == f32::INFINITY {
                assert_eq!(self.max_x[position], f32::NEG_INFINITY);
                continue;
            }
            assert!(x.is_finite() && position < self.swept);
            let next = self.min_x[position + 1];
            if next != f32::INFINITY {
                assert!(x <= next);
            } else {
                let sentinels = &self.min_x[position + 1..position + 1 + PADDING];
                assert!(sentinels.iter().all(|&s| s == f32::INFINITY));
            }
        }
    }
}

/// Mutable views of the eight arrays of [`SweepArrays`] over a range of positions, so that
/// disjoint ranges can be written from different threads.
pub(super) struct ArraysView<'a> {
    min_x: &'a mut [f32],
    max_x: &'a mut [f32],
    min_y: &'a mut [f32],
    max_y: &'a mut [f32],
    min_z: &'a mut [f32],
    max_z: &'a mut [f32],
    code: &'a mut [u32],
    index: &'a mut [u32],
}

impl<'a> ArraysView<'a> {
    pub(super) fn of(arrays: &'a mut SweepArrays) -> Self {
        ArraysView {
            min_x: &mut arrays.min_x,
            max_x: &mut arrays.max_x,
            min_y: &mut arrays.min_y,
            max_y: &mut arrays.max_y,
            min_z: &mut arrays.min_z,
            max_z: &mut arrays.max_z,
            code: &mut arrays.code,
            index: &mut arrays.index,
        }
    }

    #[cfg(feature = "parallel")]
    pub(super) fn split_at(self, mid: usize) -> (Self, Self) {
        let (min_x, min_x_high) = self.min_x.split_at_mut(mid);
        let (max_x, max_x_high) = self.max_x.split_at_mut(mid);
        let (min_y, min_y_high) = self.min_y.split_at_mut(mid);
        let (max_y, max_y_high) = self.max_y.split_at_mut(mid);
        let (min_z, min_z_high) = self.min_z.split_at_mut(mid);
        let (max_z, max_z_high) = self.max_z.split_at_mut(mid);
        let (code, code_high) = self.code.split_at_mut(mid);
        let (index, index_high) = self.index.split_at_mut(mid);
        (
            ArraysView {
                min_x,
                max_x,
                min_y,
                max_y,
                min_z,
                max_z,
                code,
                index,
            },
            ArraysView {
                min_x: min_x_high,
                max_x: max_x_high,
                min_y: min_y_high,
                max_y: max_y_high,
                min_z: min_z_high,
                max_z: max_z_high,
                code: code_high,
                index: index_high,
            },
        )
    }

    /// Positions in the view (every array has this many).
    fn len(&self) -> usize {
        [
            self.min_x.len(),
            self.max_x.len(),
            self.min_y.len(),
            self.max_y.len(),
            self.min_z.len(),
            self.max_z.len(),
            self.code.len(),
            self.index.len(),
        ]
        .into_iter()
        .min()
        .unwrap_or(0)
    }

    #[inline(always)]
    pub(super) fn write(&mut self, position: usize, entry: &Entry) {
        self.min_x[position] = entry.min_x;
        self.max_x[position] = entry.max_x;
        self.min_y[position] = entry.min_y;
        self.max_y[position] = entry.max_y;
        self.min_z[position] = entry.min_z;
        self.max_z[position] = entry.max_z;
        self.code[position] = entry.code;
        self.index[position] = entry.index;
    }
}

/// Which sweep kernel runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kernel {
    Scalar,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Kernel {
    fn select(options: &PruneOptions) -> Self {
        #[cfg(target_arch = "x86_64")]
        if !options.force_scalar {
            if options.avx512 && sweep_avx512::available() {
                return Kernel::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                return Kernel::Avx2;
            }
        }
        let _ = options;
        Kernel::Scalar
    }

    /// Sweeps positions `range` of `arrays`, appending `(low, high - shift)` for each
    /// reported pair of box indices `low < high`.
    #[inline]
    pub(crate) fn sweep(
        self,
        arrays: &SweepArrays,
        range: Range<usize>,
        shift: u32,
        out: &mut Vec<(u32, u32)>,
    ) {
        match self {
            Kernel::Scalar => sweep_scalar::sweep(arrays, range, shift, out),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => sweep_avx2::sweep(arrays, range, shift, out),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => sweep_avx512::sweep(arrays, range, shift, out),
        }
    }
}

/// Every pair `(i, j)`, `i < j`, of `boxes` whose closed boxes overlap, each once, appended to
/// `out` (cleared first) in a deterministic order that depends only on `boxes`.
///
/// Allocates its buffers on each call; use [`complete_pairs_with`] and a [`PruneScratch`] to
/// reuse them. O(n) radix sort and gather plus O(n + k) sweep for k candidate pairs (pairs
/// overlapping on x within a grid cell). Fails with [`Error::CapacityExhausted`] when
/// there are more boxes than a `u32` index addresses.
///
/// ```
/// use broadphase::{complete_pairs, Aabb};
/// let boxes = [
///     Aabb::from_arrays([0.0; 3], [1.0; 3]).unwrap(),
///     Aabb::from_arrays([5.0; 3], [6.0; 3]).unwrap(),
///     Aabb::from_arrays([1.0; 3], [2.0; 3]).unwrap(), // touches box 0 at a corner
/// ];
/// let mut pairs = Vec::new();
/// complete_pairs(&boxes, &mut pairs).unwrap();
/// assert_eq!(pairs, vec![(0, 2)]);
/// ```
pub fn complete_pairs(boxes: &[Aabb], out: &mut Vec<(u32, u32)>) -> Result<()> {
    complete_pairs_with(
        boxes,
        &PruneOptions::default(),
        &mut PruneScratch::new(),
        out,
    )
}

/// [`complete_pairs`] with options and reusable buffers. The output is the same for every
/// option value (thread count, kernel, bucketing).
///
/// ```
/// use broadphase::prune::{PruneOptions, PruneScratch, complete_pairs_with};
/// use broadphase::Aabb;
/// let boxes: Vec<Aabb> = (0..100)
///     .map(|i| Aabb::from_arrays([i as f32; 3], [i as f32 + 1.5; 3]).unwrap())
///     .collect();
/// let mut scratch = PruneScratch::new();
/// let mut pairs = Vec::new();
/// let mut options = PruneOptions::default();
/// options.threads = 2;
/// complete_pairs_with(&boxes, &options, &mut scratch, &mut pairs).unwrap();
/// assert_eq!(pairs.len(), 99); // each box overlaps the next one
/// ```
pub fn complete_pairs_with(
    boxes: &[Aabb],
    options: &PruneOptions,
    scratch: &mut PruneScratch,
    out: &mut Vec<(u32, u32)>,
) -> Result<()> {
    out.clear();
    check_options(options)?;
    if boxes.len() > u32::MAX as usize {
        return Err(Error::CapacityExhausted);
    }
    sort_and_gather(scratch, [(boxes, 0)], options);
    run_sweep(scratch, options, 0, out);
    Ok(())
}

/// Boxes (at least this many in all) from which they are bucketed into the grid first and
/// then sorted cell by cell ([`bucket_first`]). Above it bucketing first wins on any thread
/// count: every pass runs on the threads, and the input is read in order rather than at
/// random. Below it the cells are too short for their radix sorts' fixed costs (one thread,
/// minima of five runs: 10,000 `cube` boxes 0.43 ms sort-first against 0.60 bucket-first;
/// 30,000: 2.8 against 2.3; 100,000: 14.2 against 12.2; 1,000,000 `sparse`: 106 against
/// 83). Every size in unit tests and fuzzing, so that both orders are checked against each
/// other.
const BUCKET_FIRST_MIN_BOXES: usize = if cfg!(any(test, fuzzing)) { 1 } else { 20_000 };

/// Steps 1 to 3: the boxes of `sources` into `scratch.arrays`, in sweep order.
fn sort_and_gather<const N: usize>(
    scratch: &mut PruneScratch,
    sources: sort::Sources<'_, N>,
    options: &PruneOptions,
) {
    let n: usize = sources.iter().map(|(boxes, _)| boxes.len()).sum();
    // The coherent sort keeps the global order between calls; the other order has none.
    let bucket_first = options.bucketing
        && options.bucket_first
        && !options.coherent
        && n >= BUCKET_FIRST_MIN_BOXES;
    if bucket_first && bucket_first::bucket_then_sort(scratch, sources, options.threads) {
        return;
    }
    sort::sort_by_min_x(scratch, sources, options.coherent);
    grid::gather(scratch, sources, options.bucketing);
}

fn check_options(options: &PruneOptions) -> Result<()> {
    if options.threads == 0 {
        return Err(Error::InvalidOption("threads must be at least 1"));
    }
    Ok(())
}

/// Sweeps the gathered arrays on the configured number of threads.
fn run_sweep(
    scratch: &mut PruneScratch,
    options: &PruneOptions,
    shift: u32,
    out: &mut Vec<(u32, u32)>,
) {
    let kernel = Kernel::select(options);
    #[cfg(feature = "parallel")]
    if options.threads > 1 {
        scratch
            .parallel
            .sweep(&scratch.arrays, options.threads, kernel, shift, out);
        return;
    }
    kernel.sweep(&scratch.arrays, 0..scratch.arrays.swept, shift, out);
}

#[cfg(test)]
mod tests;
