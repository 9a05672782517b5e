//! Radix sort on float bits, as the lecture slides suggest for sweep and prune.

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

/// Sorts `items` by their upper 32 bits (a key from [`sortable_key`]), stably, with three
/// passes of 11-bit digits; passes whose digit is the same for every item are skipped.
/// The lower 32 bits carry a payload, typically an index. `scratch` is reused across calls.
///
/// ```
/// use broadphase::{radix_sort_keys, sortable_key};
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
    const BITS: u32 = 11;
    const BUCKETS: usize = 1 << BITS;
    const PASSES: usize = 3;
    if items.len() < 64 {
        // Insertion sort on the key: stable, like the passes below, and no allocation.
        for i in 1..items.len() {
            let item = items[i];
            let mut j = i;
            while j > 0 && items[j - 1] >> 32 > item >> 32 {
                items[j] = items[j - 1];
                j -= 1;
            }
            items[j] = item;
        }
        return;
    }
    let mut counts = [[0u32; BUCKETS]; PASSES]; // on the stack: no allocation per call
    for &item in items.iter() {
        let key = (item >> 32) as u32;
        for (pass, count) in counts.iter_mut().enumerate() {
            count[((key >> (pass as u32 * BITS)) as usize) & (BUCKETS - 1)] += 1;
        }
    }
    scratch.clear();
    scratch.resize(items.len(), 0);
    for (pass, count) in counts.iter_mut().enumerate() {
        if count.iter().any(|&c| c as usize == items.len()) {
            continue; // every item has the same digit: the pass would not move anything
        }
        let mut offset = 0u32;
        for c in count.iter_mut() {
            let n = *c;
            *c = offset;
            offset += n;
        }
        let shift = 32 + pass as u32 * BITS;
        for &item in items.iter() {
            let digit = ((item >> shift) as usize) & (BUCKETS - 1);
            scratch[count[digit] as usize] = item;
            count[digit] += 1;
        }
        std::mem::swap(items, scratch);
    }
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
