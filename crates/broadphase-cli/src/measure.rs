//! One algorithm on one scene: the thesis's per-step measurements (ch. 4.1).

use std::time::Instant;

use broadphase::verify::SplitMix64;
use broadphase::{Aabb, BroadPhase, CollisionFilter, Pair, PairEvents, ProxyId, Ray, RayHit, Vec3};
use broadphase_sim::{narrow_phase, Scene, World};
use indicatif::ProgressBar;

use crate::stats::{summarize, Summary};

/// Per-step measurements of one algorithm on one scene. Times are milliseconds per step.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// The algorithm's name.
    pub algorithm: String,
    /// Objects in the scene (terrain and ground not counted).
    pub objects: usize,
    /// Measured steps.
    pub steps: usize,
    /// Handing the scene's new boxes to the algorithm (`set_aabb`, churn).
    pub update: Summary,
    /// The broad phase proper (`update`).
    pub broad: Summary,
    /// Exact shape tests of the reported pairs.
    pub narrow: Summary,
    /// The sum of the three.
    pub total: Summary,
    /// Random box queries and ray casts, when asked for.
    pub queries: Option<Summary>,
    /// Mean pairs reported per step (possible collisions).
    pub possible_mean: f64,
    /// Mean pairs whose shapes intersect per step (actual collisions).
    pub actual_mean: f64,
    /// Bytes of the structure per proxy after the last step.
    pub bytes_per_proxy: f64,
    /// Pairs reported at each measured step, to check algorithms against each other.
    pub pair_counts: Vec<usize>,
    /// What `adaptive` switched to, when and why (empty for the other algorithms).
    pub switches: Vec<broadphase::SwitchRecord>,
}

/// Runs `name` on `scene`: warm-up steps, then measured steps; `queries` random box queries
/// and ray casts per step are timed apart when non-zero.
pub fn measure(
    name: &str,
    options: &broadphase::AlgorithmOptions,
    scene: &Scene,
    queries: usize,
    progress: &ProgressBar,
) -> anyhow::Result<Measurement> {
    let mut world = World::new(scene)?;
    let mut bp = crate::algorithms::create(name, options)?;
    let mut ids: Vec<ProxyId> = Vec::with_capacity(world.len());
    let mut object_of_slot: Vec<u32> = Vec::with_capacity(world.len());
    let remember = |object_of_slot: &mut Vec<u32>, id: ProxyId, object: usize| {
        let slot = id.index() as usize;
        if object_of_slot.len() <= slot {
            object_of_slot.resize(slot + 1, u32::MAX);
        }
        object_of_slot[slot] = object as u32;
    };
    for i in 0..world.len() {
        let id = bp.insert(world.aabbs()[i], world.kind(i), CollisionFilter::ALL)?;
        remember(&mut object_of_slot, id, i);
        ids.push(id);
    }
    let mut events = PairEvents::new();
    bp.update(&mut events);

    let mut query_rng = SplitMix64::new(scene.seed ^ 0x5EED);
    let mut query_out: Vec<ProxyId> = Vec::new();
    let mut hits: Vec<RayHit> = Vec::new();
    let mut pairs: Vec<Pair> = Vec::new();
    let steps = scene.steps;
    let (mut update, mut broad, mut narrow, mut total, mut query_times) = (
        Vec::with_capacity(steps),
        Vec::with_capacity(steps),
        Vec::with_capacity(steps),
        Vec::with_capacity(steps),
        Vec::with_capacity(steps),
    );
    let mut pair_counts = Vec::with_capacity(steps);
    let mut actual_sum = 0usize;
    let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
    for step in 0..scene.warmup + steps {
        world.step();
        let start = Instant::now();
        for &i in world.respawned() {
            let i = i as usize;
            bp.remove(ids[i])?;
            ids[i] = bp.insert(world.aabbs()[i], world.kind(i), CollisionFilter::ALL)?;
            remember(&mut object_of_slot, ids[i], i);
        }
        for &i in world.moving() {
            bp.set_aabb(ids[i as usize], world.aabbs()[i as usize])?;
        }
        let moved = Instant::now();
        bp.update(&mut events);
        let updated = Instant::now();
        bp.pairs(&mut pairs);
        let actual = narrow_phase::count_collisions(
            &world,
            pairs.iter().map(|p| {
                (
                    object_of_slot[p.a.index() as usize],
                    object_of_slot[p.b.index() as usize],
                )
            }),
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
            update.push(ms(start, moved));
            broad.push(ms(moved, updated));
            narrow.push(ms(updated, narrowed));
            total.push(ms(start, narrowed));
            query_times.push(ms(narrowed, queried));
            pair_counts.push(pairs.len());
            actual_sum += actual;
        }
        progress.inc(1);
    }
    let possible_mean = pair_counts.iter().sum::<usize>() as f64 / steps as f64;
    Ok(Measurement {
        algorithm: name.to_string(),
        objects: scene.objects,
        steps,
        update: summarize(&mut update),
        broad: summarize(&mut broad),
        narrow: summarize(&mut narrow),
        total: summarize(&mut total),
        queries: (queries > 0).then(|| summarize(&mut query_times)),
        possible_mean,
        actual_mean: actual_sum as f64 / steps as f64,
        bytes_per_proxy: bp.memory_bytes() as f64 / world.len().max(1) as f64,
        pair_counts,
        switches: bp.switch_log().to_vec(),
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
