//! Times `update()` per algorithm on two scenes with the same objects, motion and world: boxes of
//! one size, and boxes whose sizes spread over three orders of magnitude.
//!
//! ```text
//! cargo run --release -p broadphase --example size_spread -- [objects] [steps] [algorithms] [legacy]
//! ```
//!
//! Defaults: 10000 objects, 30 measured steps (after 5 warm-up steps), and
//! `sap,grid,hgrid,octree,loose-octree`. Both scenes fill a cube of side `(objects · 40)^(1/3)`
//! (74 at 10,000 objects, 159 at 100,000) and move every box by a random velocity (up to 0.05
//! per axis) each step, bouncing off the walls; centres, velocities and size draws are the same
//! in both scenes.
//!
//! The scenes are built so that only the spread of sizes differs, not the output:
//! - spread: edge lengths log-uniform in [0.009, 0.09] for 98.9% of the boxes, in [0.09, 0.9]
//!   for 1% and in [0.9, 9] for 0.1% (three orders of magnitude, few large boxes as in a game
//!   level). The largest edge, 9, stays inside the world: 1/8.2 of its side at 10,000 objects,
//!   1/18 at 100,000 (an earlier version spread edges over [0.1, 100], wider than the 10,000
//!   object world, so its pair count was 570 times the uniform scene's and no algorithm could
//!   stay near its uniform cost);
//! - uniform: every box gets the edge `u` with the same expected number of overlapping pairs at
//!   random positions, `8u³ = E[(a + b)³]` over two spread edges `a`, `b` (about 0.3). Both
//!   scenes then have about 0.007 overlapping partners per object; the table prints the two pair
//!   counts after the last step.
//!
//! `legacy` as the fourth argument runs the earlier scene (spread edges in [0.1, 100], uniform
//! edge 0.32). Prints the median CPU milliseconds per step of the measuring thread
//! (`set_aabb` for every box plus `update`; read from `/proc/thread-self/schedstat`, wall-clock
//! time where that is missing) and the spread/uniform ratio.

use std::time::Instant;

use broadphase::verify::SplitMix64;
use broadphase::{create, Aabb, BroadPhase, CollisionFilter, PairEvents, ProxyId, ProxyKind, Vec3};

/// Box sizes of the two scenes.
#[derive(Clone, Copy)]
struct Sizes {
    /// Smallest edge of the spread scene; edges reach 1000 times it.
    smallest: f32,
    /// Edge of the uniform scene; `None`: the edge with the spread scene's expected pair count.
    uniform: Option<f32>,
}

/// The edge `u` of equal cubes with the same expected number of overlapping pairs as the
/// given half-sizes, at uniformly random positions: two cubes of edges `a`, `b` overlap with
/// probability `(a + b)³ / volume`, and over independent draws
/// `E[(a + b)³] = 2·E[a³] + 6·E[a]·E[a²]`, which equals `8u³` for equal cubes.
fn matched_uniform_edge(half: &[Vec3]) -> f32 {
    let n = half.len().max(1) as f64;
    let moment = |k: i32| half.iter().map(|h| (2.0 * h.x as f64).powi(k)).sum::<f64>() / n;
    let expected = 2.0 * moment(3) + 6.0 * moment(1) * moment(2);
    (expected / 8.0).cbrt() as f32
}

struct Scene {
    centers: Vec<Vec3>,
    half: Vec<Vec3>,
    velocities: Vec<Vec3>,
    side: f32,
}

impl Scene {
    fn new(objects: usize, sizes: Sizes, spread: bool, seed: u64) -> Self {
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
            let edge = sizes.smallest * 10f32.powf(decade + v);
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
        if !spread {
            let edge = sizes
                .uniform
                .unwrap_or_else(|| matched_uniform_edge(&scene.half));
            scene
                .half
                .iter_mut()
                .for_each(|h| *h = Vec3::splat(edge * 0.5));
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

/// This thread's CPU time in nanoseconds (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)` on Linux,
/// exact to the nanosecond, unlike `/proc/thread-self/schedstat`, which only advances at
/// scheduler ticks), so that the medians do not count time spent waiting for a core on a
/// shared machine; wall-clock time elsewhere.
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
fn cpu_nanos(_wall: &Instant) -> f64 {
    #[repr(C)]
    struct Timespec {
        seconds: i64,
        nanos: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, time: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut time = Timespec {
        seconds: 0,
        nanos: 0,
    };
    // SAFETY: `time` is a valid, writable `struct timespec` (two 64-bit fields on 64-bit
    // Linux) and the clock id is a constant Linux defines.
    let status = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut time) };
    assert_eq!(status, 0, "clock_gettime failed");
    time.seconds as f64 * 1e9 + time.nanos as f64
}

/// Wall-clock nanoseconds since `wall`, where the thread CPU clock is not read.
#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
fn cpu_nanos(wall: &Instant) -> f64 {
    wall.elapsed().as_secs_f64() * 1e9
}

/// Median ms per step and the pair count at the end.
fn time(name: &str, objects: usize, sizes: Sizes, spread: bool, steps: usize) -> (f64, usize) {
    let mut scene = Scene::new(objects, sizes, spread, 7);
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
    let sizes = match args.get(4).map(String::as_str) {
        Some("legacy") => Sizes {
            smallest: 0.1,
            uniform: Some(0.1 * 10f32.powf(0.5)),
        },
        _ => Sizes {
            smallest: 0.009,
            uniform: None,
        },
    };
    let side = (objects as f32 * 40.0).cbrt();
    let uniform_edge = sizes
        .uniform
        .unwrap_or_else(|| matched_uniform_edge(&Scene::new(objects, sizes, true, 7).half));
    println!("{objects} objects, {steps} steps, median CPU ms/step (set_aabb all + update)");
    println!(
        "world side {side:.1}; spread edges {:.3}..{:.1} (largest = side / {:.1}); uniform edge {uniform_edge:.3}",
        sizes.smallest,
        sizes.smallest * 1000.0,
        side / (sizes.smallest * 1000.0)
    );
    println!(
        "{:<14} {:>12} {:>12} {:>8} {:>14} {:>14}",
        "algorithm", "uniform ms", "spread ms", "ratio", "uniform pairs", "spread pairs"
    );
    for name in algorithms.split(',') {
        let (uniform, uniform_pairs) = time(name, objects, sizes, false, steps);
        let (spread, spread_pairs) = time(name, objects, sizes, true, steps);
        println!(
            "{name:<14} {uniform:>12.3} {spread:>12.3} {:>8.2} {uniform_pairs:>14} {spread_pairs:>14}",
            spread / uniform
        );
    }
}
