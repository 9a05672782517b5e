//! Steps 1 to 3 in the other order, for many boxes: the boxes are bucketed into the y/z
//! grid first, then each cell is radix sorted on its own, so that the input is read in order
//! (the sort-first order reads it at random) and every pass runs on the threads (the
//! sort-first order threads only its sweep).
//!
//! The arrays are the same as those of the sort-first order ([`super::sort`], then
//! [`super::gather::gather`]): a cell's entries arrive in index order, and sorting them by
//! `(min x key, offset of the row entry)` is the global sort's `(min x key, index)` order
//! restricted to the cell. The boxes are read in input order. Bucketing directly into
//! thousands of cells would write to thousands of places at random (a cache and TLB miss per
//! box), so it takes two passes: rows of cells (y), as whole entries, then the cells of one
//! row (z), as sort keys only; a row's entries (a megabyte or so) stay in cache while its
//! cells are sorted and written out.
//!
//! Every pass runs on fixed chunks of the input ([`super::grid::CHUNK`] boxes) or on groups
//! of rows; chunk results are merged in chunk order, so the output does not depend on the
//! thread count.

use super::grid::{chunk_count, chunk_of, unpack, Bounds, Grid, MAX_COPIES_PER_BOX};
use super::sort::Sources;
use super::transpose::transpose;
use super::{ArraysView, Entry, EntryParts, PruneScratch, SweepArrays, PADDING};
use crate::util::radix_sort::{radix_sort_key_slice, sortable_key};
use crate::Aabb;

/// Buffers of the bucket-first order, reused across calls.
#[derive(Debug, Default)]
pub(super) struct BucketScratch {
    chunks: Vec<ChunkState>,
    /// Every chunk's entries row by row, chunk after chunk.
    row_entries: Vec<Entry>,
    /// Per row: its first output position; then the total length.
    row_output: Vec<usize>,
    /// One per group of rows.
    row_buffers: Vec<RowBuffer>,
}

impl BucketScratch {
    pub(super) fn memory_bytes(&self) -> usize {
        self.chunks
            .iter()
            .map(ChunkState::memory_bytes)
            .sum::<usize>()
            + self.row_entries.capacity() * std::mem::size_of::<Entry>()
            + self.row_output.capacity() * 8
            + self
                .row_buffers
                .iter()
                .map(RowBuffer::memory_bytes)
                .sum::<usize>()
    }
}

/// One chunk of the input.
#[derive(Debug, Default, Clone)]
struct ChunkState {
    bounds: Bounds,
    /// Its boxes' entries in all cells.
    copies: usize,
    /// Where its region of `row_entries` starts.
    region: usize,
    /// Per row: its entries in the row (counting), then where they start in its region.
    row_start: Vec<usize>,
    /// Per row: its entries in the row's cells (copies along z included).
    row_cells: Vec<usize>,
    /// Per row: the write cursor, then where its entries end in its region.
    row_end: Vec<usize>,
}

impl ChunkState {
    /// Counts the entries of `boxes` per row and per row's cells.
    fn count(&mut self, boxes: &[Aabb], grid: &Grid) {
        let rows = grid.cells_y as usize;
        for counts in [&mut self.row_start, &mut self.row_cells] {
            counts.clear();
            counts.resize(rows, 0);
        }
        let mut copies = 0;
        for aabb in boxes {
            let (y0, y1, z0, z1) = unpack(grid.cell_range(aabb));
            let along_z = z1 - z0 + 1;
            copies += (y1 - y0 + 1) * along_z;
            if y1 - y0 <= 1 {
                // One or two rows, counted without branching on which (see `gather::place`).
                let second = y1 - y0;
                self.row_start[y0] += 1;
                self.row_cells[y0] += along_z;
                self.row_start[y1] += second;
                self.row_cells[y1] += along_z * second;
                continue;
            }
            for y in y0..=y1 {
                self.row_start[y] += 1;
                self.row_cells[y] += along_z;
            }
        }
        self.copies = copies;
    }

    /// Writes `boxes` (the first with index `first_index`) into `region`, each into every row
    /// of its range, with the y bit of the dedup code; the cursors end at the rows' ends.
    fn scatter(
        &mut self,
        boxes: &[Aabb],
        tag: u32,
        first_index: u32,
        grid: &Grid,
        region: &mut [Entry],
    ) {
        self.row_end.clear();
        self.row_end.extend_from_slice(&self.row_start);
        for (index, aabb) in (first_index..).zip(boxes) {
            let (y0, y1, z0, z1) = unpack(grid.cell_range(aabb));
            // The z range rides in the code's unused bits until pass 2 buckets on it.
            let z_range = ((z0 as u32) << Z0_SHIFT) | ((z1 as u32) << Z1_SHIFT);
            let parts = EntryParts::new(aabb, index);
            if y1 - y0 <= 1 {
                // Both copies written, without branching on the row count (see
                // `gather::place`): the second first, advancing only when there are two rows,
                // so that with one row the first copy overwrites it.
                let cursor = &mut self.row_end[y1];
                region[*cursor] = parts.with_code(tag | 1 | z_range);
                *cursor += y1 - y0;
                let cursor = &mut self.row_end[y0];
                region[*cursor] = parts.with_code(tag | z_range);
                *cursor += 1;
                continue;
            }
            for y in y0..=y1 {
                let cursor = &mut self.row_end[y];
                region[*cursor] = parts.with_code(tag | (y != y0) as u32 | z_range);
                *cursor += 1;
            }
        }
    }

    fn memory_bytes(&self) -> usize {
        (self.row_start.capacity() + self.row_cells.capacity() + self.row_end.capacity()) * 8
    }
}

/// Writes the boxes of `sources` into `scratch.arrays` in sweep order, bucketed first, on
/// `threads` threads. Returns `false`, having left nothing the caller needs, when the scene
/// gets no grid. O(n + copies) plus the cells' sorts.
pub(super) fn bucket_then_sort<const N: usize>(
    scratch: &mut PruneScratch,
    sources: Sources<'_, N>,
    threads: usize,
) -> bool {
    let PruneScratch {
        keys,
        bucket,
        arrays,
        #[cfg(feature = "parallel")]
        parallel,
        ..
    } = scratch;
    // The coherent sort's previous order is gone.
    keys.clear();
    #[cfg(feature = "parallel")]
    if threads > 1 {
        return parallel.install(threads, || {
            bucket_in(bucket, arrays, &sources, threads, true)
        });
    }
    bucket_in(bucket, arrays, &sources, threads, false)
}

/// [`bucket_then_sort`], running inside the thread pool when `in_parallel`.
fn bucket_in<const N: usize>(
    bucket: &mut BucketScratch,
    arrays: &mut SweepArrays,
    sources: &Sources<'_, N>,
    threads: usize,
    in_parallel: bool,
) -> bool {
    let n: usize = sources.iter().map(|(boxes, _)| boxes.len()).sum();
    let chunks = &mut bucket.chunks;
    chunks.resize_with(chunk_count(sources), ChunkState::default);
    for_each_chunk(in_parallel, chunks, |chunk, state| {
        state.bounds = Bounds::of(chunk_of(sources, chunk).0);
    });
    // Merged in chunk order, as `Grid::choose` does.
    let bounds = chunks.iter().fold(Bounds::default(), |bounds, state| {
        bounds.merge(state.bounds)
    });
    let Some(mut grid) = Grid::from_bounds(&bounds, n) else {
        return false;
    };
    loop {
        let current = grid;
        for_each_chunk(in_parallel, chunks, |chunk, state| {
            state.count(chunk_of(sources, chunk).0, &current);
        });
        let copies: usize = chunks.iter().map(|state| state.copies).sum();
        if copies <= MAX_COPIES_PER_BOX * n {
            break;
        }
        match grid.coarser() {
            Some(coarser) => grid = coarser,
            None => return false,
        }
    }
    // Regions chunk after chunk, rows within a chunk; output positions row after row, each
    // cell's run followed by its sentinels (the sort-first order's layout).
    let mut region = 0;
    for state in chunks.iter_mut() {
        state.region = region;
        for start in state.row_start.iter_mut() {
            let count = *start;
            *start = region - state.region;
            region += count;
        }
    }
    // Pass 2 addresses row entries with u32 offsets (the sort keys' low half).
    if region > u32::MAX as usize {
        return false;
    }
    let (rows, cells_z) = (grid.cells_y as usize, grid.cells_z as usize);
    let row_output = &mut bucket.row_output;
    row_output.clear();
    let mut position = 0;
    for row in 0..rows {
        row_output.push(position);
        let entries: usize = chunks.iter().map(|state| state.row_cells[row]).sum();
        position += entries + cells_z * PADDING;
    }
    row_output.push(position);
    let len = position;
    // Pass 1: into rows.
    let row_entries = &mut bucket.row_entries;
    row_entries.resize(region, Entry::SENTINEL);
    scatter_chunks(in_parallel, chunks, 0, row_entries, sources, &grid);
    // Pass 2 and the sorts, by groups of rows.
    let groups = if in_parallel {
        threads * GROUPS_PER_THREAD
    } else {
        1
    };
    if bucket.row_buffers.len() < groups {
        bucket.row_buffers.resize_with(groups, RowBuffer::default);
    }
    arrays.set_len(len);
    RowWork {
        grid,
        first_row: 0,
        rows,
        chunks,
        row_entries,
        row_output,
        buffers: &mut bucket.row_buffers[..groups],
        arrays: ArraysView::of(arrays),
        base: 0,
    }
    .run();
    arrays.swept = len - PADDING;
    arrays.cells = grid.cell_count();
    true
}

/// Runs `work(chunk index, chunk)` for every chunk, on the pool's threads when `in_parallel`.
fn for_each_chunk(
    in_parallel: bool,
    chunks: &mut [ChunkState],
    work: impl Fn(usize, &mut ChunkState) + Sync + Send,
) {
    #[cfg(feature = "parallel")]
    if in_parallel {
        use rayon::prelude::*;
        chunks
            .par_iter_mut()
            .enumerate()
            .for_each(|(chunk, state)| work(chunk, state));
        return;
    }
    let _ = in_parallel;
    for (chunk, state) in chunks.iter_mut().enumerate() {
        work(chunk, state);
    }
}

/// Pass 1 for `chunks` (the first being chunk `first_chunk`) into `region`, the part of
/// `row_entries` where their regions lie; halves the chunks between two threads when
/// `in_parallel`.
fn scatter_chunks<const N: usize>(
    in_parallel: bool,
    chunks: &mut [ChunkState],
    first_chunk: usize,
    region: &mut [Entry],
    sources: &Sources<'_, N>,
    grid: &Grid,
) {
    #[cfg(feature = "parallel")]
    if in_parallel && chunks.len() >= 2 {
        let mid = chunks.len() / 2;
        let at = chunks[mid].region - chunks[0].region;
        let (chunks_low, chunks_high) = chunks.split_at_mut(mid);
        let (region_low, region_high) = region.split_at_mut(at);
        rayon::join(
            || scatter_chunks(true, chunks_low, first_chunk, region_low, sources, grid),
            || {
                scatter_chunks(
                    true,
                    chunks_high,
                    first_chunk + mid,
                    region_high,
                    sources,
                    grid,
                )
            },
        );
        return;
    }
    let _ = in_parallel;
    let Some(base) = chunks.first().map(|state| state.region) else {
        return;
    };
    for (chunk, state) in (first_chunk..).zip(chunks.iter_mut()) {
        let (boxes, tag, first_index) = chunk_of(sources, chunk);
        let start = state.region - base;
        state.scatter(boxes, tag, first_index, grid, &mut region[start..]);
    }
}

/// Where pass 1 puts a box's first and last z cell in the code of its row entries (cells
/// per axis are at most 4096, 12 bits; the dedup and set bits are 0 to 3).
const Z0_SHIFT: u32 = 8;
const Z1_SHIFT: u32 = 20;
/// The code bits the sweep reads.
const CODE_BITS: u32 = (1 << Z0_SHIFT) - 1;

/// The z range pass 1 stored in `code`.
#[inline]
fn z_range_of(code: u32) -> (usize, usize) {
    (
        (code >> Z0_SHIFT & 0xfff) as usize,
        (code >> Z1_SHIFT) as usize,
    )
}

/// Groups of rows per thread, so that work stealing evens out rows of different density.
const GROUPS_PER_THREAD: usize = 4;

/// A group of rows' scratch, for one row at a time: its cells' entries, sort keys and write
/// cursors.
#[derive(Debug, Default, Clone)]
struct RowBuffer {
    keys: Vec<u64>,
    keys_tmp: Vec<u64>,
    /// The row's cells sorted, before the transpose to the arrays.
    sorted: Vec<Entry>,
    cell_ends: Vec<usize>,
}

impl RowBuffer {
    fn memory_bytes(&self) -> usize {
        self.sorted.capacity() * std::mem::size_of::<Entry>()
            + (self.keys.capacity() + self.keys_tmp.capacity() + self.cell_ends.capacity()) * 8
    }
}

/// Pass 2 and the sorts for rows `first_row..first_row + rows`, whose output positions
/// start at `base` (the start of `arrays`).
struct RowWork<'a> {
    grid: Grid,
    first_row: usize,
    rows: usize,
    chunks: &'a [ChunkState],
    row_entries: &'a [Entry],
    row_output: &'a [usize],
    /// One per group of rows the work is split into.
    buffers: &'a mut [RowBuffer],
    arrays: ArraysView<'a>,
    base: usize,
}

impl RowWork<'_> {
    /// Buckets each row's entries into its cells, sorts the cells and writes them out; splits
    /// the rows into as many groups as there are buffers, run in parallel.
    fn run(self) {
        #[cfg(feature = "parallel")]
        if self.buffers.len() >= 2 && self.rows >= 2 {
            let half = self.buffers.len() / 2;
            let mid = (self.rows * half / self.buffers.len()).max(1);
            let split = self.row_output[self.first_row + mid];
            let (buffers_low, buffers_high) = self.buffers.split_at_mut(half);
            let (arrays_low, arrays_high) = self.arrays.split_at(split - self.base);
            let low = RowWork {
                grid: self.grid,
                first_row: self.first_row,
                rows: mid,
                chunks: self.chunks,
                row_entries: self.row_entries,
                row_output: self.row_output,
                buffers: buffers_low,
                arrays: arrays_low,
                base: self.base,
            };
            let high = RowWork {
                grid: self.grid,
                first_row: self.first_row + mid,
                rows: self.rows - mid,
                chunks: self.chunks,
                row_entries: self.row_entries,
                row_output: self.row_output,
                buffers: buffers_high,
                arrays: arrays_high,
                base: split,
            };
            rayon::join(|| low.run(), || high.run());
            return;
        }
        let cells_z = self.grid.cells_z as usize;
        let RowBuffer {
            keys,
            keys_tmp,
            sorted,
            cell_ends,
        } = &mut self.buffers[0];
        let mut arrays = self.arrays;
        for row in self.first_row..self.first_row + self.rows {
            let output = self.row_output[row];
            let span = self.row_output[row + 1] - output;
            // The row's entries: one range of `row_entries` per chunk, in chunk order.
            let ranges = self.chunks.iter().map(|state| {
                state.region + state.row_start[row]..state.region + state.row_end[row]
            });
            // Count per cell, then lay the cells out as in the output.
            cell_ends.clear();
            cell_ends.resize(cells_z, 0);
            for entry in ranges.clone().flat_map(|range| &self.row_entries[range]) {
                let (z0, z1) = z_range_of(entry.code);
                if z1 - z0 <= 1 {
                    // One or two cells, counted without branching on which (see
                    // `gather::place`).
                    cell_ends[z0] += 1;
                    cell_ends[z1] += z1 - z0;
                    continue;
                }
                for count in &mut cell_ends[z0..=z1] {
                    *count += 1;
                }
            }
            let mut position = 0;
            for cursor in cell_ends.iter_mut() {
                let count = *cursor;
                *cursor = position;
                position += count + PADDING;
            }
            // The layout came from the chunks' counts: a disagreement with this row's
            // would leave stale entries in the output, so it stops here instead (one
            // comparison per row).
            assert_eq!(
                position, span,
                "row {row}: cell counts disagree with the layout"
            );
            // Each copy is bucketed as its sort key only, `(min x key) << 32 | offset` of
            // its row entry: offsets grow with the chunk order, as positions in the cell
            // would, and the entries are read once more, in sorted order, when the cell is
            // written out (a z copy is told by its cell: not the box's first).
            keys.resize(span, 0);
            keys_tmp.resize(span, 0);
            for range in ranges {
                for (offset, entry) in range.clone().zip(&self.row_entries[range]) {
                    let (z0, z1) = z_range_of(entry.code);
                    let key = ((sortable_key(entry.min_x) as u64) << 32) | offset as u64;
                    if z1 - z0 <= 1 {
                        // Both copies written, the second first (see `gather::place`).
                        let cursor = &mut cell_ends[z1];
                        keys[*cursor] = key;
                        *cursor += z1 - z0;
                        let cursor = &mut cell_ends[z0];
                        keys[*cursor] = key;
                        *cursor += 1;
                        continue;
                    }
                    for cursor in &mut cell_ends[z0..=z1] {
                        keys[*cursor] = key;
                        *cursor += 1;
                    }
                }
            }
            sort_cells(self.row_entries, keys, keys_tmp, sorted, cell_ends);
            transpose(sorted, &mut arrays, output - self.base);
        }
    }
}

/// Sorts the cells whose keys are bucketed into `keys` (runs ending at `ends`, the first
/// starting at 0, each later one [`PADDING`] after the previous end) and writes their
/// entries, read from `row_entries` by the keys' offsets, sorted on min x and followed by
/// their sentinels, to `sorted` (resized to match `keys`); `keys_tmp` (as long) is scratch.
fn sort_cells(
    row_entries: &[Entry],
    keys: &mut [u64],
    keys_tmp: &mut [u64],
    sorted: &mut Vec<Entry>,
    ends: &[usize],
) {
    // Every position is written (entries, then sentinels): no clearing pass.
    sorted.resize(keys.len(), Entry::SENTINEL);
    let mut start = 0;
    for (z, &end) in ends.iter().enumerate() {
        let cell_keys = &mut keys[start..end];
        // Stable on the key, from offset order: the (key, offset) order, which is the
        // sort-first order's (key, index) within the cell. A radix sort, as cells hold
        // hundreds to thousands of entries, where a comparison sort's n log n shows.
        radix_sort_key_slice(cell_keys, &mut keys_tmp[start..end]);
        for (slot, &key) in sorted[start..end].iter_mut().zip(cell_keys.iter()) {
            let entry = &row_entries[key as u32 as usize];
            let (z0, _) = z_range_of(entry.code);
            let code = (entry.code & CODE_BITS) | ((z != z0) as u32) << 1;
            *slot = Entry { code, ..*entry };
        }
        sorted[end..end + PADDING].fill(Entry::SENTINEL);
        start = end + PADDING;
    }
}
