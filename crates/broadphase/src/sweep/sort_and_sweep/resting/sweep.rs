//! The sweep of one dirty cell: the moved boxes against each other and against the cell's
//! resting boxes, reporting only the pairs whose overlap changed.

use crate::Aabb;

/// An entry's slot word holds the slot in its low bits and, from this bit up, the entry's
/// code in its cell (see [`CellGrid::for_each_cell`](super::grid::CellGrid::for_each_cell)).
pub(super) const CODE_SHIFT: u32 = 30;
pub(super) const SLOT_MASK: u32 = (1 << CODE_SHIFT) - 1;

/// A proxy swept this update: its slot, its box at the last update (`None` if it was not
/// resting then: inserted since, or the resting boxes were collected again this update) and
/// now (`None` if removed).
#[derive(Debug, Clone, Copy)]
pub(super) struct Swept {
    pub(super) old: Option<Aabb>,
    pub(super) new: Option<Aabb>,
    pub(super) slot: u32,
}

/// An entry's tag: the index of its proxy in the swept list, and which changes it reports.
pub(super) const REPORTS_BEGUN: u32 = 1 << 31;
pub(super) const REPORTS_ENDED: u32 = 1 << 30;
const INDEX_MASK: u32 = REPORTS_ENDED - 1;

impl Swept {
    /// Calls `entry` with the box and tag of each entry the proxy is swept and bucketed with,
    /// for the proxy at `index` of the swept list. Every pair that overlapped before or
    /// overlaps now must be met by an entry that may report its change: one entry with the
    /// union of the old and new boxes when they overlap (the union is then at most twice
    /// either box on each axis), else one per box (a box that jumped is not swept over the
    /// space between), the old one reporting only pairs that ended and the new one only pairs
    /// that began.
    pub(super) fn entries(&self, index: u32, mut entry: impl FnMut(Aabb, u32)) {
        let both = index | REPORTS_BEGUN | REPORTS_ENDED;
        match (self.old, self.new) {
            (Some(old), Some(new)) if old.overlaps(&new) => entry(old.union(&new), both),
            (Some(old), Some(new)) => {
                entry(old, index | REPORTS_ENDED);
                entry(new, index | REPORTS_BEGUN);
            }
            (Some(b), None) | (None, Some(b)) => entry(b, both),
            (None, None) => {}
        }
    }
}

/// The pairs of one update whose overlap changed, as slots.
#[derive(Debug, Clone, Default)]
pub(super) struct Changes {
    /// Pairs that overlap now and did not before.
    pub(super) begun: Vec<(u32, u32)>,
    /// Pairs that overlapped before and do not now.
    pub(super) ended: Vec<(u32, u32)>,
}

impl Changes {
    pub(super) fn clear(&mut self) {
        self.begun.clear();
        self.ended.clear();
    }

    pub(super) fn memory_bytes(&self) -> usize {
        (self.begun.capacity() + self.ended.capacity()) * 8
    }

    /// Records the pair `(a, b)` (slots) given whether it overlapped before and does now,
    /// if the tags of both entries that met let them report that change.
    #[inline]
    fn note(&mut self, (a, b): (u32, u32), (before, now): (bool, bool), reports: u32) {
        if now && !before && reports & REPORTS_BEGUN != 0 {
            self.begun.push((a, b));
        } else if before && !now && reports & REPORTS_ENDED != 0 {
            self.ended.push((a, b));
        }
    }
}

#[inline]
fn overlaps(a: Option<&Aabb>, b: &Aabb) -> bool {
    a.is_some_and(|a| a.overlaps(b))
}

/// Overlap on y and z of two boxes already known to overlap on x.
#[inline]
pub(in crate::sweep::sort_and_sweep) fn overlaps_yz(a: &Aabb, b: &Aabb) -> bool {
    let (a_min, a_max, b_min, b_max) = (a.min(), a.max(), b.min(), b.max());
    a_min.y <= b_max.y && b_min.y <= a_max.y && a_min.z <= b_max.z && b_min.z <= a_max.z
}

/// The moved side of a cell: entry boxes sorted by minimum x, their slot words, and their
/// tags (see [`Swept::entries`]).
pub(super) type MovedCell<'a> = (&'a [Aabb], &'a [u32], &'a [u32]);

/// The resting side of a cell: boxes sorted by minimum x and their slot words.
pub(super) type RestingCell<'a> = (&'a [Aabb], &'a [u32]);

/// The resting side of a cell: its narrow boxes and its wide ones (see
/// [`is_narrow`](super::is_narrow)), and the longest narrow extent on x.
pub(super) struct RestingLists<'a> {
    pub(super) narrow: RestingCell<'a>,
    pub(super) wide: RestingCell<'a>,
    pub(super) wide_x: f32,
}

/// A cell's moved entries search their narrow candidates (instead of one walk of both
/// lists) when the narrow list holds more than this many entries per moved entry.
const SEARCH_RATIO: usize = 8;

/// Into `changes`, the pairs of a cell's moved entries `m` and resting boxes whose overlap
/// changed: the moved entries
/// among themselves by a sweep, and against the resting boxes whose slot `skip` does not
/// exclude. Candidates are the pairs whose entry boxes overlap; for each, the old and new
/// boxes of `swept` tell whether it overlapped before and does now, and the entries' tags
/// whether they report that change. A pair is considered only in the cell holding the low
/// corner of the y/z intersection of the boxes it was bucketed with, so once over the grid:
/// there at least one of the two starts on each axis, which their codes tell.
pub(super) fn sweep_cell(
    (m_boxes, m_words, m_tags): MovedCell<'_>,
    resting: RestingLists<'_>,
    swept: &[Swept],
    skip: &impl Fn(u32) -> bool,
    changes: &mut Changes,
) {
    let state = |i: usize| &swept[swept_index(m_tags[i])];
    for i in 0..m_boxes.len() {
        let a = &m_boxes[i];
        for j in i + 1..m_boxes.len() {
            let b = &m_boxes[j];
            if b.min().x > a.max().x {
                break;
            }
            if overlaps_yz(a, b) && home(m_words[i], m_words[j]) {
                let (p, q) = (state(i), state(j));
                let before = p.old.is_some_and(|o| overlaps(q.old.as_ref(), &o));
                let now = p.new.is_some_and(|n| overlaps(q.new.as_ref(), &n));
                let pair = (slot(m_words[i]), slot(m_words[j]));
                changes.note(pair, (before, now), m_tags[i] & m_tags[j]);
            }
        }
    }
    let moved = (m_boxes, m_words, m_tags);
    let RestingLists {
        narrow,
        wide,
        wide_x,
    } = resting;
    if m_boxes.len() * SEARCH_RATIO < narrow.0.len() {
        search(moved, narrow, wide_x, swept, skip, changes);
    } else {
        walk(moved, narrow, swept, skip, changes);
    }
    walk(moved, wide, swept, skip, changes);
}

/// True when a pair of entries with these slot words is considered in this cell.
#[inline]
fn home(a: u32, b: u32) -> bool {
    (a & b) >> CODE_SHIFT == 0
}

#[inline]
fn slot(word: u32) -> u32 {
    word & SLOT_MASK
}

/// Notes the change of the pair of moved entry `i` and resting box `k` (their boxes
/// overlap).
#[inline]
fn against_resting(
    (m_words, m_tags): (&[u32], &[u32]),
    (r_boxes, r_words): RestingCell<'_>,
    (i, k): (usize, usize),
    swept: &[Swept],
    changes: &mut Changes,
) {
    let (p, r) = (&swept[swept_index(m_tags[i])], &r_boxes[k]);
    let (before, now) = (overlaps(p.old.as_ref(), r), overlaps(p.new.as_ref(), r));
    changes.note(
        (slot(m_words[i]), slot(r_words[k])),
        (before, now),
        m_tags[i],
    );
}

/// The moved entries against resting boxes by one walk of both sorted lists: a pair is met
/// by whichever box has the smaller minimum x, the moved one on ties.
fn walk(
    (m_boxes, m_words, m_tags): MovedCell<'_>,
    resting: RestingCell<'_>,
    swept: &[Swept],
    skip: &impl Fn(u32) -> bool,
    changes: &mut Changes,
) {
    let (r_boxes, r_words) = resting;
    let (mut i, mut j) = (0, 0);
    while i < m_boxes.len() && j < r_boxes.len() {
        if m_boxes[i].min().x <= r_boxes[j].min().x {
            let a = &m_boxes[i];
            for k in j..r_boxes.len() {
                let r = &r_boxes[k];
                if r.min().x > a.max().x {
                    break;
                }
                if overlaps_yz(a, r) && home(m_words[i], r_words[k]) && !skip(slot(r_words[k])) {
                    against_resting((m_words, m_tags), resting, (i, k), swept, changes);
                }
            }
            i += 1;
        } else {
            let r = &r_boxes[j];
            if m_boxes[i].min().x <= r.max().x && !skip(slot(r_words[j])) {
                for k in i..m_boxes.len() {
                    let a = &m_boxes[k];
                    if a.min().x > r.max().x {
                        break;
                    }
                    if overlaps_yz(a, r) && home(m_words[k], r_words[j]) {
                        against_resting((m_words, m_tags), resting, (k, j), swept, changes);
                    }
                }
            }
            j += 1;
        }
    }
}

/// The moved entries against narrow resting boxes (at most `wide_x` long on x, see
/// [`is_narrow`](super::is_narrow)), each entry searching its candidates: those with
/// minimum x from `fl(a.min.x - wide_x)` to `a.max.x`, which hold every narrow box that
/// overlaps `a` on x. The entries come by minimum x, so the start of the window only moves
/// forward: an exponential search from the last one finds it.
fn search(
    (m_boxes, m_words, m_tags): MovedCell<'_>,
    narrow: RestingCell<'_>,
    wide_x: f32,
    swept: &[Swept],
    skip: &impl Fn(u32) -> bool,
    changes: &mut Changes,
) {
    let (r_boxes, r_words) = narrow;
    let mut from = 0;
    for (i, a) in m_boxes.iter().enumerate() {
        from = first_at_least(r_boxes, from, a.min().x - wide_x);
        for (k, r) in r_boxes.iter().enumerate().skip(from) {
            if r.min().x > a.max().x {
                break;
            }
            if a.min().x <= r.max().x
                && overlaps_yz(a, r)
                && home(m_words[i], r_words[k])
                && !skip(slot(r_words[k]))
            {
                against_resting((m_words, m_tags), narrow, (i, k), swept, changes);
            }
        }
    }
}

/// The first index from `from` on of `boxes` (sorted by minimum x) whose minimum x is at
/// least `x`: an exponential search, then a binary one, O(log of the distance).
fn first_at_least(boxes: &[Aabb], from: usize, x: f32) -> usize {
    let rest = &boxes[from..];
    let mut bound = 1;
    while bound < rest.len() && rest[bound - 1].min().x < x {
        bound *= 2;
    }
    // Every box before `bound / 2` starts below `x`; the first one at `x` or above is at
    // most at `bound - 1`, or there is none.
    let low = bound / 2;
    let high = bound.min(rest.len());
    from + low + rest[low..high].partition_point(|b| b.min().x < x)
}

/// The index in the swept list of the proxy of an entry's tag.
#[inline]
pub(super) fn swept_index(tag: u32) -> usize {
    (tag & INDEX_MASK) as usize
}

/// The swept proxy of an entry's tag, if the entry reports begun pairs: the one entry of its
/// proxy whose box holds the new box.
#[inline]
pub(super) fn new_box_entry(tag: u32) -> Option<usize> {
    (tag & REPORTS_BEGUN != 0).then_some(swept_index(tag))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_search_finds_the_first_box_at_or_after_x() {
        // Minima with runs of equal values, searched from every start for values below,
        // between, on and above them: the answer is the linear scan's.
        let minima = [
            0.0f32, 1.0, 1.0, 1.0, 2.5, 4.0, 4.0, 7.0, 9.0, 9.0, 9.0, 12.0,
        ];
        let boxes: Vec<Aabb> = minima
            .iter()
            .map(|&x| Aabb::from_arrays([x, 0.0, 0.0], [x + 1.0, 1.0, 1.0]).unwrap())
            .collect();
        for len in 0..=boxes.len() {
            let boxes = &boxes[..len];
            for from in 0..=len {
                for x in [-1.0f32, 0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 9.0, 12.0, 13.0] {
                    let expected = (from..len).find(|&k| boxes[k].min().x >= x).unwrap_or(len);
                    assert_eq!(first_at_least(boxes, from, x), expected, "{len} {from} {x}");
                }
            }
        }
    }
}
