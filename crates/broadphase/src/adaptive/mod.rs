//! A broad phase that picks among the other algorithms as the scene changes.
//!
//! [Owen18, Conclusion] switches by average velocity with thresholds that depend on
//! the world; [Zych16, ch. 5] asks for a framework that picks the algorithm
//! itself. Here the choice is measured, not modelled: from time to time every candidate is
//! built on the current boxes and timed on the last step's motion and churn, continued for a
//! few steps, under the same conditions for all, the active algorithm included; one candidate
//! per step, so that no step pays for them all. A candidate replaces the active one only when
//! it is faster by a margin (hysteresis) in two rounds in a row; the winner is then loaded
//! with every current box at once and takes over. Trials are scheduled when the scene's
//! statistics change (proxy count, fraction moving, speed relative to size, churn, pairs per
//! proxy) or after an interval that doubles while nothing is gained, and
//! are kept within a share of the running time. A trial runs on a sample of the boxes, in
//! cache, and so underestimates algorithms whose running cost is dominated by cache misses at
//! full size: each algorithm's ratio of running cost to trial time is learnt while it is
//! active, and one not yet seen running is assumed to scale as badly as the worst seen so far.
//!
//! Output stays exact and deterministic whatever is chosen and when: the adaptive broad phase
//! keeps its own pair set and applies the active algorithm's events in slot order, so its
//! pairs and events depend only on the boxes, never on the inner algorithm. Only speed and
//! the switch log depend on timing.
//!
//! The active algorithm's ids are the adaptive broad phase's ids: a newly loaded algorithm is
//! made to number its slots like the one it replaces (`Candidate::mirror_ids`), so calls
//! pass through with no id map and no second proxy table.

mod options;
mod policy;
mod rounds;
mod stats;
mod trial;

use std::ops::ControlFlow;

pub use options::{AdaptiveOptions, SwitchPolicy, SwitchRecord, ADAPTIVE_DEFAULT_CANDIDATES};
use policy::{Benched, Best, Clock, SystemClock, TrialResult};
use rounds::Probation;
use stats::{SceneStats, SHIFT};
use trial::TrialSample;

use crate::backend::pair_tracker::Pair;
use crate::backend::{key_indices, pair_key};
use crate::backend::{PairSet, ProxyTable};
use crate::query::{Ray, RayHit};
use crate::{
    create, Aabb, AlgorithmOptions, BroadPhase, ChoiceOverhead, CollisionFilter, Diagnostics,
    Error, PairEvents, ProxyId, ProxyKind, Result,
};

/// Steps of running cost kept for the active algorithm.
const RECENT_STEPS: usize = 15;

/// The farthest a move counts for the scene's speed statistic, in sizes of its box: the
/// statistic only tells when the scene changed (the trials measure what moves cost), and a
/// jump across the world says no more of that than a move of a few sizes.
const JUMP_SIZES: f64 = 4.0;

/// Chooses and switches among the other broad phases by timed trials; see the module docs.
///
/// Worst case: that of the active algorithm, plus the trials, which take at most
/// [`AdaptiveOptions::trial_budget`] of the time spent in
/// updates (rounds run on a sample of [`AdaptiveOptions::trial_proxies`] proxies, and
/// candidates whose cost grows with n² are tried only up to
/// [`AdaptiveOptions::quadratic_limit`] proxies); a switch rebuilds the chosen algorithm on
/// every proxy once, O(its build).
///
/// ```
/// use broadphase::{Adaptive, Aabb, BroadPhase, CollisionFilter, PairEvents, ProxyKind};
/// let mut bp = Adaptive::new(Default::default()).unwrap();
/// let a = bp.insert(Aabb::from_arrays([0.0; 3], [1.0; 3])?, ProxyKind::Dynamic, CollisionFilter::ALL)?;
/// let mut events = PairEvents::new();
/// bp.update(&mut events);
/// assert_eq!(bp.active_name(), "sort-and-sweep");
/// # let _ = a;
/// # Ok::<(), broadphase::Error>(())
/// ```
pub struct Adaptive {
    options: AdaptiveOptions,
    candidates: Vec<&'static str>,
    /// The pairs, changed in slot order: their order depends only on the boxes.
    pairs: PairSet,
    /// The pair limit and the fat margin, given to every algorithm this one builds.
    pair_limit: Option<usize>,
    fat_margin: f32,
    /// The algorithm in use; its proxy table is ours (see the module docs).
    active: Box<dyn BroadPhase>,
    /// Per outer slot: the step (plus one) in which it last moved, so that nothing needs
    /// clearing between steps.
    moved_in: Vec<u64>,
    /// Proxies moved during this step: exact through `set_aabb`; through `set_aabbs`, moves of
    /// untracked slots are counted without checking ids or repeats (see `set_aabbs`).
    moved_count: usize,
    /// A sample of this step's moves: slot and the box before the step's first move. Kept
    /// for the slots of the trial round under way and for every slot whose index has no bit
    /// of `track_mask` (a few hundred, for the statistics): logging every move would cost
    /// the wrapper more than some algorithms' whole update.
    moves: Vec<(u32, Aabb)>,
    track_mask: u32,
    /// The previous step's logged moves (slot, box before), replayed by trials with the
    /// current box.
    last_motion: Vec<(u32, Aabb)>,
    /// Slots inserted during this step, and during the previous one (replayed by trials).
    inserted: Vec<u32>,
    last_inserted: Vec<u32>,
    /// Proxies removed during this step.
    removed: usize,
    /// Slots removed without events during this step: the active algorithm drops their
    /// pairs silently, so the mirror pair set must drop them itself.
    removed_silently: Vec<u32>,
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
    results: Vec<TrialResult>,
    /// The fastest candidate of the round: name, step time, and the time to build it.
    best: Option<Best>,
    /// The winner of the last round, to be confirmed by the next.
    unconfirmed: Option<&'static str>,
    inner_events: PairEvents,
    /// The active algorithm's own update times over the last steps (seconds), a ring.
    recent: Vec<f64>,
    recent_next: usize,
    /// The active algorithm's trial time in the round under way.
    active_trial: Option<f64>,
    /// Per algorithm: its running cost over its trial time, learnt while it was active. A
    /// trial starts from freshly built boxes, so an algorithm with fat boxes looks cheaper
    /// than it runs; the factor corrects its later trials.
    corrections: Vec<(&'static str, f64)>,
    /// Per algorithm: full rounds it sits out, and how many it sits out next time, after
    /// a trial far slower than the round's best (tried again later, less and less often).
    benched: Vec<Benched>,
    /// The step at which the last round ended.
    last_round: u64,
    /// The proxies of the round under way.
    sample: TrialSample,
    /// The last switch, until the new algorithm's running cost is known.
    probation: Option<Probation>,
    /// Where time is read (the system's clock; tests inject their own).
    clock: Box<dyn Clock>,
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
            pairs: PairSet::new(),
            pair_limit: None,
            fat_margin: 0.0,
            active: algorithm,
            moved_in: Vec::new(),
            moves: Vec::new(),
            last_motion: Vec::new(),
            moved_count: 0,
            track_mask: 0,
            inserted: Vec::new(),
            last_inserted: Vec::new(),
            removed: 0,
            removed_silently: Vec::new(),
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
            recent: Vec::with_capacity(RECENT_STEPS),
            recent_next: 0,
            active_trial: None,
            corrections: Vec::new(),
            benched: Vec::new(),
            last_round: 0,
            sample: TrialSample::empty(),
            probation: None,
            clock: Box::new(SystemClock::new()),
            options,
        })
    }

    /// The same, reading time from `clock`: decisions then depend only on the calls and
    /// on what the clock returns.
    #[cfg(test)]
    fn with_clock(options: AdaptiveOptions, clock: Box<dyn Clock>) -> Result<Self> {
        let mut adaptive = Self::new(options)?;
        adaptive.clock = clock;
        Ok(adaptive)
    }

    /// The algorithm in use.
    pub fn active_name(&self) -> &'static str {
        self.active.name()
    }

    /// The proxy table, the active algorithm's.
    #[inline]
    fn table(&self) -> &ProxyTable {
        self.active.proxies()
    }

    /// Seconds spent in trials and in steps, for the overhead budget.
    pub fn trial_overhead(&self) -> (f64, f64) {
        (self.trial_seconds, self.step_seconds)
    }

    /// Measures the scene's statistics from this step's moves, a sample of them when many.
    /// A move counts at most [`JUMP_SIZES`] box sizes: whether a few of the sampled boxes
    /// were teleported across the world is chance, and uncapped they would swing the mean
    /// speed tenfold from one step to the next and pass for a shift of regime, which starts
    /// a round whatever the trial budget.
    fn measure_stats(&mut self) {
        let mut displacement = 0.0f64;
        let mut size = 0.0f64;
        // A few hundred moves tell the mean well enough.
        let stride = (self.moves.len() / 256).max(1);
        let table = self.table();
        for &(slot, before) in self.moves.iter().step_by(stride) {
            let after = table.aabb(slot as usize);
            let extent = (after.extents().element_sum() / 3.0) as f64;
            let moved = (after.center() - before.center()).length() as f64;
            displacement += moved.min(JUMP_SIZES * extent);
            size += extent;
        }
        let n = table.len();
        self.stats = SceneStats {
            proxies: n,
            moved_fraction: if n == 0 {
                0.0
            } else {
                (self.moved_count as f64 / n as f64).min(1.0)
            },
            relative_speed: if size > 0.0 && size.is_finite() {
                displacement / size
            } else {
                0.0
            },
            churn: (self.inserted.len() + self.removed) as f64 / n.max(1) as f64,
            pairs_per_proxy: self.pairs.len() as f64 / n.max(1) as f64,
        };
    }
}

impl Adaptive {
    /// Drops from the mirror pair set the pairs of the slots removed without events this
    /// step, which the active algorithm ended without telling. O(pairs) when there are any.
    fn drop_pairs_of_removed_silently(&mut self) {
        if self.removed_silently.is_empty() {
            return;
        }
        self.removed_silently.sort_unstable();
        let removed = &self.removed_silently;
        let mut position = 0;
        while position < self.pairs.len() {
            let (a, b) = key_indices(self.pairs.keys()[position]);
            if removed.binary_search(&a).is_ok() || removed.binary_search(&b).is_ok() {
                // The last pair moves into `position`; look at it next.
                self.pairs.remove_at(position);
            } else {
                position += 1;
            }
        }
        self.removed_silently.clear();
    }
}

impl BroadPhase for Adaptive {
    fn name(&self) -> &'static str {
        "adaptive"
    }

    fn insert_keyed(
        &mut self,
        aabb: Aabb,
        kind: ProxyKind,
        filter: CollisionFilter,
        key: u64,
    ) -> Result<ProxyId> {
        let id = self.active.insert_keyed(aabb, kind, filter, key)?;
        let slot = id.index() as usize;
        if self.moved_in.len() <= slot {
            self.moved_in.resize(slot + 1, 0);
        }
        self.inserted.push(slot as u32);
        Ok(id)
    }

    fn set_aabb(&mut self, id: ProxyId, aabb: Aabb) -> Result<()> {
        // The active algorithm checks the id; only its first move this step is counted, and
        // for the tracked slots (and the trial sample while a round is under way, as in
        // `set_aabbs`) logged with the box before it.
        let slot = id.index() as usize;
        let stamp = self.step + 1;
        let first = self.moved_in.get(slot).is_some_and(|&m| m != stamp);
        let logged = slot as u32 & self.track_mask == 0
            || (!self.pending.is_empty() && self.sample.position_of(slot).is_some());
        let before = if first && logged {
            self.table().aabbs().get(slot).copied()
        } else {
            None
        };
        self.active.set_aabb(id, aabb)?;
        if first {
            self.moved_in[slot] = stamp;
            self.moved_count += 1;
            if let Some(before) = before {
                self.moves.push((slot as u32, before));
            }
        }
        Ok(())
    }

    fn set_aabbs(&mut self, moves: &[(ProxyId, Aabb)]) -> Result<()> {
        // Only the tracked slots (a few hundred, and the trial sample while a round is under
        // way) are checked, counted once and logged with the box before the move, in one pass
        // while those boxes are still in the table; the others are only counted, and the
        // active algorithm checks every id. A stale or repeated id may thus inflate the moved
        // count of a step: a statistic, never the output. Most moves cost the wrapper a mask
        // test (35 instructions each when every move was checked and de-duplicated).
        let stamp = self.step + 1;
        let mask = self.track_mask;
        let table = self.active.proxies();
        let sampling = !self.pending.is_empty();
        let mut tracked = 0usize;
        for &(id, _) in moves {
            let slot = id.index() as usize;
            if slot as u32 & mask != 0 && !(sampling && self.sample.position_of(slot).is_some()) {
                continue;
            }
            tracked += 1;
            // A stale id is left for the active algorithm to report.
            let Ok(slot) = table.index_of(id) else {
                continue;
            };
            if self.moved_in[slot] != stamp {
                self.moved_in[slot] = stamp;
                self.moved_count += 1;
                self.moves.push((slot as u32, *table.aabb(slot)));
            }
        }
        self.moved_count += moves.len() - tracked;
        self.active.set_aabbs(moves)
    }

    fn remove_with(&mut self, id: ProxyId, report: bool) -> Result<()> {
        self.active.remove_with(id, report)?;
        self.removed += 1;
        if !report {
            self.removed_silently.push(id.index());
        }
        Ok(())
    }

    fn set_filter(&mut self, id: ProxyId, filter: CollisionFilter) -> Result<()> {
        self.active.set_filter(id, filter)
    }

    fn set_kind(&mut self, id: ProxyId, kind: ProxyKind) -> Result<()> {
        self.active.set_kind(id, kind)
    }

    fn report_pairs_again(&mut self, id: ProxyId) -> Result<()> {
        self.active.report_pairs_again(id)
    }

    fn set_fat_margin(&mut self, margin: f32) -> Result<()> {
        self.active.set_fat_margin(margin)?;
        self.fat_margin = margin;
        Ok(())
    }

    fn try_update(&mut self, events: &mut PairEvents) -> Result<()> {
        let start = self.clock.seconds();
        let mut inner_events = std::mem::take(&mut self.inner_events);
        let result = self.active.try_update(&mut inner_events);
        let inner_seconds = self.clock.seconds() - start;
        if self.recent.len() < RECENT_STEPS {
            self.recent.push(inner_seconds);
        } else {
            self.recent[self.recent_next] = inner_seconds;
        }
        self.recent_next = (self.recent_next + 1) % RECENT_STEPS;
        if let Err(error) = result {
            // The active algorithm dropped its pairs on the pair limit; so does the mirror,
            // and no round runs until an update succeeds, since a switch hands over a pair
            // set that must equal ours.
            self.pairs.clear();
            events.clear();
            self.inner_events = inner_events;
            self.moves.clear();
            self.moved_count = 0;
            self.inserted.clear();
            self.removed = 0;
            self.removed_silently.clear();
            return Err(error);
        }
        self.drop_pairs_of_removed_silently();
        // Slot order, so that the pair set and the events do not depend on the inner
        // algorithm. (Ids are ours: the events need no mapping.)
        let key = |p: &Pair| pair_key(p.a.index(), p.b.index());
        inner_events.begun.sort_unstable_by_key(key);
        inner_events.ended.sort_unstable_by_key(key);
        for pair in &inner_events.ended {
            self.pairs.remove_key(key(pair));
        }
        for pair in &inner_events.begun {
            // The active algorithm holds at most `PairSet::MAX_LEN` pairs, so neither can we.
            let _ = self.pairs.insert_key(key(pair));
        }
        std::mem::swap(events, &mut inner_events);
        self.inner_events = inner_events;
        self.step_seconds += self.clock.seconds() - start;
        self.step += 1;

        self.measure_stats();
        std::mem::swap(&mut self.last_motion, &mut self.moves);
        self.moves.clear();
        self.moved_count = 0;
        self.track_mask = ((self.table().len() / 256).next_power_of_two() - 1) as u32;
        self.last_inserted.clear();
        self.last_inserted.extend(
            self.inserted
                .iter()
                .copied()
                .filter(|&slot| self.active.proxies().is_live(slot as usize)),
        );
        self.inserted.clear();
        self.removed = 0;
        if self
            .probation
            .as_ref()
            .is_some_and(|p| self.step >= p.until)
        {
            self.end_probation();
        }
        if !self.pending.is_empty() {
            self.continue_round();
        } else if self.candidates.len() > 1 {
            // A changed scene starts a round at once if the budget covers every round so
            // far: the new one is the only overdraft. (In a growing scene the statistics
            // change every few steps, while a round costs many of its early, cheap steps.)
            // A shift of regime starts one whatever the budget: one slow trial early on (a
            // machine's hiccup) must not keep the wrong algorithm for the rest of the run.
            let changed = self.stats.differs_from(&self.stats_at_trial, 1.0)
                && self.step >= self.last_round + self.options.min_trial_interval
                && (self.trial_seconds <= self.options.trial_budget * self.step_seconds
                    || self.stats.differs_from(&self.stats_at_trial, SHIFT)
                    || self.options.policy == SwitchPolicy::RoundRobin);
            if self.step >= self.next_trial || changed {
                // Its trials start next step, once the moves of its sample are logged.
                self.start_round();
            }
        }
        Ok(())
    }

    fn clear(&mut self) {
        self.pairs.clear();
        self.active.clear();
        self.removed_silently.clear();
        self.moved_in.iter_mut().for_each(|m| *m = 0);
        self.moves.clear();
        self.moved_count = 0;
        self.last_motion.clear();
        self.inserted.clear();
        self.last_inserted.clear();
        self.removed = 0;
        self.pending.clear();
        self.results.clear();
        self.best = None;
        self.unconfirmed = None;
        self.recent.clear();
        self.recent_next = 0;
        self.active_trial = None;
        self.benched.clear();
        self.probation = None;
    }

    fn proxies(&self) -> &ProxyTable {
        self.active.proxies()
    }

    fn pair_set(&self) -> &PairSet {
        &self.pairs
    }

    fn set_pair_limit(&mut self, limit: Option<usize>) {
        self.pair_limit = limit;
        self.active.set_pair_limit(limit);
    }

    fn diagnostics(&self) -> Diagnostics<'_> {
        let (choosing_seconds, updating_seconds) = self.trial_overhead();
        Diagnostics {
            switches: &self.log,
            choice_overhead: Some(ChoiceOverhead {
                choosing_seconds,
                updating_seconds,
            }),
        }
    }

    fn memory_bytes(&self) -> usize {
        self.pairs.memory_bytes()
            + self.active.memory_bytes()
            + self.moved_in.capacity() * 8
            + (self.moves.capacity() + self.last_motion.capacity()) * 28
    }

    fn query_aabb_with(
        &self,
        aabb: &Aabb,
        filter: CollisionFilter,
        visitor: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) {
        self.active.query_aabb_with(aabb, filter, visitor);
    }

    fn raycast_with(
        &self,
        ray: &Ray,
        filter: CollisionFilter,
        visitor: &mut dyn FnMut(RayHit) -> ControlFlow<()>,
    ) {
        self.active.raycast_with(ray, filter, visitor);
    }

    fn raycast_closest(&self, ray: &Ray, filter: CollisionFilter) -> Option<RayHit> {
        // Same ids, so the inner tie rule (smallest slot) is ours.
        self.active.raycast_closest(ray, filter)
    }
}

#[cfg(test)]
mod tests;
