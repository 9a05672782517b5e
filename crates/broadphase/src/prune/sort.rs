//! Step 1: the boxes' minimum x as order-preserving integer keys, radix sorted.

use super::PruneScratch;
use crate::util::radix_sort::{sort_distinct_keys, sortable_key};
use crate::Aabb;

/// The input of one call: slices of boxes with the code tag of each (bipartite sets differ),
/// indexed together, the second slice's indices following the first's.
pub(super) type Sources<'a, const N: usize> = [(&'a [Aabb], u32); N];

/// The box with global index `index` and its source's tag.
#[inline]
pub(super) fn locate<'a, const N: usize>(sources: &Sources<'a, N>, index: u32) -> (&'a Aabb, u32) {
    let mut index = index as usize;
    for &(boxes, tag) in sources {
        if let Some(aabb) = boxes.get(index) {
            return (aabb, tag);
        }
        index -= boxes.len();
    }
    unreachable!("sorted keys only hold indices of the sources")
}

/// Fills `scratch.keys` with `(sortable_key(min.x) << 32) | index`, sorted as `u64`: by key,
/// ties in index order, so the order depends only on the boxes. O(n), no allocation once the
/// buffers have grown.
///
/// With `coherent`, the previous call's order (same number of boxes) is re-keyed and finished
/// by insertion sort: O(n + inversions) when the boxes moved little since. Insertion sort on
/// the whole item is the same total order as the radix sort's (stable on key, from index
/// order), so the result is identical. Past a budget of moves it gives up and radix sorts;
/// then it waits a few calls before trying again.
pub(super) fn sort_by_min_x<const N: usize>(
    scratch: &mut PruneScratch,
    sources: Sources<'_, N>,
    coherent: bool,
) {
    let n: usize = sources.iter().map(|(boxes, _)| boxes.len()).sum();
    if coherent && scratch.keys.len() == n && n > 0 {
        if scratch.coherent_wait == 0 {
            if resort_previous_order(&mut scratch.keys, &sources) {
                #[cfg(test)]
                {
                    scratch.coherent_sorts += 1;
                }
                return;
            }
            scratch.coherent_wait = COHERENT_WAIT;
        } else {
            scratch.coherent_wait -= 1;
        }
    }
    scratch.keys.clear();
    let mut base = 0u64;
    for (boxes, _) in sources {
        scratch.keys.extend(
            boxes
                .iter()
                .zip(base..)
                .map(|(aabb, index)| ((sortable_key(aabb.min().x) as u64) << 32) | index),
        );
        base += boxes.len() as u64;
    }
    // The indices ascend in input order, so the keys are distinct and any sort is stable.
    sort_distinct_keys(&mut scratch.keys, &mut scratch.keys_tmp);
}

/// Calls to skip the coherent path after it gave up.
const COHERENT_WAIT: u32 = 16;

/// Insertion moves allowed per box before the coherent path gives up (a radix sort costs
/// about as much as this many moves).
const MOVES_PER_BOX: usize = 8;

/// Re-keys `keys` (a permutation of the indices of `sources`) with the current boxes and
/// insertion-sorts them; `false` (keys left unsorted) when that takes more than the budget.
fn resort_previous_order<const N: usize>(keys: &mut [u64], sources: &Sources<'_, N>) -> bool {
    for item in keys.iter_mut() {
        let index = *item as u32;
        let (aabb, _) = locate(sources, index);
        *item = ((sortable_key(aabb.min().x) as u64) << 32) | index as u64;
    }
    let mut budget = MOVES_PER_BOX * keys.len();
    for i in 1..keys.len() {
        let item = keys[i];
        let mut j = i;
        while j > 0 && keys[j - 1] > item {
            keys[j] = keys[j - 1];
            j -= 1;
        }
        keys[j] = item;
        let moves = i - j;
        if moves > budget {
            return false;
        }
        budget -= moves;
    }
    true
}
