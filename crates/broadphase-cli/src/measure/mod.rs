//! One algorithm on one scene: the per-step measurements of [Zych16, ch. 4.1], and the
//! columns a measured run is written as.

mod columns;
pub mod stats;

pub use columns::{fastest_total, phase_children, phase_values, run_fields, run_values};

use std::time::Instant;

use broadphase::verify::SplitMix64;
use broadphase::{Aabb, BroadPhase, CollisionFilter, Pair, PairEvents, ProxyId, Ray, RayHit, Vec3};
use broadphase_sim::{narrow_phase, Scene, World, WorldProxies};
use indicatif::ProgressBar;

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
    /// result: [`narrow_phase::ContactCache`]).
    pub narrow: Summary,
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
    /// The measured step (0-based) at which the run stopped because three steps in a row
    /// took longer than the limit, and that step's milliseconds; the summaries cover the steps before.
    pub stopped: Option<(usize, f64)>,
    /// For `adaptive`: seconds spent choosing and seconds in updates.
    pub choice_overhead: Option<broadphase::ChoiceOverhead>,
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

/// Runs `name` on `scene`: warm-up steps, then measured steps; `queries` random box queries
/// and ray casts per step are timed apart when non-zero. A step slower than `max_step_ms`
/// and the two before it end the run early (see [`Measurement::stopped`]).
pub fn measure(
    name: &str,
    options: &broadphase::AlgorithmOptions,
    scene: &Scene,
    queries: usize,
    max_step_ms: f64,
    progress: &ProgressBar,
) -> anyhow::Result<Measurement> {
    measure_until(name, options, scene, queries, max_step_ms, None, progress)
}

/// [`measure`], also stopped (as too slow) when the clock passes `deadline`.
pub fn measure_until(
    name: &str,
    options: &broadphase::AlgorithmOptions,
    scene: &Scene,
    queries: usize,
    max_step_ms: f64,
    deadline: Option<Instant>,
    progress: &ProgressBar,
) -> anyhow::Result<Measurement> {
    let mut world = World::new(scene)?;
    let mut bp = crate::options::algorithms::create(name, options)?;
    let mut proxies = WorldProxies::insert_all(&world, bp.as_mut())?;
    let mut contacts = narrow_phase::ContactCache::default();
    let mut phase_of_step = Vec::with_capacity(scene.steps);
    let mut phase_objects = vec![0usize; scene.phases.len()];
    let mut events = PairEvents::new();
    bp.update(&mut events);

    let mut query_rng = SplitMix64::new(scene.seed ^ 0x5EED);
    let mut query_out: Vec<ProxyId> = Vec::new();
    let mut hits: Vec<RayHit> = Vec::new();
    let mut pairs: Vec<Pair> = Vec::new();
    let steps = scene.steps;
    let (mut set_aabbs, mut update, mut narrow, mut total, mut query_times) = (
        Vec::with_capacity(steps),
        Vec::with_capacity(steps),
        Vec::with_capacity(steps),
        Vec::with_capacity(steps),
        Vec::with_capacity(steps),
    );
    let mut pair_counts = Vec::with_capacity(steps);
    let mut actual_sum = 0usize;
    let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
    let mut stopped = None;
    let mut slow_steps = 0;
    for step in 0..scene.warmup + steps {
        world.step();
        let start = Instant::now();
        proxies.sync(&world, bp.as_mut())?;
        let moved = Instant::now();
        bp.update(&mut events);
        let updated = Instant::now();
        bp.pairs(&mut pairs);
        let actual = contacts.count(
            &world,
            pairs
                .iter()
                .map(|p| (proxies.object(p.a), proxies.object(p.b))),
        );
        let narrowed = Instant::now();
        if queries > 0 {
            run_queries(
                bp.as_ref(),
                world.side(),
                queries,
                &mut query_rng,
                &mut query_out,
                &mut hits,
            )?;
        }
        let queried = Instant::now();
        if step >= scene.warmup {
            set_aabbs.push(ms(start, moved));
            update.push(ms(moved, updated));
            narrow.push(ms(updated, narrowed));
            total.push(ms(start, narrowed));
            query_times.push(ms(narrowed, queried));
            pair_counts.push(pairs.len());
            actual_sum += actual;
            if let Some(phase) = world.phase() {
                phase_of_step.push(phase);
                phase_objects[phase] = world.live_count();
            }
        }
        progress.inc(1);
        // Three slow steps in a row: one slow step may be a one-off (a rebuild, a switch).
        let step_ms = ms(start, narrowed);
        slow_steps = if step_ms > max_step_ms {
            slow_steps + 1
        } else {
            0
        };
        if slow_steps == 3 || deadline.is_some_and(|d| Instant::now() > d) {
            stopped = Some((step.saturating_sub(scene.warmup), step_ms));
            progress.inc((scene.warmup + steps - step - 1) as u64);
            break;
        }
    }
    let steps = total.len();
    let possible_pairs_mean = pair_counts.iter().sum::<usize>() as f64 / steps.max(1) as f64;
    let phases = scene
        .phases
        .iter()
        .enumerate()
        .map(|(index, phase)| {
            let mut times: Vec<f64> = phase_of_step
                .iter()
                .zip(&total)
                .filter(|(&p, _)| p == index)
                .map(|(_, &t)| t)
                .collect();
            let total_ms = times.iter().sum();
            PhaseMeasurement {
                name: phase.display_name(index),
                steps: times.len(),
                total: summarize(&mut times),
                total_ms,
                objects_at_end: phase_objects[index],
            }
        })
        .collect();
    Ok(Measurement {
        algorithm: name.to_string(),
        objects: scene.objects,
        steps,
        set_aabbs: summarize(&mut set_aabbs),
        update: summarize(&mut update),
        narrow: summarize(&mut narrow),
        total: summarize(&mut total),
        queries: (queries > 0).then(|| summarize(&mut query_times)),
        possible_pairs_mean,
        actual_pairs_mean: actual_sum as f64 / steps.max(1) as f64,
        bytes_per_proxy: bp.memory_bytes() as f64 / world.live_count().max(1) as f64,
        pair_counts,
        switches: bp.diagnostics().switches.to_vec(),
        phases,
        stopped,
        choice_overhead: bp.diagnostics().choice_overhead,
    })
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
        let center = Vec3::new(
            rng.range(0.0, side),
            rng.range(0.0, side),
            rng.range(0.0, side),
        );
        let query = Aabb::from_center_half_extents(center, Vec3::splat(2.0))?;
        bp.query_aabb(&query, CollisionFilter::ALL, out);
        let direction = Vec3::new(
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
        );
        let ray = Ray::new(center, direction, side * 0.25)?;
        bp.raycast(&ray, CollisionFilter::ALL, hits);
    }
    Ok(())
}
