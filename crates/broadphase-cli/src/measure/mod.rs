//! One algorithm on one scene: the per-step measurements of [Zych16, ch. 4.1], and the
//! columns a measured run is written as.

mod columns;
pub mod noise;
pub mod stats;

pub use columns::{
    fastest_total, phase_children, phase_values, run_fields, run_values, unmeasured,
};

use std::time::Instant;

use broadphase::verify::SplitMix64;
use broadphase::{Aabb, BroadPhase, CollisionFilter, Pair, PairEvents, ProxyId, Ray, RayHit, Vec3};
use broadphase_sim::{narrow_phase, Scene, World, WorldProxies};
use indicatif::ProgressBar;

use crate::options::budget::Budget;

use stats::{summarize, Summary};

/// Per-step measurements of one algorithm on one scene. Times are milliseconds per step.
#[derive(Debug, Clone, Default)]
pub struct Measurement {
    /// The algorithm's name.
    pub algorithm: String,
    /// Objects in the scene (terrain and ground not counted).
    pub objects: usize,
    /// Measured steps.
    pub steps: usize,
    /// Handing the scene's moved boxes to the algorithm (`set_aabbs`, churn): `set_aabbs_ms`.
    pub set_aabbs: Summary,
    /// The broad phase proper (`BroadPhase::update`): `update_ms`.
    pub update: Summary,
    /// Exact shape tests of the reported pairs whose objects moved (the others keep their
    /// result: [`narrow_phase::ContactCache`]); zero when [`Settings::narrow`] is off.
    pub narrow: Summary,
    /// The narrow phase ran ([`Settings::narrow`]): `narrow` and `actual_pairs_mean` hold
    /// measurements.
    pub narrow_phase: bool,
    /// The sum of the three.
    pub total: Summary,
    /// Random box queries and ray casts, when asked for.
    pub queries: Option<Summary>,
    /// Mean pairs reported per step (possible collisions): `possible_pairs_mean`.
    pub possible_pairs_mean: f64,
    /// Mean pairs whose shapes intersect per step (actual collisions): `actual_pairs_mean`.
    pub actual_pairs_mean: f64,
    /// Bytes of the structure per proxy after the last step.
    pub bytes_per_proxy: f64,
    /// Pairs reported at each measured step, to check algorithms against each other.
    pub pair_counts: Vec<usize>,
    /// What `adaptive` switched to, when and why (empty for the other algorithms).
    pub switches: Vec<broadphase::adaptive::SwitchRecord>,
    /// Per phase of a phased scene, in order (empty without phases).
    pub phases: Vec<PhaseMeasurement>,
    /// The measured step (0-based) at which the run stopped because the broad phase of three
    /// steps in a row took longer than the limit, and that step's broad-phase milliseconds;
    /// the summaries cover the steps before.
    pub stopped: Option<(usize, f64)>,
    /// For `adaptive`: seconds spent choosing and seconds in updates.
    pub choice_overhead: Option<broadphase::ChoiceOverhead>,
    /// With `bench --rounds R > 1`: each round's `total_ms_median`, in the order run.
    pub round_totals: Vec<f64>,
}

impl Measurement {
    /// The spread of the run's total step time, to judge whether the machine was busy.
    pub fn spread(&self) -> noise::Spread {
        noise::Spread {
            name: self.algorithm.clone(),
            median: self.total.median,
            min: self.total.min,
            p95: self.total.p95,
            rounds: self.round_totals.clone(),
            // A phased scene's steps differ by design (calm, then a burst): only its rounds
            // say whether the machine was busy.
            samples: if self.phases.is_empty() {
                self.steps
            } else {
                0
            },
        }
    }
}

impl Measurement {
    /// The sum of the measured steps' total times (`total_ms_sum`).
    pub fn total_ms_sum(&self) -> f64 {
        self.total.mean * self.steps as f64
    }
}

/// The measured steps of one phase of a scene.
#[derive(Debug, Clone, Default)]
pub struct PhaseMeasurement {
    /// The phase's name.
    pub name: String,
    /// Its steps.
    pub steps: usize,
    /// Milliseconds per step, all three parts.
    pub total: Summary,
    /// The sum of the phase's step times in milliseconds.
    pub total_ms: f64,
    /// Objects in the world at the phase's last step (terrain and ground included).
    pub objects_at_end: usize,
}

/// What a measured run does besides the world's step, the sync and the update, and when it
/// stops early.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// Random box queries and ray casts per measured step, timed apart (none when zero).
    pub queries: usize,
    /// A step whose broad phase (sync and update) took longer than this many milliseconds,
    /// and the two before it, end the run early (see [`Measurement::stopped`]).
    pub max_step_ms: f64,
    /// Take the reported pairs through the narrow phase (exact shape tests) at each measured
    /// step. Off for scenes so large that the narrow phase, the same for every algorithm,
    /// would take most of the run: `narrow_ms` and `actual_pairs` are then missing and
    /// `total_ms` is the broad phase alone.
    pub narrow: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            queries: 0,
            max_step_ms: f64::INFINITY,
            narrow: true,
        }
    }
}

/// Runs `name` on `scene`: warm-up steps (the world's step, the sync and the algorithm's
/// update only, see `StepWork`), then measured steps, with what `settings` adds.
pub fn measure(
    name: &str,
    options: &broadphase::AlgorithmOptions,
    scene: &Scene,
    settings: &Settings,
    progress: &ProgressBar,
) -> anyhow::Result<Measurement> {
    measure_until(name, options, scene, settings, None, progress)
}

/// [`measure`], also stopped (as too slow) when the clock passes `deadline`.
pub fn measure_until(
    name: &str,
    options: &broadphase::AlgorithmOptions,
    scene: &Scene,
    settings: &Settings,
    deadline: Option<Instant>,
    progress: &ProgressBar,
) -> anyhow::Result<Measurement> {
    let Settings {
        queries,
        max_step_ms,
        narrow,
    } = *settings;
    let budget = Budget::available();
    let objects = scene.max_objects().saturating_add(scene.terrain_boxes);
    let reserved = objects as u128 * BYTES_PER_OBJECT
        + (scene.warmup as u128 + scene.steps as u128) * BYTES_PER_STEP;
    budget.check(
        &format!(
            "{name} on {} over {}",
            crate::console::count(objects, "object"),
            crate::console::count(scene.warmup + scene.steps, "step")
        ),
        reserved,
    )?;
    let mut world = World::new(scene)?;
    let mut bp = crate::options::algorithms::create(name, options)?;
    bp.set_pair_limit(Some(budget.pair_limit(reserved)));
    let too_many_pairs = |e: broadphase::Error| {
        anyhow::anyhow!(
            "{name}: {e}: the scene's boxes overlap in more pairs than the memory this machine \
             can give now ({}) holds",
            budget.describe()
        )
    };
    let mut proxies = WorldProxies::insert_all(&world, bp.as_mut())?;
    let mut contacts = narrow_phase::ContactCache::default();
    let mut events = PairEvents::new();
    bp.try_update(&mut events).map_err(too_many_pairs)?;
    let mut queried = Queries::new(scene.seed, queries);
    let mut pairs: Vec<Pair> = Vec::new();
    let mut samples = Samples::new(scene);
    let mut stopped = None;
    let mut slow = SlowSteps::default();
    let last = scene.warmup + scene.steps;
    for step in 0..last {
        let work = StepWork::at(step, scene.warmup, narrow);
        world.step();
        let start = Instant::now();
        proxies.sync(&world, bp.as_mut())?;
        let moved = Instant::now();
        // Every step, warm-up included: the algorithms' incremental state follows the world.
        bp.try_update(&mut events).map_err(too_many_pairs)?;
        let updated = Instant::now();
        let mut actual = 0;
        if work.record || work.narrow {
            bp.pairs(&mut pairs);
        }
        if work.narrow {
            actual = contacts.count(
                &world,
                pairs
                    .iter()
                    .map(|p| (proxies.object(p.a), proxies.object(p.b))),
            );
        }
        // Without the narrow phase, reading the pairs to count them is not timed.
        let narrowed = if narrow { Instant::now() } else { updated };
        if work.record {
            queried.run(bp.as_ref(), world.side())?;
        } else {
            queried.skip(world.side());
        }
        let times = [start, moved, updated, narrowed, Instant::now()];
        if work.record {
            samples.record(&times, pairs.len(), actual, &world);
        }
        progress.inc(1);
        // Only the broad phase counts against the limit: the narrow phase is the same for
        // every exact algorithm and says nothing of this one's speed (on a dense scene it
        // alone can pass the limit and would stop every algorithm).
        let broad_ms = ms(start, updated);
        if slow.note(broad_ms, max_step_ms) || deadline.is_some_and(|d| Instant::now() > d) {
            stopped = Some((step.saturating_sub(scene.warmup), broad_ms));
            progress.inc((last - step - 1) as u64);
            break;
        }
    }
    let diagnostics = bp.diagnostics();
    Ok(Measurement {
        algorithm: name.to_string(),
        objects: scene.objects,
        bytes_per_proxy: bp.memory_bytes() as f64 / world.live_count().max(1) as f64,
        switches: diagnostics.switches.to_vec(),
        stopped,
        choice_overhead: diagnostics.choice_overhead,
        narrow_phase: narrow,
        ..samples.summarize(scene, queries > 0)
    })
}

/// What a step of [`measure_until`] runs besides the world's step, the sync and the update,
/// which every step runs: the algorithms' incremental state must see every step.
///
/// The world moves the same whatever the algorithm and the narrow phase report
/// (`World::step` reads neither; sphere bounces use a private sort-and-sweep), so a warm-up
/// step skips the pairs, the narrow phase and the queries, whose times would be thrown away.
/// A measured step reads the pairs (to count them) even when the narrow phase is off.
/// The last warm-up step still runs the narrow phase, untimed, so that the first measured
/// step finds the [`narrow_phase::ContactCache`] warm as every later one does: the cache
/// re-tests only the pairs with an object that moved in the last step and keeps the others'
/// results, so a cold cache would re-test every resting pair at the first measured step and
/// make its `narrow_ms` an outlier. (Its kept results are only right when it is called every
/// step from its first call on, which the measured steps do.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct StepWork {
    /// Take the reported pairs through the narrow phase (`ContactCache::count`).
    narrow: bool,
    /// A measured step: run the queries, record the times and counts.
    record: bool,
}

impl StepWork {
    /// The work of step `step` (0-based, warm-up included) after `warmup` warm-up steps;
    /// without `narrow`, no step runs the narrow phase.
    fn at(step: usize, warmup: usize, narrow: bool) -> Self {
        let record = step >= warmup;
        Self {
            narrow: narrow && (record || step + 1 == warmup),
            record,
        }
    }
}

/// The processor's model name (`model name` of /proc/cpuinfo), or "unknown".
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|line| line.starts_with("model name"))
                .and_then(|line| line.split(':').nth(1))
                .map(|model| model.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// Bytes a measured run takes per object, beyond its pairs: the world's object, the proxy,
/// the largest algorithm's structure (a grid's cells, a tree's nodes) with growth slack.
const BYTES_PER_OBJECT: u128 = 4096;

/// Bytes a measured run keeps per step: the samples of every column.
const BYTES_PER_STEP: u128 = 96;

/// Counts the steps in a row whose broad phase took longer than the limit.
#[derive(Debug, Default)]
struct SlowSteps {
    in_a_row: u32,
}

impl SlowSteps {
    /// Notes a step's broad-phase milliseconds; true at the third slow step in a row (one
    /// slow step may be a one-off: a rebuild, a switch).
    fn note(&mut self, broad_ms: f64, limit_ms: f64) -> bool {
        self.in_a_row = if broad_ms > limit_ms {
            self.in_a_row + 1
        } else {
            0
        };
        self.in_a_row == 3
    }
}

/// Milliseconds from `a` to `b`.
fn ms(a: Instant, b: Instant) -> f64 {
    (b - a).as_secs_f64() * 1e3
}

/// The measured steps' times and counts, as they come.
struct Samples {
    set_aabbs: Vec<f64>,
    update: Vec<f64>,
    narrow: Vec<f64>,
    total: Vec<f64>,
    queries: Vec<f64>,
    pair_counts: Vec<usize>,
    actual_sum: usize,
    /// The phase of each measured step (empty without phases).
    phase_of_step: Vec<usize>,
    /// Live objects at each phase's last step so far.
    phase_objects: Vec<usize>,
}

impl Samples {
    fn new(scene: &Scene) -> Self {
        let steps = scene.steps;
        Self {
            set_aabbs: Vec::with_capacity(steps),
            update: Vec::with_capacity(steps),
            narrow: Vec::with_capacity(steps),
            total: Vec::with_capacity(steps),
            queries: Vec::with_capacity(steps),
            pair_counts: Vec::with_capacity(steps),
            actual_sum: 0,
            phase_of_step: Vec::with_capacity(steps),
            phase_objects: vec![0; scene.phases.len()],
        }
    }

    /// One measured step: its instants (start, boxes handed over, updated, narrow phase
    /// done, queries done), pairs reported and pairs in contact.
    fn record(&mut self, times: &[Instant; 5], pairs: usize, actual: usize, world: &World) {
        let [start, moved, updated, narrowed, queried] = *times;
        self.set_aabbs.push(ms(start, moved));
        self.update.push(ms(moved, updated));
        self.narrow.push(ms(updated, narrowed));
        self.total.push(ms(start, narrowed));
        self.queries.push(ms(narrowed, queried));
        self.pair_counts.push(pairs);
        self.actual_sum += actual;
        if let Some(phase) = world.phase() {
            self.phase_of_step.push(phase);
            self.phase_objects[phase] = world.live_count();
        }
    }

    /// The summaries (the fields of a [`Measurement`] the samples give).
    fn summarize(mut self, scene: &Scene, with_queries: bool) -> Measurement {
        let steps = self.total.len();
        Measurement {
            steps,
            set_aabbs: summarize(&mut self.set_aabbs),
            update: summarize(&mut self.update),
            narrow: summarize(&mut self.narrow),
            queries: with_queries.then(|| summarize(&mut self.queries)),
            possible_pairs_mean: self.pair_counts.iter().sum::<usize>() as f64
                / steps.max(1) as f64,
            actual_pairs_mean: self.actual_sum as f64 / steps.max(1) as f64,
            phases: self.phases(scene),
            total: summarize(&mut self.total),
            pair_counts: self.pair_counts,
            ..Measurement::default()
        }
    }

    /// Each phase's step times (call before the total times are sorted).
    fn phases(&self, scene: &Scene) -> Vec<PhaseMeasurement> {
        scene
            .phases
            .iter()
            .enumerate()
            .map(|(index, phase)| {
                let mut times: Vec<f64> = self
                    .phase_of_step
                    .iter()
                    .zip(&self.total)
                    .filter(|(&p, _)| p == index)
                    .map(|(_, &t)| t)
                    .collect();
                let total_ms = times.iter().sum();
                PhaseMeasurement {
                    name: phase.display_name(index),
                    steps: times.len(),
                    total: summarize(&mut times),
                    total_ms,
                    objects_at_end: self.phase_objects[index],
                }
            })
            .collect()
    }
}

/// `count` random box queries and ray casts per step, seeded from the scene.
struct Queries {
    count: usize,
    rng: SplitMix64,
    out: Vec<ProxyId>,
    hits: Vec<RayHit>,
}

impl Queries {
    fn new(seed: u64, count: usize) -> Self {
        Self {
            count,
            rng: SplitMix64::new(seed ^ 0x5EED),
            out: Vec::new(),
            hits: Vec::new(),
        }
    }

    /// Draws a step's queries without running them (a warm-up step), so that the measured
    /// steps query the same boxes and rays as when the warm-up ran them.
    fn skip(&mut self, side: f32) {
        for _ in 0..self.count {
            draw_query(&mut self.rng, side);
        }
    }

    fn run(&mut self, bp: &dyn BroadPhase, side: f32) -> anyhow::Result<()> {
        if self.count == 0 {
            return Ok(());
        }
        run_queries(
            bp,
            side,
            self.count,
            &mut self.rng,
            &mut self.out,
            &mut self.hits,
        )
    }
}

fn run_queries(
    bp: &dyn BroadPhase,
    side: f32,
    count: usize,
    rng: &mut SplitMix64,
    out: &mut Vec<ProxyId>,
    hits: &mut Vec<RayHit>,
) -> anyhow::Result<()> {
    for _ in 0..count {
        let (center, direction) = draw_query(rng, side);
        let query = Aabb::from_center_half_extents(center, Vec3::splat(2.0))?;
        bp.query_aabb(&query, CollisionFilter::ALL, out);
        let ray = Ray::new(center, direction, side * 0.25)?;
        bp.raycast(&ray, CollisionFilter::ALL, hits);
    }
    Ok(())
}

/// A query's random center in the world and its ray's direction.
fn draw_query(rng: &mut SplitMix64, side: f32) -> (Vec3, Vec3) {
    let center = Vec3::new(
        rng.range(0.0, side),
        rng.range(0.0, side),
        rng.range(0.0, side),
    );
    let direction = Vec3::new(
        rng.range(-1.0, 1.0),
        rng.range(-1.0, 1.0),
        rng.range(-1.0, 1.0),
    );
    (center, direction)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phased_scene_is_judged_by_its_rounds_only() {
        let mut m = Measurement {
            algorithm: "grid".into(),
            steps: 100,
            ..Default::default()
        };
        m.total = Summary {
            median: 1.0,
            min: 0.1,
            p95: 20.0,
            max: 30.0,
            mean: 2.0,
        };
        assert!(noise::assess(&[m.spread()]).is_some());
        m.phases = vec![PhaseMeasurement::default()];
        assert_eq!(noise::assess(&[m.spread()]), None);
        m.round_totals = vec![1.0, 3.0];
        assert!(noise::assess(&[m.spread()]).is_some());
    }

    #[test]
    fn three_slow_steps_in_a_row_stop_a_run() {
        let mut slow = SlowSteps::default();
        let stops: Vec<bool> = [6.0, 6.0, 1.0, 6.0, 6.0, 5.0, 6.0, 6.0, 6.0]
            .iter()
            .map(|&ms| slow.note(ms, 5.0))
            .collect();
        // A step at the limit is not slow; only the ninth step is the third in a row.
        assert_eq!(stops.iter().position(|&s| s), Some(8));
        assert_eq!(stops.iter().filter(|&&s| s).count(), 1);
    }

    #[test]
    fn warm_up_steps_skip_the_narrow_phase_but_the_last() {
        let work = |step| {
            let w = StepWork::at(step, 3, true);
            (w.narrow, w.record)
        };
        let plan: Vec<_> = (0..5).map(work).collect();
        assert_eq!(
            plan,
            [
                (false, false),
                (false, false),
                (true, false),
                (true, true),
                (true, true)
            ]
        );
        assert_eq!(
            StepWork::at(0, 0, true),
            StepWork {
                narrow: true,
                record: true
            }
        );
        // Without the narrow phase no step runs it, the measured ones still record.
        assert!((0..5).all(|step| !StepWork::at(step, 3, false).narrow));
        assert!(StepWork::at(3, 3, false).record);
    }

    /// The measured steps report what a run with the narrow phase at every step reports:
    /// the same pairs, and as many shapes in contact as testing every pair of every measured
    /// step finds (a cache left stale by the skipped warm-up steps would miscount).
    #[test]
    fn measured_steps_count_as_with_a_narrow_phase_at_every_step() {
        let scene = Scene::from_toml_str(
            "objects = 400\ndensity = 0.3\ngravity = 30.0\nmean_speed = 3.0\n\
             sleep_speed = 2.0\nremove_rate = 0.01\nshapes = \"sphere,box\"\n\
             warmup = 40\nsteps = 15\n",
            "test.toml",
        )
        .unwrap();
        let options = broadphase::AlgorithmOptions::default();
        let progress = ProgressBar::hidden();
        let settings = Settings {
            queries: 3,
            ..Settings::default()
        };
        let m = measure("sort-and-sweep", &options, &scene, &settings, &progress).unwrap();
        // Without the narrow phase: the same pairs, no narrow-phase figures.
        let broad_only = Settings {
            narrow: false,
            ..settings
        };
        let b = measure(
            "sort-and-sweep",
            &options,
            &scene,
            &broad_only,
            &ProgressBar::hidden(),
        )
        .unwrap();
        assert_eq!(b.pair_counts, m.pair_counts);
        assert!(m.narrow_phase && !b.narrow_phase);
        assert_eq!((b.actual_pairs_mean, b.narrow.max), (0.0, 0.0));

        let mut world = World::new(&scene).unwrap();
        let mut bp = broadphase::SortAndSweep::new();
        let mut proxies = WorldProxies::insert_all(&world, &mut bp).unwrap();
        let mut events = PairEvents::new();
        bp.update(&mut events);
        let (mut pairs, mut pair_counts, mut actual) = (Vec::new(), Vec::new(), 0);
        for step in 0..scene.warmup + scene.steps {
            world.step();
            proxies.sync(&world, &mut bp).unwrap();
            bp.update(&mut events);
            bp.pairs(&mut pairs);
            let objects = pairs
                .iter()
                .map(|p| (proxies.object(p.a), proxies.object(p.b)));
            let contacts = narrow_phase::count_collisions(&world, objects);
            if step >= scene.warmup {
                pair_counts.push(pairs.len());
                actual += contacts;
            }
        }
        assert!(actual > 0 && actual < pair_counts.iter().sum(), "{actual}");
        assert_eq!((m.steps, m.stopped), (scene.steps, None));
        assert_eq!(m.pair_counts, pair_counts);
        assert_eq!(m.actual_pairs_mean, actual as f64 / scene.steps as f64);
        assert_eq!(progress.position(), (scene.warmup + scene.steps) as u64);
    }
}
