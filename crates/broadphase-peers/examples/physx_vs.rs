//! PhysX's standalone broad phases beside three of the library's algorithms on the bench
//! scene (broadphase-sim's bouncing boxes: N boxes, half extents 0.25–1.5, 40 units³ per
//! box, speeds up to 10 units/s, 60 steps/s), in one process.
//!
//! `cargo run --release -p broadphase-peers --features physx --example physx_vs -- [N,N,...] [steps]`
//!
//! Prints the median over the steps of: `update` alone; `set_aabbs` of every box plus
//! `update`; for the PhysX peers, the part of `update` inside PhysX, the part filtering
//! PhysX's candidates to the exact pairs, the candidates, and how many of them are not exact
//! pairs ("extra"). Then the time of the first update (every box new), and the pair count and
//! `memory_bytes` after the last step. A report, not a test: nothing is asserted but that
//! every algorithm ends with the same pair count.

use std::time::{Duration, Instant};

use broadphase::{create, BroadPhase, CollisionFilter, PairEvents, ProxyId, ProxyKind};
use broadphase_peers::{PhysxBroadPhase, PhysxKind, PhysxStats};
use broadphase_sim::{BouncingBoxes, BouncingBoxesConfig};

/// The CPU's model name, family and model, from /proc/cpuinfo.
fn cpu_model() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        info.lines()
            .find(|line| line.split(':').next().map(str::trim) == Some(name))
            .and_then(|line| line.split(':').nth(1))
            .map(|value| value.trim().to_string())
    };
    match (field("model name"), field("cpu family"), field("model")) {
        (Some(name), Some(family), Some(model)) => {
            format!("{name} (family {family}, model {model})")
        }
        (Some(name), _, _) => name,
        _ => "unknown CPU".to_string(),
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

struct Row {
    name: String,
    first: f64,
    update: f64,
    step: f64,
    pairs: usize,
    memory: usize,
    /// Medians of PhysX's time, the filter's time, and candidates beyond the exact pairs.
    physx: Option<(f64, f64, usize, usize)>,
}

/// Runs the scene through `bp`; `stats` reads the PhysX figures after each update.
fn run<B: BroadPhase + ?Sized>(
    bp: &mut B,
    objects: usize,
    steps: usize,
    stats: impl Fn(&B) -> Option<PhysxStats>,
) -> Row {
    let mut scene = BouncingBoxes::new(&BouncingBoxesConfig {
        objects,
        ..Default::default()
    })
    .expect("valid scene");
    let ids: Vec<ProxyId> = scene
        .aabbs()
        .iter()
        .map(|aabb| {
            bp.insert(*aabb, ProxyKind::Dynamic, CollisionFilter::ALL)
                .unwrap()
        })
        .collect();
    let mut events = PairEvents::new();
    let start = Instant::now();
    bp.update(&mut events);
    let first = ms(start.elapsed());
    let (mut updates, mut totals) = (Vec::new(), Vec::new());
    let (mut physx, mut filter) = (Vec::new(), Vec::new());
    let (mut candidates, mut extra) = (Vec::new(), Vec::new());
    let mut moves = Vec::with_capacity(objects);
    for _ in 0..steps {
        scene.step();
        moves.clear();
        moves.extend(ids.iter().copied().zip(scene.aabbs().iter().copied()));
        let start = Instant::now();
        bp.set_aabbs(&moves).unwrap();
        let set = Instant::now();
        bp.update(&mut events);
        let end = Instant::now();
        updates.push(ms(end - set));
        totals.push(ms(end - start));
        if let Some(s) = stats(bp) {
            physx.push(ms(s.physx));
            filter.push(ms(s.filter));
            candidates.push(s.candidates as f64);
            extra.push((s.candidates - s.pairs) as f64);
        }
    }
    let physx = (!physx.is_empty()).then(|| {
        (
            median(&mut physx),
            median(&mut filter),
            median(&mut candidates) as usize,
            median(&mut extra) as usize,
        )
    });
    Row {
        name: String::new(),
        first,
        update: median(&mut updates),
        step: median(&mut totals),
        pairs: bp.pair_count(),
        memory: bp.memory_bytes(),
        physx,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sizes: Vec<usize> = args
        .get(1)
        .map_or("3000,30000", String::as_str)
        .split(',')
        .map(|n| n.parse().expect("object counts, comma-separated"))
        .collect();
    let steps: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100);
    println!(
        "CPU: {} ({} threads visible)",
        cpu_model(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!("bench scene (bouncing boxes, all moving), {steps} steps; median ms per step");
    for objects in sizes {
        println!();
        println!("N = {objects}");
        println!(
            "{:<20} {:>9} {:>9} {:>11} {:>9} {:>9} {:>11} {:>6} {:>9} {:>8}",
            "algorithm",
            "update",
            "set+upd",
            "1st update",
            "physx",
            "filter",
            "candidates",
            "extra",
            "pairs",
            "MiB"
        );
        let mut rows = Vec::new();
        for kind in [
            PhysxKind::Sap,
            PhysxKind::Mbp,
            PhysxKind::Abp,
            PhysxKind::ParallelAbp,
        ] {
            let mut bp = PhysxBroadPhase::new(kind).expect("PhysX");
            let mut row = run(&mut bp, objects, steps, |bp| Some(bp.stats()));
            row.name = kind.name().to_string();
            rows.push(row);
        }
        for name in ["sort-and-sweep", "sap", "dynamic-tree"] {
            let mut bp = create(name, &Default::default()).expect("known algorithm");
            let mut row = run(bp.as_mut(), objects, steps, |_| None);
            row.name = name.to_string();
            rows.push(row);
        }
        for row in &rows {
            let (physx, filter, candidates, extra) = match row.physx {
                Some((p, f, c, e)) => (
                    format!("{p:.3}"),
                    format!("{f:.3}"),
                    c.to_string(),
                    e.to_string(),
                ),
                None => Default::default(),
            };
            println!(
                "{:<20} {:>9.3} {:>9.3} {:>11.3} {:>9} {:>9} {:>11} {:>6} {:>9} {:>8.2}",
                row.name,
                row.update,
                row.step,
                row.first,
                physx,
                filter,
                candidates,
                extra,
                row.pairs,
                row.memory as f64 / (1024.0 * 1024.0)
            );
        }
        let pairs = rows[0].pairs;
        assert!(
            rows.iter().all(|row| row.pairs == pairs),
            "the algorithms disagree on the pair count"
        );
    }
}
