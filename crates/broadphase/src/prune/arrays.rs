//! The sweep's input: boxes in sweep order as structure-of-arrays ([`SweepArrays`]), and
//! mutable views of them ([`ArraysView`]) that threads write in disjoint ranges.

use std::ops::Range;

use super::{transpose, Entry, PADDING};
use crate::Aabb;

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

impl SweepArrays {
    /// Resizes every array to `len` entries without clearing the ones kept: callers write
    /// every position, so a fill pass would be a second full pass over the arrays.
    pub(super) fn set_len(&mut self, len: usize) {
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
    pub(super) fn write_sentinel(&mut self, position: usize) {
        ArraysView::of(self).write(position, &Entry::SENTINEL);
    }

    /// Copies `entries` into the arrays (resized to match). One sequential pass.
    pub(super) fn transpose_from(&mut self, entries: &[Entry]) {
        self.set_len(entries.len());
        transpose::transpose(entries, &mut ArraysView::of(self), 0);
    }

    #[inline]
    pub(super) fn write(&mut self, position: usize, aabb: &Aabb, code: u32, index: u32) {
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

    pub(super) fn memory_bytes(&self) -> usize {
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
pub(crate) struct ArraysView<'a> {
    pub(super) min_x: &'a mut [f32],
    pub(super) max_x: &'a mut [f32],
    pub(super) min_y: &'a mut [f32],
    pub(super) max_y: &'a mut [f32],
    pub(super) min_z: &'a mut [f32],
    pub(super) max_z: &'a mut [f32],
    pub(super) code: &'a mut [u32],
    pub(super) index: &'a mut [u32],
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
    pub(super) fn len(&self) -> usize {
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
