//! A broad phase that picks among the other algorithms as the scene changes.
//!
//! The adaptive report (seed 004) switches by average velocity with thresholds that depend on
//! the world; the thesis (seed 000, ch. 5) asks for a framework that picks the algorithm
//! itself. Here the choice is measured, not modelled: from time to time every candidate is
//! built on the current boxes and timed on a replay of the last step's motion, the active
//! algorithm included, under the same conditions, one candidate per step so that no step
//! pays for them all. A candidate replaces the active one only when it is faster by a margin
//! (hysteresis) in two rounds in a row; the winner is then loaded with every current box at once and takes over.
//! Trials are scheduled when the scene's statistics change (proxy count, fraction moving,
//! speed relative to size) or after an interval that doubles while nothing is gained, and
//! are kept within a share of the running time.
//!
//! Output stays exact and deterministic whatever is chosen and when: the adaptive broad phase
//! keeps its own pair set and applies the active algorithm's events in slot order, so its
//! pairs and events depend only on the boxes, never on the inner algorithm. Only speed and
//! the switch log depend on timing.

use std::ops::ControlFlow;
use std::time::Instant;

use crate::pair_set::pair_key;
use crate::pair_tracker::PairTracker;
use crate::query::{Ray, RayHit};
use crate::{
    create, Aabb, AlgorithmOptions, BroadPhase, CollisionFilter, Error, PairEvents, PairSet,
    ProxyId, ProxyKind, ProxyTable, Result,
};

/// How a trial picks the next algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SwitchPolicy {
    /// Switch to the fastest candidate when it beats the active one by the margin.
    #[default]
    Measured,
    /// Switch to the next candidate at every trial, whatever the times, and ignore the trial
    /// budget: exercises the switching machinery (tests, `verify`), never fast.
    RoundRobin,
}

/// The algorithms `adaptive` chooses from by default, where registered: `octree` is left out
/// (its straddling boxes make it slower than `loose-octree` everywhere we measured).
pub const ADAPTIVE_DEFAULT_CANDIDATES: &[&str] = &[
    "brute-force",
    "sap",
    "sort-and-sweep",
    "grid",
    "hgrid",
    "loose-octree",
    "masking",
    "dynamic-tree",
    "bvh",
];

/// Settings of [`Adaptive`].
#[derive(Debug, Clone, PartialEq)]
pub struct AdaptiveOptions {
    /// Algorithm names to choose from (registry names; `adaptive` itself is ignored). Empty:
    /// [`ADAPTIVE_DEFAULT_CANDIDATES`].
    pub candidates: Vec<String>,
    /// The algorithm to start with.
    pub initial: String,
    /// Fewest steps between two trials.
    pub min_trial_interval: u64,
    /// Most steps between two trials when nothing changes (the interval doubles after each
    /// trial that did not switch).
    pub max_trial_interval: u64,
    /// Switch only when the best candidate's trial time is below this fraction of the active
    /// algorithm's.
    pub switch_margin: f64,
    /// Trials may take at most this fraction of the time spent in steps.
    pub trial_budget: f64,
    /// Candidates whose cost grows with n² (`brute-force`, `masking`) are tried only up to
    /// this many proxies.
    pub quadratic_limit: usize,
    /// How trials choose.
    pub policy: SwitchPolicy,
}

impl Default for AdaptiveOptions {
    fn default() -> Self {
        Self {
            candidates: Vec::new(),
            initial: "sap".to_string(),
            min_trial_interval: 8,
            max_trial_interval: 1024,
            switch_margin: 0.8,
            trial_budget: 0.1,
            quadratic_limit: 1500,
            policy: SwitchPolicy::Measured,
        }
    }
}

/// One change of algorithm.
#[derive(Debug, Clone, PartialEq)]
pub struct SwitchRecord {
    /// The update count when it happened.
    pub step: u64,
    /// The algorithm replaced.
    pub from: &'static str,
    /// The algorithm chosen.
    pub to: &'static str,
    /// Why: the trial times.
    pub reason: String,
}

/// Cheap statistics of the last step, compared between trials to notice a changed scene.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct SceneStats {
    proxies: usize,
    moved_fraction: f64,
    /// Mean displacement of moved boxes' centres over their mean edge length.
    relative_speed: f64,
}

impl SceneStats {
    fn differs_from(&self, other: &SceneStats) -> bool {
        let ratio = |a: f64, b: f64| (a.max(1e-9) / b.max(1e-9)).max(b.max(1e-9) / a.max(1e-9));
        ratio(self.proxies as f64, other.proxies as f64) > 1.5
            || (self.moved_fraction - other.moved_fraction).abs() > 0.25
            || (ratio(self.relative_speed, other.relative_speed) > 2.0
                && self.relative_speed.max(other.relative_speed) > 0.01)
    }
}

/// An inner algorithm with the maps between its ids and the adaptive broad phase's slots.
struct Inner {
    algorithm: Box<dyn BroadPhase>,
    /// Per outer slot: the inner id (meaningful for live outer slots).
    ids: Vec<ProxyId>,
    /// Per inner slot: the outer slot.
    outer: Vec<u32>,
}

impl Inner {
    fn insert(
        &mut self,
        outer_slot: usize,
        aabb: Aabb,
        kind: ProxyKind,
        filter: CollisionFilter,
    ) -> Result<()> {
        let id = self.algorithm.insert(aabb, kind, filter)?;
        if self.ids.len() <= outer_slot {
            self.ids
                .resize(outer_slot + 1, ProxyId::from_parts(u32::MAX, 0));
        }
        self.ids[outer_slot] = id;
        let inner_slot = id.index() as usize;
        if self.outer.len() <= inner_slot {
            self.outer.resize(inner_slot + 1, u32::MAX);
        }
        self.outer[inner_slot] = outer_slot as u32;
        Ok(())
    }
}

/// Chooses and switches among the other broad phases by timed trials; see the module docs.
///
/// ```
/// use broadphase::{Adaptive, Aabb, BroadPhase, CollisionFilter, PairEvents, ProxyKind};
/// let mut bp = Adaptive::new(Default::default()).unwrap();
/// let a = bp.insert(Aabb::from_arrays([0.0; 3], [1.0; 3])?, ProxyKind::Dynamic, CollisionFilter::ALL)?;
/// let mut events = PairEvents::new();
/// bp.update(&mut events);
/// assert_eq!(bp.active_name(), "sap");
/// # let _ = a;
/// # Ok::<(), broadphase::Error>(())
/// ```
pub struct Adaptive {
    options: AdaptiveOptions,
    candidates: Vec<&'static str>,
    proxies: ProxyTable,
    pairs: PairTracker,
    active: Inner,
    /// Per outer slot: moved during this step.
    is_moved: Vec<bool>,
    /// This step's moves: slot and the box before the step's first move.
    moves: Vec<(u32, Aabb)>,
    /// The previous step's moves (slot, before, after), replayed by trials.
    last_motion: Vec<(u32, Aabb, Aabb)>,
    step: u64,
    next_trial: u64,
    trial_interval: u64,
    stats: SceneStats,
    stats_at_trial: SceneStats,
    step_seconds: f64,
    trial_seconds: f64,
    log: Vec<SwitchRecord>,
    /// The trial round under way: candidates still to try (one per step, so that no single
    /// step pays for all of them) and the results so far.
    pending: Vec<&'static str>,
    results: Vec<(&'static str, f64)>,
    best: Option<(&'static str, f64)>,
    /// The winner of the last round, to be confirmed by the next.
    unconfirmed: Option<&'static str>,
    inner_events: PairEvents,
    changes: Vec<(u64, bool)>,
}

impl Adaptive {
    /// An empty adaptive broad phase.
    pub fn new(options: AdaptiveOptions) -> Result<Self> {
        let mut candidates = Vec::new();
        let names: Vec<String> = if options.candidates.is_empty() {
            ADAPTIVE_DEFAULT_CANDIDATES
                .iter()
                .filter(|name| crate::ALGORITHMS.contains(name))
                .map(|s| s.to_string())
                .collect()
        } else {
            options.candidates.clone()
        };
        for name in &names {
            if name == "adaptive" {
                continue;
            }
            let algorithm = create(name, &AlgorithmOptions::default())?;
            if !candidates.contains(&algorithm.name()) {
                candidates.push(algorithm.name());
            }
        }
        if candidates.is_empty() {
            return Err(Error::InvalidOption(
                "adaptive needs at least one candidate algorithm",
            ));
        }
        let in_unit = |x: f64| x > 0.0 && x <= 1.0;
        if !in_unit(options.switch_margin)
            || !in_unit(options.trial_budget)
            || options.min_trial_interval == 0
            || options.max_trial_interval < options.min_trial_interval
        {
            return Err(Error::InvalidOption(
                "adaptive: margin and budget in (0, 1], 0 < min interval <= max interval",
            ));
        }
        let algorithm = create(&options.initial, &AlgorithmOptions::default())?;
        Ok(Self {
            candidates,
            proxies: ProxyTable::new(),
            pairs: PairTracker::new(),
            active: Inner {
                algorithm,
                ids: Vec::new(),
                outer: Vec::new(),
            },
            is_moved: Vec::new(),
            moves: Vec::new(),
            last_motion: Vec::new(),
            step: 0,
            next_trial: options.min_trial_interval,
            trial_interval: options.min_trial_interval,
            stats: SceneStats::default(),
            stats_at_trial: SceneStats::default(),
            step_seconds: 0.0,
            trial_seconds: 0.0,
            log: Vec::new(),
            pending: Vec::new(),
            results: Vec::new(),
            best: None,
            unconfirmed: None,
            inner_events: PairEvents::new(),
            changes: Vec::new(),
            options,
        })
    }

    /// The algorithm in use.
    pub fn active_name(&self) -> &'static str {
        self.active.algorithm.name()
    }

    /// Seconds spent in trials and in steps, for the overhead budget.
    pub fn trial_overhead(&self) -> (f64, f64) {
        (self.trial_seconds, self.step_seconds)
    }

    fn measure_stats(&mut self) {
        let mut displacement = 0.0f64;
        let mut size = 0.0f64;
        for &(slot, before) in &self.moves {
            let after = self.proxies.aabb(slot as usize);
            displacement += (after.center() - before.center()).length() as f64;
            size += (after.extents().element_sum() / 3.0) as f64;
        }
        let n = self.proxies.len();
        self.stats = SceneStats {
            proxies: n,
            moved_fraction: if n == 0 {
                0.0
            } else {
                self.moves.len() as f64 / n as f64
            },
            relative_speed: if size > 0.0 && size.is_finite() {
                displacement / size
            } else {
                0.0
            },
        };
    }

    /// Builds `name` on the current boxes, every proxy at once, and brings its pair set up to
    /// date: what a switch hands over. Its first events are dropped: the adaptive pair set
    /// already holds those pairs.
    fn load(&self, name: &str) -> Option<Inner> {
        let mut inner = Inner {
            algorithm: create(name, &AlgorithmOptions::default()).ok()?,
            ids: Vec::new(),
            outer: Vec::new(),
        };
        for slot in self.proxies.live_slots() {
            let aabb = *self.proxies.aabb(slot);
            inner
                .insert(
                    slot,
                    aabb,
                    self.proxies.kind(slot),
                    self.proxies.filter(slot),
                )
                .ok()?;
        }
        inner.algorithm.update(&mut PairEvents::new());
        Some(inner)
    }

    /// Builds `name` on the boxes before the last step's motion, then times the replay of
    /// that motion forward and back, five times in all, and takes the median. Returns the
    /// time in seconds.
    fn trial(&self, name: &str) -> Option<f64> {
        let mut inner = Inner {
            algorithm: create(name, &AlgorithmOptions::default()).ok()?,
            ids: Vec::new(),
            outer: Vec::new(),
        };
        let mut before = vec![None; 0];
        before.resize(self.proxies.slot_count(), None);
        for &(slot, old, _) in &self.last_motion {
            before[slot as usize] = Some(old);
        }
        for slot in self.proxies.live_slots() {
            let aabb = before[slot].unwrap_or(*self.proxies.aabb(slot));
            inner
                .insert(
                    slot,
                    aabb,
                    self.proxies.kind(slot),
                    self.proxies.filter(slot),
                )
                .ok()?;
        }
        let mut events = PairEvents::new();
        inner.algorithm.update(&mut events);
        let mut samples = [0.0f64; 5];
        for (k, sample) in samples.iter_mut().enumerate() {
            let start = Instant::now();
            for &(slot, old, new) in &self.last_motion {
                if self.proxies.is_live(slot as usize) {
                    let target = if k % 2 == 1 { old } else { new };
                    inner
                        .algorithm
                        .set_aabb(inner.ids[slot as usize], target)
                        .ok()?;
                }
            }
            inner.algorithm.update(&mut events);
            *sample = start.elapsed().as_secs_f64();
        }
        samples.sort_by(f64::total_cmp);
        Some(samples[2])
    }

    /// Starts a trial round: the candidates to try, one per step, the active one included.
    fn start_round(&mut self) {
        let n = self.proxies.len();
        let active = self.active_name();
        self.results.clear();
        self.best = None;
        self.pending.clear();
        match self.options.policy {
            // A confirming round retries only the two contenders.
            SwitchPolicy::Measured if self.unconfirmed.is_some() => {
                self.pending.push(active);
                self.pending.extend(self.unconfirmed);
            }
            SwitchPolicy::Measured => {
                let quadratic_limit = self.options.quadratic_limit;
                self.pending.extend(
                    self.candidates.iter().rev().filter(|&&c| {
                        !matches!(c, "brute-force" | "masking") || n <= quadratic_limit
                    }),
                );
            }
            SwitchPolicy::RoundRobin => {
                let position = self
                    .candidates
                    .iter()
                    .position(|&c| c == active)
                    .unwrap_or(0);
                let next = self.candidates[(position + 1) % self.candidates.len()];
                if next != active {
                    self.pending.push(next);
                }
            }
        }
        self.stats_at_trial = self.stats;
    }

    /// Runs the next trial of the round; after the last one, switches if a candidate won.
    fn continue_round(&mut self) {
        let start = Instant::now();
        if let Some(name) = self.pending.pop() {
            if let Some(seconds) = self.trial(name) {
                self.results.push((name, seconds));
                let is_active = name == self.active_name();
                if !is_active && self.best.is_none_or(|(_, b)| seconds < b) {
                    self.best = Some((name, seconds));
                }
            }
        }
        if self.pending.is_empty() {
            self.finish_round();
        }
        self.trial_seconds += start.elapsed().as_secs_f64();
    }

    fn finish_round(&mut self) {
        let active_name = self.active_name();
        let active_time = match self.options.policy {
            SwitchPolicy::Measured => self
                .results
                .iter()
                .find(|(name, _)| *name == active_name)
                .map(|r| r.1),
            SwitchPolicy::RoundRobin => Some(f64::INFINITY),
        };
        let summary: Vec<String> = self
            .results
            .iter()
            .map(|(name, seconds)| format!("{name} {:.3} ms", seconds * 1e3))
            .collect();
        let candidate = match (self.best.take(), active_time) {
            (Some((name, seconds)), Some(active))
                if seconds < self.options.switch_margin * active =>
            {
                Some(name)
            }
            _ => None,
        };
        // A measured winner must win two rounds in a row: one noisy trial does not switch.
        let confirmed = match self.options.policy {
            SwitchPolicy::Measured => candidate.filter(|&c| self.unconfirmed == Some(c)),
            SwitchPolicy::RoundRobin => candidate,
        };
        self.unconfirmed = if confirmed.is_some() { None } else { candidate };
        let winner = confirmed.and_then(|name| self.load(name));
        let switched = match winner {
            Some(inner) => {
                let to = inner.algorithm.name();
                self.log.push(SwitchRecord {
                    step: self.step,
                    from: active_name,
                    to,
                    reason: format!(
                        "n = {}, moving {:.0}%, speed/size {:.3}; trials: {}",
                        self.stats.proxies,
                        self.stats.moved_fraction * 100.0,
                        self.stats.relative_speed,
                        summary.join(", ")
                    ),
                });
                self.active = inner;
                true
            }
            None => false,
        };
        self.trial_interval = if switched || self.unconfirmed.is_some() {
            self.options.min_trial_interval
        } else {
            (self.trial_interval * 2).min(self.options.max_trial_interval)
        };
        // Keep trials within their share of the running time.
        let mean_step = self.step_seconds / self.step.max(1) as f64;
        let budget_steps = match self.options.policy {
            SwitchPolicy::Measured => {
                (self.trial_seconds / self.options.trial_budget - self.step_seconds).max(0.0)
                    / mean_step.max(1e-9)
            }
            SwitchPolicy::RoundRobin => 0.0,
        };
        self.next_trial = if self.unconfirmed.is_some() {
            self.step + 1 // confirm at once: two trials, cheap next to a full round
        } else {
            self.step + self.trial_interval.max(budget_steps.min(1e9) as u64)
        };
    }
}

impl BroadPhase for Adaptive {
    fn name(&self) -> &'static str {
        "adaptive"
    }

    fn insert(&mut self, aabb: Aabb, kind: ProxyKind, filter: CollisionFilter) -> Result<ProxyId> {
        let id = self.proxies.insert(aabb, kind, filter)?;
        let slot = id.index() as usize;
        if let Err(e) = self.active.insert(slot, aabb, kind, filter) {
            // Keep the two tables in step: undo the outer insert.
            self.proxies.remove(id).expect("just inserted");
            return Err(e);
        }
        if self.is_moved.len() <= slot {
            self.is_moved.resize(slot + 1, false);
        }
        Ok(id)
    }

    fn set_aabb(&mut self, id: ProxyId, aabb: Aabb) -> Result<()> {
        let slot = self.proxies.index_of(id)?;
        if !self.is_moved[slot] {
            self.is_moved[slot] = true;
            self.moves.push((slot as u32, *self.proxies.aabb(slot)));
        }
        self.proxies.set_aabb(id, aabb)?;
        self.active.algorithm.set_aabb(self.active.ids[slot], aabb)
    }

    fn remove(&mut self, id: ProxyId) -> Result<()> {
        let slot = self.proxies.remove(id)?;
        self.active.algorithm.remove(self.active.ids[slot])
    }

    fn update(&mut self, events: &mut PairEvents) {
        let start = Instant::now();
        let mut inner_events = std::mem::take(&mut self.inner_events);
        self.active.algorithm.update(&mut inner_events);
        let outer = &self.active.outer;
        self.changes.clear();
        self.changes.extend(inner_events.begun.iter().map(|p| {
            (
                pair_key(outer[p.a.index() as usize], outer[p.b.index() as usize]),
                true,
            )
        }));
        self.changes.extend(inner_events.ended.iter().map(|p| {
            (
                pair_key(outer[p.a.index() as usize], outer[p.b.index() as usize]),
                false,
            )
        }));
        self.inner_events = inner_events;
        // Slot order, so that the pair set and the events do not depend on the inner algorithm.
        self.changes.sort_unstable();
        for &(key, begun) in &self.changes {
            let (a, b) = crate::key_indices(key);
            if begun {
                self.pairs.add(a, b);
            } else {
                self.pairs.remove(a, b);
            }
        }
        self.step_seconds += start.elapsed().as_secs_f64();
        self.step += 1;

        self.measure_stats();
        self.last_motion.clear();
        for &(slot, before) in &self.moves {
            self.is_moved[slot as usize] = false;
            if self.proxies.is_live(slot as usize) {
                self.last_motion
                    .push((slot, before, *self.proxies.aabb(slot as usize)));
            }
        }
        self.moves.clear();
        if !self.pending.is_empty() {
            self.continue_round();
        } else if self.candidates.len() > 1 {
            let earliest = self.next_trial.saturating_sub(self.trial_interval)
                + self.options.min_trial_interval;
            let changed = self.stats.differs_from(&self.stats_at_trial) && self.step >= earliest;
            if self.step >= self.next_trial || changed {
                self.start_round();
                self.continue_round();
            }
        }
        self.pairs.finish(&self.proxies, events);
        self.proxies.release_removed();
    }

    fn clear(&mut self) {
        self.proxies.clear();
        self.pairs.clear();
        self.active.algorithm.clear();
        self.active.ids.clear();
        self.active.outer.clear();
        self.is_moved.iter_mut().for_each(|m| *m = false);
        self.moves.clear();
        self.last_motion.clear();
        self.pending.clear();
        self.results.clear();
        self.best = None;
        self.unconfirmed = None;
    }

    fn proxies(&self) -> &ProxyTable {
        &self.proxies
    }

    fn pair_set(&self) -> &PairSet {
        self.pairs.set()
    }

    fn switch_log(&self) -> &[SwitchRecord] {
        &self.log
    }

    fn memory_bytes(&self) -> usize {
        self.proxies.memory_bytes()
            + self.pairs.memory_bytes()
            + self.active.algorithm.memory_bytes()
            + (self.active.ids.capacity() + self.active.outer.capacity() / 2) * 8
            + self.is_moved.capacity()
            + self.moves.capacity() * 28
            + self.last_motion.capacity() * 52
            + self.changes.capacity() * 16
    }

    fn query_aabb_with(
        &self,
        aabb: &Aabb,
        filter: CollisionFilter,
        visitor: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) {
        let outer = &self.active.outer;
        self.active
            .algorithm
            .query_aabb_with(aabb, filter, &mut |id| {
                visitor(self.proxies.id(outer[id.index() as usize] as usize))
            });
    }

    fn raycast_with(
        &self,
        ray: &Ray,
        filter: CollisionFilter,
        visitor: &mut dyn FnMut(RayHit) -> ControlFlow<()>,
    ) {
        let outer = &self.active.outer;
        self.active.algorithm.raycast_with(ray, filter, &mut |hit| {
            visitor(RayHit {
                id: self.proxies.id(outer[hit.id.index() as usize] as usize),
                distance: hit.distance,
            })
        });
    }

    fn raycast_closest(&self, ray: &Ray, filter: CollisionFilter) -> Option<RayHit> {
        // The inner tie rule (smallest inner slot) may differ from ours: scan all hits.
        let mut best: Option<RayHit> = None;
        self.raycast_with(ray, filter, &mut |hit| {
            if crate::query::is_closer(&hit, &best) {
                best = Some(hit);
            }
            ControlFlow::Continue(())
        });
        best
    }
}
