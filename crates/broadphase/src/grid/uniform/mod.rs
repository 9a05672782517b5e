//! Uniform grid stored as a spatial hash: unbounded, each box in every cell it overlaps.
//!
//! The type, its options, placement and the full update are here; the updates for few moved
//! boxes are in `incremental`.

mod incremental;

use std::ops::ControlFlow;

use crate::backend::{ProxyStore, ProxyTable};
use crate::grid::cell_hash::{CellKey, CellRange};
use crate::grid::stored::{CellStore, Placement};
use crate::util::MoveBuffer;
use incremental::Before;

use crate::{
    Aabb, BroadPhase, CollisionFilter, Error, PairEvents, ProxyId, ProxyKind, Result, Vec3,
};

/// Tuning of [`UniformGrid`].
///
/// ```
/// use broadphase::grid::GridOptions;
/// let mut options = GridOptions::default();
/// options.cell_size = Some(2.0);
/// let grid = broadphase::UniformGrid::with_options(&options)?;
/// assert_eq!(grid.cell_size(), Some(2.0));
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct GridOptions {
    /// Cell edge length (finite, > 0); `None` (default) chooses twice the mean largest box
    /// edge at the first update with proxies.
    pub cell_size: Option<f32>,
    /// Most cells one box may cover before it goes to the oversized list (≥ 1; default 64).
    pub max_cells_per_box: usize,
}

impl Default for GridOptions {
    fn default() -> Self {
        Self {
            cell_size: None,
            max_cells_per_box: 64,
        }
    }
}

/// A uniform grid of cubic cells kept in a spatial hash (`(i·p1 xor j·p2 xor k·p3) mod n`), so
/// the world needs no bounds and only occupied cells use memory.
///
/// Each box is stored in every cell it overlaps; a pair is reported only by the cell that holds
/// the minimum corner of the two boxes' intersection, so there is no global duplicate set. A box
/// covering more than [`GridOptions::max_cells_per_box`] cells (default 64) goes to an
/// oversized list tested against every proxy, so huge boxes stay exact and cheap to store.
///
/// The cells are kept up to date incrementally: a moved box leaves only the cells it left and
/// enters only the cells it entered. When at most a quarter of the boxes moved, only moved and
/// new proxies search their cells for pairs. While there are fewer pairs than moved boxes, the
/// pairs of moved proxies are re-tested in one pass over the pairs and the pairs found looked
/// up: O(pairs + Σ over moved boxes of the occupants of their cells). With more pairs, each
/// box a moved box meets (in its cells, and before it leaves a cell in that cell) is tested
/// with both boxes at the last update and now, so that only pairs that began or ended touch
/// the pair set: O(Σ over moved boxes of the occupants of their old and new cells), with no
/// pass over the pairs. When more moved,
/// every occupied cell pairs its own boxes, read in one pass over the cell records, and the
/// pairs found are diffed with the last update's in key order (a sort and a merge, the
/// full-recompute diff of `sort-and-sweep`): O(Σ over cells of occupants² + pairs), with no
/// hash lookup per moved box nor per persisting pair. Box queries walk the cells of the query
/// box (or scan when it covers more cells than there are proxies); ray casts use the provided
/// linear scan.
///
/// Worst case: O(n²) per update when the boxes crowd a few cells (all stacked on one spot, or
/// a scene many times smaller than a cell the caller gave), since every moved box is tested
/// against every occupant of its cells; and O(n) per moved box for each box in the oversized
/// list. Memory O(n · [`GridOptions::max_cells_per_box`] + pairs).
///
/// Cell size: given to [`UniformGrid::with_cell_size`], or chosen automatically at the first
/// update that has proxies as twice the mean of the boxes' largest edge (ignoring boxes with an
/// infinite edge, and counting an edge above eight times the median as eight medians; 1 when
/// all are points). An automatic size is checked against the boxes every 64 updates and
/// chosen again when they have moved away from it by more than a factor of two, so an
/// outlier that has left does not keep its mark on the grid. [`UniformGrid::retune_cell_size`]
/// re-chooses it at once.
///
/// ```
/// use broadphase::{Aabb, BroadPhase, CollisionFilter, PairEvents, ProxyKind, UniformGrid};
/// let mut grid = UniformGrid::with_cell_size(2.0)?;
/// let a = grid.insert(Aabb::from_arrays([0.0; 3], [1.0; 3])?, ProxyKind::Dynamic, CollisionFilter::ALL)?;
/// let b = grid.insert(Aabb::from_arrays([1.0; 3], [3.0; 3])?, ProxyKind::Dynamic, CollisionFilter::ALL)?;
/// let mut events = PairEvents::new();
/// grid.update(&mut events);
/// assert_eq!(events.begun.len(), 1);
/// # let _ = (a, b);
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct UniformGrid {
    store: ProxyStore,
    /// Cells, placement and the oversized list.
    stored: CellStore,
    /// `None` until chosen automatically.
    cell_size: Option<f32>,
    inv_cell: f64,
    max_cells_per_box: u128,
    /// Proxies inserted or moved since the last update.
    moved: MoveBuffer,
    /// The cell size follows the boxes (not given by the caller).
    automatic: bool,
    /// Updates since the automatic cell size was last checked.
    since_retune: u32,
    /// Scratch of [`automatic_cell_size`].
    edges: Vec<f32>,
    /// Scratch of [`UniformGrid::pair_every_cell`]: one cell's non-static and static slots.
    cell_split: (Vec<u32>, Vec<u32>),
    /// Per slot: its box at the last update (for the slots placed then), which the
    /// incremental update compares with the box now.
    last: Vec<Aabb>,
    /// Per slot, during an incremental update: [`FRESH`] and [`SCANS_ALL`].
    marks: Vec<u8>,
    /// Every box was placed again since the last update (a new cell size), so the cells the
    /// moved boxes left are not known: the next update finds every pair again.
    replaced: bool,
    /// Updates that found every pair again (see [`FULL_RATIO`]).
    full_updates: u64,
    /// Incremental updates that told the pairs' changes from the boxes (for tests).
    change_updates: u64,
    /// Every incremental update by lookup (set by tests, to cover both ways).
    by_lookup_only: bool,
}

impl Default for UniformGrid {
    fn default() -> Self {
        Self::new()
    }
}

impl UniformGrid {
    /// An empty grid whose cell size is chosen at the first update (see the type's docs).
    pub fn new() -> Self {
        Self {
            store: ProxyStore::new(),
            stored: CellStore::default(),
            cell_size: None,
            inv_cell: 1.0,
            max_cells_per_box: GridOptions::default().max_cells_per_box as u128,
            moved: MoveBuffer::default(),
            automatic: true,
            since_retune: 0,
            edges: Vec::new(),
            cell_split: (Vec::new(), Vec::new()),
            last: Vec::new(),
            marks: Vec::new(),
            replaced: false,
            full_updates: 0,
            change_updates: 0,
            by_lookup_only: false,
        }
    }

    /// Updates so far in which so many boxes had moved that every pair was found again, cell
    /// by cell (more than a quarter of them; the other updates look up only the moved
    /// boxes' cells).
    pub fn full_updates(&self) -> u64 {
        self.full_updates
    }

    /// An empty grid tuned by `options`; `InvalidOption` when one is out of range.
    pub fn with_options(options: &GridOptions) -> Result<Self> {
        let mut grid = Self::new();
        if let Some(size) = options.cell_size {
            grid.set_cell_size(size)?;
        }
        grid.set_max_cells_per_box(options.max_cells_per_box)?;
        Ok(grid)
    }

    /// An empty grid with cells of edge `cell_size` (finite, > 0).
    pub fn with_cell_size(cell_size: f32) -> Result<Self> {
        let mut grid = Self::new();
        grid.set_cell_size(cell_size)?;
        Ok(grid)
    }

    /// Sets the cap on the number of cells one box may cover (≥ 1); boxes over it are kept in
    /// the oversized list. Takes effect for boxes placed from now on.
    pub fn set_max_cells_per_box(&mut self, max_cells: usize) -> Result<()> {
        if max_cells == 0 {
            return Err(Error::InvalidOption("max cells per box must be at least 1"));
        }
        self.max_cells_per_box = max_cells as u128;
        Ok(())
    }

    /// The cell edge length, once chosen.
    pub fn cell_size(&self) -> Option<f32> {
        self.cell_size
    }

    /// Number of occupied cells (for memory-bound tests and statistics).
    pub fn occupied_cells(&self) -> usize {
        self.stored.cells.occupied()
    }

    /// Number of cell records allocated, occupied or kept for reuse.
    pub fn allocated_cells(&self) -> usize {
        self.stored.cells.allocated()
    }

    /// Number of proxies in the oversized list.
    pub fn oversized_count(&self) -> usize {
        self.stored.oversized.len()
    }

    /// Changes the cell size and re-places every stored box. Pairs are unaffected (they are
    /// exact whatever the cell size). O(n · cells per box).
    pub fn set_cell_size(&mut self, cell_size: f32) -> Result<()> {
        if !(cell_size.is_finite() && cell_size > 0.0) {
            return Err(Error::InvalidOption(
                "grid cell size must be finite and positive",
            ));
        }
        self.automatic = false;
        self.apply_cell_size(cell_size);
        Ok(())
    }

    /// Sets a finite, positive cell size and re-places every stored box.
    fn apply_cell_size(&mut self, cell_size: f32) {
        self.cell_size = Some(cell_size);
        self.inv_cell = 1.0 / cell_size as f64;
        self.replace_all();
    }

    /// Re-chooses the cell size from the current boxes with the automatic rule and re-places
    /// every box, and lets it follow the boxes from then on (see the type's docs). Returns
    /// the new size.
    pub fn retune_cell_size(&mut self) -> f32 {
        let size = automatic_cell_size(&self.store.proxies, &mut self.edges);
        self.automatic = true;
        self.since_retune = 0;
        self.apply_cell_size(size);
        size
    }

    /// Every [`RETUNE_INTERVAL`] updates: re-chooses an automatic cell size when the boxes'
    /// typical size has moved away from it by more than a factor of two (a huge box that set
    /// it has left, the objects grew), so that the grid comes back to the scene it holds.
    fn retune_if_outgrown(&mut self) {
        self.since_retune += 1;
        if self.since_retune < RETUNE_INTERVAL || self.store.proxies.is_empty() {
            return;
        }
        self.since_retune = 0;
        let size = automatic_cell_size(&self.store.proxies, &mut self.edges);
        let current = self.cell_size.unwrap_or(size);
        if size > 2.0 * current || size < 0.5 * current {
            self.apply_cell_size(size);
        }
    }

    fn replace_all(&mut self) {
        self.replaced = true;
        self.stored.cells.clear();
        self.stored.oversized.clear();
        for slot in 0..self.stored.placement.len() {
            if self.stored.placement[slot] != Placement::None {
                self.stored.placement[slot] = Placement::None;
                self.place(slot);
            }
        }
    }

    fn grow_slots(&mut self) {
        let slots = self.store.proxies.slot_count();
        self.stored.grow(slots);
        if self.last.len() < slots {
            self.last
                .resize(slots, Aabb::new_unchecked(Vec3::ZERO, Vec3::ZERO));
            self.marks.resize(slots, 0);
        }
    }

    #[inline]
    fn key(coords: [i64; 3]) -> CellKey {
        CellKey { level: 0, coords }
    }

    /// Stores an unplaced slot's current box.
    fn place(&mut self, slot: usize) {
        let aabb = self.store.proxies.aabb(slot);
        let range = CellRange::of(aabb.min(), aabb.max(), self.inv_cell);
        self.stored.ranges[slot] = range;
        if range.cell_count() > self.max_cells_per_box {
            self.stored.place_oversized(slot);
        } else {
            self.stored.placement[slot] = Placement::Cells;
            let cells = &mut self.stored.cells;
            range.for_each(|c| cells.push(Self::key(c), slot as u32));
        }
    }

    fn unplace(&mut self, slot: usize) {
        match self.stored.placement[slot] {
            Placement::None => {}
            Placement::Cells => {
                let cells = &mut self.stored.cells;
                self.stored.ranges[slot].for_each(|c| cells.remove(Self::key(c), slot as u32));
            }
            Placement::Oversized => self.stored.unplace_oversized(slot),
        }
        self.stored.placement[slot] = Placement::None;
    }

    /// Moves a stored box to its current position touching only the cells it left or entered.
    /// With `ENDING` (the incremental update by change), it first ends, in each cell it
    /// leaves, its pairs with the boxes there that no longer overlap it, and a box that goes
    /// to the oversized list is marked to scan every box for its pairs (those of its old
    /// cells included; one that leaves the list is marked so already, and a new box in cells
    /// finds them in its new cells).
    fn replace<const ENDING: bool>(&mut self, slot: usize) {
        let aabb = self.store.proxies.aabb(slot);
        let new = CellRange::of(aabb.min(), aabb.max(), self.inv_cell);
        let oversized = new.cell_count() > self.max_cells_per_box;
        if self.stored.placement[slot] != Placement::Cells || oversized {
            if ENDING && oversized {
                self.marks[slot] |= SCANS_ALL;
            }
            self.unplace(slot);
            self.place(slot);
            return;
        }
        let old = self.stored.ranges[slot];
        if old == new {
            return;
        }
        let before = Before::new(&self.store.proxies, &self.last, &self.marks, &self.moved);
        let mover = ENDING.then(|| before.mover(slot));
        let (cells, pairs) = (&mut self.stored.cells, &mut self.store.pairs);
        old.for_each(|c| {
            if new.contains(c) {
                return;
            }
            let Some(cell) = cells.find(&Self::key(c)) else {
                debug_assert!(false, "slot {slot} not in its cell {c:?}");
                return;
            };
            if let Some(mover) = &mover {
                mover.end_pairs_among(cells.items(cell), &before, pairs, slot);
            }
            cells.remove_from(cell, slot as u32);
        });
        new.for_each(|c| {
            if !old.contains(c) {
                cells.push(Self::key(c), slot as u32);
            }
        });
        self.stored.ranges[slot] = new;
    }

    /// Finds every pair again when most boxes moved: each occupied cell's slots against each
    /// other (a pair only in the cell of its intersection's minimum corner, so once), each
    /// oversized box against every box, marked for the pair set's sorted diff. A cell's
    /// record holds its key and first slots in one cache line and the records are read in
    /// sequence, where looking up the cells of every box would hash each of them, and the
    /// diff compares the pairs that persist in sequence instead of looking each up in the
    /// pair set. Pairs of two static boxes, which never pair, are not visited.
    fn pair_every_cell(&mut self) {
        let proxies = &self.store.proxies;
        let (stored, pairs) = (&self.stored, &mut self.store.pairs);
        let (dynamic, statics) = &mut self.cell_split;
        let any_static = proxies.static_count() > 0;
        pairs.begin_full();
        stored.cells.for_each_cell(|key, items| {
            // Two static boxes never pair: with static boxes in the scene, each cell's slots
            // are split so that their pairs are never visited (in a world of level geometry
            // they are most of a cell's).
            let (dynamic, statics): (&[u32], &[u32]) = if any_static {
                dynamic.clear();
                statics.clear();
                for &slot in items {
                    if proxies.kind(slot as usize) == ProxyKind::Static {
                        statics.push(slot);
                    } else {
                        dynamic.push(slot);
                    }
                }
                (dynamic, statics)
            } else {
                (items, &[])
            };
            for (i, &a) in dynamic.iter().enumerate() {
                let (a, box_a, range_a) = (
                    a as usize,
                    proxies.aabb(a as usize),
                    &stored.ranges[a as usize],
                );
                for &b in dynamic[i + 1..].iter().chain(statics) {
                    let b = b as usize;
                    if box_a.overlaps(proxies.aabb(b))
                        && range_a.corner_cell(&stored.ranges[b]) == key.coords
                        && proxies.can_pair(a, b)
                    {
                        pairs.mark(a as u32, b as u32);
                    }
                }
            }
        });
        for &a in &stored.oversized {
            let (a, box_a) = (a as usize, proxies.aabb(a as usize));
            for b in proxies.live_slots() {
                // Two oversized boxes: the smaller slot reports.
                let skip = b == a
                    || stored.placement[b] == Placement::None
                    || (stored.placement[b] == Placement::Oversized && b < a);
                if !skip && box_a.overlaps(proxies.aabb(b)) && proxies.can_pair(a, b) {
                    pairs.mark(a as u32, b as u32);
                }
            }
        }
        pairs.end_full();
    }
}

/// Twice the typical largest edge of the live boxes ([`ProxyTable::typical_edge`]); 1 if no
/// box has a finite edge or all are points. Always finite and positive. O(n); `edges` is
/// scratch.
pub(crate) fn automatic_cell_size(proxies: &ProxyTable, edges: &mut Vec<f32>) -> f32 {
    let size = 2.0 * proxies.typical_edge(edges).unwrap_or(0.0);
    if size > 0.0 && size.is_finite() {
        (size as f32).clamp(f32::MIN_POSITIVE * 1e6, f32::MAX / 4.0)
    } else {
        1.0
    }
}

/// An update in which more than one box in this many moved finds every pair again, cell by
/// cell, and diffs them with the last update's in key order; one in which fewer moved looks
/// up the cells of the moved boxes and touches the pair set only for their pairs.
const FULL_RATIO: usize = 4;

/// Mark of a moved slot that was not placed at the last update (inserted since).
const FRESH: u8 = 1;
/// Mark of a moved slot that is or was in the oversized list: its pairs are found by a scan
/// of every box.
const SCANS_ALL: u8 = 2;

/// Updates between two checks of an automatic cell size against the current boxes; the
/// check is O(n), so its cost per update is O(n / this).
const RETUNE_INTERVAL: u32 = 64;

impl BroadPhase for UniformGrid {
    fn name(&self) -> &'static str {
        "grid"
    }

    crate::backend::store_moved_edits!(store, moved);

    fn try_update(&mut self, events: &mut PairEvents) -> crate::Result<()> {
        if self.cell_size.is_none() && !self.store.proxies.is_empty() {
            let size = automatic_cell_size(&self.store.proxies, &mut self.edges);
            self.cell_size = Some(size);
            self.inv_cell = 1.0 / size as f64;
        } else if self.automatic {
            self.retune_if_outgrown();
        }
        for k in 0..self.store.proxies.removed_slots().len() {
            let slot = self.store.proxies.removed_slots()[k] as usize;
            self.unplace(slot);
        }
        if self.store.pairs.lost() {
            // The last update failed on the pair limit and dropped the pairs: every proxy's
            // pairs are found again, as if all had moved.
            for slot in self.store.proxies.live_slots() {
                self.moved.mark(slot);
            }
        }
        let proxies = &self.store.proxies;
        self.moved.retain(|slot| proxies.is_live(slot));
        if self.replaced || self.moved.len() * FULL_RATIO > self.store.proxies.len() {
            for k in 0..self.moved.len() {
                self.replace::<false>(self.moved.slot(k));
            }
            // The diff ends the pairs of removed proxies too: none of them is marked.
            self.pair_every_cell();
            self.full_updates += 1;
        } else if self.store.pairs.len() >= self.moved.len() && !self.by_lookup_only {
            self.update_by_change();
            self.change_updates += 1;
        } else {
            self.update_by_lookup();
        }
        self.replaced = false;
        for k in 0..self.moved.len() {
            let slot = self.moved.slot(k);
            self.last[slot] = *self.store.proxies.aabb(slot);
        }
        self.moved.clear();
        self.store.finish(events)
    }

    fn clear(&mut self) {
        self.store.clear();
        self.stored.clear();
        self.moved.clear();
        if self.automatic {
            // Chosen again from the next boxes.
            self.cell_size = None;
            self.since_retune = 0;
        }
    }

    crate::backend::store_accessors!(store);

    fn memory_bytes(&self) -> usize {
        self.store.memory_bytes()
            + self.stored.memory_bytes()
            + self.moved.memory_bytes()
            + self.edges.capacity() * 4
            + self.last.capacity() * std::mem::size_of::<Aabb>()
            + self.marks.capacity()
    }

    fn query_aabb_with(
        &self,
        aabb: &Aabb,
        filter: CollisionFilter,
        visitor: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) {
        let query = CellRange::of(aabb.min(), aabb.max(), self.inv_cell);
        // Before the first update there is no cell size: scan.
        let cells_to_visit = match self.cell_size {
            Some(_) => query.cell_count(),
            None => u128::MAX,
        };
        let levels = std::iter::once((0, query));
        self.stored.query(
            &self.store.proxies,
            aabb,
            filter,
            cells_to_visit,
            levels,
            visitor,
        );
    }
}

crate::backend::impl_candidate!(UniformGrid, store);

/// Structural checks for tests, right after an update.
#[cfg(test)]
impl UniformGrid {
    /// Checks that every stored box is in exactly the cells of its current range (or in the
    /// oversized list) and that the cells hold nothing else. Panics on the first violation.
    fn validate(&self) {
        let proxies = &self.store.proxies;
        self.stored.validate(proxies, |slot| {
            let aabb = proxies.aabb(slot);
            (0, CellRange::of(aabb.min(), aabb.max(), self.inv_cell))
        });
    }
}

#[cfg(test)]
mod tests;
