//! One-shot "complete box pruning": every overlapping pair of a slice of boxes, with no state
//! kept between calls (particles, query batches, first frames, teleports), after
//! [Terdiman07, "Box pruning revisited"].
//!
//! The pipeline, per call (each step in its own file):
//! 1. radix sort of the minimum x of every box as order-preserving integer keys (`sort`);
//! 2. when the scene is dense enough, a coarse y/z grid: each box goes into every cell it
//!    touches, and a pair is reported only in the cell holding the low corner of the two boxes'
//!    y/z intersection, so each pair once (`grid`);
//! 3. the boxes gathered in sweep order into structure-of-arrays, each cell followed by
//!    `+inf` sentinels so the sweep needs no bounds checks (`gather`, into the `arrays` of
//!    `entry` records);
//! 4. the sweep: for each box, the following boxes while their minimum x does not exceed its
//!    maximum x, with branchless y/z interval tests, sixteen or eight at a time with AVX-512
//!    or AVX2 when the CPU has them (`sweep_avx512`, `sweep_avx2`) or one at a time otherwise
//!    (`sweep_scalar`), same output (`kernel` chooses);
//! 5. with more than one thread, the sweep positions are cut into chunks swept in parallel and
//!    concatenated in position order, so the output does not depend on the thread count
//!    (`parallel`).
//!
//! With many boxes, steps 1 to 3 run in the other order, every pass on the threads: the
//! boxes are bucketed into the grid first and each cell is sorted on its own
//! (`bucket_first`), giving the same arrays. [`PruneOptions`] and [`PruneScratch`] are in
//! `options`; two sets against each other in `bipartite`.

mod arrays;
mod bipartite;
mod bucket_first;
mod entry;
mod gather;
mod grid;
mod kernel;
mod options;
#[cfg(feature = "parallel")]
mod parallel;
mod sort;
#[cfg(target_arch = "x86_64")]
mod sweep_avx2;
#[cfg(target_arch = "x86_64")]
mod sweep_avx512;
mod sweep_scalar;
mod transpose;

use crate::{Aabb, Error, Result};

pub(crate) use arrays::{ArraysView, SweepArrays};
pub(crate) use bipartite::pairs_except_within_b;
pub use bipartite::{bipartite_pairs, bipartite_pairs_with};
pub(crate) use entry::{Entry, EntryParts, PADDING};
pub(crate) use kernel::Kernel;
pub use options::{PruneOptions, PruneScratch};

/// Every pair `(i, j)`, `i < j`, of `boxes` whose closed boxes overlap, each once, appended to
/// `out` (cleared first) in a deterministic order that depends only on `boxes`.
///
/// Fails with [`Error::CapacityExhausted`] when there are more boxes than a `u32` index
/// addresses.
///
/// # When to use
/// One-shot pair finding without temporal coherence: particles, query batches, the first
/// frame of a scene, teleports, or any caller that keeps no broad phase between calls. A
/// caller with state between steps should prefer a [`BroadPhase`](crate::BroadPhase), which
/// reports pair events.
///
/// # Performance
/// O(n) radix sort and gather plus O(n + k) sweep for k candidate pairs (pairs overlapping on
/// x within a grid cell). Allocates its buffers on each call; use [`complete_pairs_with`] and
/// a [`PruneScratch`] to reuse them.
///
/// Worst case: O(n²), when O(n²) pairs overlap on x inside the same grid cells, for
/// instance when every box overlaps every other.
///
/// # Examples
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

/// [`complete_pairs`] with options and reusable buffers. Every option value gives the same
/// set of pairs. The order is the same whatever the thread count, the kernel (`force_scalar`,
/// `avx512`) and `bucket_first`; `bucketing` changes it (with the grid, pairs come cell by
/// cell), and so may `coherent` (boxes with equal minima may sort in another order). Sort the
/// output when the order must not depend on the options.
///
/// # When to use
/// Repeated calls (every step of a simulation, many query batches): once the scratch has
/// grown to the input size, a call allocates nothing. `options.threads` above 1 splits the
/// sweep, and with many boxes every pass, across threads.
///
/// # Performance
/// As [`complete_pairs`]: O(n + k), worst case O(n²); the sweep divides among the threads.
///
/// # Examples
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
    prune_sources([(boxes, 0)], 0, options, scratch, out)
}

/// Steps 1 to 4 on the boxes of `sources`, each set tagged with its code (two entries whose
/// codes share a bit are not paired): the pairs into `out` (cleared first), the larger index
/// of each less `shift`. Fails on invalid options and on more than `u32::MAX` boxes.
fn prune_sources<const N: usize>(
    sources: sort::Sources<'_, N>,
    shift: u32,
    options: &PruneOptions,
    scratch: &mut PruneScratch,
    out: &mut Vec<(u32, u32)>,
) -> Result<()> {
    out.clear();
    check_options(options)?;
    if sources.iter().map(|(boxes, _)| boxes.len()).sum::<usize>() > u32::MAX as usize {
        return Err(Error::CapacityExhausted);
    }
    sort_and_gather(scratch, sources, options);
    run_sweep(scratch, options, shift, out)
}

/// Boxes (at least this many in all) from which they are bucketed into the grid first and
/// then sorted cell by cell ([`bucket_first`]). Above it bucketing first wins on any thread
/// count: every pass runs on the threads, and the input is read in order rather than at
/// random. Below it the cells are too short for their radix sorts' fixed costs, and sorting
/// first wins (docs/performance-notes.md, "Prune: bucket first or sort first"). Every size in
/// unit tests and fuzzing, so that both orders are checked against each other.
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
    gather::gather(scratch, sources, options.bucketing);
}

/// Most worker threads a call takes: far beyond any machine's cores, well below what would
/// exhaust the process's threads or memory spawning them.
const MAX_THREADS: usize = 1024;

fn check_options(options: &PruneOptions) -> Result<()> {
    if options.threads == 0 || options.threads > MAX_THREADS {
        return Err(Error::InvalidOption("threads must be between 1 and 1024"));
    }
    Ok(())
}

/// Sweeps the gathered arrays on the configured number of threads.
///
/// With `max_pairs`, the calling thread sweeps [`LIMIT_BLOCK`] boxes at a time and stops
/// once `out` holds more pairs than the limit; the output up to there is the same as
/// without a limit, since each box's pairs depend only on the boxes after it.
fn run_sweep(
    scratch: &mut PruneScratch,
    options: &PruneOptions,
    shift: u32,
    out: &mut Vec<(u32, u32)>,
) -> Result<()> {
    let kernel = Kernel::select(options);
    let over_limit = |out: &mut Vec<(u32, u32)>| match options.max_pairs {
        Some(limit) if out.len() > limit => {
            out.clear();
            Err(Error::PairLimit { limit })
        }
        _ => Ok(()),
    };
    #[cfg(feature = "parallel")]
    if options.threads > 1 {
        scratch
            .parallel
            .sweep(&scratch.arrays, options.threads, kernel, shift, out);
        return over_limit(out);
    }
    let swept = scratch.arrays.swept;
    if options.max_pairs.is_none() {
        kernel.sweep(&scratch.arrays, 0..swept, shift, out);
        return Ok(());
    }
    for start in (0..swept).step_by(LIMIT_BLOCK) {
        kernel.sweep(
            &scratch.arrays,
            start..(start + LIMIT_BLOCK).min(swept),
            shift,
            out,
        );
        over_limit(out)?;
    }
    Ok(())
}

/// Boxes swept between two checks of `max_pairs`: few enough that `out` overshoots the limit
/// by at most this many boxes' pairs, enough that the checks cost nothing measurable.
const LIMIT_BLOCK: usize = 64;

#[cfg(test)]
mod tests;
