//! Radix sort on float bits, as [Lecture04, radix sort] suggests for sweep and
//! prune.

/// Maps a finite `f32` to a `u32` whose unsigned order is the float order, with `-0.0` and
/// `0.0` mapped to the same key.
#[inline]
pub fn sortable_key(value: f32) -> u32 {
    let bits = (value + 0.0).to_bits(); // + 0.0 turns -0.0 into 0.0
    if bits & 0x8000_0000 != 0 {
        !bits
    } else {
        bits | 0x8000_0000
    }
}

/// Sorts `items` by their upper 32 bits (a key from [`sortable_key`]), stably, with passes
/// of 8-bit digits below 8,192 items and of 11-bit digits above; passes whose digit is the
/// same for every item are skipped.
/// The lower 32 bits carry a payload, typically an index. `scratch` is reused across calls.
///
/// ```
/// use broadphase::backend::{radix_sort_keys, sortable_key};
/// let values = [3.5f32, -1.0, 0.0, -7.25, 2.0];
/// let mut items: Vec<u64> = values
///     .iter()
///     .enumerate()
///     .map(|(i, &v)| ((sortable_key(v) as u64) << 32) | i as u64)
///     .collect();
/// radix_sort_keys(&mut items, &mut Vec::new());
/// let order: Vec<u32> = items.iter().map(|&item| item as u32).collect();
/// assert_eq!(order, vec![3, 1, 2, 4, 0]);
/// ```
pub fn radix_sort_keys(items: &mut Vec<u64>, scratch: &mut Vec<u64>) {
    if items.len() < SMALL {
        return insertion_sort_on_key(items);
    }
    // Not cleared: each pass writes every item before the next reads it, so zeroing would be
    // a wasted pass.
    scratch.resize(items.len(), 0);
    // Short lists take four passes of 8-bit digits: the wider digits' counters (6,144 to
    // clear, sum and scan per call) would cost more than the fourth pass.
    let in_scratch = if items.len() < SHORT {
        radix_passes::<8, 256, 4>(items, scratch)
    } else {
        radix_passes::<11, 2048, 3>(items, scratch)
    };
    if in_scratch {
        std::mem::swap(items, scratch);
    }
}

/// Below this many keys [`sort_distinct_keys`] uses a comparison sort, which beats the
/// radix sort's fixed cost (clearing and scanning its digit counters).
const RADIX_MIN_KEYS: usize = 512;

/// Sorts keys whose lower 32 bits ascend in input order (an index), so that all are distinct
/// and any sort gives the order of [`radix_sort_keys`]: a comparison sort for short lists,
/// the radix sort for long ones.
pub(crate) fn sort_distinct_keys(keys: &mut Vec<u64>, scratch: &mut Vec<u64>) {
    if keys.len() < RADIX_MIN_KEYS {
        keys.sort_unstable();
    } else {
        radix_sort_keys(keys, scratch);
    }
}

/// [`radix_sort_keys`] on a slice, with `scratch` at least as long; the sorted items end in
/// `items` (copied back when an odd number of passes left them in `scratch`).
pub(crate) fn radix_sort_key_slice(items: &mut [u64], scratch: &mut [u64]) {
    if items.len() < SMALL {
        return insertion_sort_on_key(items);
    }
    let scratch = &mut scratch[..items.len()];
    // Short slices take four passes of 8-bit digits: the wider digits' counters (6,144 to
    // clear, sum and scan per call) would cost more than the fourth pass.
    let in_scratch = if items.len() < SHORT {
        radix_passes::<8, 256, 4>(items, scratch)
    } else {
        radix_passes::<11, 2048, 3>(items, scratch)
    };
    if in_scratch {
        items.copy_from_slice(scratch);
    }
}

/// Below this many items [`radix_sort_key_slice`] uses 8-bit digits.
const SHORT: usize = 8192;

/// Below this many items an insertion sort beats the passes' fixed costs.
const SMALL: usize = 64;

/// Stable, like the passes below, and no allocation.
fn insertion_sort_on_key(items: &mut [u64]) {
    for i in 1..items.len() {
        let item = items[i];
        let mut j = i;
        while j > 0 && items[j - 1] >> 32 > item >> 32 {
            items[j] = items[j - 1];
            j -= 1;
        }
        items[j] = item;
    }
}

/// `PASSES` passes of `BITS`-bit digits (`BUCKETS = 2^BITS`, `BITS * PASSES >= 32`)
/// between `items` and `scratch` (same length), skipping those whose digit is the same for
/// every item; `true` when the result is in `scratch`.
fn radix_passes<const BITS: u32, const BUCKETS: usize, const PASSES: usize>(
    items: &mut [u64],
    scratch: &mut [u64],
) -> bool {
    const { assert!(BUCKETS == 1 << BITS && BITS as usize * PASSES >= 32) };
    let mut counts = [[0u32; BUCKETS]; PASSES]; // on the stack: no allocation per call
    for &item in items.iter() {
        let key = (item >> 32) as u32;
        for (pass, count) in counts.iter_mut().enumerate() {
            count[((key >> (pass as u32 * BITS)) as usize) & (BUCKETS - 1)] += 1;
        }
    }
    let (mut from, mut to) = (items, scratch);
    let mut in_scratch = false;
    for (pass, count) in counts.iter_mut().enumerate() {
        let shift = 32 + pass as u32 * BITS;
        if scatter_pass(count, from, to, shift, BUCKETS as u64 - 1) {
            (from, to) = (to, from);
            in_scratch = !in_scratch;
        }
    }
    in_scratch
}

/// One pass of a least-significant-digit radix sort: `count` holds how many items of `from`
/// have each digit (`(item >> shift) & mask`); the items are written to `to` in digit order,
/// stably. Returns false, writing nothing, when every item has the same digit (the pass would
/// not move anything). `count` is consumed.
#[inline]
pub(crate) fn scatter_pass(
    count: &mut [u32],
    from: &[u64],
    to: &mut [u64],
    shift: u32,
    mask: u64,
) -> bool {
    if count.iter().any(|&c| c as usize == from.len()) {
        return false;
    }
    let mut offset = 0u32;
    for c in count.iter_mut() {
        let n = *c;
        *c = offset;
        offset += n;
    }
    for &item in from {
        let digit = ((item >> shift) & mask) as usize;
        to[count[digit] as usize] = item;
        count[digit] += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_order_matches_float_order() {
        let values = [
            -f32::MAX,
            -1e30,
            -1.0,
            -f32::MIN_POSITIVE,
            -1e-45,
            -0.0,
            0.0,
            1e-45,
            1.0,
            1e30,
            f32::MAX,
        ];
        for w in values.windows(2) {
            assert!(
                sortable_key(w[0]) <= sortable_key(w[1]),
                "{} {}",
                w[0],
                w[1]
            );
        }
        assert_eq!(sortable_key(-0.0), sortable_key(0.0));
    }

    /// Both digit widths of the slice sort, around their thresholds, against a stable sort;
    /// keys with few distinct values (ties, skipped passes) and with many.
    #[test]
    fn slice_sort_matches_std_at_every_length() {
        let mut state = 11u64;
        for len in [0usize, 1, 2, 63, 64, 65, 1000, 8191, 8192, 8193, 20000] {
            for spread in [3u64, u32::MAX as u64] {
                let mut items: Vec<u64> = (0..len as u64)
                    .map(|i| {
                        state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                        ((state >> 32) % spread) << 32 | i
                    })
                    .collect();
                let mut expected = items.clone();
                expected.sort_by_key(|&item| item >> 32); // stable
                let mut scratch = vec![0; len + 5]; // longer than needed is allowed
                radix_sort_key_slice(&mut items, &mut scratch);
                assert_eq!(items, expected, "{len} items, spread {spread}");
            }
        }
    }

    #[test]
    fn sorts_like_std_and_is_stable() {
        let mut state = 7u64;
        for len in [0usize, 1, 2, 17, 63, 64, 65] {
            let mut small: Vec<u64> = (0..len as u64).map(|i| ((i * 7 % 5) << 32) | i).collect();
            let mut expected = small.clone();
            expected.sort_by_key(|&item| item >> 32); // stable
            radix_sort_keys(&mut small, &mut Vec::new());
            assert_eq!(small, expected, "{len} items");
        }
        let mut items: Vec<u64> = (0..5000u64)
            .map(|i| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                let value = ((state >> 40) as f32 - 8_000_000.0) * 1e-3;
                let value = if i % 7 == 0 { 1.5 } else { value };
                ((sortable_key(value) as u64) << 32) | i
            })
            .collect();
        let mut expected = items.clone();
        expected.sort_by_key(|&item| item >> 32); // stable
        radix_sort_keys(&mut items, &mut Vec::new());
        assert_eq!(items, expected);
    }
}
