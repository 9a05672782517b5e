//! Hierarchical grid: levels of cubic cells of edge 2^k in one spatial hash, each box at the
//! level that matches its size.

use std::ops::ControlFlow;

use crate::backend::ProxyStore;
use crate::grid::cell_hash::{CellKey, CellMap, CellRange};
use crate::grid::stored::{list_push, list_remove, CellStore, Placement};
use crate::util::MoveBuffer;
use crate::{Aabb, BroadPhase, CollisionFilter, PairEvents, ProxyId, ProxyKind, Vec3};

/// Tuning of [`HierarchicalGrid`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct HierarchicalGridOptions {
    /// Levels with at most this many boxes (or at most 1/64 of all boxes) are sparse and
    /// searched together in one coarse grid instead of one hashed lookup per level, since a
    /// box test costs far less than a cell lookup (0: always hash each level; default 32).
    pub scan_limit: usize,
    /// A moving box's cell is at least this many times its last displacement (largest axis
    /// of the centre's move); 0, negative or non-finite: the size rule only (default 6).
    pub motion_factor: f32,
}

impl Default for HierarchicalGridOptions {
    fn default() -> Self {
        Self {
            scan_limit: 32,
            motion_factor: 6.0,
        }
    }
}

/// The finest level: boxes smaller than 2^-20 (about 1e-6) share its cells.
pub(crate) const HGRID_MIN_LEVEL: i32 = -20;
/// The coarsest level; boxes with an edge above 2^127 (or infinite) go to the oversized list.
pub(crate) const HGRID_MAX_LEVEL: i32 = 127;
const LEVELS: usize = (HGRID_MAX_LEVEL - HGRID_MIN_LEVEL + 1) as usize;
/// A level is sparse when it holds at most this fraction (1 / value) of the boxes, or at most the
/// scan limit.
const SPARSE_SHARE: usize = 64;
/// Sparse levels coarser than every larger sparse level, holding at most this many boxes, are
/// tested box by box rather than put in the sparse grid.
const SCAN_AT_MOST: usize = 4;
/// The motion rule puts a box at most this many levels above its size level (a cell at most
/// 8 times the size-level cell), whatever its displacement: see
/// [`HierarchicalGrid`] for why.
pub(crate) const HGRID_MOTION_LEVELS: i32 = 3;

/// The hierarchical grid of [Lecture04, hierarchical grids]: level `k` has cells of edge `2^k`, and a box
/// goes to its *size level*, where `0.5 < largest edge / cell ≤ 1`, or to a coarser level when
/// it moves fast (below); either way it overlaps at most 2 × 2 × 2 cells there whatever its size.
/// All levels share one spatial hash keyed by `(level, i, j, k)`; only occupied cells exist and
/// emptied cells are reused.
///
/// Levels account for motion. A box may always live on a coarser level than its size requires
/// (it still overlaps at most 2 × 2 × 2 cells, so the search below is unchanged and exact). A
/// dynamic box whose centre moved by `d` (largest axis) since the last update goes to its
/// *motion level*, the finest level whose cell is at least `max(largest edge, K·d)`, `K` the
/// motion factor ([`HierarchicalGrid::set_motion_factor`], default
/// [`HierarchicalGridOptions::motion_factor`]), at most 3 levels above its size
/// level, when that is at least two levels above its size level (one level up would split a
/// population of similar boxes over two dense levels, one more lookup for the finer half, for
/// little gain: measured on the default bench scene). A face crosses a cell plane with
/// probability about `d / cell` per step and axis, so small fast boxes on their size level are
/// re-placed nearly every step and spread over many fine levels, each one more hashed lookup
/// for the boxes below it; on a level with cells of at least `K·d` a face crosses a plane with
/// probability at most about `1 / K`, and fewer levels hold them.
/// Hysteresis: a box above its size level stays where it is while its motion level is its
/// current level or one finer, so a speed fluctuating near a level boundary does not move it
/// every step; it goes coarser as soon as the motion level is coarser, finer once it is two
/// levels finer, and back to its size level when it is set without moving (at rest, or
/// resized in place). Inserted and
/// static boxes use the size rule. The cap keeps a teleport (huge `d`) from putting a small box
/// in a cell of the world's size, shared with every box of that level and looked up by every
/// finer box: 3 levels bound its cell to 8 times its size-level cell (under 16 times its edge),
/// so even a crowd of fast boxes shares cells at most 8³ times larger in volume than under the
/// size rule, and the next ordinary move brings a teleported box back down.
///
/// Pairs are found at the coarser level of the two boxes: every box looks up the ≤ 8 cells its
/// box overlaps on its own and every coarser occupied level, and a pair is reported only in the
/// cell holding the minimum corner of the intersection (and, between two boxes of the same
/// level, only by the smaller slot). Only occupied levels are visited, and the few large boxes
/// of a wide size spread do not cost a hashed lookup per level: at each update, going from the
/// coarsest level down, levels holding at most max(scan limit, 1/64 of the boxes) boxes (up to
/// twice that in all) are *sparse* (scan limit 32 by default, see
/// [`HierarchicalGrid::set_scan_limit`]). Their boxes are put together in one small grid at the
/// coarsest sparse level, so a finer box finds all of them with one lookup of (usually) one
/// cell; sparse levels of at most 4 boxes above that grid (outliers) are tested box by box, so
/// that one huge box does not make the grid's cells huge. The cost per box is
/// O((dense levels ≥ its level + 1) × cell occupancy), where a uniform grid either stores big
/// boxes in many cells or puts many small boxes in one cell.
///
/// Updates re-place only moved boxes (choosing their level as above, touching only cells
/// entered or left when the level is unchanged; each box keeps the indices of its cells, so
/// leaving one needs no hash lookup) and then recompute the pairs with the search above
/// (full-recompute style: moved boxes must also be found by smaller boxes on finer levels,
/// which would otherwise need a search of many fine cells). Box queries walk the query's cells
/// on every occupied level; ray casts use the provided linear scan.
///
/// Worst case: O(n²) per update when the boxes crowd one cell of their level (identical
/// boxes, or boxes stacked on one spot), as every pair in a cell is tested; sizes spread over
/// L levels cost O(n · L) lookups. Memory O(n + occupied cells + pairs).
///
/// ```
/// use broadphase::{Aabb, BroadPhase, CollisionFilter, HierarchicalGrid, PairEvents, ProxyKind};
/// let mut hgrid = HierarchicalGrid::new();
/// let all = CollisionFilter::ALL;
/// hgrid.insert(Aabb::from_arrays([0.0; 3], [0.01; 3])?, ProxyKind::Dynamic, all)?;
/// hgrid.insert(Aabb::from_arrays([-100.0; 3], [100.0; 3])?, ProxyKind::Dynamic, all)?;
/// let mut events = PairEvents::new();
/// hgrid.update(&mut events);
/// assert_eq!(events.begun.len(), 1);
/// assert_eq!(hgrid.occupied_levels().len(), 2);
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct HierarchicalGrid {
    store: ProxyStore,
    /// Cells, placement, each box's range at its level and the oversized list; a stored box's
    /// `position` is in its level's member list.
    stored: CellStore,
    /// `1 / 2^level` by level index.
    inv_cell: Vec<f64>,
    /// The boxes of each level (by level index).
    members: Vec<Vec<u32>>,
    scan_limit: usize,
    /// Occupied levels in increasing order, rebuilt at each update.
    occupied: Vec<i32>,
    // Per slot.
    levels: Vec<i32>,
    /// The indices of the ≤ 8 cells of `ranges` in the cell map, in `CellRange::for_each`
    /// order, so that leaving a cell needs no hash lookup.
    cell_ids: Vec<[u32; 8]>,
    /// Proxies inserted or moved since the last update.
    moved: MoveBuffer,
    /// Per slot: the centre of the stored box as of the last update, for the motion rule.
    centers: Vec<Vec3>,
    motion_factor: f32,
    /// The boxes of the sparse levels, rebuilt at each update (see [`SparseEntry`]).
    sparse: Vec<SparseEntry>,
    /// The sparse boxes in the cells of `sparse_level` they overlap; items index `sparse`.
    sparse_cells: CellMap,
    /// The coarsest sparse-grid level, whose cells hold every sparse box in at most 8 cells.
    sparse_level: Option<i32>,
    /// Levels stored in the sparse grid, as of the last update (scratch).
    sparse_levels_scratch: Vec<i32>,
    /// Occupied levels searched by hashing their cells, finest first, as of the last update.
    dense_levels: Vec<i32>,
    /// Sparse levels coarser than the sparse grid, searched by testing their boxes.
    scanned_levels: Vec<i32>,
}

/// A box of a sparse level, as stored in the merged sparse grid.
#[derive(Debug, Clone, Copy)]
struct SparseEntry {
    slot: u32,
    level: i32,
    /// Its cells at the sparse grid's level.
    range: CellRange,
}

impl Default for HierarchicalGrid {
    fn default() -> Self {
        Self::new()
    }
}

/// The level whose cell edge `2^k` is the smallest power of two ≥ `edge`, clamped below at
/// [`HGRID_MIN_LEVEL`]; `None` above [`HGRID_MAX_LEVEL`] or for an infinite edge. Exact: read
/// from the float's exponent bits.
pub(crate) fn level_of(edge: f32) -> Option<i32> {
    if !edge.is_finite() {
        return None;
    }
    if edge <= (HGRID_MIN_LEVEL as f32).exp2() {
        return Some(HGRID_MIN_LEVEL);
    }
    let bits = edge.to_bits();
    let exponent = ((bits >> 23) & 0xff) as i32 - 127;
    let level = if bits & 0x7f_ffff == 0 {
        exponent
    } else {
        exponent + 1
    };
    (level <= HGRID_MAX_LEVEL).then_some(level)
}

impl HierarchicalGrid {
    /// An empty hierarchical grid.
    pub fn new() -> Self {
        Self {
            store: ProxyStore::new(),
            stored: CellStore::default(),
            inv_cell: (HGRID_MIN_LEVEL..=HGRID_MAX_LEVEL)
                .map(|k| (-k as f64).exp2())
                .collect(),
            members: vec![Vec::new(); LEVELS],
            scan_limit: HierarchicalGridOptions::default().scan_limit,
            occupied: Vec::with_capacity(LEVELS),
            levels: Vec::new(),
            cell_ids: Vec::new(),
            moved: MoveBuffer::default(),
            centers: Vec::new(),
            motion_factor: HierarchicalGridOptions::default().motion_factor,
            sparse: Vec::new(),
            sparse_cells: CellMap::default(),
            sparse_level: None,
            sparse_levels_scratch: Vec::with_capacity(LEVELS),
            dense_levels: Vec::with_capacity(LEVELS),
            scanned_levels: Vec::with_capacity(LEVELS),
        }
    }

    /// An empty hierarchical grid tuned by `options`.
    pub fn with_options(options: &HierarchicalGridOptions) -> Self {
        let mut hgrid = Self::new();
        hgrid.set_scan_limit(options.scan_limit);
        hgrid.set_motion_factor(options.motion_factor);
        hgrid
    }

    /// Levels with at most `limit` boxes are sparse: instead of a hashed lookup per level, the
    /// boxes of all sparse levels are searched together in one grid at the coarsest sparse
    /// level (0: no sparse levels). Default: [`HierarchicalGridOptions::scan_limit`].
    pub fn set_scan_limit(&mut self, limit: usize) {
        self.scan_limit = limit;
    }

    /// A moving box's cell is at least `factor` times its last displacement (see
    /// [`HierarchicalGrid`]); 0 (or a negative or non-finite factor): the size rule only.
    /// Default: [`HierarchicalGridOptions::motion_factor`]. Takes effect as boxes move.
    pub fn set_motion_factor(&mut self, factor: f32) {
        self.motion_factor = if factor.is_finite() {
            factor.max(0.0)
        } else {
            0.0
        };
    }

    /// The level of a live proxy's box as of the last update, `None` for the oversized list.
    pub fn level(&self, id: ProxyId) -> Option<i32> {
        let slot = self.store.proxies.index_of(id).ok()?;
        (self.stored.placement.get(slot) == Some(&Placement::Cells)).then(|| self.levels[slot])
    }

    /// The levels holding at least one box as of the last update, finest first.
    pub fn occupied_levels(&self) -> &[i32] {
        &self.occupied
    }

    /// Number of boxes stored at `level` (cell edge `2^level`).
    pub fn level_count(&self, level: i32) -> usize {
        if (HGRID_MIN_LEVEL..=HGRID_MAX_LEVEL).contains(&level) {
            self.members[(level - HGRID_MIN_LEVEL) as usize].len()
        } else {
            0
        }
    }

    /// Number of occupied cells over all levels.
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

    #[inline]
    fn level_index(level: i32) -> usize {
        (level - HGRID_MIN_LEVEL) as usize
    }

    #[inline]
    fn range_at(&self, aabb: &Aabb, level: i32) -> CellRange {
        CellRange::of(
            aabb.min(),
            aabb.max(),
            self.inv_cell[Self::level_index(level)],
        )
    }

    fn grow_slots(&mut self) {
        let n = self.store.proxies.slot_count();
        if self.stored.placement.len() < n {
            self.stored.grow(n);
            self.levels.resize(n, 0);
            self.cell_ids.resize(n, [0; 8]);
            self.centers.resize(n, Vec3::ZERO);
        }
    }

    /// The level of a box (see [`HierarchicalGrid`]): its size level, raised by its motion
    /// since `from` (its centre at the last update; `None` for a new box) with hysteresis around
    /// its current level. `None` for boxes too large for every level.
    fn level_for(&self, slot: usize, aabb: &Aabb, from: Option<Vec3>) -> Option<i32> {
        let size = level_of(aabb.extents().max_element())?;
        let Some(from) = from.filter(|_| {
            self.motion_factor > 0.0 && self.store.proxies.kind(slot) == ProxyKind::Dynamic
        }) else {
            return Some(size);
        };
        let displacement = (aabb.center() - from).abs().max_element();
        if displacement == 0.0 {
            return Some(size);
        }
        let cap = (size + HGRID_MOTION_LEVELS).min(HGRID_MAX_LEVEL);
        // An infinite reach (a move across the whole float range) is capped like any other.
        let motion =
            level_of(displacement * self.motion_factor).map_or(cap, |l| l.clamp(size, cap));
        // One level up would split a population of similar boxes over two dense levels (one
        // more lookup for the finer half) for little gain: motion counts from two levels up.
        let target = if motion >= size + 2 { motion } else { size };
        let current = self.levels[slot];
        let stays = self.stored.placement[slot] == Placement::Cells
            && current <= cap
            && if current == size {
                target == size
            } else {
                current > size && (current - 1..=current).contains(&motion)
            };
        Some(if stays { current } else { target })
    }

    /// The cells of a box at `level`, or `None` for the oversized list: boxes too large for
    /// every level, and boxes whose range at their level exceeds the 2 x 2 x 2 cells a box
    /// no larger than a cell can touch (rounding at extreme coordinates can widen a range).
    fn cells_for(&self, aabb: &Aabb, level: Option<i32>) -> Option<(i32, CellRange)> {
        let level = level?;
        let range = self.range_at(aabb, level);
        (range.cell_count() <= 8).then_some((level, range))
    }

    fn place(&mut self, slot: usize, target: Option<(i32, CellRange)>) {
        match target {
            None => self.stored.place_oversized(slot),
            Some((level, range)) => {
                self.stored.placement[slot] = Placement::Cells;
                self.levels[slot] = level;
                self.stored.ranges[slot] = range;
                let members = &mut self.members[Self::level_index(level)];
                list_push(members, &mut self.stored.position, slot);
                let (cells, ids) = (&mut self.stored.cells, &mut self.cell_ids[slot]);
                let mut at = 0;
                range.for_each(|coords| {
                    ids[at] = cells.insert(CellKey { level, coords }, slot as u32) as u32;
                    at += 1;
                });
            }
        }
    }

    fn unplace(&mut self, slot: usize) {
        match self.stored.placement[slot] {
            Placement::None => {}
            Placement::Cells => {
                let level = self.levels[slot];
                let members = &mut self.members[Self::level_index(level)];
                list_remove(members, &mut self.stored.position, slot);
                let cells = &mut self.stored.cells;
                let count = self.stored.ranges[slot].cell_count() as usize;
                for &cell in &self.cell_ids[slot][..count] {
                    cells.remove_from(cell as usize, slot as u32);
                }
            }
            Placement::Oversized => self.stored.unplace_oversized(slot),
        }
        self.stored.placement[slot] = Placement::None;
    }

    /// Moves a box to the level and cells its current box and its motion since the last update
    /// call for (a box not stored yet, just inserted, by its size).
    fn replace(&mut self, slot: usize) {
        let aabb = *self.store.proxies.aabb(slot);
        let from = (self.stored.placement[slot] != Placement::None).then(|| self.centers[slot]);
        self.centers[slot] = aabb.center();
        let target = self.cells_for(&aabb, self.level_for(slot, &aabb, from));
        let Some((level, new)) = target.filter(|&(level, _)| {
            self.stored.placement[slot] == Placement::Cells && level == self.levels[slot]
        }) else {
            self.unplace(slot);
            self.place(slot, target);
            return;
        };
        let old = self.stored.ranges[slot];
        if old == new {
            return;
        }
        let (cells, ids) = (&mut self.stored.cells, &mut self.cell_ids[slot]);
        let old_ids = *ids;
        let mut at = 0;
        old.for_each(|coords| {
            if !new.contains(coords) {
                cells.remove_from(old_ids[at] as usize, slot as u32);
            }
            at += 1;
        });
        at = 0;
        new.for_each(|coords| {
            ids[at] = if old.contains(coords) {
                old_ids[old.position(coords)]
            } else {
                cells.insert(CellKey { level, coords }, slot as u32) as u32
            };
            at += 1;
        });
        self.stored.ranges[slot] = new;
    }
}

impl BroadPhase for HierarchicalGrid {
    fn name(&self) -> &'static str {
        "hgrid"
    }

    crate::backend::store_moved_edits!(store, moved);

    fn try_update(&mut self, events: &mut PairEvents) -> crate::Result<()> {
        for k in 0..self.store.proxies.removed_slots().len() {
            let slot = self.store.proxies.removed_slots()[k] as usize;
            self.unplace(slot);
        }
        for k in 0..self.moved.len() {
            let slot = self.moved.slot(k);
            if self.store.proxies.is_live(slot) {
                self.replace(slot);
            }
        }
        self.moved.clear();
        self.occupied.clear();
        for (index, members) in self.members.iter().enumerate() {
            if !members.is_empty() {
                self.occupied.push(index as i32 + HGRID_MIN_LEVEL);
            }
        }
        self.build_sparse_grid();

        self.store.pairs.begin_full();
        for slot in 0..self.stored.placement.len() {
            if self.stored.placement[slot] == Placement::Cells {
                self.mark_pairs_of(slot);
            }
        }
        let proxies = &self.store.proxies;
        for &big in &self.stored.oversized {
            let big = big as usize;
            let aabb = proxies.aabb(big);
            for other in 0..self.stored.placement.len() {
                let placement = self.stored.placement[other];
                if placement == Placement::None
                    || (placement == Placement::Oversized && other <= big)
                {
                    continue;
                }
                if aabb.overlaps(proxies.aabb(other)) && proxies.can_pair(big, other) {
                    self.store.pairs.mark(big as u32, other as u32);
                }
            }
        }
        self.store.pairs.end_full();
        self.store.finish(events)
    }

    fn clear(&mut self) {
        self.store.clear();
        self.stored.clear();
        self.moved.clear();
        self.occupied.clear();
        self.sparse.clear();
        self.sparse_cells.clear();
        self.sparse_level = None;
        self.dense_levels.clear();
        self.scanned_levels.clear();
        self.members.iter_mut().for_each(Vec::clear);
    }

    crate::backend::store_accessors!(store);

    fn memory_bytes(&self) -> usize {
        self.store.memory_bytes()
            + self.stored.memory_bytes()
            + self.inv_cell.capacity() * 8
            + self
                .members
                .iter()
                .map(|m| m.capacity() * 4 + 24)
                .sum::<usize>()
            + self.occupied.capacity() * 4
            + self.levels.capacity() * 4
            + self.cell_ids.capacity() * 32
            + self.moved.memory_bytes()
            + self.centers.capacity() * std::mem::size_of::<Vec3>()
            + self.sparse.capacity() * std::mem::size_of::<SparseEntry>()
            + self.sparse_cells.memory_bytes()
            + (self.sparse_levels_scratch.capacity()
                + self.dense_levels.capacity()
                + self.scanned_levels.capacity())
                * 4
    }

    fn query_aabb_with(
        &self,
        aabb: &Aabb,
        filter: CollisionFilter,
        visitor: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) {
        let cells_to_visit = self.occupied.iter().fold(0u128, |n, &level| {
            n.saturating_add(self.range_at(aabb, level).cell_count())
        });
        let levels = self
            .occupied
            .iter()
            .map(|&level| (level, self.range_at(aabb, level)));
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

crate::backend::impl_candidate!(HierarchicalGrid, store);

/// Structural checks for tests, right after an update.
#[cfg(test)]
impl HierarchicalGrid {
    /// Checks that every stored box is in exactly the cells of its current range (or in the
    /// oversized list) and that the cells hold nothing else. Panics on the first violation.
    fn validate(&self) {
        let proxies = &self.store.proxies;
        for slot in 0..self.stored.placement.len() {
            if self.stored.placement[slot] != Placement::Cells {
                continue;
            }
            let aabb = proxies.aabb(slot);
            let size = level_of(aabb.extents().max_element()).expect("sized box");
            let level = self.levels[slot];
            assert!(
                (size..=size + HGRID_MOTION_LEVELS).contains(&level),
                "slot {slot} at level {level}, size level {size}"
            );
            if proxies.kind(slot) == ProxyKind::Static {
                assert_eq!(level, size, "static slot {slot} off its size level");
            }
        }
        self.stored.validate(proxies, |slot| {
            let level = self.levels[slot];
            (level, self.range_at(proxies.aabb(slot), level))
        });
    }
}

mod sparse;
#[cfg(test)]
mod tests;
