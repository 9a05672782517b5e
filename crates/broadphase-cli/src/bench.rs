//! `broadphase bench`: every algorithm on the same moving scene, timed per step.

use std::process::ExitCode;
use std::time::Instant;

use broadphase::verify::SplitMix64;
use broadphase::{
    Aabb, BroadPhase, CollisionFilter, PairEvents, ProxyId, ProxyKind, Ray, RayHit, Vec3,
};
use broadphase_sim::{BouncingBoxes, BouncingBoxesConfig};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use crate::stats::summarize;

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A table for people.
    Table,
    /// One JSON array of objects for scripts.
    Json,
}

/// Options of `broadphase bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Number of objects; a comma-separated list runs each size.
    #[arg(long, default_value = "5000", value_delimiter = ',')]
    objects: Vec<usize>,
    /// Measured steps.
    #[arg(long, default_value_t = 100)]
    steps: usize,
    /// Unmeasured steps before the measured ones.
    #[arg(long, default_value_t = 10)]
    warmup: usize,
    /// Comma-separated algorithms (default: all).
    #[arg(long)]
    algorithms: Option<String>,
    /// Random seed of the scene.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Fastest object speed, units per second (steps are 1/60 s; boxes are 0.5 to 3 units).
    #[arg(long, default_value_t = 10.0)]
    max_speed: f32,
    /// Also time this many random box queries and ray casts per step.
    #[arg(long, default_value_t = 0)]
    queries: usize,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Also print what `adaptive` switched to, when and why (to stderr).
    #[arg(long)]
    verbose: bool,
}

/// One algorithm at one size. Times are milliseconds per step.
#[derive(Debug, Clone, Serialize)]
pub struct BenchRow {
    pub algorithm: String,
    pub objects: usize,
    pub steps: usize,
    /// Time in `set_aabb` calls (per-proxy maintenance).
    pub set_aabb_ms_median: f64,
    /// Time in `update` (structure maintenance and pair finding).
    pub update_ms_median: f64,
    pub total_ms_median: f64,
    pub total_ms_mean: f64,
    pub total_ms_p95: f64,
    pub total_ms_max: f64,
    pub pairs_mean: f64,
    pub bytes_per_proxy: f64,
    /// Time of the random queries and ray casts, when `--queries` is set.
    pub query_ms_median: Option<f64>,
    #[serde(skip)]
    pair_counts: Vec<usize>,
}

pub fn run(args: &BenchArgs) -> anyhow::Result<ExitCode> {
    let names = crate::parse_algorithms(&args.algorithms)?;
    if args.objects.is_empty() || args.objects.contains(&0) {
        anyhow::bail!("--objects must be at least 1");
    }
    if args.steps == 0 {
        anyhow::bail!("--steps must be at least 1");
    }
    if !(args.max_speed >= 0.0 && args.max_speed.is_finite()) {
        anyhow::bail!("--max-speed must be a finite non-negative number");
    }
    let total_steps = (names.len() * args.objects.len() * (args.steps + args.warmup)) as u64;
    let progress = ProgressBar::new(total_steps);
    progress.set_style(
        ProgressStyle::with_template("{msg:>20} [{bar:30}] {pos}/{len} steps")
            .expect("valid template"),
    );
    let mut rows = Vec::new();
    let mut disagreements = Vec::new();
    for &objects in &args.objects {
        let first_row = rows.len();
        for name in &names {
            progress.set_message(format!("{name} {objects}"));
            let row = bench_one(name, objects, args, &progress)?;
            if let Some(reference) = rows.get(first_row) {
                let reference: &BenchRow = reference;
                if reference.pair_counts != row.pair_counts {
                    disagreements.push(format!(
                        "{} and {} report different pair counts at {objects} objects",
                        reference.algorithm, row.algorithm
                    ));
                }
            }
            rows.push(row);
        }
    }
    progress.finish_and_clear();
    match args.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&rows)?),
        Format::Table => print_table(&rows),
    }
    for d in &disagreements {
        eprintln!("error: {d}");
    }
    Ok(if disagreements.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn bench_one(
    name: &str,
    objects: usize,
    args: &BenchArgs,
    progress: &ProgressBar,
) -> anyhow::Result<BenchRow> {
    let mut bp = broadphase::create(name, &Default::default())?;
    let mut scene = BouncingBoxes::new(&BouncingBoxesConfig {
        objects,
        max_speed: args.max_speed,
        seed: args.seed,
        ..Default::default()
    })?;
    let ids: Vec<ProxyId> = scene
        .aabbs()
        .iter()
        .map(|aabb| bp.insert(*aabb, ProxyKind::Dynamic, CollisionFilter::ALL))
        .collect::<Result<_, _>>()?;
    let mut events = PairEvents::new();
    bp.update(&mut events);
    let mut query_rng = SplitMix64::new(args.seed ^ 0x5EED);
    let mut query_out: Vec<ProxyId> = Vec::new();
    let mut hits: Vec<RayHit> = Vec::new();

    let mut set_times = Vec::with_capacity(args.steps);
    let mut update_times = Vec::with_capacity(args.steps);
    let mut totals = Vec::with_capacity(args.steps);
    let mut query_times = Vec::with_capacity(args.steps);
    let mut pair_counts = Vec::with_capacity(args.steps);
    for step in 0..args.warmup + args.steps {
        scene.step();
        let start = Instant::now();
        for (id, aabb) in ids.iter().zip(scene.aabbs()) {
            bp.set_aabb(*id, *aabb)?;
        }
        let moved = Instant::now();
        bp.update(&mut events);
        let updated = Instant::now();
        if args.queries > 0 {
            run_queries(
                bp.as_ref(),
                scene.side(),
                args.queries,
                &mut query_rng,
                &mut query_out,
                &mut hits,
            )?;
        }
        let queried = Instant::now();
        if step >= args.warmup {
            let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
            set_times.push(ms(start, moved));
            update_times.push(ms(moved, updated));
            totals.push(ms(start, updated));
            query_times.push(ms(updated, queried));
            pair_counts.push(bp.pair_count());
        }
        progress.inc(1);
    }
    if args.verbose {
        for switch in bp.switch_log() {
            progress.suspend(|| {
                eprintln!(
                    "{name} {objects}: step {}: {} -> {}: {}",
                    switch.step, switch.from, switch.to, switch.reason
                )
            });
        }
    }
    let total = summarize(&mut totals);
    Ok(BenchRow {
        algorithm: name.to_string(),
        objects,
        steps: args.steps,
        set_aabb_ms_median: summarize(&mut set_times).median,
        update_ms_median: summarize(&mut update_times).median,
        total_ms_median: total.median,
        total_ms_mean: total.mean,
        total_ms_p95: total.p95,
        total_ms_max: total.max,
        pairs_mean: pair_counts.iter().sum::<usize>() as f64 / pair_counts.len() as f64,
        bytes_per_proxy: bp.memory_bytes() as f64 / objects as f64,
        query_ms_median: (args.queries > 0).then(|| summarize(&mut query_times).median),
        pair_counts,
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

fn print_table(rows: &[BenchRow]) {
    let with_queries = rows.iter().any(|r| r.query_ms_median.is_some());
    print!(
        "{:<16} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>7} {:>10} {:>8}",
        "algorithm",
        "objects",
        "set ms",
        "update ms",
        "total ms",
        "p95 ms",
        "max ms",
        "×best",
        "pairs",
        "B/proxy"
    );
    println!(
        "{}",
        if with_queries {
            format!(" {:>9}", "query ms")
        } else {
            String::new()
        }
    );
    for row in rows {
        let best = rows
            .iter()
            .filter(|r| r.objects == row.objects)
            .map(|r| r.total_ms_median)
            .fold(f64::INFINITY, f64::min);
        print!(
            "{:<16} {:>8} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>7.2} {:>10.1} {:>8.0}",
            row.algorithm,
            row.objects,
            row.set_aabb_ms_median,
            row.update_ms_median,
            row.total_ms_median,
            row.total_ms_p95,
            row.total_ms_max,
            row.total_ms_median / best.max(1e-9),
            row.pairs_mean,
            row.bytes_per_proxy
        );
        match row.query_ms_median {
            Some(q) => println!(" {q:>9.3}"),
            None => println!(),
        }
    }
}
