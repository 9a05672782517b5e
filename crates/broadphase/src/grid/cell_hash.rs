//! Cell coordinates and the spatial hash that stores grid cells, shared by the uniform and the
//! hierarchical grid.
//!
//! Cell coordinates are computed in `f64` and saturated to ±[`CELL_LIMIT`], so boxes at ±1e30 or
//! spanning ±3e38 never overflow or panic. Saturation is monotone (`a <= b` implies
//! `cell(a) <= cell(b)`), which is all the grids need to stay exact: two overlapping boxes always
//! share the cell of the minimum corner of their intersection, however coarse the clamped cells.

/// Largest magnitude of a cell coordinate; far beyond it, cells merge (still exact).
pub(crate) const CELL_LIMIT: i64 = 1 << 60;

const NONE: u32 = u32::MAX;

// The large primes of [Lecture04, spatial hashing] for `(i·p1 xor j·p2 xor k·p3) mod n`; the fourth mixes in the level.
const P1: u64 = 73_856_093;
const P2: u64 = 19_349_663;
const P3: u64 = 83_492_791;
const P4: u64 = 2_654_435_761;

/// The cell coordinate of `v` for cells of size `1 / inv_cell`: `floor(v · inv_cell)`, saturated.
#[inline]
pub(crate) fn cell_coord(v: f32, inv_cell: f64) -> i64 {
    let x = v as f64 * inv_cell;
    // Floor without a libm call: truncate (`as` saturates), then step down for negative
    // fractions. Exact for |x| < 2^63; the clamp keeps range arithmetic far from overflow.
    let truncated = x as i64;
    let floor = truncated.saturating_sub(((truncated as f64) > x) as i64);
    floor.clamp(-CELL_LIMIT, CELL_LIMIT)
}

/// An inclusive box of cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct CellRange {
    pub(crate) min: [i64; 3],
    pub(crate) max: [i64; 3],
}

impl CellRange {
    /// The cells a box with corners `lo`, `hi` overlaps.
    #[inline]
    pub(crate) fn of(lo: glam::Vec3, hi: glam::Vec3, inv_cell: f64) -> Self {
        Self {
            min: [
                cell_coord(lo.x, inv_cell),
                cell_coord(lo.y, inv_cell),
                cell_coord(lo.z, inv_cell),
            ],
            max: [
                cell_coord(hi.x, inv_cell),
                cell_coord(hi.y, inv_cell),
                cell_coord(hi.z, inv_cell),
            ],
        }
    }

    /// Number of cells, saturating (ranges span at most 2^61 cells per axis).
    #[inline]
    pub(crate) fn cell_count(&self) -> u128 {
        (0..3).fold(1u128, |n, a| {
            n.saturating_mul((self.max[a] - self.min[a] + 1) as u128)
        })
    }

    /// Index of cell `c` (inside the range) in [`CellRange::for_each`] order.
    #[inline]
    pub(crate) fn position(&self, c: [i64; 3]) -> usize {
        let nx = (self.max[0] - self.min[0] + 1) as usize;
        let ny = (self.max[1] - self.min[1] + 1) as usize;
        (c[0] - self.min[0]) as usize
            + nx * ((c[1] - self.min[1]) as usize + ny * (c[2] - self.min[2]) as usize)
    }

    #[inline]
    pub(crate) fn contains(&self, c: [i64; 3]) -> bool {
        (0..3).all(|a| self.min[a] <= c[a] && c[a] <= self.max[a])
    }

    /// Calls `f` with every cell of the range, x fastest.
    #[inline]
    pub(crate) fn for_each(&self, mut f: impl FnMut([i64; 3])) {
        for k in self.min[2]..=self.max[2] {
            for j in self.min[1]..=self.max[1] {
                for i in self.min[0]..=self.max[0] {
                    f([i, j, k]);
                }
            }
        }
    }

    /// The cell holding the minimum corner of the intersection of two boxes with these ranges
    /// (monotone saturation makes it the componentwise max of the two minimum cells).
    #[inline]
    pub(crate) fn corner_cell(&self, other: &CellRange) -> [i64; 3] {
        [0, 1, 2].map(|a| self.min[a].max(other.min[a]))
    }
}

/// A cell's address: its level (0 for a uniform grid) and its integer coordinates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct CellKey {
    pub(crate) level: i32,
    pub(crate) coords: [i64; 3],
}

impl CellKey {
    /// The spatial hash of [Lecture04, spatial hashing], `i·p1 xor j·p2 xor k·p3` (xor the level times a fourth prime),
    /// before the `mod n` (see [`CellMap`]).
    #[inline]
    fn hash(&self) -> u64 {
        let [i, j, k] = self.coords;
        (i as u64).wrapping_mul(P1)
            ^ (j as u64).wrapping_mul(P2)
            ^ (k as u64).wrapping_mul(P3)
            ^ (self.level as u64).wrapping_mul(P4)
    }
}

/// A spatial hash of occupied cells: `n` (a power of two) buckets of chained cells, each with
/// the list of proxy slots stored in it.
///
/// Only occupied cells exist: a cell whose list empties is unlinked and its index (with its list's
/// allocation) reused, so memory is bounded by the peak number of occupied cells however far
/// objects wander. Lookups are O(1) on average (the table doubles when cells outnumber buckets).
/// A cell's key, chain link and up to [`INLINE_SLOTS`] slots share one 64-byte record, so a
/// lookup that finds a sparsely filled cell touches two cache lines (bucket head and record);
/// longer lists spill to a per-cell vector that keeps its allocation for reuse.
#[derive(Debug, Clone, Default)]
pub(crate) struct CellMap {
    heads: Vec<u32>,
    records: Vec<CellRecord>,
    /// Lists longer than [`INLINE_SLOTS`], by cell index (empty otherwise).
    spill: Vec<Vec<u32>>,
    free: Vec<u32>,
    occupied: usize,
}

/// Slots stored in the cell record itself.
const INLINE_SLOTS: usize = 6;

/// One cell: key, bucket chain link and its slot list when short, in one cache line.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
struct CellRecord {
    key: CellKey,
    next: u32,
    len: u32,
    inline: [u32; INLINE_SLOTS],
}

/// `next` value marking a freed cell.
const FREED: u32 = u32::MAX - 1;

impl CellMap {
    #[inline]
    fn bucket(&self, key: &CellKey) -> usize {
        // `mod n` for a power-of-two `n`, taken from the top bits of a Fibonacci multiply: with
        // a plain mask, the low bits of the xor of prime products depend only on the low bits
        // of the coordinates, so cells a multiple of `n` apart always collide.
        let bits = self.heads.len().trailing_zeros();
        (key.hash().wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
    }

    /// The index of the cell at `key`, if occupied.
    #[inline]
    pub(crate) fn find(&self, key: &CellKey) -> Option<usize> {
        if self.heads.is_empty() {
            return None;
        }
        let mut cell = self.heads[self.bucket(key)];
        while cell != NONE {
            let record = &self.records[cell as usize];
            if record.key == *key {
                return Some(cell as usize);
            }
            cell = record.next;
        }
        None
    }

    /// The slots stored in cell `cell` (an index from [`CellMap::find`]).
    #[inline]
    pub(crate) fn items(&self, cell: usize) -> &[u32] {
        let record = &self.records[cell];
        let len = record.len as usize;
        if len <= INLINE_SLOTS {
            &record.inline[..len]
        } else {
            &self.spill[cell]
        }
    }

    /// Adds `slot` to the cell at `key`, creating the cell if needed.
    pub(crate) fn push(&mut self, key: CellKey, slot: u32) {
        self.insert(key, slot);
    }

    /// [`CellMap::push`] that returns the cell's index, which stays valid while the cell holds
    /// `slot` (for [`CellMap::remove_from`]).
    pub(crate) fn insert(&mut self, key: CellKey, slot: u32) -> usize {
        let cell = match self.find(&key) {
            Some(cell) => cell,
            None => self.create(key),
        };
        let record = &mut self.records[cell];
        let len = record.len as usize;
        if len < INLINE_SLOTS {
            record.inline[len] = slot;
        } else {
            let spill = &mut self.spill[cell];
            if len == INLINE_SLOTS {
                spill.clear();
                spill.extend_from_slice(&record.inline);
            }
            spill.push(slot);
        }
        record.len += 1;
        cell
    }

    /// Removes `slot` from the cell at `key`; frees the cell when it empties.
    pub(crate) fn remove(&mut self, key: CellKey, slot: u32) {
        let Some(cell) = self.find(&key) else {
            debug_assert!(false, "slot {slot} not in cell {key:?}");
            return;
        };
        self.remove_from(cell, slot);
    }

    /// Removes `slot` from cell `cell` (an index from [`CellMap::insert`] of that slot, without
    /// a hash lookup); frees the cell when it empties. The last slot takes the removed one's
    /// place, as in `Vec::swap_remove`.
    pub(crate) fn remove_from(&mut self, cell: usize, slot: u32) {
        let record = &mut self.records[cell];
        let len = record.len as usize;
        if len <= INLINE_SLOTS {
            let Some(at) = record.inline[..len].iter().position(|&s| s == slot) else {
                debug_assert!(false, "slot {slot} not in cell {cell}");
                return;
            };
            record.inline[at] = record.inline[len - 1];
        } else {
            let spill = &mut self.spill[cell];
            let Some(at) = spill.iter().position(|&s| s == slot) else {
                debug_assert!(false, "slot {slot} not in cell {cell}");
                return;
            };
            spill.swap_remove(at);
            if spill.len() == INLINE_SLOTS {
                record.inline.copy_from_slice(spill);
                spill.clear();
            }
        }
        record.len -= 1;
        if record.len == 0 {
            self.release(cell);
        }
    }

    fn create(&mut self, key: CellKey) -> usize {
        if self.occupied >= self.heads.len() {
            self.grow();
        }
        let record = CellRecord {
            key,
            next: NONE,
            len: 0,
            inline: [0; INLINE_SLOTS],
        };
        let cell = match self.free.pop() {
            Some(cell) => {
                self.records[cell as usize] = record;
                cell as usize
            }
            None => {
                self.records.push(record);
                self.spill.push(Vec::new());
                self.records.len() - 1
            }
        };
        let bucket = self.bucket(&key);
        self.records[cell].next = self.heads[bucket];
        self.heads[bucket] = cell as u32;
        self.occupied += 1;
        cell
    }

    fn release(&mut self, cell: usize) {
        let bucket = self.bucket(&self.records[cell].key);
        let mut link = self.heads[bucket];
        if link == cell as u32 {
            self.heads[bucket] = self.records[cell].next;
        } else {
            while self.records[link as usize].next != cell as u32 {
                link = self.records[link as usize].next;
            }
            self.records[link as usize].next = self.records[cell].next;
        }
        self.records[cell].next = FREED;
        self.free.push(cell as u32);
        self.occupied -= 1;
    }

    fn grow(&mut self) {
        let buckets = (self.heads.len() * 2).max(64);
        self.heads.clear();
        self.heads.resize(buckets, NONE);
        for cell in 0..self.records.len() {
            if self.records[cell].next == FREED {
                continue;
            }
            let bucket = self.bucket(&self.records[cell].key);
            self.records[cell].next = self.heads[bucket];
            self.heads[bucket] = cell as u32;
        }
    }

    /// Calls `f` with the key and the slots of every occupied cell, in the order of the
    /// records (one sequential pass, no lookups).
    pub(crate) fn for_each_cell(&self, mut f: impl FnMut(&CellKey, &[u32])) {
        for (cell, record) in self.records.iter().enumerate() {
            if record.next != FREED {
                f(&record.key, self.items(cell));
            }
        }
    }

    /// Number of occupied cells.
    #[inline]
    pub(crate) fn occupied(&self) -> usize {
        self.occupied
    }

    /// Number of cell records ever allocated (occupied plus reusable).
    #[inline]
    pub(crate) fn allocated(&self) -> usize {
        self.records.len()
    }

    /// Number of (cell, slot) entries over all cells.
    #[cfg(test)]
    pub(crate) fn entries(&self) -> usize {
        self.records
            .iter()
            .filter(|r| r.next != FREED)
            .map(|r| r.len as usize)
            .sum()
    }

    /// Removes every cell, keeping allocations.
    pub(crate) fn clear(&mut self) {
        self.heads.iter_mut().for_each(|h| *h = NONE);
        self.free.clear();
        for cell in (0..self.records.len()).rev() {
            self.records[cell].len = 0;
            self.records[cell].next = FREED;
            self.spill[cell].clear();
            self.free.push(cell as u32);
        }
        self.occupied = 0;
    }

    /// Bytes held, lists included.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.heads.capacity() * 4
            + self.records.capacity() * std::mem::size_of::<CellRecord>()
            + self.free.capacity() * 4
            + self.spill.capacity() * std::mem::size_of::<Vec<u32>>()
            + self.spill.iter().map(|l| l.capacity() * 4).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_saturate_without_panicking() {
        assert_eq!(cell_coord(0.0, 1.0), 0);
        assert_eq!(cell_coord(-0.5, 1.0), -1);
        assert_eq!(cell_coord(1.0, 1.0), 1);
        assert_eq!(cell_coord(-1.0, 1.0), -1);
        assert_eq!(cell_coord(-1.5, 2.0), -3);
        assert_eq!(cell_coord(-0.0, 1.0), 0);
        assert_eq!(cell_coord(2.999_999_8, 1.0), 2);
        for k in -300..300 {
            let v = k as f32 * 0.37;
            assert_eq!(cell_coord(v, 3.0), (v as f64 * 3.0).floor() as i64, "{v}");
        }
        assert_eq!(cell_coord(f32::MAX, 1.0), CELL_LIMIT);
        assert_eq!(cell_coord(-f32::MAX, 1.0), -CELL_LIMIT);
        assert_eq!(cell_coord(1e30, 1e6), CELL_LIMIT);
        assert_eq!(cell_coord(-1e30, 1e-6), -CELL_LIMIT);
        // Monotone across the saturation point.
        let values = [
            -f32::MAX,
            -1e30,
            -1e18,
            -3.0,
            -0.0,
            0.0,
            2.5,
            1e18,
            1e30,
            f32::MAX,
        ];
        for w in values.windows(2) {
            assert!(cell_coord(w[0], 1e3) <= cell_coord(w[1], 1e3));
        }
        let huge = CellRange::of(
            glam::Vec3::splat(-f32::MAX),
            glam::Vec3::splat(f32::MAX),
            1.0,
        );
        assert_eq!(huge.cell_count(), u128::MAX);
    }

    #[test]
    fn cells_are_found_freed_and_reused() {
        let mut map = CellMap::default();
        let key = |i: i64| CellKey {
            level: 0,
            coords: [i, -i, i * 7],
        };
        for i in 0..500 {
            map.push(key(i), i as u32);
            map.push(key(i), 1000 + i as u32);
        }
        assert_eq!(map.occupied(), 500);
        for i in 0..500 {
            let cell = map.find(&key(i)).unwrap();
            assert_eq!(map.items(cell), &[i as u32, 1000 + i as u32]);
        }
        assert!(map.find(&key(500)).is_none());
        for i in 0..500 {
            map.remove(key(i), i as u32);
            map.remove(key(i), 1000 + i as u32);
        }
        assert_eq!(map.occupied(), 0);
        let allocated = map.allocated();
        // New cells reuse the freed records.
        for i in 1000..1500 {
            map.push(key(i), 1);
        }
        assert_eq!(map.allocated(), allocated);
        assert!(map.find(&key(1200)).is_some() && map.find(&key(0)).is_none());
        // Same coordinates on another level are another cell.
        assert!(map
            .find(&CellKey {
                level: 1,
                coords: key(1200).coords
            })
            .is_none());
    }

    #[test]
    fn lists_spill_past_the_inline_slots_and_come_back() {
        let mut map = CellMap::default();
        let key = CellKey {
            level: -3,
            coords: [1, 2, 3],
        };
        let other = CellKey {
            level: -3,
            coords: [1, 2, 4],
        };
        map.push(other, 99);
        let mut model: Vec<u32> = Vec::new();
        let mut cell = usize::MAX;
        // Grow to 3 × the inline size and shrink back, removing from the middle, twice.
        for round in 0..2 {
            for slot in 0..(3 * INLINE_SLOTS as u32) {
                cell = map.insert(key, slot + 100 * round);
                model.push(slot + 100 * round);
                assert_eq!(map.items(cell), &model[..], "after pushing {slot}");
            }
            while model.len() > round as usize {
                let at = model.len() / 2;
                let slot = model.swap_remove(at);
                map.remove_from(cell, slot);
                if !model.is_empty() {
                    assert_eq!(map.items(cell), &model[..], "after removing {slot}");
                }
            }
        }
        assert_eq!(map.items(cell), &model[..]);
        map.remove(key, model[0]);
        assert!(map.find(&key).is_none());
        assert_eq!(map.items(map.find(&other).unwrap()), &[99]);
        assert_eq!((map.occupied(), map.entries()), (1, 1));
    }
}
