//! A pile of N falling boxes and balls on a ground, run with avian's own broad phase and with
//! this library's (same scene, same seed, two apps in one process stepped in turn),
//! headless, one fixed 60 Hz step per update. Prints the broad-phase time per step (avian's
//! `CollisionDiagnostics`, which both broad phases add their time to), over all steps and
//! over the second half (when the pile has mostly come to rest and few boxes move), the
//! whole update's time per step, the contact pairs, the ratios, and where our broad phase's
//! time went (`LibraryBroadPhase::phase_times`).
//!
//! ```text
//! cargo run --release -p broadphase-avian --example pile -- [N] [--steps S] [--algorithm A]
//! ```

mod scene;

use std::time::{Duration, Instant};

use avian3d::collision::CollisionDiagnostics;
use avian3d::prelude::*;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use broadphase_avian::{BroadPhasePlugin, LibraryBroadPhase, PhaseTimes, DEFAULT_ALGORITHM};

struct Args {
    bodies: usize,
    steps: usize,
    algorithm: String,
    only_ours: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        bodies: 1000,
        steps: 300,
        algorithm: DEFAULT_ALGORITHM.to_owned(),
        only_ours: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--steps" => {
                let v = it.next().ok_or("--steps needs a value")?;
                args.steps = v.parse().map_err(|_| format!("bad --steps {v}"))?;
            }
            "--algorithm" => args.algorithm = it.next().ok_or("--algorithm needs a name")?,
            "--only-ours" => args.only_ours = true,
            "-h" | "--help" => {
                return Err(format!(
                    "usage: pile [N] [--steps S] [--algorithm A] [--only-ours]\nalgorithms: {}",
                    broadphase::ALGORITHMS.join(", ")
                ))
            }
            n => args.bodies = n.parse().map_err(|_| format!("bad body count {n}"))?,
        }
    }
    if !broadphase::ALGORITHMS.contains(&args.algorithm.as_str()) {
        return Err(format!(
            "unknown algorithm {}; known: {}",
            args.algorithm,
            broadphase::ALGORITHMS.join(", ")
        ));
    }
    Ok(args)
}

/// Totals of one run.
#[derive(Default)]
struct Run {
    broad: Duration,
    /// The broad phase's time over the second half of the steps, when the pile has settled.
    broad_late: Duration,
    step: Duration,
    pairs: usize,
    touching: usize,
    steps: usize,
    /// Where our broad phase's time went (ours only).
    phases: Option<PhaseTimes>,
}

impl Run {
    fn ms(d: Duration, steps: usize) -> f64 {
        d.as_secs_f64() * 1e3 / steps.max(1) as f64
    }
}

/// A headless app with the pile scene, with avian's broad phase (`None`) or ours.
fn pile_app(ours: Option<&str>, bodies: usize) -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, TransformPlugin));
    match ours {
        None => app.add_plugins(PhysicsPlugins::default()),
        Some(name) => app.add_plugins(
            PhysicsPlugins::default()
                .build()
                .disable::<BvhBroadPhasePlugin>()
                .add(BroadPhasePlugin::new(name)),
        ),
    };
    app.insert_resource(Time::<Fixed>::from_hz(60.0));
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
        1.0 / 60.0,
    )));
    app.finish();
    app.cleanup();
    scene::spawn_ground(app.world_mut(), bodies);
    scene::spawn_pile(app.world_mut(), bodies, 42);
    app
}

/// Runs step `i` of `steps` of `app`, adding it to `total` and printing every tenth.
fn step(app: &mut App, label: &str, (i, steps): (usize, usize), total: &mut Run) {
    let start = Instant::now();
    app.update();
    let step = start.elapsed();
    let world = app.world();
    let broad = world.resource::<CollisionDiagnostics>().broad_phase;
    let graph = world.resource::<ContactGraph>();
    let pairs = graph.iter_active().count() + graph.iter_sleeping().count();
    let touching = graph.iter_active_touching().count() + graph.iter_sleeping_touching().count();
    total.broad += broad;
    if i >= steps / 2 {
        total.broad_late += broad;
    }
    total.step += step;
    total.pairs += pairs;
    total.touching += touching;
    total.steps += 1;
    if i % (steps / 10).max(1) == 0 || i + 1 == steps {
        println!(
            "  {label:>14} step {i:>4}: broad {:>8.3} ms, step {:>8.3} ms, pairs {pairs:>7}, touching {touching:>7}",
            broad.as_secs_f64() * 1e3,
            step.as_secs_f64() * 1e3,
        );
    }
}

/// Runs both apps (or ours alone) for `steps` steps, one step of each in turn, so that a
/// machine whose speed drifts (shared, throttled) weighs on both alike.
fn run(algorithm: &str, only_ours: bool, bodies: usize, steps: usize) -> (Option<Run>, Run) {
    let mut theirs = (!only_ours).then(|| (pile_app(None, bodies), Run::default()));
    let mut ours = (pile_app(Some(algorithm), bodies), Run::default());
    for i in 0..steps {
        if let Some((app, total)) = theirs.as_mut() {
            step(app, "avian bvh", (i, steps), total);
        }
        step(&mut ours.0, algorithm, (i, steps), &mut ours.1);
    }
    ours.1.phases = ours
        .0
        .world()
        .get_resource::<LibraryBroadPhase>()
        .map(LibraryBroadPhase::phase_times);
    (theirs.map(|(_, total)| total), ours.1)
}

fn main() {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(2);
        }
    };
    println!(
        "pile: {} bodies, {} steps, algorithm {}",
        args.bodies, args.steps, args.algorithm
    );
    let (theirs, ours) = run(&args.algorithm, args.only_ours, args.bodies, args.steps);
    let n = args.steps;
    let late = n - n / 2;
    println!("                 broad ms/step  2nd half  step ms/step  pairs/step  touching/step");
    let row = |name: &str, r: &Run| {
        println!(
            "{name:>16} {:>13.3} {:>9.3} {:>13.3} {:>11.1} {:>14.1}",
            Run::ms(r.broad, n),
            Run::ms(r.broad_late, late),
            Run::ms(r.step, n),
            r.pairs as f64 / n as f64,
            r.touching as f64 / n as f64
        );
    };
    if let Some(theirs) = &theirs {
        row("avian bvh", theirs);
    }
    row(&args.algorithm, &ours);
    if let Some(p) = ours.phases {
        let all = (p.read + p.update + p.edges).as_secs_f64().max(1e-12);
        let part = |d: Duration| (Run::ms(d, n), 100.0 * d.as_secs_f64() / all);
        let (read, update, edges) = (part(p.read), part(p.update), part(p.edges));
        println!(
            "ours, ms/step: reading colliders {:.3} ({:.0}%), library update {:.3} ({:.0}%), contact edges {:.3} ({:.0}%)",
            read.0, read.1, update.0, update.1, edges.0, edges.1
        );
    }
    if let Some(theirs) = &theirs {
        println!(
            "ratio (ours / avian): broad {:.3} (2nd half {:.3}), step {:.3}, pairs {:.3}",
            ours.broad.as_secs_f64() / theirs.broad.as_secs_f64(),
            ours.broad_late.as_secs_f64() / theirs.broad_late.as_secs_f64(),
            ours.step.as_secs_f64() / theirs.step.as_secs_f64(),
            ours.pairs as f64 / theirs.pairs.max(1) as f64
        );
    }
}
