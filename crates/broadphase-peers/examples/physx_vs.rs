//! PhysX's standalone broad phases beside three of the library's algorithms on the bench
//! scene (broadphase-sim's bouncing boxes: N boxes, half extents 0.25–1.5, 40 units³ per
//! box, speeds up to 10 units/s, 60 steps/s), in one process.
//!
//! `cargo run --release -p broadphase-peers --features physx --example physx_vs -- [N,N,...] [steps]`
//!
//! Prints the median over the steps of: `update` alone; `set_aabbs` of every box plus
//! `update`; for the PhysX peers, the part of `update` inside PhysX and the part filtering
//! PhysX's candidates to the exact pairs, and candidates against exact pairs; and
//! `memory_bytes` at the end. A report, not a test: nothing is asserted but that every
//! algorithm ends with the same pair count.

use std::time::{Duration, Instant};

use broadphase::{create, BroadPhase, CollisionFilter, PairEvents, ProxyId, ProxyKind};
use broadphase_peers::{PhysxBroadPhase, PhysxKind, PhysxStats};
use broadphase_sim::{BouncingBoxes, BouncingBoxesConfig};

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|line| line.starts_with("model name"))
                .and_then(|line| line.split(':').nth(1))
                .map(|model| model.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".to_string())
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
    physx: Option<(f64, f64, usize)>,
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
    let (mut physx, mut filter, mut candidates) = (Vec::new(), Vec::new(), Vec::new());
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
        }
    }
    let extra = (!physx.is_empty()).then(|| {
        (
            median(&mut physx),
            median(&mut filter),
            median(&mut candidates) as usize,
        )
    });
    Row {
        name: String::new(),
        first,
        update: median(&mut updates),
        step: median(&mut totals),
        pairs: bp.pair_count(),
        memory: bp.memory_bytes(),
        physx: extra,
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
            "{:<20} {:>9} {:>9} {:>11} {:>9} {:>9} {:>11} {:>9} {:>8}",
            "algorithm",
            "update",
            "set+upd",
            "1st update",
            "physx",
            "filter",
            "candidates",
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
            let (physx, filter, candidates) = match row.physx {
                Some((p, f, c)) => (format!("{p:.3}"), format!("{f:.3}"), c.to_string()),
                None => ("".into(), "".into(), "".into()),
            };
            println!(
                "{:<20} {:>9.3} {:>9.3} {:>11.3} {:>9} {:>9} {:>11} {:>9} {:>8.2}",
                row.name,
                row.update,
                row.step,
                row.first,
                physx,
                filter,
                candidates,
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
