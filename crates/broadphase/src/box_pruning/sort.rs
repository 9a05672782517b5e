//! Step 1: the boxes' minimum x as order-preserving integer keys, radix sorted.

use super::PruneScratch;
use crate::radix_sort::{radix_sort_keys, sortable_key};
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

/// Fills `scratch.keys` with `(sortable_key(min.x) << 32) | index`, sorted by key; ties keep
/// index order (the radix sort is stable), so the order depends only on the boxes.
/// O(n), no allocation once the buffers have grown.
pub(super) fn sort_by_min_x<const N: usize>(scratch: &mut PruneScratch, sources: Sources<'_, N>) {
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
    radix_sort_keys(&mut scratch.keys, &mut scratch.keys_tmp);
}
