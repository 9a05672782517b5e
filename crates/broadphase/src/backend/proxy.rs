//! Proxy handles, kinds, collision filters, and the slot table every algorithm stores them in.

use std::fmt;

use crate::{Aabb, Error, Result};

/// A generational handle to a proxy: a slot index plus the slot's generation.
///
/// A removed id stays invalid even after its slot is reused, because the reused slot has a
/// newer generation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProxyId {
    index: u32,
    generation: u32,
}

impl ProxyId {
    /// Builds an id from its parts (for deserialisation and tests; ids normally come from
    /// `insert`).
    pub const fn from_parts(index: u32, generation: u32) -> Self {
        Self { index, generation }
    }

    /// The slot index: dense, small, reused after removal.
    #[inline]
    pub const fn index(self) -> u32 {
        self.index
    }

    /// The slot's generation when this id was issued.
    #[inline]
    pub const fn generation(self) -> u32 {
        self.generation
    }
}

impl fmt::Debug for ProxyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}v{}", self.index, self.generation)
    }
}

impl fmt::Display for ProxyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// Whether a proxy is expected to move. Two static proxies never form a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ProxyKind {
    /// Moves often.
    #[default]
    Dynamic,
    /// Rarely moves; algorithms may keep statics apart to skip work. Moving one still works.
    Static,
}

/// Collision filter bits: proxies `a` and `b` may pair only when
/// `a.group & b.mask != 0 && b.group & a.mask != 0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CollisionFilter {
    /// The groups this proxy belongs to.
    pub group: u32,
    /// The groups this proxy collides with.
    pub mask: u32,
}

impl CollisionFilter {
    /// Collides with everything.
    pub const ALL: Self = Self {
        group: u32::MAX,
        mask: u32::MAX,
    };

    /// Builds a filter.
    pub const fn new(group: u32, mask: u32) -> Self {
        Self { group, mask }
    }

    /// True when the two filters allow a pair.
    #[inline]
    pub const fn allows(self, other: Self) -> bool {
        self.group & other.mask != 0 && other.group & self.mask != 0
    }
}

impl Default for CollisionFilter {
    fn default() -> Self {
        Self::ALL
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SlotState {
    Live,
    /// Removed by the user; the slot is released at the next `release_removed` so that no
    /// index is reused between two updates (pair keys stay unambiguous within a step).
    Removed,
    /// Removed like `Removed`, but its pairs end without events.
    RemovedSilently,
    Free,
}

/// The proxies of one broad phase: boxes, kinds, filters and caller keys in parallel arrays
/// indexed by slot, with generations and a free list of slots.
///
/// Slots freed by `remove` are held back until `ProxyTable::release_removed` (called at the end
/// of every update), so an index names one proxy for the whole interval between two updates.
#[derive(Debug, Clone, Default)]
pub struct ProxyTable {
    aabbs: Vec<Aabb>,
    kinds: Vec<ProxyKind>,
    filters: Vec<CollisionFilter>,
    keys: Vec<u64>,
    generations: Vec<u32>,
    states: Vec<SlotState>,
    free: Vec<u32>,
    removed: Vec<u32>,
    live: usize,
    /// Live proxies of the static kind.
    live_static: usize,
}

impl ProxyTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a proxy with the caller's `key` and returns its id.
    pub(crate) fn insert(
        &mut self,
        aabb: Aabb,
        kind: ProxyKind,
        filter: CollisionFilter,
        key: u64,
    ) -> Result<ProxyId> {
        let index = match self.free.pop() {
            Some(index) => {
                let i = index as usize;
                self.aabbs[i] = aabb;
                self.kinds[i] = kind;
                self.filters[i] = filter;
                self.keys[i] = key;
                self.states[i] = SlotState::Live;
                index
            }
            None => {
                let index =
                    u32::try_from(self.aabbs.len()).map_err(|_| Error::CapacityExhausted)?;
                if index == u32::MAX {
                    return Err(Error::CapacityExhausted);
                }
                self.aabbs.push(aabb);
                self.kinds.push(kind);
                self.filters.push(filter);
                self.keys.push(key);
                self.generations.push(0);
                self.states.push(SlotState::Live);
                index
            }
        };
        self.live += 1;
        self.live_static += (kind == ProxyKind::Static) as usize;
        Ok(ProxyId::from_parts(index, self.generations[index as usize]))
    }

    /// The slot index of a live proxy, or `StaleProxy`.
    #[inline]
    pub fn index_of(&self, id: ProxyId) -> Result<usize> {
        let i = id.index() as usize;
        match (self.generations.get(i), self.states.get(i)) {
            (Some(&generation), Some(SlotState::Live)) if generation == id.generation() => Ok(i),
            _ => Err(Error::StaleProxy(id)),
        }
    }

    /// Replaces the box of a live proxy; returns the slot index.
    #[inline]
    pub(crate) fn set_aabb(&mut self, id: ProxyId, aabb: Aabb) -> Result<usize> {
        let i = self.index_of(id)?;
        self.aabbs[i] = aabb;
        Ok(i)
    }

    /// Replaces the filter of a live proxy; returns the slot index.
    pub(crate) fn set_filter(&mut self, id: ProxyId, filter: CollisionFilter) -> Result<usize> {
        let i = self.index_of(id)?;
        self.filters[i] = filter;
        Ok(i)
    }

    /// Replaces the kind of a live proxy; returns the slot index.
    pub(crate) fn set_kind(&mut self, id: ProxyId, kind: ProxyKind) -> Result<usize> {
        let i = self.index_of(id)?;
        self.live_static -= (self.kinds[i] == ProxyKind::Static) as usize;
        self.live_static += (kind == ProxyKind::Static) as usize;
        self.kinds[i] = kind;
        Ok(i)
    }

    /// Marks a live proxy removed; returns the slot index. The id is invalid from now on.
    /// With `report` false its pairs end without events.
    pub(crate) fn remove(&mut self, id: ProxyId, report: bool) -> Result<usize> {
        let i = self.index_of(id)?;
        self.states[i] = if report {
            SlotState::Removed
        } else {
            SlotState::RemovedSilently
        };
        self.removed.push(i as u32);
        self.live -= 1;
        self.live_static -= (self.kinds[i] == ProxyKind::Static) as usize;
        Ok(i)
    }

    /// Slots removed since the last `ProxyTable::release_removed`, in removal order.
    pub fn removed_slots(&self) -> &[u32] {
        &self.removed
    }

    /// Returns removed slots to the free list with a new generation. Call at the end of
    /// `update`, after pair events for removed proxies have been written.
    pub(crate) fn release_removed(&mut self) {
        for &index in &self.removed {
            let i = index as usize;
            self.states[i] = SlotState::Free;
            // A slot whose generation would wrap is retired for good (never pushed to the free
            // list), so an old id can never become valid again.
            if let Some(next) = self.generations[i].checked_add(1) {
                self.generations[i] = next;
                self.free.push(index);
            }
        }
        self.removed.clear();
    }

    /// Makes an empty table number its slots like `template`: the next inserts take the
    /// live slots of `template` in ascending order, with their generations, then its free list
    /// follows. `false` (nothing changed) when this table has ever held a proxy or `template`
    /// has unreleased removals. Adaptive switching uses it so that the new
    /// algorithm hands out the ids of the old one. O(slots).
    pub(crate) fn mirror_layout(&mut self, template: &ProxyTable) -> bool {
        if !self.aabbs.is_empty() || !template.removed.is_empty() {
            return false;
        }
        // Boxes, kinds and filters of free slots are stale values; the inserts overwrite the
        // live ones.
        self.aabbs.clone_from(&template.aabbs);
        self.kinds.clone_from(&template.kinds);
        self.filters.clone_from(&template.filters);
        self.keys.clone_from(&template.keys);
        self.generations.clone_from(&template.generations);
        self.states.clear();
        self.states.resize(template.states.len(), SlotState::Free);
        self.free.clone_from(&template.free);
        // `insert` pops from the end: the live slots go last, highest first.
        self.free.extend(
            (0..template.states.len())
                .rev()
                .filter(|&i| template.states[i] == SlotState::Live)
                .map(|i| i as u32),
        );
        self.live = 0;
        true
    }

    /// Removes everything. Outstanding ids become stale (generations are kept and advanced).
    pub(crate) fn clear(&mut self) {
        for i in 0..self.states.len() {
            if self.states[i] == SlotState::Live {
                self.states[i] = SlotState::Removed;
                self.removed.push(i as u32);
            }
        }
        self.live = 0;
        self.live_static = 0;
        self.release_removed();
        // Reuse low indices first after a clear, deterministically.
        self.free.sort_unstable_by(|a, b| b.cmp(a));
    }

    /// Number of live proxies.
    #[inline]
    pub fn len(&self) -> usize {
        self.live
    }

    /// Number of live proxies of the static kind.
    #[inline]
    pub fn static_count(&self) -> usize {
        self.live_static
    }

    /// True when no proxy is live.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// One past the largest slot index ever used: the length of per-slot side arrays.
    #[inline]
    pub fn slot_count(&self) -> usize {
        self.aabbs.len()
    }

    /// True when slot `i` holds a live proxy.
    #[inline]
    pub fn is_live(&self, i: usize) -> bool {
        self.states[i] == SlotState::Live
    }

    /// True when slot `i` was removed since the last update (its pairs must end).
    #[inline]
    pub fn is_removed(&self, i: usize) -> bool {
        matches!(
            self.states[i],
            SlotState::Removed | SlotState::RemovedSilently
        )
    }

    /// True when slot `i` was removed since the last update without events for its pairs.
    #[inline]
    pub fn is_removed_silently(&self, i: usize) -> bool {
        self.states[i] == SlotState::RemovedSilently
    }

    /// The box of slot `i` (live or removed-this-step).
    #[inline]
    pub fn aabb(&self, i: usize) -> &Aabb {
        &self.aabbs[i]
    }

    /// All boxes by slot; entries of free slots are stale values.
    #[inline]
    pub fn aabbs(&self) -> &[Aabb] {
        &self.aabbs
    }

    /// The kind of slot `i`.
    #[inline]
    pub fn kind(&self, i: usize) -> ProxyKind {
        self.kinds[i]
    }

    /// The filter of slot `i`.
    #[inline]
    pub fn filter(&self, i: usize) -> CollisionFilter {
        self.filters[i]
    }

    /// The caller's key of slot `i` (live or removed-this-step), as given at insert.
    #[inline]
    pub fn key(&self, i: usize) -> u64 {
        self.keys[i]
    }

    /// The id of slot `i` (valid for live and removed-this-step slots).
    #[inline]
    pub fn id(&self, i: usize) -> ProxyId {
        ProxyId::from_parts(i as u32, self.generations[i])
    }

    /// True when slots `a` and `b` may form a pair: different, filters allow it, and not both
    /// static. Does not look at the boxes.
    #[inline]
    pub fn can_pair(&self, a: usize, b: usize) -> bool {
        a != b
            && self.filters[a].allows(self.filters[b])
            && !(self.kinds[a] == ProxyKind::Static && self.kinds[b] == ProxyKind::Static)
    }

    /// True when slots `a` and `b` may pair and their boxes overlap.
    #[inline]
    pub fn is_pair(&self, a: usize, b: usize) -> bool {
        // Boxes first: most candidates fail there, and it reads one array instead of three.
        self.aabbs[a].overlaps(&self.aabbs[b]) && self.can_pair(a, b)
    }

    /// The mean of the live boxes' largest finite edges, each capped at eight times their
    /// median so that a few huge boxes do not stand for all the others; `None` when no box
    /// has a finite edge. What the automatic sizes of the grid and the octrees' root start
    /// from. O(n); `edges` is scratch.
    pub(crate) fn typical_edge(&self, edges: &mut Vec<f32>) -> Option<f64> {
        /// Edges above this many medians count as this many.
        const EDGE_CAP: f64 = 8.0;
        edges.clear();
        edges.extend(
            self.live_slots()
                .map(|i| self.aabb(i).extents().max_element())
                .filter(|edge| edge.is_finite()),
        );
        if edges.is_empty() {
            return None;
        }
        let middle = edges.len() / 2;
        let median = *edges.select_nth_unstable_by(middle, f32::total_cmp).1 as f64;
        let cap = EDGE_CAP * median;
        let sum: f64 = edges.iter().map(|&e| (e as f64).min(cap)).sum();
        Some(sum / edges.len() as f64)
    }

    /// Iterates over the slot indices of live proxies in increasing order.
    pub fn live_slots(&self) -> impl Iterator<Item = usize> + '_ {
        self.states
            .iter()
            .enumerate()
            .filter(|(_, s)| **s == SlotState::Live)
            .map(|(i, _)| i)
    }

    /// Bytes held by the table's arrays.
    pub fn memory_bytes(&self) -> usize {
        self.aabbs.capacity() * std::mem::size_of::<Aabb>()
            + self.kinds.capacity() * std::mem::size_of::<ProxyKind>()
            + self.filters.capacity() * std::mem::size_of::<CollisionFilter>()
            + self.keys.capacity() * 8
            + self.generations.capacity() * 4
            + self.states.capacity() * std::mem::size_of::<SlotState>()
            + (self.free.capacity() + self.removed.capacity()) * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::unit_box;

    #[test]
    fn stale_ids_are_rejected_after_reuse() {
        let mut table = ProxyTable::new();
        let a = table
            .insert(unit_box(), ProxyKind::Dynamic, CollisionFilter::ALL, 0)
            .unwrap();
        table.remove(a, true).unwrap();
        assert_eq!(table.remove(a, true), Err(Error::StaleProxy(a)));
        // Not reused before release: the next insert takes a fresh slot.
        let b = table
            .insert(unit_box(), ProxyKind::Dynamic, CollisionFilter::ALL, 0)
            .unwrap();
        assert_ne!(a.index(), b.index());
        table.release_removed();
        let c = table
            .insert(unit_box(), ProxyKind::Dynamic, CollisionFilter::ALL, 0)
            .unwrap();
        assert_eq!(c.index(), a.index());
        assert_ne!(c.generation(), a.generation());
        assert_eq!(table.index_of(a), Err(Error::StaleProxy(a)));
        assert!(table.set_aabb(a, unit_box()).is_err());
        assert_eq!(table.index_of(c), Ok(c.index() as usize));
        let never = ProxyId::from_parts(999, 0);
        assert_eq!(table.index_of(never), Err(Error::StaleProxy(never)));
        assert_eq!(table.len(), 2);
    }

    #[test]
    fn static_count_follows_inserts_kind_changes_and_removals() {
        let mut table = ProxyTable::new();
        let mut insert = |kind| {
            table
                .insert(unit_box(), kind, CollisionFilter::ALL, 0)
                .unwrap()
        };
        let (a, b, c) = (
            insert(ProxyKind::Static),
            insert(ProxyKind::Static),
            insert(ProxyKind::Dynamic),
        );
        assert_eq!((table.static_count(), table.len()), (2, 3));
        table.set_kind(c, ProxyKind::Static).unwrap();
        table.set_kind(c, ProxyKind::Static).unwrap();
        table.set_kind(a, ProxyKind::Dynamic).unwrap();
        assert_eq!(table.static_count(), 2);
        table.remove(b, true).unwrap();
        table.remove(a, false).unwrap();
        assert_eq!((table.static_count(), table.len()), (1, 1));
        table.release_removed();
        table
            .insert(unit_box(), ProxyKind::Static, CollisionFilter::ALL, 0)
            .unwrap();
        assert_eq!(table.static_count(), 2);
        table.clear();
        assert_eq!((table.static_count(), table.len()), (0, 0));
    }

    #[test]
    fn filters_and_static_pairs() {
        let mut table = ProxyTable::new();
        let s1 = table
            .insert(unit_box(), ProxyKind::Static, CollisionFilter::ALL, 0)
            .unwrap();
        let s2 = table
            .insert(unit_box(), ProxyKind::Static, CollisionFilter::ALL, 0)
            .unwrap();
        let d = table
            .insert(
                unit_box(),
                ProxyKind::Dynamic,
                CollisionFilter::new(0b01, 0b10),
                0,
            )
            .unwrap();
        let e = table
            .insert(
                unit_box(),
                ProxyKind::Dynamic,
                CollisionFilter::new(0b10, 0b01),
                0,
            )
            .unwrap();
        let f = table
            .insert(
                unit_box(),
                ProxyKind::Dynamic,
                CollisionFilter::new(0b01, 0b01),
                0,
            )
            .unwrap();
        let idx = |id: ProxyId| id.index() as usize;
        assert!(!table.is_pair(idx(s1), idx(s2)));
        assert!(table.is_pair(idx(s1), idx(d)));
        assert!(table.is_pair(idx(d), idx(e)));
        assert!(!table.is_pair(idx(d), idx(f)), "f.group & d.mask == 0");
        assert!(!table.is_pair(idx(e), idx(f)), "f.mask excludes e's group");
        assert!(!table.is_pair(idx(d), idx(d)));
    }

    #[test]
    fn clear_invalidates_everything() {
        let mut table = ProxyTable::new();
        let ids: Vec<_> = (0..4)
            .map(|_| {
                table
                    .insert(unit_box(), ProxyKind::Dynamic, CollisionFilter::ALL, 0)
                    .unwrap()
            })
            .collect();
        table.clear();
        assert!(table.is_empty());
        for id in ids {
            assert!(table.index_of(id).is_err());
        }
        let fresh = table
            .insert(unit_box(), ProxyKind::Dynamic, CollisionFilter::ALL, 0)
            .unwrap();
        assert_eq!(fresh.index(), 0);
    }

    /// A mirrored table hands out the template's ids to the live proxies re-inserted in slot
    /// order, then numbers later inserts exactly as the template does.
    #[test]
    fn a_mirrored_table_numbers_slots_like_its_template() {
        let mut template = ProxyTable::new();
        let ids: Vec<ProxyId> = (0..10)
            .map(|_| {
                template
                    .insert(unit_box(), ProxyKind::Dynamic, CollisionFilter::ALL, 0)
                    .unwrap()
            })
            .collect();
        for &k in &[7, 2, 5] {
            template.remove(ids[k], true).unwrap();
        }
        template.release_removed();
        template
            .insert(unit_box(), ProxyKind::Static, CollisionFilter::ALL, 0)
            .unwrap(); // reuses a slot
        template.remove(ids[9], true).unwrap();
        let mut mirror = ProxyTable::new();
        assert!(!mirror.mirror_layout(&template), "unreleased removals");
        template.release_removed();
        assert!(mirror.mirror_layout(&template));
        for slot in template.live_slots() {
            let id = mirror
                .insert(
                    *template.aabb(slot),
                    template.kind(slot),
                    template.filter(slot),
                    template.key(slot),
                )
                .unwrap();
            assert_eq!(id, template.id(slot));
        }
        assert_eq!(mirror.len(), template.len());
        for _ in 0..5 {
            let a = template
                .insert(unit_box(), ProxyKind::Dynamic, CollisionFilter::ALL, 0)
                .unwrap();
            let b = mirror
                .insert(unit_box(), ProxyKind::Dynamic, CollisionFilter::ALL, 0)
                .unwrap();
            assert_eq!(a, b);
        }
        assert!(!mirror.mirror_layout(&template), "not empty");
    }
}
