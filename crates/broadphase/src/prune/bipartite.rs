//! Bipartite box pruning: the overlapping pairs between two sets. Both sets go through one
//! sort and one sweep, each entry tagged with its set; pairs within a set share a tag bit and
//! are skipped by the same code test that deduplicates grid cells.

use super::{prune_sources, PruneOptions, PruneScratch};
use crate::{Aabb, Result};

const TAG_A: u32 = 1 << 2;
const TAG_B: u32 = 1 << 3;

/// Every pair `(i, j)` with `a[i]` and `b[j]` overlapping (closed boxes), each once, appended
/// to `out` (cleared first) in a deterministic order.
///
/// Fails with [`Error::CapacityExhausted`](crate::Error::CapacityExhausted) when `a.len() +
/// b.len()` exceeds `u32::MAX`.
///
/// # When to use
/// Pairs between two sets without the pairs within each: projectiles against targets, a
/// batch of query boxes against a scene.
///
/// # Performance
/// O(n) radix sort plus O(n + k) sweep for n = `a.len() + b.len()` and k candidates
/// (including pairs within one set that overlap on x, skipped by a tag test). Worst case
/// O(n²), when O(n²) pairs overlap on x inside the same grid cells.
///
/// # Examples
/// ```
/// use broadphase::{bipartite_pairs, Aabb};
/// let unit = |x: f32| Aabb::from_arrays([x, 0.0, 0.0], [x + 1.0, 1.0, 1.0]).unwrap();
/// let (a, b) = ([unit(0.0), unit(0.5)], [unit(1.0), unit(9.0)]);
/// let mut pairs = Vec::new();
/// bipartite_pairs(&a, &b, &mut pairs).unwrap();
/// pairs.sort();
/// assert_eq!(pairs, vec![(0, 0), (1, 0)]);
/// ```
pub fn bipartite_pairs(a: &[Aabb], b: &[Aabb], out: &mut Vec<(u32, u32)>) -> Result<()> {
    bipartite_pairs_with(
        a,
        b,
        &PruneOptions::default(),
        &mut PruneScratch::new(),
        out,
    )
}

/// [`bipartite_pairs`] with options and reusable buffers; same output for every option value.
pub fn bipartite_pairs_with(
    a: &[Aabb],
    b: &[Aabb],
    options: &PruneOptions,
    scratch: &mut PruneScratch,
    out: &mut Vec<(u32, u32)>,
) -> Result<()> {
    // `a` indices are below `a.len()`, `b` indices above: the low index of a pair is its `a`.
    // (A length past `u32::MAX` fails before the shift is used.)
    prune_sources(
        [(a, TAG_A), (b, TAG_B)],
        a.len() as u32,
        options,
        scratch,
        out,
    )
}

/// Every overlapping pair among `a` and between `a` and `b`, none within `b`, appended to
/// `out` (cleared first) as indices into `a` followed by `b` (`a.len() + j` for `b[j]`),
/// the smaller first, in a deterministic order. For a broad phase whose static boxes (`b`)
/// never pair with each other: one sort and one sweep, as for [`complete_pairs_with`], and
/// the pairs within `b` are skipped by the tag test instead of being reported and dropped.
///
/// Fails with [`Error::CapacityExhausted`](crate::Error::CapacityExhausted) when `a.len() +
/// b.len()` exceeds `u32::MAX`, and on the pair limit as [`complete_pairs_with`] does.
///
/// [`complete_pairs_with`]: super::complete_pairs_with
pub(crate) fn pairs_except_within_b(
    a: &[Aabb],
    b: &[Aabb],
    options: &PruneOptions,
    scratch: &mut PruneScratch,
    out: &mut Vec<(u32, u32)>,
) -> Result<()> {
    // Entries of `a` carry no tag, so they pair with everything; two entries of `b` share
    // `TAG_B`, which the sweep's code test skips.
    prune_sources([(a, 0), (b, TAG_B)], 0, options, scratch, out)
}
