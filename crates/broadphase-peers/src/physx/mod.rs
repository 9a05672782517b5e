//! PhysX 5's standalone CPU broad phases (SAP, MBP, ABP, parallel ABP) driven through
//! physx-sys, each behind [`BroadPhase`].

mod ffi;
mod mbp;

use std::time::{Duration, Instant};

use broadphase::backend::{PairSet, ProxyStore, ProxyTable};
use broadphase::{Aabb, BroadPhase, CollisionFilter, PairEvents, ProxyId, ProxyKind, Result};

use ffi::{PxBounds3, PxBroadPhaseType, PxVec3, RawBroadPhase, UpdateData};
use mbp::Grid;

/// Which of PhysX's CPU broad phases a [`PhysxBroadPhase`] drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PhysxKind {
    /// `eSAP`: incremental 3-axis sweep and prune on quantized bounds.
    Sap,
    /// `eMBP`: multi box pruning over user regions (here a grid that tiles space, 4×4 up to
    /// 131,072 boxes, finer beyond).
    Mbp,
    /// `eABP`: automatic box pruning (no regions needed).
    Abp,
    /// `ePABP`: the parallel ABP. Without a task dispatcher (physx-sys cannot make the
    /// continuation task a parallel update needs) it runs on the calling thread, the same
    /// code path as [`PhysxKind::Abp`].
    ParallelAbp,
}

impl PhysxKind {
    /// Every kind, in the order of [`crate::PHYSX_PEERS`].
    pub const ALL: [PhysxKind; 4] = [
        PhysxKind::Sap,
        PhysxKind::Mbp,
        PhysxKind::Abp,
        PhysxKind::ParallelAbp,
    ];

    /// The peer's name (`physx-sap`, `physx-mbp`, `physx-abp`, `physx-abp-parallel`).
    pub fn name(self) -> &'static str {
        match self {
            PhysxKind::Sap => "physx-sap",
            PhysxKind::Mbp => "physx-mbp",
            PhysxKind::Abp => "physx-abp",
            PhysxKind::ParallelAbp => "physx-abp-parallel",
        }
    }

    /// The kind called `name`, if any.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.name() == name)
    }

    fn px_type(self) -> PxBroadPhaseType {
        match self {
            PhysxKind::Sap => PxBroadPhaseType::Sap,
            PhysxKind::Mbp => PxBroadPhaseType::Mbp,
            PhysxKind::Abp => PxBroadPhaseType::Abp,
            PhysxKind::ParallelAbp => PxBroadPhaseType::Pabp,
        }
    }
}

/// Figures of a [`PhysxBroadPhase`]: PhysX's candidate pairs against the exact ones, and
/// where the time of the last update went.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PhysxStats {
    /// PhysX's current pairs (candidates) after the last update.
    pub candidates: usize,
    /// The exact pairs kept from them.
    pub pairs: usize,
    /// Time of the last update inside PhysX (writing the bounds, the update call, reading
    /// its found and lost pairs into the candidate set).
    pub physx: Duration,
    /// Time of the last update spent filtering the candidates to the exact pairs (the
    /// closed-box test, filters and kinds, and the pair tracker).
    pub filter: Duration,
    /// Times the PhysX broad phase was rebuilt on a new MBP grid because the boxes had
    /// spread far beyond the old one (MBP only).
    pub rebuilds: u64,
    /// Objects PhysX's MBP reported out of every region, in total (0 by construction: the
    /// regions tile space).
    pub out_of_bounds: u64,
}

/// One of PhysX 5's standalone CPU broad phases (`PxCreateBroadPhase`), given the proxies'
/// exact boxes, filtered to the exact pair set.
///
/// Each slot index is the PhysX handle: PhysX reads bounds, filter groups and contact
/// distances from arrays indexed by slot (one element longer than the slot count, as MBP
/// reads a float past each box). Distances are all 0, so PhysX sees the exact boxes (with
/// `-0.0` written as `+0.0`: ABP compares x as sign-flipped integers, which would order
/// `-0.0` below `+0.0` and lose a pair touching at 0). Static proxies get PhysX's static
/// group and every dynamic one its own dynamic group, so PhysX never pairs two statics.
///
/// PhysX reports found and lost pairs; they are kept as a candidate set, and every update
/// marks the candidates that are exact pairs (closed boxes overlap, filters allow, not both
/// static) in full-recompute style, O(candidates). SAP and MBP quantize the boxes outward
/// (to 16 units in the last place of the sortable integer form of each coordinate, and MBP
/// drops one more bit), so their candidates are a superset with a few extra touching-ish
/// pairs; ABP compares the floats themselves and its candidates are exact on closed boxes.
/// [`PhysxBroadPhase::stats`] tells candidates from pairs and the time of each half.
///
/// MBP: at the first update, 16 regions (4×4 in x/z over the boxes' extent enlarged by 10%,
/// the outer cells reaching ±`f32::MAX`, y unbounded; more above 131,072 boxes, one per
/// 8,192 up to PhysX's 256, as a region holds at most 65,535) tile all of space, so no box is
/// ever out of bounds or poking out of the regions, and MBP's candidates stay a superset
/// whatever the motion (see the `mbp` module). When a moved or inserted box lands more than
/// one grid width beyond the grid, or the boxes outgrow the grid's count of regions, the
/// PhysX object is rebuilt on a grid over the current boxes (all boxes re-created in a fresh
/// broad phase, the candidates found again): a cost like the first update, amortised because
/// the grid at least doubles each time.
///
/// ```
/// use broadphase::{Aabb, BroadPhase, CollisionFilter, PairEvents, ProxyKind};
/// use broadphase_peers::{PhysxBroadPhase, PhysxKind};
/// let mut bp = PhysxBroadPhase::new(PhysxKind::Abp).expect("PhysX foundation");
/// bp.insert(Aabb::from_arrays([0.0; 3], [1.0; 3])?, ProxyKind::Dynamic, CollisionFilter::ALL)?;
/// bp.insert(Aabb::from_arrays([1.0; 3], [2.0; 3])?, ProxyKind::Dynamic, CollisionFilter::ALL)?;
/// let mut events = PairEvents::new();
/// bp.update(&mut events);
/// assert_eq!(events.begun.len(), 1);
/// # Ok::<(), broadphase::Error>(())
/// ```
pub struct PhysxBroadPhase {
    kind: PhysxKind,
    store: ProxyStore,
    /// Created at the first update (MBP needs the boxes for its grid), dropped by `clear`
    /// and by MBP rebuilds.
    raw: Option<RawBroadPhase>,
    /// MBP's current grid.
    grid: Option<Grid>,
    /// Per-handle arrays PhysX reads, `slot_count + 1` long or more.
    bounds: Vec<PxBounds3>,
    groups: Vec<u32>,
    distances: Vec<f32>,
    /// Slots inserted, moved or removed since the last update.
    touched: Vec<u32>,
    is_touched: Vec<bool>,
    created: Vec<u32>,
    updated: Vec<u32>,
    removed: Vec<u32>,
    /// PhysX's current pairs, by slot.
    candidates: PairSet,
    static_group: u32,
    stats: PhysxStats,
}

impl std::fmt::Debug for PhysxBroadPhase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PhysxBroadPhase")
            .field("kind", &self.kind)
            .field("proxies", &self.store.proxies().len())
            .field("pairs", &self.store.pair_set().len())
            .field("candidates", &self.candidates.len())
            .finish()
    }
}

/// PhysX's bounds for an exact box: the same floats, with `-0.0` made `+0.0` (adding
/// `+0.0` changes nothing else).
fn px_bounds(aabb: &Aabb) -> PxBounds3 {
    let v = |p: broadphase::Vec3| PxVec3 {
        x: p.x + 0.0,
        y: p.y + 0.0,
        z: p.z + 0.0,
    };
    PxBounds3 {
        minimum: v(aabb.min()),
        maximum: v(aabb.max()),
    }
}

const EMPTY_BOUNDS: PxBounds3 = PxBounds3 {
    minimum: PxVec3 {
        x: 0.0,
        y: 0.0,
        z: 0.0,
    },
    maximum: PxVec3 {
        x: 0.0,
        y: 0.0,
        z: 0.0,
    },
};

impl PhysxBroadPhase {
    /// An empty broad phase of `kind`; `None` when PhysX refused to create its foundation
    /// (another PhysX foundation already exists in this process) or the broad phase.
    pub fn new(kind: PhysxKind) -> Option<Self> {
        // Create one now so that a refusal shows here rather than at the first update.
        let raw = RawBroadPhase::new(kind.px_type())?;
        Some(Self {
            kind,
            store: ProxyStore::new(),
            raw: (kind != PhysxKind::Mbp).then_some(raw),
            grid: None,
            bounds: Vec::new(),
            groups: Vec::new(),
            distances: Vec::new(),
            touched: Vec::new(),
            is_touched: Vec::new(),
            created: Vec::new(),
            updated: Vec::new(),
            removed: Vec::new(),
            candidates: PairSet::new(),
            static_group: ffi::static_group(),
            stats: PhysxStats::default(),
        })
    }

    /// The kind of PhysX broad phase.
    pub fn kind(&self) -> PhysxKind {
        self.kind
    }

    /// Candidates, pairs and timings of the last update.
    pub fn stats(&self) -> PhysxStats {
        self.stats
    }

    /// Errors and warnings PhysX has reported in this process (printed to stderr as they
    /// come); 0 when every call was well formed.
    pub fn physx_errors() -> u64 {
        ffi::error_count()
    }

    fn touch(&mut self, slot: usize) {
        if self.is_touched.len() <= slot {
            self.is_touched.resize(slot + 1, false);
        }
        if !self.is_touched[slot] {
            self.is_touched[slot] = true;
            self.touched.push(slot as u32);
        }
    }

    /// A fresh PhysX broad phase (for MBP, with regions over the current boxes) that holds
    /// nothing yet.
    fn fresh(&mut self) -> RawBroadPhase {
        let mut raw = RawBroadPhase::new(self.kind.px_type())
            .expect("PhysX created a broad phase of this kind before");
        if self.kind == PhysxKind::Mbp {
            let proxies = self.store.proxies();
            let grid = Grid::around(proxies.live_slots().map(|i| proxies.aabb(i)));
            for region in grid.regions() {
                let added = raw.add_region(region);
                assert!(added, "PhysX refused an MBP region");
            }
            self.grid = Some(grid);
        }
        raw
    }

    /// Fills the handle lists for this update and writes the bounds and groups they need.
    fn prepare(&mut self) {
        let proxies = self.store.proxies();
        let capacity = (proxies.slot_count() + 1).max(self.bounds.len());
        if self.bounds.len() < capacity {
            let capacity = capacity.max(2 * self.bounds.len());
            self.bounds.resize(capacity, EMPTY_BOUNDS);
            self.groups.resize(capacity, self.static_group);
            self.distances.resize(capacity, 0.0);
        }
        self.created.clear();
        self.updated.clear();
        self.removed.clear();

        let grown = match (&self.grid, &self.raw) {
            (Some(grid), Some(_)) => {
                grid.crowded_by(proxies.len())
                    || self.touched.iter().any(|&s| {
                        proxies.is_live(s as usize) && grid.outgrown_by(proxies.aabb(s as usize))
                    })
            }
            _ => false,
        };
        if let Some(raw) = self.raw.as_ref().filter(|_| !grown) {
            for &slot in &self.touched {
                match (proxies.is_live(slot as usize), raw.is_present(slot)) {
                    (true, true) => self.updated.push(slot),
                    (true, false) => self.created.push(slot),
                    (false, true) => self.removed.push(slot),
                    (false, false) => {}
                }
            }
            self.created.sort_unstable();
            self.updated.sort_unstable();
            self.removed.sort_unstable();
        } else {
            // A new PhysX object: every live proxy is created in it.
            if self.raw.is_some() {
                self.stats.rebuilds += 1;
            }
            self.raw = None;
            self.candidates = PairSet::new();
            let raw = self.fresh();
            self.raw = Some(raw);
            let proxies = self.store.proxies();
            self.created
                .extend(proxies.live_slots().map(|slot| slot as u32));
        }
        for &slot in &self.touched {
            self.is_touched[slot as usize] = false;
        }
        self.touched.clear();

        let proxies = self.store.proxies();
        for &slot in &self.created {
            let i = slot as usize;
            self.groups[i] = match proxies.kind(i) {
                ProxyKind::Static => self.static_group,
                ProxyKind::Dynamic => ffi::dynamic_group(slot),
            };
            self.bounds[i] = px_bounds(proxies.aabb(i));
        }
        for &slot in &self.updated {
            self.bounds[slot as usize] = px_bounds(proxies.aabb(slot as usize));
        }
    }
}

impl BroadPhase for PhysxBroadPhase {
    fn name(&self) -> &'static str {
        self.kind.name()
    }

    fn insert_keyed(
        &mut self,
        aabb: Aabb,
        kind: ProxyKind,
        filter: CollisionFilter,
        key: u64,
    ) -> Result<ProxyId> {
        if self.store.proxies().slot_count() >= ffi::MAX_HANDLES as usize {
            return Err(broadphase::Error::CapacityExhausted);
        }
        let id = self.store.insert_keyed(aabb, kind, filter, key)?;
        self.touch(id.index() as usize);
        Ok(id)
    }

    fn set_aabb(&mut self, id: ProxyId, aabb: Aabb) -> Result<()> {
        if let Some(slot) = self.store.set_aabb(id, aabb)? {
            self.touch(slot);
        }
        Ok(())
    }

    fn remove_with(&mut self, id: ProxyId, report: bool) -> Result<()> {
        let slot = self.store.remove(id, report)?;
        self.touch(slot);
        Ok(())
    }

    // Candidates are filtered with the current filters at every update.
    fn set_filter(&mut self, id: ProxyId, filter: CollisionFilter) -> Result<()> {
        self.store.set_filter(id, filter).map(|_| ())
    }

    /// PhysX fixes a handle's group (static or its own dynamic group) when the handle is
    /// created, so a new kind starts a new PhysX broad phase at the next update.
    fn set_kind(&mut self, id: ProxyId, kind: ProxyKind) -> Result<()> {
        self.store.set_kind(id, kind)?;
        self.raw = None;
        Ok(())
    }

    fn report_pairs_again(&mut self, id: ProxyId) -> Result<()> {
        self.store.report_pairs_again(id)
    }

    fn set_fat_margin(&mut self, margin: f32) -> Result<()> {
        self.store.set_fat_margin(margin)
    }

    fn try_update(&mut self, events: &mut PairEvents) -> Result<()> {
        let start = Instant::now();
        self.prepare();
        let raw = self.raw.as_mut().expect("prepare creates the broad phase");
        let results = raw.update(&UpdateData {
            created: &self.created,
            updated: &self.updated,
            removed: &self.removed,
            bounds: &self.bounds,
            groups: &self.groups,
            distances: &self.distances,
        });
        debug_assert_eq!(results.out_of_bounds, 0, "the MBP regions tile space");
        self.stats.out_of_bounds += u64::from(results.out_of_bounds);
        // Lost pairs first: a pair both lost and found in one update stays a candidate
        // (an extra candidate costs a test; a missing one would lose a pair).
        for pair in results.deleted {
            self.candidates.remove(pair.mID0, pair.mID1);
        }
        for pair in results.created {
            if self.candidates.insert(pair.mID0, pair.mID1).is_err() {
                // More candidates than a pair set indexes: the update fails.
                self.store.pairs_mut().refuse();
            }
        }
        let filter_start = Instant::now();

        let (proxies, pairs) = self.store.split_mut();
        pairs.begin_full();
        self.candidates.retain(|a, b| {
            let (a_, b_) = (a as usize, b as usize);
            if !proxies.is_live(a_) || !proxies.is_live(b_) {
                return false;
            }
            if proxies.is_pair(a_, b_) {
                pairs.mark(a, b);
            }
            true
        });
        pairs.end_full();
        let result = self.store.finish(events);

        let end = Instant::now();
        self.stats.physx = filter_start - start;
        self.stats.filter = end - filter_start;
        self.stats.candidates = self.candidates.len();
        self.stats.pairs = self.store.pair_set().len();
        result
    }

    fn set_pair_limit(&mut self, limit: Option<usize>) {
        self.store.pairs_mut().set_limit(limit);
    }

    fn clear(&mut self) {
        self.store.clear();
        self.raw = None;
        self.grid = None;
        self.touched.clear();
        self.is_touched.clear();
        self.candidates = PairSet::new();
        self.stats.candidates = 0;
        self.stats.pairs = 0;
    }

    fn proxies(&self) -> &ProxyTable {
        self.store.proxies()
    }

    fn pair_set(&self) -> &PairSet {
        self.store.pair_set()
    }

    /// Our side (store, candidates, the arrays PhysX reads) and every byte PhysX allocated
    /// for this broad phase and still holds (counted by the allocator given to PhysX).
    fn memory_bytes(&self) -> usize {
        let handles = self.bounds.capacity();
        self.store.memory_bytes()
            + self.candidates.memory_bytes()
            + handles * (std::mem::size_of::<PxBounds3>() + 4 + 4)
            + (self.touched.capacity()
                + self.created.capacity()
                + self.updated.capacity()
                + self.removed.capacity())
                * 4
            + self.is_touched.capacity()
            + self.raw.as_ref().map_or(0, RawBroadPhase::heap_bytes)
    }
}
