//! `broadphase bench`: every algorithm on the same moving scene, timed per step.

use std::process::ExitCode;

use broadphase_sim::Scene;
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use crate::measure::{measure, Measurement};
use crate::quantity;
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
    bvh_build: broadphase::tree::BvhBuild,
    /// `bvh`: descend rule of the pair traversal (simultaneous, larger-volume).
    #[arg(long, default_value = "simultaneous")]
    bvh_descend: broadphase::tree::DescendRule,
    /// `dynamic-tree`: leaf box margin (default: the library's).
    #[arg(long)]
    tree_margin: Option<f32>,
    /// `adaptive`: the algorithms it chooses from (default: its own list).
    #[arg(long, value_delimiter = ',')]
    adaptive_candidates: Vec<String>,
    /// Run the configuration in this file (written by `recommend`): its algorithm with its
    /// options, instead of the default list (`--algorithms` still adds others).
    #[arg(long)]
    config: Option<std::path::PathBuf>,
    /// Stop measuring an algorithm after three steps in a row longer than this (milliseconds):
    /// brute force at 100,000 objects would take hours. Its row says where it stopped.
    #[arg(long, default_value_t = 500.0)]
    max_step_ms: f64,
    /// Run the algorithm list this many times in rotation and keep, per algorithm, its round
    /// with the median total time, and per phase of a phased scene the round with that
    /// phase's median sum (a shared machine's speed drifts over minutes; rotation spreads each
    /// algorithm's rounds over the whole run).
    #[arg(long, default_value_t = 1)]
    rounds: usize,
    #[command(flatten)]
    scene: SceneArgs,
}

/// The quick interactive run of `bench` without a scene file.
const INTERACTIVE_DEFAULTS: &[(&str, &str)] =
    &[("objects", "3000"), ("warmup", "10"), ("steps", "100")];

/// One algorithm at one size. Times are milliseconds per step.
#[derive(Debug, Clone, Default, Serialize)]
pub struct BenchRow {
    pub algorithm: String,
    pub objects: usize,
    pub steps: usize,
    /// Time handing the new boxes to the algorithm (`set_aabbs`, churn), median.
    pub set_aabbs_ms_median: f64,
    /// Time in `update` (structure maintenance and pair finding), median.
    pub update_ms_median: f64,
    /// Time of the exact shape tests, median.
    pub narrow_ms_median: f64,
    pub total_ms_median: f64,
    pub total_ms_mean: f64,
    pub total_ms_p95: f64,
    pub total_ms_max: f64,
    /// Broad-phase pairs per step, mean.
    pub possible_pairs_mean: f64,
    /// Pairs whose shapes intersect per step, mean.
    pub actual_collisions_mean: f64,
    pub bytes_per_proxy: f64,
    /// Time of the random queries and ray casts, when `--queries` is set.
    pub query_ms_median: Option<f64>,
    /// Sum of the measured steps' total times.
    pub total_ms_sum: f64,
    /// Per phase of a phased scene.
    pub phases: Vec<PhaseRow>,
    /// The measured step at which the run stopped, a step being over `--max-step-ms`.
    pub stopped_at_step: Option<usize>,
}

/// One algorithm over one phase of a phased scene.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseRow {
    pub phase: String,
    pub steps: usize,
    /// Sum of the phase's step times.
    pub total_ms_sum: f64,
    pub total_ms_median: f64,
    pub total_ms_p95: f64,
    /// Objects at the phase's end, terrain and ground included.
    pub objects_at_end: usize,
}

impl From<&Measurement> for BenchRow {
    fn from(m: &Measurement) -> Self {
        Self {
            algorithm: m.algorithm.clone(),
            objects: m.objects,
            steps: m.steps,
            set_aabbs_ms_median: m.update.median,
            update_ms_median: m.broad.median,
            narrow_ms_median: m.narrow.median,
            total_ms_median: m.total.median,
            total_ms_mean: m.total.mean,
            total_ms_p95: m.total.p95,
            total_ms_max: m.total.max,
            possible_pairs_mean: m.possible_mean,
            actual_collisions_mean: m.actual_mean,
            bytes_per_proxy: m.bytes_per_proxy,
            query_ms_median: m.queries.map(|q| q.median),
            total_ms_sum: m.total.mean * m.steps as f64,
            phases: m
                .phases
                .iter()
                .map(|p| PhaseRow {
                    phase: p.name.clone(),
                    steps: p.steps,
                    total_ms_sum: p.total_ms,
                    total_ms_median: p.total.median,
                    total_ms_p95: p.total.p95,
                    objects_at_end: p.objects_at_end,
                })
                .collect(),
            stopped_at_step: m.stopped.map(|(step, _)| step),
        }
    }
}

pub fn run(args: &BenchArgs) -> anyhow::Result<ExitCode> {
    if args.max_step_ms.is_nan() || args.max_step_ms <= 0.0 {
        anyhow::bail!("--max-step-ms must be positive");
    }
    if args.rounds == 0 {
        anyhow::bail!("--rounds must be at least 1");
    }
    let config = args
        .config
        .as_deref()
        .map(crate::config::AlgorithmConfig::load)
        .transpose()?;
    let names = algorithm_names(args, config.as_ref())?;
    let options = algorithm_options(args, config.as_ref())?;
    let scenes = scenes(args)?;
    let total_steps: u64 = scenes
        .iter()
        .map(|s| (args.rounds * names.len() * (s.steps + s.warmup)) as u64)
        .sum();
    let progress = ProgressBar::new(total_steps);
    progress.set_style(
        ProgressStyle::with_template("{msg:>20} [{bar:30}] {pos}/{len} steps")
            .expect("valid template"),
    );
    let mut rows = Vec::new();
    let mut disagreements = Vec::new();
    for scene in &scenes {
        let rounds = measure_rounds(args, &names, &options, scene, &progress, &mut disagreements)?;
        rows.extend(
            rounds
                .into_iter()
                .map(|mut measured| median_row(&mut measured)),
        );
    }
    progress.finish_and_clear();
    match args.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&rows)?),
        Format::Table => {
            print_table(&rows);
            print_phases(&rows);
        }
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

/// The algorithms to run, each once, in the order given: `--algorithms` (default all), with a
/// configuration's algorithm first when `--config` is given.
fn algorithm_names(
    args: &BenchArgs,
    config: Option<&crate::config::AlgorithmConfig>,
) -> anyhow::Result<Vec<String>> {
    let mut names = match (config, &args.algorithms) {
        (Some(c), None) => vec![c.algorithm.clone()],
        (Some(c), Some(_)) => {
            let mut names = crate::parse_algorithms(&args.algorithms)?;
            names.insert(0, c.algorithm.clone());
            names
        }
        (None, _) => crate::parse_algorithms(&args.algorithms)?,
    };
    // A name given twice is measured once.
    let mut seen = Vec::new();
    names.retain(|n| {
        let first = !seen.contains(n);
        seen.push(n.clone());
        first
    });
    Ok(names)
}

/// The library options: from `--config`, or from the flags.
fn algorithm_options(
    args: &BenchArgs,
    config: Option<&crate::config::AlgorithmConfig>,
) -> anyhow::Result<broadphase::AlgorithmOptions> {
    let mut options = match config {
        Some(c) => c.options()?,
        None => {
            let mut options = broadphase::AlgorithmOptions::default();
            options.bvh.build = args.bvh_build;
            options.bvh.descend = args.bvh_descend;
            if let Some(margin) = args.tree_margin {
                options.dynamic_tree.margin = margin;
            }
            options
        }
    };
    if !args.adaptive_candidates.is_empty() {
        for name in &args.adaptive_candidates {
            if !broadphase::ALGORITHMS.contains(&name.as_str()) {
                anyhow::bail!(
                    "--adaptive-candidates: unknown algorithm '{name}' (known: {})",
                    broadphase::ALGORITHMS.join(", ")
                );
            }
        }
        options.adaptive.candidates = args.adaptive_candidates.clone();
    }
    Ok(options)
}

/// The scene, once per `--objects` value.
fn scenes(args: &BenchArgs) -> anyhow::Result<Vec<Scene>> {
    let builder = args.scene.builder(INTERACTIVE_DEFAULTS)?;
    if args.objects.is_empty() {
        return Ok(vec![builder.build()?]);
    }
    let mut scenes = Vec::new();
    for &objects in &args.objects {
        let mut b = builder.clone();
        b.set("objects", &objects.to_string())
            .map_err(|e| anyhow::anyhow!("--objects: {e}"))?;
        scenes.push(b.build().map_err(|e| anyhow::anyhow!("--objects: {e}"))?);
    }
    Ok(scenes)
}

/// Every algorithm on `scene`, `--rounds` times in rotation: the measurements by algorithm.
/// Notes in `disagreements` any algorithm whose pair counts differ from the first one's.
fn measure_rounds(
    args: &BenchArgs,
    names: &[String],
    options: &broadphase::AlgorithmOptions,
    scene: &Scene,
    progress: &ProgressBar,
    disagreements: &mut Vec<String>,
) -> anyhow::Result<Vec<Vec<Measurement>>> {
    let mut reference: Option<Measurement> = None;
    let mut rounds: Vec<Vec<Measurement>> = vec![Vec::new(); names.len()];
    for _ in 0..args.rounds {
        for (k, name) in names.iter().enumerate() {
            progress.set_message(format!("{name} {}", scene.objects));
            let m = measure(
                name,
                options,
                scene,
                args.queries,
                args.max_step_ms,
                progress,
            )?;
            report_measurement(args, name, &m, progress);
            let common = m.pair_counts.len().min(
                reference
                    .as_ref()
                    .map_or(usize::MAX, |r| r.pair_counts.len()),
            );
            match &reference {
                Some(r) if r.pair_counts[..common] != m.pair_counts[..common] => disagreements
                    .push(format!(
                        "{} and {} report different pair counts at {} objects",
                        r.algorithm, m.algorithm, scene.objects
                    )),
                Some(_) => {}
                None if m.stopped.is_none() => reference = Some(m.clone()),
                None => {}
            }
            rounds[k].push(m);
        }
    }
    Ok(rounds)
}

/// On stderr: where a run stopped, and with `--verbose` what `adaptive` chose and why.
fn report_measurement(args: &BenchArgs, name: &str, m: &Measurement, progress: &ProgressBar) {
    if let Some((step, ms)) = m.stopped {
        progress.suspend(|| {
            eprintln!(
                "{name} {}: stopped at measured step {step}: it took {ms:.0} ms (--max-step-ms {})",
                m.objects, args.max_step_ms
            )
        });
    }
    if !args.verbose {
        return;
    }
    if let Some(overhead) = m.choice_overhead {
        progress.suspend(|| {
            eprintln!(
                "{name} {}: choosing took {:.1} ms, updates {:.1} ms ({} switches)",
                m.objects,
                overhead.choosing_seconds * 1e3,
                overhead.updating_seconds * 1e3,
                m.switches.len()
            )
        });
    }
    for switch in &m.switches {
        progress.suspend(|| {
            eprintln!(
                "{name} {}: step {}: {} -> {}: {}",
                m.objects, switch.step, switch.from, switch.to, switch.reason
            )
        });
    }
}

/// The row of an algorithm's rounds (at least one): its round with the median whole time,
/// and each phase from the round with that phase's median sum (one phase's noise does not
/// follow the whole run's).
fn median_row(measured: &mut [Measurement]) -> BenchRow {
    measured.sort_by(|a, b| total_time(a).total_cmp(&total_time(b)));
    let mut row = BenchRow::from(&measured[(measured.len() - 1) / 2]);
    for (k, phase) in row.phases.iter_mut().enumerate() {
        let mut same: Vec<_> = measured
            .iter()
            .filter_map(|m| m.phases.get(k))
            .filter(|p| p.steps == phase.steps)
            .collect();
        same.sort_by(|a, b| a.total_ms.total_cmp(&b.total_ms));
        if let Some(p) = same.get(same.len().saturating_sub(1) / 2) {
            phase.total_ms_sum = p.total_ms;
            phase.total_ms_median = p.total.median;
            phase.total_ms_p95 = p.total.p95;
        }
    }
    row
}

/// A run's whole time: the sum over phases, or the median step for a scene without phases.
fn total_time(m: &Measurement) -> f64 {
    if m.phases.is_empty() {
        m.total.median
    } else {
        m.phases.iter().map(|p| p.total_ms).sum()
    }
}

/// A run stopped at its first measured step has no times: printed as dashes, never the best.
fn unmeasured(row: &BenchRow) -> bool {
    row.stopped_at_step == Some(0)
}

/// The fastest median total among the measured rows of `objects` objects.
fn best_total(rows: &[BenchRow], objects: usize) -> f64 {
    rows.iter()
        .filter(|r| r.objects == objects && !unmeasured(r))
        .map(|r| r.total_ms_median)
        .fold(f64::INFINITY, f64::min)
}

fn print_table(rows: &[BenchRow]) {
    let with_queries = rows.iter().any(|r| r.query_ms_median.is_some());
    print!(
        "{:<16} {:>8} {:>12} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7} {:>9} {:>9} {:>8}",
        "algorithm",
        "objects",
        quantity::SET_AABBS.header,
        quantity::UPDATE.header,
        quantity::NARROW.header,
        quantity::TOTAL.header,
        "p95 ms",
        "max ms",
        "×best",
        quantity::POSSIBLE_PAIRS.header,
        quantity::ACTUAL_COLLISIONS.header,
        quantity::BYTES_PER_PROXY.header
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
        if unmeasured(row) {
            println!(
                "{:<16} {:>8} {:>12} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7} {:>9} {:>9} {:>8.0}  (stopped at step 0)",
                row.algorithm, row.objects, "-", "-", "-", "-", "-", "-", "-", "-", "-",
                row.bytes_per_proxy
            );
            continue;
        }
        let best = best_total(rows, row.objects);
        print!(
            "{:<16} {:>8} {:>12.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>7.2} {:>9.1} {:>9.1} {:>8.0}",
            row.algorithm,
            row.objects,
            row.set_aabbs_ms_median,
            row.update_ms_median,
            row.narrow_ms_median,
            row.total_ms_median,
            row.total_ms_p95,
            row.total_ms_max,
            row.total_ms_median / best.max(1e-9),
            row.possible_pairs_mean,
            row.actual_collisions_mean,
            row.bytes_per_proxy
        );
        match (row.query_ms_median, row.stopped_at_step) {
            (_, Some(step)) => println!("  (stopped at step {step})"),
            (Some(q), None) => println!(" {q:>9.3}"),
            (None, None) => println!(),
        }
    }
}

/// For phased scenes: each phase's summed time and p95 per algorithm, the best fixed
/// algorithm of each phase, and `adaptive`'s ratio to it.
fn print_phases(rows: &[BenchRow]) {
    let Some(first) = rows.iter().find(|r| !r.phases.is_empty()) else {
        return;
    };
    let objects = first.objects;
    let rows: Vec<&BenchRow> = rows.iter().filter(|r| r.objects == objects).collect();
    let full: Vec<usize> = (0..first.phases.len())
        .map(|k| rows.iter().map(|r| r.phases[k].steps).max().unwrap_or(0))
        .collect();
    let first = rows
        .iter()
        .find(|r| r.stopped_at_step.is_none())
        .copied()
        .unwrap_or(first);
    let complete = |r: &BenchRow, k: usize| r.phases[k].steps == full[k];
    println!();
    print!("{:<16}", "per phase");
    for phase in &first.phases {
        print!(
            " {:>22}",
            format!("{} ({} steps)", phase.phase, phase.steps)
        );
    }
    println!(" {:>22}", "whole scene");
    print!("{:<16}", "");
    for _ in 0..=first.phases.len() {
        print!(" {:>12} {:>9}", "sum ms", "p95 ms");
    }
    println!();
    for row in &rows {
        print!("{:<16}", row.algorithm);
        for (k, phase) in row.phases.iter().enumerate() {
            if complete(row, k) {
                print!(" {:>12.1} {:>9.3}", phase.total_ms_sum, phase.total_ms_p95);
            } else {
                print!(" {:>12} {:>9}", "stopped", "-");
            }
        }
        if row.stopped_at_step.is_none() {
            println!(" {:>12.1} {:>9.3}", row.total_ms_sum, row.total_ms_p95);
        } else {
            println!(" {:>12} {:>9}", "stopped", "-");
        }
    }
    print!("{:<16}", "objects at end");
    for phase in &first.phases {
        print!(" {:>22}", phase.objects_at_end);
    }
    println!();
    let fixed: Vec<&&BenchRow> = rows.iter().filter(|r| r.algorithm != "adaptive").collect();
    let Some(adaptive) = rows.iter().find(|r| r.algorithm == "adaptive") else {
        return;
    };
    if fixed.is_empty() {
        return;
    }
    // Algorithms stopped during a phase were slower than the limit there: not the best.
    let best_in = |k: usize| {
        fixed.iter().filter(|r| complete(r, k)).min_by(|a, b| {
            a.phases[k]
                .total_ms_sum
                .total_cmp(&b.phases[k].total_ms_sum)
        })
    };
    let best_overall = fixed
        .iter()
        .filter(|r| r.stopped_at_step.is_none())
        .min_by(|a, b| a.total_ms_sum.total_cmp(&b.total_ms_sum));
    print!("{:<16}", "best fixed");
    for k in 0..first.phases.len() {
        print!(" {:>22}", best_in(k).map_or("-", |r| r.algorithm.as_str()));
    }
    println!(
        " {:>22}",
        best_overall.map_or("-", |r| r.algorithm.as_str())
    );
    let ratio = |a: f64, b: Option<f64>| match b {
        Some(b) => format!("{:.3}", a / b.max(1e-9)),
        None => "-".to_string(),
    };
    print!("{:<16}", "adaptive/best");
    for k in 0..first.phases.len() {
        print!(
            " {:>22}",
            ratio(
                adaptive.phases[k].total_ms_sum,
                best_in(k).map(|r| r.phases[k].total_ms_sum)
            )
        );
    }
    println!(
        " {:>22}",
        ratio(adaptive.total_ms_sum, best_overall.map(|r| r.total_ms_sum))
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::PhaseMeasurement;

    fn round(phase_sums: [f64; 2]) -> Measurement {
        Measurement {
            algorithm: "a".into(),
            phases: phase_sums
                .iter()
                .enumerate()
                .map(|(k, &sum)| PhaseMeasurement {
                    name: format!("p{k}"),
                    steps: 10,
                    total_ms: sum,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn a_run_stopped_at_its_first_step_is_never_the_best() {
        let row = |total: f64, stopped: Option<usize>| {
            let mut r = BenchRow::from(&Measurement {
                objects: 100,
                ..Default::default()
            });
            r.total_ms_median = total;
            r.stopped_at_step = stopped;
            r
        };
        let rows = [row(0.0, Some(0)), row(5.0, Some(3)), row(7.0, None)];
        assert_eq!(best_total(&rows, 100), 5.0);
        assert!(unmeasured(&rows[0]) && !unmeasured(&rows[1]));
    }

    #[test]
    fn each_phase_comes_from_its_own_median_round() {
        // Whole times 21, 11, 32: the median round is the first, whose first phase took 20;
        // that phase's median over the rounds is 10.
        let mut rounds = vec![round([20.0, 1.0]), round([10.0, 1.0]), round([10.0, 22.0])];
        let row = median_row(&mut rounds);
        let sums: Vec<f64> = row.phases.iter().map(|p| p.total_ms_sum).collect();
        assert_eq!(sums, vec![10.0, 1.0]);
    }
}
