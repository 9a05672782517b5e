//! Pair finding: levels sorted into dense (hashed one by one), scanned and sparse levels, the
//! merged grid of the sparse levels, and the search of one box's pairs at its level and every
//! coarser one.

use crate::grid::cell_hash::{CellKey, CellRange};

use super::*;

impl HierarchicalGrid {
    /// Sorts the occupied levels into dense (hashed one by one), scanned and sparse-grid levels
    /// and rebuilds the sparse grid, after the occupied levels.
    pub(super) fn build_sparse_grid(&mut self) {
        self.dense_levels.clear();
        self.scanned_levels.clear();
        self.sparse.clear();
        self.sparse_cells.clear();
        self.sparse_level = None;
        let limit = if self.scan_limit == 0 {
            0
        } else {
            let in_cells: usize = self
                .occupied
                .iter()
                .map(|&level| self.members[Self::level_index(level)].len())
                .sum();
            self.scan_limit.max(in_cells / SPARSE_SHARE)
        };
        // Coarsest first: the few large boxes of a wide spread become sparse, up to 2 × limit
        // boxes in all.
        let mut budget = limit.saturating_mul(2);
        for k in (0..self.occupied.len()).rev() {
            let level = self.occupied[k];
            let count = self.members[Self::level_index(level)].len();
            if count > limit || count > budget {
                self.dense_levels.push(level);
                continue;
            }
            budget -= count;
            if self.sparse_level.is_none() && count <= SCAN_AT_MOST {
                // Coarser than every sparse-grid level: testing its boxes keeps the grid's
                // cells from growing to the size of one outlier.
                self.scanned_levels.push(level);
            } else {
                self.sparse_level.get_or_insert(level);
                self.sparse_levels_scratch.push(level);
            }
        }
        self.dense_levels.reverse();
        self.scanned_levels.reverse();
        let Some(top) = self.sparse_level else {
            return;
        };
        let inv_cell = self.inv_cell[Self::level_index(top)];
        for k in 0..self.sparse_levels_scratch.len() {
            let level = self.sparse_levels_scratch[k];
            for &slot in &self.members[Self::level_index(level)] {
                let aabb = self.store.proxies.aabb(slot as usize);
                let range = CellRange::of(aabb.min(), aabb.max(), inv_cell);
                let index = self.sparse.len() as u32;
                self.sparse.push(SparseEntry { slot, level, range });
                let cells = &mut self.sparse_cells;
                range.for_each(|coords| cells.push(CellKey { level: top, coords }, index));
            }
        }
        self.sparse_levels_scratch.clear();
    }

    /// Marks the pairs `slot` reports: with boxes of its level (larger slots only) and of every
    /// coarser level, each in the cell of the intersection's minimum corner. Dense levels are
    /// looked up level by level, the sparse ones all at once in the sparse grid.
    pub(super) fn mark_pairs_of(&mut self, slot: usize) {
        let proxies = &self.store.proxies;
        let aabb = proxies.aabb(slot);
        let own = self.levels[slot];
        let first = self.dense_levels.partition_point(|&level| level < own);
        for &level in &self.dense_levels[first..] {
            let range = if level == own {
                self.stored.ranges[slot]
            } else {
                self.range_at(aabb, level)
            };
            let (cells, pairs, ranges) = (
                &self.stored.cells,
                &mut self.store.pairs,
                &self.stored.ranges,
            );
            range.for_each(|coords| {
                let Some(cell) = cells.find(&CellKey { level, coords }) else {
                    return;
                };
                for &other in cells.items(cell) {
                    let other = other as usize;
                    if level == own && other <= slot {
                        continue;
                    }
                    if range.corner_cell(&ranges[other]) == coords
                        && aabb.overlaps(proxies.aabb(other))
                        && proxies.can_pair(slot, other)
                    {
                        pairs.mark(slot as u32, other as u32);
                    }
                }
            });
        }
        let first = self.scanned_levels.partition_point(|&level| level < own);
        for &level in &self.scanned_levels[first..] {
            for &other in &self.members[Self::level_index(level)] {
                let other = other as usize;
                if (level != own || other > slot)
                    && aabb.overlaps(proxies.aabb(other))
                    && proxies.can_pair(slot, other)
                {
                    self.store.pairs.mark(slot as u32, other as u32);
                }
            }
        }
        // Sparse-grid levels are all at or below the grid's level, where a box of level
        // `own <= top` overlaps at most 8 cells.
        let Some(top) = self.sparse_level.filter(|&top| top >= own) else {
            return;
        };
        let range = self.range_at(aabb, top);
        let (cells, pairs, sparse) = (&self.sparse_cells, &mut self.store.pairs, &self.sparse);
        range.for_each(|coords| {
            let Some(cell) = cells.find(&CellKey { level: top, coords }) else {
                return;
            };
            for &index in cells.items(cell) {
                let entry = &sparse[index as usize];
                let other = entry.slot as usize;
                if entry.level < own || (entry.level == own && other <= slot) {
                    continue;
                }
                if range.corner_cell(&entry.range) == coords
                    && aabb.overlaps(proxies.aabb(other))
                    && proxies.can_pair(slot, other)
                {
                    pairs.mark(slot as u32, other as u32);
                }
            }
        });
    }
}
