//! Times `update()` per algorithm on two scenes with the same objects, motion and world: boxes of
//! one size, and boxes whose sizes spread over three orders of magnitude.
//!
//! ```text
//! cargo run --release -p broadphase --example size_spread -- [objects] [steps] [algorithms]
//! ```
//!
//! Defaults: 10000 objects, 30 measured steps (after 5 warm-up steps), and
//! `sap,grid,hgrid,octree,loose-octree`. The spread scene draws edge lengths log-uniformly in
//! [0.1, 1] for 98.9% of the boxes, in [1, 10] for 1% and in [10, 100] for 0.1% (three orders
//! of magnitude, few large boxes so that the pair count stays moderate); the uniform scene gives
//! every box the median edge, 0.1 · 10^0.5 ≈ 0.32. Both fill a cube
//! of side `(objects · 40)^(1/3)` and move every box by a random velocity each step, bouncing
//! off the walls. Prints the median CPU milliseconds per step of the measuring thread
//! (`set_aabb` for every box plus `update`; read from `/proc/thread-self/schedstat`, wall-clock
//! time where that is missing) and the spread/uniform ratio.

use std::time::Instant;

use broadphase::verify::SplitMix64;
use broadphase::{create, Aabb, BroadPhase, CollisionFilter, PairEvents, ProxyId, ProxyKind, Vec3};

struct Scene {
    centers: Vec<Vec3>,
    half: Vec<Vec3>,
    velocities: Vec<Vec3>,
    side: f32,
}

impl Scene {
    fn new(objects: usize, spread: bool, seed: u64) -> Self {
        let mut rng = SplitMix64::new(seed);
        let side = (objects as f32 * 40.0).cbrt();
        let mut scene = Scene {
            centers: Vec::with_capacity(objects),
            half: Vec::with_capacity(objects),
            velocities: Vec::with_capacity(objects),
            side,
        };
        for _ in 0..objects {
            // Same random draws in both scenes, so only the sizes differ.
            let (class, v) = (rng.unit(), rng.unit());
            let decade = if class < 0.001 {
                2.0
            } else if class < 0.011 {
                1.0
            } else {
                0.0
            };
            let edge = if spread {
                0.1 * 10f32.powf(decade + v)
            } else {
                0.1 * 10f32.powf(0.5)
            };
            let center = Vec3::new(
                rng.range(0.0, side),
                rng.range(0.0, side),
                rng.range(0.0, side),
            );
            let velocity = Vec3::new(
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
            ) * 0.05;
            scene.centers.push(center);
            scene.half.push(Vec3::splat(edge * 0.5));
            scene.velocities.push(velocity);
        }
        scene
    }

    fn aabb(&self, i: usize) -> Aabb {
        Aabb::new(
            self.centers[i] - self.half[i],
            self.centers[i] + self.half[i],
        )
        .expect("finite box")
    }

    fn step(&mut self) {
        for i in 0..self.centers.len() {
            let mut c = self.centers[i] + self.velocities[i];
            for axis in 0..3 {
                if c[axis] < 0.0 || c[axis] > self.side {
                    self.velocities[i][axis] = -self.velocities[i][axis];
                    c[axis] = c[axis].clamp(0.0, self.side);
                }
            }
            self.centers[i] = c;
        }
    }
}

/// This thread's CPU time in nanoseconds (Linux `schedstat`), so that the medians do not count
/// time spent waiting for a core on a shared machine; wall-clock time elsewhere.
fn cpu_nanos(wall: &Instant) -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse::<f64>().ok())
        .unwrap_or_else(|| wall.elapsed().as_secs_f64() * 1e9)
}

/// Median ms per step and the pair count at the end.
fn time(name: &str, objects: usize, spread: bool, steps: usize) -> (f64, usize) {
    let mut scene = Scene::new(objects, spread, 7);
    let mut bp: Box<dyn BroadPhase> =
        create(name, &Default::default()).expect("registered algorithm");
    let ids: Vec<ProxyId> = (0..objects)
        .map(|i| {
            bp.insert(scene.aabb(i), ProxyKind::Dynamic, CollisionFilter::ALL)
                .expect("insert")
        })
        .collect();
    let mut events = PairEvents::new();
    bp.update(&mut events);
    let mut samples = Vec::with_capacity(steps);
    let wall = Instant::now();
    for step in 0..steps + 5 {
        scene.step();
        let start = cpu_nanos(&wall);
        for (i, &id) in ids.iter().enumerate() {
            bp.set_aabb(id, scene.aabb(i)).expect("live id");
        }
        bp.update(&mut events);
        if step >= 5 {
            samples.push((cpu_nanos(&wall) - start) * 1e-6);
        }
    }
    samples.sort_by(f64::total_cmp);
    (samples[samples.len() / 2], bp.pair_count())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let objects = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let steps = args
        .get(2)
        .and_then(|a| a.parse().ok())
        .unwrap_or(30usize)
        .max(1);
    let algorithms = args
        .get(3)
        .cloned()
        .unwrap_or_else(|| "sap,grid,hgrid,octree,loose-octree".to_string());
    println!("{objects} objects, {steps} steps, median CPU ms/step (set_aabb all + update)");
    println!(
        "{:<14} {:>12} {:>12} {:>8} {:>14} {:>14}",
        "algorithm", "uniform ms", "spread ms", "ratio", "uniform pairs", "spread pairs"
    );
    for name in algorithms.split(',') {
        let (uniform, uniform_pairs) = time(name, objects, false, steps);
        let (spread, spread_pairs) = time(name, objects, true, steps);
        println!(
            "{name:<14} {uniform:>12.3} {spread:>12.3} {:>8.2} {uniform_pairs:>14} {spread_pairs:>14}",
            spread / uniform
        );
    }
}
