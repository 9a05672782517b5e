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

use std::ops::ControlFlow;
use std::time::Instant;

use crate::backend::pair_key;
use crate::backend::pair_tracker::Pair;
use crate::backend::{PairSet, ProxyTable};
use crate::query::{Ray, RayHit};
use crate::registry::create_candidate;
use crate::{
    create, Aabb, AlgorithmOptions, BroadPhase, ChoiceOverhead, CollisionFilter, Diagnostics,
    Error, PairEvents, ProxyId, ProxyKind, Result,
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
    /// Trials may take at most this fraction of the time spent in steps. In a scene that
    /// changes steadily (a growing world) rounds use all of it, so it is a floor on the
    /// overhead there: 0.05 by default (0.1 spent most of the overhead margin the adaptive broad phase is allowed).
    pub trial_budget: f64,
    /// Candidates whose cost grows with n² (`brute-force`, `masking`) are tried only up to
    /// this many proxies.
    pub quadratic_limit: usize,
    /// How trials choose.
    pub policy: SwitchPolicy,
    /// Trials run on this many proxies, those nearest a typical proxy (a cube of the scene at
    /// its local density), and their times are scaled to the proxy count: a round costs
    /// little even with many proxies.
    pub trial_proxies: usize,
}

impl Default for AdaptiveOptions {
    fn default() -> Self {
        Self {
            candidates: Vec::new(),
            initial: "sort-and-sweep".to_string(),
            min_trial_interval: 8,
            max_trial_interval: 1024,
            switch_margin: 0.8,
            trial_budget: 0.05,
            quadratic_limit: 1500,
            policy: SwitchPolicy::Measured,
            trial_proxies: 512,
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
    /// Inserts plus removals over the proxy count.
    churn: f64,
    /// Overlapping pairs per proxy (density).
    pairs_per_proxy: f64,
}

impl SceneStats {
    /// True when a statistic changed by more than its threshold times `scale`: 1 for a
    /// changed scene, [`SHIFT`] for a shift of regime (see [`Adaptive::update`]).
    fn differs_from(&self, other: &SceneStats, scale: f64) -> bool {
        let ratio = |a: f64, b: f64| (a.max(1e-9) / b.max(1e-9)).max(b.max(1e-9) / a.max(1e-9));
        ratio(self.proxies as f64, other.proxies as f64) > 1.0 + 0.5 * scale
            || (self.moved_fraction - other.moved_fraction).abs() > 0.25 * scale
            || (ratio(self.relative_speed, other.relative_speed) > 2.0 * scale
                && self.relative_speed.max(other.relative_speed) > 0.01)
            || (self.churn - other.churn).abs() > 0.02 * scale
            || (ratio(self.pairs_per_proxy, other.pairs_per_proxy) > 2.0 * scale
                && self.pairs_per_proxy.max(other.pairs_per_proxy) > 0.5)
    }
}

/// How much more than a change a shift of regime is (everything coming to rest, an
/// explosion, twice the proxies): it starts a round even when trials are over budget.
const SHIFT: f64 = 2.0;

/// An algorithm under trial, on a sample of the proxies, with the maps between its ids and
/// the adaptive broad phase's slots.
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
/// assert_eq!(bp.active_name(), "sort-and-sweep");
/// # let _ = a;
/// # Ok::<(), broadphase::Error>(())
/// ```
pub struct Adaptive {
    options: AdaptiveOptions,
    candidates: Vec<&'static str>,
    /// The pairs, changed in slot order: their order depends only on the boxes.
    pairs: PairSet,
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
    /// The fastest candidate of the round: name, step time, and the time to build it.
    best: Option<(&'static str, f64, f64)>,
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
    benched: Vec<(&'static str, u32, u32)>,
    /// The step at which the last round ended.
    last_round: u64,
    /// The proxies of the round under way.
    sample: TrialSample,
    /// The last switch, until the new algorithm's running cost is known.
    probation: Option<Probation>,
}

/// A switch on trial: if the new algorithm runs slower than the one it replaced did, the
/// switch is undone, and the new one's trials are corrected by what it really cost.
struct Probation {
    previous: &'static str,
    /// The replaced algorithm's running cost before the switch, seconds per step.
    previous_cost: f64,
    /// The new algorithm's trial time that won the switch.
    expected: f64,
    /// The step at which the new algorithm's running cost is judged.
    until: u64,
}

/// A candidate whose trial takes more than this many times the round's best sits out the
/// next rounds.
const HOPELESS: f64 = 3.0;

/// The proxies a round's trials run on.
struct TrialSample {
    /// The sampled slots, ascending.
    slots: Vec<u32>,
    /// Per slot: its position in `slots`, or [`OUTSIDE`]. Built once per round, so that a
    /// trial costs O(sample + moves), not O(proxies).
    position: Vec<u32>,
}

/// [`TrialSample::position`] of a slot left out of the trials.
const OUTSIDE: u32 = u32::MAX;

impl TrialSample {
    fn empty() -> Self {
        TrialSample {
            slots: Vec::new(),
            position: Vec::new(),
        }
    }

    /// The position of `slot` in the sample, if it is in it.
    #[inline]
    fn position_of(&self, slot: usize) -> Option<usize> {
        match self.position.get(slot) {
            Some(&p) if p != OUTSIDE => Some(p as usize),
            _ => None,
        }
    }
}

/// A switch must pay for itself within this many steps.
const PAYBACK_STEPS: f64 = 32.0;

/// The oldest "age", in steps of motion, given to a box when a trial is built.
const TRIAL_AGES: f32 = 16.0;

/// A number in [0, 1) that depends only on `x` (SplitMix64's finaliser).
fn spread(x: u64) -> f32 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 40) as f32 / (1u64 << 24) as f32
}

/// Steps of running cost kept for the active algorithm.
const RECENT_STEPS: usize = 15;

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
            active: algorithm,
            moved_in: Vec::new(),
            moves: Vec::new(),
            last_motion: Vec::new(),
            moved_count: 0,
            track_mask: 0,
            inserted: Vec::new(),
            last_inserted: Vec::new(),
            removed: 0,
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
            options,
        })
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

    fn measure_stats(&mut self) {
        let mut displacement = 0.0f64;
        let mut size = 0.0f64;
        // A few hundred moves tell the mean well enough.
        let stride = (self.moves.len() / 256).max(1);
        let table = self.table();
        for &(slot, before) in self.moves.iter().step_by(stride) {
            let after = table.aabb(slot as usize);
            displacement += (after.center() - before.center()).length() as f64;
            size += (after.extents().element_sum() / 3.0) as f64;
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

    /// Builds `name` on the current boxes, every proxy at once, numbered like the active
    /// algorithm's, and brings its pair set up to date: what a switch hands over. Its first
    /// events are dropped: the adaptive pair set already holds those pairs. `None` when
    /// `name` cannot be built with the same ids.
    fn load(&self, name: &str) -> Option<Box<dyn BroadPhase>> {
        let mut algorithm = create_candidate(name, &AlgorithmOptions::default()).ok()?;
        let table = self.table();
        if !algorithm.mirror_ids(table) {
            return None;
        }
        for slot in table.live_slots() {
            let aabb = *table.aabb(slot);
            let id = algorithm
                .insert(aabb, table.kind(slot), table.filter(slot))
                .ok()?;
            if id != table.id(slot) {
                return None; // mirror_ids broke its promise: keep the active algorithm
            }
        }
        algorithm.update(&mut PairEvents::new());
        Some(algorithm)
    }

    /// Times `name` on the current scene in steady state: builds it with every moved box
    /// set back along its last displacement by a spread of "ages" (0 to [`TRIAL_AGES`]
    /// steps, as if each had been moving that long since it was last reorganised: fat boxes
    /// then expire at their steady rate rather than all at once), moves every box to where
    /// it is now (untimed), then times five steps that continue the motion by the same
    /// displacement and insert again the proxies inserted during the last step (churn).
    /// Returns the median of the five, in seconds, scaled to every proxy.
    fn trial(&self, name: &str, sample: &TrialSample, give_up: f64) -> Option<(f64, f64)> {
        let build_start = Instant::now();
        let table = self.table();
        let mut inner = Inner {
            algorithm: create(name, &AlgorithmOptions::default()).ok()?,
            ids: Vec::new(),
            outer: Vec::new(),
        };
        // Per sampled proxy: its last displacement, and whether it was inserted last step.
        let m = sample.slots.len();
        let mut displacement: Vec<Option<crate::Vec3>> = vec![None; m];
        let mut is_new = vec![false; m];
        for &(slot, old) in &self.last_motion {
            let slot = slot as usize;
            if let Some(p) = sample.position_of(slot) {
                if table.is_live(slot) {
                    let new = table.aabb(slot);
                    displacement[p] = Some(new.center() - old.center());
                }
            }
        }
        let mut inserted = Vec::new();
        for &slot in &self.last_inserted {
            if let Some(p) = sample.position_of(slot as usize) {
                is_new[p] = true;
                inserted.push(slot as usize);
            }
        }
        // The sampled proxies that keep moving: slot and displacement.
        let moving: Vec<(usize, crate::Vec3)> = sample
            .slots
            .iter()
            .zip(&displacement)
            .zip(&is_new)
            .filter_map(|((&slot, d), &new)| match d {
                Some(d) if !new => Some((slot as usize, *d)),
                _ => None,
            })
            .collect();
        let at = |slot: usize, d: crate::Vec3, t: f32| -> Aabb {
            let now = *table.aabb(slot);
            Aabb::new(now.min() + d * t, now.max() + d * t).unwrap_or(now)
        };
        let mut sampled = 0usize;
        for (p, &slot) in sample.slots.iter().enumerate() {
            let slot = slot as usize;
            if !table.is_live(slot) {
                continue;
            }
            sampled += 1;
            if is_new[p] {
                continue;
            }
            let age = spread(slot as u64) * TRIAL_AGES;
            let aabb = match displacement[p] {
                Some(d) => at(slot, d, -age),
                None => *table.aabb(slot),
            };
            let (kind, filter) = (table.kind(slot), table.filter(slot));
            inner.insert(slot, aabb, kind, filter).ok()?;
        }
        let mut events = PairEvents::new();
        inner.algorithm.update(&mut events);
        // Proxies come and go during a round: scale by the count now.
        let scale = table.len() as f64 / sampled.max(1) as f64;
        let build = build_start.elapsed().as_secs_f64() * scale;
        // A region of m of the n boxes holds (m/n)^(2/3) as many box ends per unit of
        // length, and sap's cost per move grows with the box ends it passes.
        let step_scale = if name == "sap" {
            scale.powf(5.0 / 3.0)
        } else {
            scale
        };
        let catch_up_start = Instant::now();
        for &(slot, d) in &moving {
            inner
                .algorithm
                .set_aabb(inner.ids[slot], at(slot, d, 0.0))
                .ok()?;
        }
        inner.algorithm.update(&mut events);
        // The catch-up carries the boxes over TRIAL_AGES / 2 steps of motion on average: an
        // algorithm for which it costs more than that many hopeless steps is hopeless.
        let catch_up = catch_up_start.elapsed().as_secs_f64() * step_scale;
        if catch_up > give_up * f64::from(TRIAL_AGES) / 2.0 {
            return Some((catch_up, build));
        }
        let mut samples = [0.0f64; 5];
        for (k, sample) in samples.iter_mut().enumerate() {
            let start = Instant::now();
            for &slot in &inserted {
                if k > 0 {
                    inner.algorithm.remove(inner.ids[slot]).ok()?;
                }
                let (aabb, kind, filter) =
                    (*table.aabb(slot), table.kind(slot), table.filter(slot));
                inner.insert(slot, aabb, kind, filter).ok()?;
            }
            for &(slot, d) in &moving {
                let target = at(slot, d, (k + 1) as f32);
                inner.algorithm.set_aabb(inner.ids[slot], target).ok()?;
            }
            inner.algorithm.update(&mut events);
            *sample = start.elapsed().as_secs_f64();
            if k == 0 && *sample * step_scale > give_up {
                // Hopeless already: the rest of the samples would only confirm it.
                return Some((*sample * step_scale, build));
            }
        }
        samples.sort_by(f64::total_cmp);
        Some((samples[2] * step_scale, build))
    }

    /// The proxies of the next trials: all of them, or the `trial_proxies` whose centres are
    /// nearest (in the max norm) to the centre of a typical proxy: a cube of the scene where
    /// its proxies are, at their local density, whatever the scene's shape (a layer on the
    /// ground, a cluster). O(n), once per round; each trial then costs O(sample + moves).
    fn trial_sample(&self) -> TrialSample {
        let table = self.table();
        let n = table.len();
        let wanted = self.options.trial_proxies.max(1);
        let live: Vec<usize> = table.live_slots().collect();
        let mut sample = TrialSample::empty();
        sample.position = vec![OUTSIDE; table.slot_count()];
        if n <= 2 * wanted {
            sample.slots.extend(live.iter().map(|&slot| slot as u32));
        } else {
            let seed = table.aabb(live[live.len() / 2]).center();
            let distance = |slot: usize| (table.aabb(slot).center() - seed).abs().max_element();
            let mut distances: Vec<f32> = live.iter().map(|&slot| distance(slot)).collect();
            let (_, &mut radius, _) = distances.select_nth_unstable_by(wanted - 1, f32::total_cmp);
            sample.slots.extend(
                live.iter()
                    .filter(|&&slot| distance(slot) <= radius)
                    .map(|&slot| slot as u32),
            );
        }
        for (p, &slot) in sample.slots.iter().enumerate() {
            sample.position[slot as usize] = p as u32;
        }
        sample
    }

    /// The factor from `name`'s trial time to its running cost. An algorithm not yet seen
    /// running is assumed to scale from its trial (a small sample, in cache) to the whole
    /// scene at least as badly as the worst one seen so far: a switch bets a full build on it.
    fn correction(&self, name: &str) -> f64 {
        match self.corrections.iter().find(|(n, _)| *n == name) {
            Some(c) => c.1,
            None => self.corrections.iter().map(|c| c.1).fold(1.0, f64::max),
        }
    }

    /// The median of the active algorithm's recent update times, once there are enough.
    fn running_cost(&self) -> Option<f64> {
        if self.recent.len() < 5 {
            return None;
        }
        let mut sorted = self.recent.clone();
        sorted.sort_by(f64::total_cmp);
        Some(sorted[sorted.len() / 2])
    }

    /// Judges the last switch by the new algorithm's running cost: learns its correction, and
    /// goes back when it runs slower than the replaced algorithm did.
    fn end_probation(&mut self) {
        let (Some(probation), Some(running)) = (self.probation.take(), self.running_cost()) else {
            return;
        };
        let name = self.active_name();
        let factor =
            (self.correction(name) * running / probation.expected.max(1e-9)).clamp(0.1, 64.0);
        match self.corrections.iter_mut().find(|(n, _)| *n == name) {
            Some(c) => c.1 = factor,
            None => self.corrections.push((name, factor)),
        }
        if running <= probation.previous_cost {
            // Better than before, but slower than its trial promised: with that learnt,
            // the others may now look better; retry them at once.
            if running > 1.25 * probation.expected {
                self.next_trial = self.step;
            }
            return;
        }
        let load_start = Instant::now();
        let previous = self.load(probation.previous);
        // Going back is part of what choosing costs.
        let load_seconds = load_start.elapsed().as_secs_f64();
        self.trial_seconds += load_seconds;
        if let Some(inner) = previous {
            self.log.push(SwitchRecord {
                step: self.step,
                from: name,
                to: probation.previous,
                reason: format!(
                    "probation: {name} ran {:.3} ms per step (trial: {:.3} ms), {} had run {:.3} ms; loaded in {:.1} ms",
                    running * 1e3,
                    probation.expected * 1e3,
                    probation.previous,
                    probation.previous_cost * 1e3,
                    load_seconds * 1e3
                ),
            });
            self.active = inner;
            self.recent.clear();
            self.recent_next = 0;
            self.unconfirmed = None;
        }
    }

    /// Starts a trial round: the candidates to try, one per step, the active one included.
    fn start_round(&mut self) {
        let n = self.table().len();
        let active = self.active_name();
        let previous = std::mem::take(&mut self.results);
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
                for &c in self.candidates.iter().rev() {
                    if c == active || matches!(c, "brute-force" | "masking") && n > quadratic_limit
                    {
                        continue;
                    }
                    if let Some(b) = self.benched.iter_mut().find(|b| b.0 == c) {
                        if b.1 > 0 {
                            b.1 -= 1;
                            continue;
                        }
                    }
                    self.pending.push(c);
                }
                // Tried first (popped last): the active algorithm, then the fastest of the
                // last round, so that a hopeless candidate meets a tight give-up time early.
                let last = |name: &str| {
                    previous
                        .iter()
                        .find(|r| r.0 == name)
                        .map_or(f64::INFINITY, |r| r.1)
                };
                self.pending.sort_by(|a, b| last(b).total_cmp(&last(a)));
                self.pending.push(active);
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
        self.sample = self.trial_sample();
    }

    /// Runs the next trial of the round; after the last one, switches if a candidate won.
    fn continue_round(&mut self) {
        let start = Instant::now();
        if let Some(name) = self.pending.pop() {
            // A candidate already HOPELESS times slower than the round's best stops after one
            // timed step (the active one always runs in full: its trial calibrates).
            let give_up = match self.results.iter().map(|r| r.1).reduce(f64::min) {
                Some(best) if name != self.active_name() => HOPELESS * best / self.correction(name),
                _ => f64::INFINITY,
            };
            if let Some((raw, build)) = self.trial(name, &self.sample, give_up) {
                let is_active = name == self.active_name();
                if is_active {
                    self.active_trial = Some(raw);
                }
                let seconds = raw * self.correction(name);
                self.results.push((name, seconds));
                if !is_active && self.best.is_none_or(|(_, b, _)| seconds < b) {
                    self.best = Some((name, seconds, build));
                }
            }
        }
        let last = self.pending.is_empty();
        if last {
            self.finish_round();
        }
        self.trial_seconds += start.elapsed().as_secs_f64();
    }

    fn finish_round(&mut self) {
        let active_name = self.active_name();
        // The active algorithm is judged by what it really costs, and that teaches how far
        // its trials are off.
        if let (Some(trial), Some(running)) = (self.active_trial.take(), self.running_cost()) {
            let factor = (running / trial.max(1e-9)).clamp(0.1, 64.0);
            match self.corrections.iter_mut().find(|(n, _)| *n == active_name) {
                Some(c) => c.1 = factor,
                None => self.corrections.push((active_name, factor)),
            }
            if let Some(r) = self.results.iter_mut().find(|(n, _)| *n == active_name) {
                r.1 = running;
            }
        }
        let full_round = self.results.len() > 2;
        let fastest = self
            .results
            .iter()
            .map(|r| r.1)
            .fold(f64::INFINITY, f64::min);
        for &(name, seconds) in &self.results {
            if !full_round || name == active_name {
                continue;
            }
            let entry = match self.benched.iter().position(|b| b.0 == name) {
                Some(i) => &mut self.benched[i],
                None => {
                    self.benched.push((name, 0, 1));
                    self.benched.last_mut().expect("just pushed")
                }
            };
            if seconds > HOPELESS * fastest {
                entry.1 = entry.2;
                entry.2 = (entry.2 * 2).min(8);
            } else {
                *entry = (name, 0, 1);
            }
        }
        self.last_round = self.step;
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
        let best = self.best.take();
        // A switch must win by the margin, and save its own cost (building the winner on
        // every box) within [`PAYBACK_STEPS`] steps: nothing flaps between near-free choices.
        let candidate = match (best, active_time) {
            (Some((name, seconds, build)), Some(active))
                if seconds < self.options.switch_margin * active
                    && (active - seconds) * PAYBACK_STEPS > build =>
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
        let load_start = Instant::now();
        let winner = confirmed.and_then(|name| self.load(name));
        let load_ms = load_start.elapsed().as_secs_f64() * 1e3;
        let switched = match winner {
            Some(inner) => {
                let to = inner.name();
                self.log.push(SwitchRecord {
                    step: self.step,
                    from: active_name,
                    to,
                    reason: format!(
                        "n = {}, moving {:.0}%, speed/size {:.3}, churn {:.1}%, pairs/proxy {:.2}; trials: {}; loaded in {load_ms:.1} ms",
                        self.stats.proxies,
                        self.stats.moved_fraction * 100.0,
                        self.stats.relative_speed,
                        self.stats.churn * 100.0,
                        self.stats.pairs_per_proxy,
                        summary.join(", ")
                    ),
                });
                if self.options.policy == SwitchPolicy::Measured {
                    self.probation = match (self.running_cost(), best) {
                        (Some(before), Some((_, expected, _))) => Some(Probation {
                            previous: active_name,
                            previous_cost: before,
                            expected,
                            until: self.step + RECENT_STEPS as u64,
                        }),
                        _ => None,
                    };
                }
                self.active = inner;
                self.recent.clear();
                self.recent_next = 0;
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
        let id = self.active.insert(aabb, kind, filter)?;
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

    fn remove(&mut self, id: ProxyId) -> Result<()> {
        self.active.remove(id)?;
        self.removed += 1;
        Ok(())
    }

    fn update(&mut self, events: &mut PairEvents) {
        let start = Instant::now();
        let mut inner_events = std::mem::take(&mut self.inner_events);
        self.active.update(&mut inner_events);
        let inner_seconds = start.elapsed().as_secs_f64();
        if self.recent.len() < RECENT_STEPS {
            self.recent.push(inner_seconds);
        } else {
            self.recent[self.recent_next] = inner_seconds;
        }
        self.recent_next = (self.recent_next + 1) % RECENT_STEPS;
        // Slot order, so that the pair set and the events do not depend on the inner
        // algorithm. (Ids are ours: the events need no mapping.)
        let key = |p: &Pair| pair_key(p.a.index(), p.b.index());
        inner_events.begun.sort_unstable_by_key(key);
        inner_events.ended.sort_unstable_by_key(key);
        for pair in &inner_events.ended {
            self.pairs.remove_key(key(pair));
        }
        for pair in &inner_events.begun {
            self.pairs.insert_key(key(pair), 0);
        }
        std::mem::swap(events, &mut inner_events);
        self.inner_events = inner_events;
        self.step_seconds += start.elapsed().as_secs_f64();
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
    }

    fn clear(&mut self) {
        self.pairs.clear();
        self.active.clear();
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
mod tests {
    use super::*;

    fn stats(moved_fraction: f64, relative_speed: f64, pairs_per_proxy: f64) -> SceneStats {
        SceneStats {
            proxies: 1000,
            moved_fraction,
            relative_speed,
            churn: 0.0,
            pairs_per_proxy,
        }
    }

    #[test]
    fn a_shift_of_regime_is_a_change_twice_over() {
        let moving = stats(1.0, 0.5, 1.0);
        assert!(!moving.differs_from(&stats(0.9, 0.6, 1.5), 1.0));
        // A third fewer boxes moving: a change, not a shift.
        let slowing = stats(0.6, 0.5, 1.0);
        assert!(slowing.differs_from(&moving, 1.0));
        assert!(!slowing.differs_from(&moving, SHIFT));
        // Everything at rest, or pairs five times denser: a shift.
        assert!(stats(0.0, 0.0, 1.0).differs_from(&moving, SHIFT));
        assert!(stats(1.0, 0.5, 5.0).differs_from(&moving, SHIFT));
        // Speeds three times higher: a change only.
        let faster = stats(1.0, 1.5, 1.0);
        assert!(faster.differs_from(&moving, 1.0) && !faster.differs_from(&moving, SHIFT));
    }
}
