//! `broadphase bench`: every algorithm on the same moving scene, timed per step.

use std::process::ExitCode;

use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use crate::measure::{measure, Measurement};
use crate::scene_args::SceneArgs;

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
    /// Number of objects; a comma-separated list runs each size (default: the scene's, or
    /// 3000 without a scene file).
    #[arg(long, value_delimiter = ',')]
    objects: Vec<usize>,
    /// Comma-separated algorithms (default: all, peers included).
    #[arg(long)]
    algorithms: Option<String>,
    /// Also time this many random box queries and ray casts per step.
    #[arg(long, default_value_t = 0)]
    queries: usize,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Also print what `adaptive` switched to, when and why (to stderr).
    #[arg(long)]
    verbose: bool,
    /// `bvh`: build strategy (median, sah, bottom-up, insertion).
    #[arg(long, default_value = "median")]
    bvh_build: broadphase::BvhBuild,
    /// `bvh`: descend rule of the pair traversal (simultaneous, larger-volume).
    #[arg(long, default_value = "simultaneous")]
    bvh_descend: broadphase::DescendRule,
    /// `dynamic-tree`: leaf box margin (default: the library's).
    #[arg(long)]
    tree_margin: Option<f32>,
    #[command(flatten)]
    scene: SceneArgs,
}

/// The quick interactive run of `bench` without a scene file.
const INTERACTIVE_DEFAULTS: &[(&str, &str)] =
    &[("objects", "3000"), ("warmup", "10"), ("steps", "100")];

/// One algorithm at one size. Times are milliseconds per step.
#[derive(Debug, Clone, Serialize)]
pub struct BenchRow {
    pub algorithm: String,
    pub objects: usize,
    pub steps: usize,
    /// Time handing the new boxes to the algorithm (`set_aabb`, churn), median.
    pub set_aabb_ms_median: f64,
    /// Time in `update` (structure maintenance and pair finding), median.
    pub update_ms_median: f64,
    /// Time of the exact shape tests, median.
    pub narrow_ms_median: f64,
    pub total_ms_median: f64,
    pub total_ms_mean: f64,
    pub total_ms_p95: f64,
    pub total_ms_max: f64,
    pub pairs_mean: f64,
    pub collisions_mean: f64,
    pub bytes_per_proxy: f64,
    /// Time of the random queries and ray casts, when `--queries` is set.
    pub query_ms_median: Option<f64>,
}

impl From<&Measurement> for BenchRow {
    fn from(m: &Measurement) -> Self {
        Self {
            algorithm: m.algorithm.clone(),
            objects: m.objects,
            steps: m.steps,
            set_aabb_ms_median: m.update.median,
            update_ms_median: m.broad.median,
            narrow_ms_median: m.narrow.median,
            total_ms_median: m.total.median,
            total_ms_mean: m.total.mean,
            total_ms_p95: m.total.p95,
            total_ms_max: m.total.max,
            pairs_mean: m.possible_mean,
            collisions_mean: m.actual_mean,
            bytes_per_proxy: m.bytes_per_proxy,
            query_ms_median: m.queries.map(|q| q.median),
        }
    }
}

pub fn run(args: &BenchArgs) -> anyhow::Result<ExitCode> {
    let names = crate::parse_algorithms(&args.algorithms)?;
    let mut options = broadphase::AlgorithmOptions::default();
    options.bvh_build = args.bvh_build;
    options.bvh_descend = args.bvh_descend;
    options.tree_margin = args.tree_margin;
    let builder = args.scene.builder(INTERACTIVE_DEFAULTS)?;
    let mut scenes = Vec::new();
    if args.objects.is_empty() {
        scenes.push(builder.build()?);
    }
    for &objects in &args.objects {
        let mut b = builder.clone();
        b.set("objects", &objects.to_string())
            .map_err(|e| anyhow::anyhow!("--objects: {e}"))?;
        scenes.push(b.build().map_err(|e| anyhow::anyhow!("--objects: {e}"))?);
    }
    let total_steps: u64 = scenes
        .iter()
        .map(|s| (names.len() * (s.steps + s.warmup)) as u64)
        .sum();
    let progress = ProgressBar::new(total_steps);
    progress.set_style(
        ProgressStyle::with_template("{msg:>20} [{bar:30}] {pos}/{len} steps")
            .expect("valid template"),
    );
    let mut rows = Vec::new();
    let mut disagreements = Vec::new();
    for scene in &scenes {
        let mut reference: Option<Measurement> = None;
        for name in &names {
            progress.set_message(format!("{name} {}", scene.objects));
            let m = measure(name, &options, scene, args.queries, &progress)?;
            if args.verbose {
                for switch in &m.switches {
                    progress.suspend(|| {
                        eprintln!(
                            "{name} {}: step {}: {} -> {}: {}",
                            m.objects, switch.step, switch.from, switch.to, switch.reason
                        )
                    });
                }
            }
            match &reference {
                Some(r) if r.pair_counts != m.pair_counts => disagreements.push(format!(
                    "{} and {} report different pair counts at {} objects",
                    r.algorithm, m.algorithm, scene.objects
                )),
                Some(_) => {}
                None => reference = Some(m.clone()),
            }
            rows.push(BenchRow::from(&m));
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

fn print_table(rows: &[BenchRow]) {
    let with_queries = rows.iter().any(|r| r.query_ms_median.is_some());
    print!(
        "{:<16} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7} {:>9} {:>9} {:>8}",
        "algorithm",
        "objects",
        "set ms",
        "update ms",
        "narrow ms",
        "total ms",
        "p95 ms",
        "max ms",
        "×best",
        "pairs",
        "contacts",
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
            "{:<16} {:>8} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>7.2} {:>9.1} {:>9.1} {:>8.0}",
            row.algorithm,
            row.objects,
            row.set_aabb_ms_median,
            row.update_ms_median,
            row.narrow_ms_median,
            row.total_ms_median,
            row.total_ms_p95,
            row.total_ms_max,
            row.total_ms_median / best.max(1e-9),
            row.pairs_mean,
            row.collisions_mean,
            row.bytes_per_proxy
        );
        match row.query_ms_median {
            Some(q) => println!(" {q:>9.3}"),
            None => println!(),
        }
    }
}
