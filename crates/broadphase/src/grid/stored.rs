//! The cell store both grids keep: the spatial hash of cells, where each slot's box is stored
//! (its cells or the oversized list), and the operations that do not depend on how a grid
//! chooses a box's cells — the oversized list, the box-query walk over cells, accounting and
//! the structural checks of the tests.

use std::ops::ControlFlow;

use crate::backend::ProxyTable;
use crate::grid::cell_hash::{CellKey, CellMap, CellRange};
use crate::{Aabb, CollisionFilter, ProxyId};

/// Where a slot's box is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Placement {
    /// Not stored (inserted since the last update, or removed).
    None,
    /// In every cell of its range.
    Cells,
    /// Too many cells: in the oversized list, tested against every proxy.
    Oversized,
}

/// Cells and per-slot placement shared by [`UniformGrid`](crate::UniformGrid) and
/// [`HierarchicalGrid`](crate::HierarchicalGrid).
#[derive(Debug, Clone, Default)]
pub(super) struct CellStore {
    /// Occupied cells, keyed by level and coordinates (the uniform grid uses level 0).
    pub(super) cells: CellMap,
    /// Per slot: where its box is stored.
    pub(super) placement: Vec<Placement>,
    /// Per slot: the cells of its box at its level, when `Placement::Cells`.
    pub(super) ranges: Vec<CellRange>,
    /// Per slot: its position in the oversized list, or in another list of the grid's own
    /// (a slot is in one list at a time).
    pub(super) position: Vec<u32>,
    /// Boxes too large for the cells, tested against every proxy.
    pub(super) oversized: Vec<u32>,
}

/// Appends `slot` to `list`, recording its position.
#[inline]
pub(super) fn list_push(list: &mut Vec<u32>, position: &mut [u32], slot: usize) {
    position[slot] = list.len() as u32;
    list.push(slot as u32);
}

/// Removes `slot` from `list` in O(1): the last slot moves into its place.
#[inline]
pub(super) fn list_remove(list: &mut Vec<u32>, position: &mut [u32], slot: usize) {
    let at = position[slot] as usize;
    list.swap_remove(at);
    if let Some(&moved) = list.get(at) {
        position[moved as usize] = at as u32;
    }
}

impl CellStore {
    /// Room for `slot_count` slots.
    pub(super) fn grow(&mut self, slot_count: usize) {
        if self.placement.len() < slot_count {
            self.placement.resize(slot_count, Placement::None);
            self.ranges.resize(slot_count, CellRange::default());
            self.position.resize(slot_count, 0);
        }
    }

    /// Forgets every stored box (the per-slot arrays keep their length).
    pub(super) fn clear(&mut self) {
        self.cells.clear();
        self.oversized.clear();
        self.placement.iter_mut().for_each(|p| *p = Placement::None);
    }

    /// Stores `slot` in the oversized list.
    pub(super) fn place_oversized(&mut self, slot: usize) {
        self.placement[slot] = Placement::Oversized;
        list_push(&mut self.oversized, &mut self.position, slot);
    }

    /// Takes `slot` out of the oversized list.
    pub(super) fn unplace_oversized(&mut self, slot: usize) {
        list_remove(&mut self.oversized, &mut self.position, slot);
        self.placement[slot] = Placement::None;
    }

    /// Bytes held by the cells and the per-slot arrays.
    pub(super) fn memory_bytes(&self) -> usize {
        self.cells.memory_bytes()
            + self.placement.capacity()
            + self.ranges.capacity() * std::mem::size_of::<CellRange>()
            + (self.position.capacity() + self.oversized.capacity()) * 4
    }

    /// Calls `visitor` with every stored proxy whose box overlaps `aabb` and whose filter
    /// allows `filter`, until it breaks. `levels` gives, for each occupied level, the cells of
    /// `aabb` there; a box is reported by the cell holding the minimum corner of its range's
    /// intersection with the query's, so once. When the query covers more cells than
    /// `cell_limit`, scanning the stored boxes is cheaper and is done instead.
    pub(super) fn query(
        &self,
        proxies: &ProxyTable,
        aabb: &Aabb,
        filter: CollisionFilter,
        cells_to_visit: u128,
        levels: impl Iterator<Item = (i32, CellRange)>,
        visitor: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) {
        let report = |slot: usize, visitor: &mut dyn FnMut(ProxyId) -> ControlFlow<()>| {
            if proxies.is_live(slot)
                && proxies.filter(slot).allows(filter)
                && proxies.aabb(slot).overlaps(aabb)
            {
                visitor(proxies.id(slot))
            } else {
                ControlFlow::Continue(())
            }
        };
        if cells_to_visit > (self.cells.occupied() as u128).max(64) {
            // More cells than are occupied: scanning the stored proxies is cheaper.
            for slot in 0..self.placement.len() {
                if self.placement[slot] != Placement::None && report(slot, visitor).is_break() {
                    return;
                }
            }
            return;
        }
        for &slot in &self.oversized {
            if report(slot as usize, visitor).is_break() {
                return;
            }
        }
        for (level, query) in levels {
            let mut stop = false;
            query.for_each(|coords| {
                if stop {
                    return;
                }
                let Some(cell) = self.cells.find(&CellKey { level, coords }) else {
                    return;
                };
                for &slot in self.cells.items(cell) {
                    let slot = slot as usize;
                    if query.corner_cell(&self.ranges[slot]) == coords
                        && report(slot, visitor).is_break()
                    {
                        stop = true;
                        return;
                    }
                }
            });
            if stop {
                return;
            }
        }
    }

    /// Checks, for tests right after an update, that every live box is stored, in exactly
    /// the cells `expected` gives for it (its level and range) or in the oversized list, and
    /// that the cells hold nothing else. Panics on the first violation.
    #[cfg(test)]
    pub(super) fn validate(
        &self,
        proxies: &ProxyTable,
        expected: impl Fn(usize) -> (i32, CellRange),
    ) {
        let mut entries = 0;
        for slot in 0..self.placement.len() {
            match self.placement[slot] {
                Placement::Cells => {
                    assert!(proxies.is_live(slot), "dead slot {slot} stored");
                    let (level, range) = expected(slot);
                    assert_eq!(self.ranges[slot], range, "stale range of {slot}");
                    range.for_each(|coords| {
                        let cell = self
                            .cells
                            .find(&CellKey { level, coords })
                            .expect("cell of a stored box");
                        let copies = self
                            .cells
                            .items(cell)
                            .iter()
                            .filter(|&&s| s as usize == slot)
                            .count();
                        assert_eq!(copies, 1, "slot {slot} in cell {coords:?}");
                        entries += 1;
                    });
                }
                Placement::Oversized => {
                    assert_eq!(self.oversized[self.position[slot] as usize] as usize, slot);
                }
                Placement::None => {
                    assert!(!proxies.is_live(slot), "live slot {slot} not stored")
                }
            }
        }
        assert_eq!(
            entries,
            self.cells.entries(),
            "cells hold entries of no box"
        );
    }
}

/// Random inserts (points, small, large and huge boxes), moves, resizes and removals, with
/// `validate` after every update: the grids' structural test.
#[cfg(test)]
pub(super) fn random_operations<B: crate::BroadPhase>(bp: &mut B, validate: impl Fn(&B)) {
    use crate::util::SplitMix64;
    use crate::{PairEvents, ProxyKind};
    use glam::Vec3;
    let mut rng = SplitMix64::new(5);
    let mut ids = Vec::new();
    let mut events = PairEvents::new();
    for _ in 0..300 {
        for _ in 0..rng.below(6) {
            let c = Vec3::new(
                rng.range(-20.0, 20.0),
                rng.range(-20.0, 20.0),
                rng.range(-20.0, 20.0),
            );
            let h = Vec3::splat([0.0, 0.3, 1.0, 4.0, 1e30][rng.below(5)]);
            let aabb = Aabb::new(c - h, c + h).unwrap();
            ids.push(
                bp.insert(aabb, ProxyKind::Dynamic, CollisionFilter::ALL)
                    .unwrap(),
            );
        }
        for _ in 0..rng.below(ids.len() / 2 + 1) {
            let id = ids[rng.below(ids.len())];
            let b = bp.aabb(id).unwrap();
            let d = Vec3::new(
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
            );
            let scale = Vec3::splat([1.0, 1.0, 0.0, 2.0][rng.below(4)]);
            let (c, h) = (
                b.center() + d,
                (b.extents() * 0.5 * scale).min(Vec3::splat(1e30)),
            );
            bp.set_aabb(id, Aabb::new(c - h, c + h).unwrap()).unwrap();
        }
        if ids.len() > 30 && rng.chance(0.6) {
            let id = ids.swap_remove(rng.below(ids.len()));
            bp.remove(id).unwrap();
        }
        bp.update(&mut events);
        validate(bp);
    }
}
