//! Differential testing: drives algorithms with the same random operations and compares them,
//! after every update, with an exact model computed by testing all pairs directly.
//!
//! Used by `broadphase verify`, the property tests and the fuzz targets.
//!
//! ```
//! use broadphase::verify::{Scenario, VerifyConfig, Verifier};
//! let algorithms = vec![broadphase::create("sap", &Default::default()).unwrap()];
//! let config = VerifyConfig { objects: 50, steps: 20, seed: 1, scenario: Some(Scenario::Mixed) };
//! let report = Verifier::new(algorithms).run(&config);
//! assert_eq!(report.mismatches, 0, "{:?}", report.first_mismatch);
//! ```

mod compare;
mod model;
mod report;
mod run;
mod scenario;

use std::collections::BTreeSet;

use crate::{Aabb, BroadPhase, CollisionFilter, Error, PairEvents, ProxyId, ProxyKind};
use model::{key_of, stored_box, ModelProxy};

pub use crate::util::SplitMix64;
pub use report::{VerifyConfig, VerifyReport};
pub use scenario::Scenario;

/// Drives a set of algorithms and an exact model with the same operations.
pub struct Verifier {
    algorithms: Vec<Box<dyn BroadPhase>>,
    /// Per handle: the model proxy, `None` once removed.
    model: Vec<Option<ModelProxy>>,
    live: Vec<u32>,
    /// Per algorithm, per handle: the id it issued.
    ids: Vec<Vec<ProxyId>>,
    /// Per algorithm, per slot index: the handle that holds it.
    handles_by_slot: Vec<Vec<u32>>,
    /// The exact pair set after the previous update, as sorted handle pairs.
    previous: BTreeSet<(u32, u32)>,
    report: VerifyReport,
    events: PairEvents,
    /// Compare with the model on two consecutive updates out of this many.
    check_every: usize,
    /// Whether `previous` is the exact set after the last update (false after an
    /// unchecked update).
    previous_valid: bool,
    /// The pair limit set on every algorithm.
    pair_limit: Option<usize>,
    /// Per algorithm: its last update failed on the pair limit, so the next one that
    /// succeeds reports every pair as begun.
    lost: Vec<bool>,
    /// The fat margin set on every algorithm (0: exact boxes).
    fat_margin: f32,
    /// Handles removed without events since the last update: their pairs end silently.
    silent: BTreeSet<u32>,
    /// Handles whose pairs the next update reports as begun again.
    again: BTreeSet<u32>,
}

impl Verifier {
    /// A verifier for these algorithms (at least one).
    pub fn new(algorithms: Vec<Box<dyn BroadPhase>>) -> Self {
        let n = algorithms.len();
        Self {
            algorithms,
            model: Vec::new(),
            live: Vec::new(),
            ids: vec![Vec::new(); n],
            handles_by_slot: vec![Vec::new(); n],
            previous: BTreeSet::new(),
            report: VerifyReport {
                algorithms: n,
                ..Default::default()
            },
            events: PairEvents::new(),
            check_every: 1,
            previous_valid: true,
            pair_limit: None,
            lost: vec![false; n],
            fat_margin: 0.0,
            silent: BTreeSet::new(),
            again: BTreeSet::new(),
        }
    }

    /// Checks only two consecutive updates out of every `every` (pair sets on both, events
    /// on the second), for long runs where the O(n²) model would dominate. 1 checks all.
    pub fn set_check_every(&mut self, every: usize) {
        self.check_every = every.max(1);
    }

    fn fail(&mut self, what: impl FnOnce() -> String) {
        self.report.mismatches += 1;
        if self.report.first_mismatch.is_none() {
            self.report.first_mismatch = Some(format!("step {}: {}", self.report.steps, what()));
        }
    }

    fn check(&mut self, ok: bool, what: impl FnOnce() -> String) {
        self.report.checks += 1;
        if !ok {
            self.fail(what);
        }
    }

    /// Inserts a proxy into every algorithm and the model; returns its handle. The proxy
    /// carries a key derived from the handle, which every pair reported must name.
    pub fn insert(&mut self, aabb: Aabb, kind: ProxyKind, filter: CollisionFilter) -> u32 {
        let handle = self.model.len() as u32;
        let key = key_of(handle);
        self.model.push(Some(ModelProxy {
            aabb: stored_box(self.fat_margin, None, aabb),
            kind,
            filter,
        }));
        self.live.push(handle);
        for k in 0..self.algorithms.len() {
            match self.algorithms[k].insert_keyed(aabb, kind, filter, key) {
                Ok(id) => {
                    self.ids[k].push(id);
                    let slots = &mut self.handles_by_slot[k];
                    let slot = id.index() as usize;
                    if slots.len() <= slot {
                        slots.resize(slot + 1, u32::MAX);
                    }
                    slots[slot] = handle;
                }
                Err(e) => {
                    self.ids[k].push(ProxyId::from_parts(u32::MAX, 0));
                    let name = self.algorithms[k].name();
                    self.fail(|| format!("{name}: insert failed: {e}"));
                }
            }
        }
        handle
    }

    /// Moves a live proxy in every algorithm and the model.
    pub fn set_aabb(&mut self, handle: u32, aabb: Aabb) {
        let margin = self.fat_margin;
        if let Some(proxy) = self.model[handle as usize].as_mut() {
            proxy.aabb = stored_box(margin, Some(proxy.aabb), aabb);
        }
        for k in 0..self.algorithms.len() {
            let id = self.ids[k][handle as usize];
            let result = self.algorithms[k].set_aabb(id, aabb);
            let name = self.algorithms[k].name();
            self.check(result.is_ok(), || {
                format!("{name}: set_aabb({id}) failed: {result:?}")
            });
        }
    }

    /// Moves several live proxies in every algorithm (one [`BroadPhase::set_aabbs`] batch
    /// each) and the model.
    pub fn set_aabbs(&mut self, moves: &[(u32, Aabb)]) {
        for &(handle, aabb) in moves {
            if let Some(proxy) = self.model[handle as usize].as_mut() {
                proxy.aabb = stored_box(self.fat_margin, Some(proxy.aabb), aabb);
            }
        }
        for k in 0..self.algorithms.len() {
            let batch: Vec<(ProxyId, Aabb)> = moves
                .iter()
                .map(|&(handle, aabb)| (self.ids[k][handle as usize], aabb))
                .collect();
            let result = self.algorithms[k].set_aabbs(&batch);
            let name = self.algorithms[k].name();
            self.check(result.is_ok(), || {
                format!(
                    "{name}: set_aabbs of {} moves failed: {result:?}",
                    moves.len()
                )
            });
        }
    }

    /// Removes a live proxy from every algorithm and the model; with `report` false by
    /// [`BroadPhase::remove_without_events`], so that its pairs end without events.
    pub fn remove(&mut self, handle: u32, report: bool) {
        self.model[handle as usize] = None;
        self.live.retain(|&h| h != handle);
        if !report {
            self.silent.insert(handle);
        }
        for k in 0..self.algorithms.len() {
            let id = self.ids[k][handle as usize];
            let result = if report {
                self.algorithms[k].remove(id)
            } else {
                self.algorithms[k].remove_without_events(id)
            };
            let name = self.algorithms[k].name();
            self.check(result.is_ok(), || {
                format!("{name}: remove({id}, report {report}) failed: {result:?}")
            });
        }
    }

    /// Replaces a live proxy's filter in every algorithm and the model.
    pub fn set_filter(&mut self, handle: u32, filter: CollisionFilter) {
        if let Some(proxy) = self.model[handle as usize].as_mut() {
            proxy.filter = filter;
        }
        self.for_each_id(handle, "set_filter", |bp, id| bp.set_filter(id, filter));
    }

    /// Replaces a live proxy's kind in every algorithm and the model.
    pub fn set_kind(&mut self, handle: u32, kind: ProxyKind) {
        if let Some(proxy) = self.model[handle as usize].as_mut() {
            proxy.kind = kind;
        }
        self.for_each_id(handle, "set_kind", |bp, id| bp.set_kind(id, kind));
    }

    /// Asks every algorithm to report a live proxy's pairs as begun at the next update.
    pub fn report_pairs_again(&mut self, handle: u32) {
        self.again.insert(handle);
        self.for_each_id(handle, "report_pairs_again", |bp, id| {
            bp.report_pairs_again(id)
        });
    }

    /// Sets the fat margin of every algorithm and the model; boxes given from now on are
    /// stored grown by it.
    pub fn set_fat_margin(&mut self, margin: f32) {
        self.fat_margin = margin;
        for k in 0..self.algorithms.len() {
            let result = self.algorithms[k].set_fat_margin(margin);
            let name = self.algorithms[k].name();
            self.check(result.is_ok(), || {
                format!("{name}: set_fat_margin({margin}) failed: {result:?}")
            });
        }
    }

    /// Calls `op` with the id of `handle` in every algorithm and checks that it succeeds.
    fn for_each_id(
        &mut self,
        handle: u32,
        what: &str,
        mut op: impl FnMut(&mut dyn BroadPhase, ProxyId) -> crate::Result<()>,
    ) {
        for k in 0..self.algorithms.len() {
            let id = self.ids[k][handle as usize];
            let result = op(self.algorithms[k].as_mut(), id);
            let name = self.algorithms[k].name();
            self.check(result.is_ok(), || {
                format!("{name}: {what}({id}) failed: {result:?}")
            });
        }
    }

    /// Uses a removed handle's id: every algorithm must answer `StaleProxy` and stay intact.
    pub fn use_stale(&mut self, handle: u32, aabb: Aabb) {
        for k in 0..self.algorithms.len() {
            let id = self.ids[k][handle as usize];
            let bp = &mut self.algorithms[k];
            let results = [
                bp.set_aabb(id, aabb),
                bp.set_aabbs(&[(id, aabb)]),
                bp.remove(id),
                bp.remove_without_events(id),
                bp.set_filter(id, CollisionFilter::ALL),
                bp.set_kind(id, ProxyKind::Dynamic),
                bp.report_pairs_again(id),
                bp.aabb(id).map(|_| ()),
                bp.key(id).map(|_| ()),
            ];
            let name = bp.name();
            let stale = Err(Error::StaleProxy(id));
            self.check(results.iter().all(|r| *r == stale), || {
                format!("{name}: stale id {id} gave {results:?}")
            });
        }
    }

    /// Clears every algorithm and the model.
    pub fn clear(&mut self) {
        for algorithm in &mut self.algorithms {
            algorithm.clear();
        }
        for ids in &mut self.ids {
            ids.clear();
        }
        for slots in &mut self.handles_by_slot {
            slots.clear();
        }
        self.model.clear();
        self.live.clear();
        self.previous.clear();
        self.lost.fill(false);
        self.silent.clear();
        self.again.clear();
    }

    /// Sets the pair limit of every algorithm
    /// ([`BroadPhase::set_pair_limit`](crate::BroadPhase::set_pair_limit)).
    pub fn set_pair_limit(&mut self, limit: Option<usize>) {
        self.pair_limit = limit;
        for algorithm in &mut self.algorithms {
            algorithm.set_pair_limit(limit);
        }
    }

    /// Number of live proxies.
    pub fn live_count(&self) -> usize {
        self.live.len()
    }

    /// The algorithms under test.
    pub fn algorithms(&self) -> &[Box<dyn BroadPhase>] {
        &self.algorithms
    }

    /// The report so far.
    pub fn report(&self) -> &VerifyReport {
        &self.report
    }
}
