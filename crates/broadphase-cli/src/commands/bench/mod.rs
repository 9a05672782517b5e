//! `broadphase bench`: every algorithm on the same moving scene, timed per step.

mod phases;

use std::process::ExitCode;

use broadphase::AlgorithmOptions;
use broadphase_sim::Scene;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use crate::export::{emit, Format, Report, Row, Table};
use crate::measure::{
    fastest_total, measure, phase_children, phase_values, run_fields, run_values, Measurement,
    Settings,
};
use crate::options::algorithms::parse_list;
use crate::options::config::AlgorithmConfig;
use crate::options::scene::SceneArgs;

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
    /// Also time this many random box queries and ray casts per step (query_ms).
    #[arg(long, default_value_t = 0)]
    queries: usize,
    /// Output format (the columns are named in docs/outputs.md).
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
    /// Stop measuring an algorithm after three steps in a row whose broad phase (sync and
    /// update; not the narrow phase, the same for every algorithm) took longer than this
    /// (milliseconds; brute force on a large scene). Its row says where it stopped
    /// (stopped_at_step).
    #[arg(long, default_value_t = 500.0)]
    max_step_ms: f64,
    /// Leave out the narrow phase (the exact shape tests of the reported pairs, the same for
    /// every algorithm): `narrow_ms` and `actual_pairs` stay empty and `total_ms` is the
    /// broad phase alone. For scenes so large that the narrow phase would take most of the
    /// run (a million objects).
    #[arg(long)]
    no_narrow: bool,
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

/// What to run: checked before anything is measured.
struct Plan {
    names: Vec<String>,
    options: AlgorithmOptions,
    scenes: Vec<Scene>,
}

/// What was measured: one run per algorithm and scene, and any disagreement.
struct Outcome {
    runs: Vec<Measurement>,
    disagreements: Vec<String>,
}

pub fn run(args: &BenchArgs) -> anyhow::Result<ExitCode> {
    let plan = plan(args)?;
    let mut outcome = measure_all(args, &plan)?;
    sort_by_total(&mut outcome.runs, plan.names.len());
    let mut report = report(&outcome.runs, args.queries > 0);
    report.tables[0].title = Some(header(args, &plan));
    emit(&report, args.format, &mut std::io::stdout().lock())?;
    let spreads: Vec<_> = outcome
        .runs
        .iter()
        .filter(|m| !crate::measure::unmeasured(m))
        .map(Measurement::spread)
        .collect();
    if let Some(noise) = crate::measure::noise::assess(&spreads) {
        crate::console::note!(
            "{}",
            crate::measure::noise::warning(&noise, "--rounds", args.rounds)
        );
    }
    for d in &outcome.disagreements {
        crate::console::note!("error: {d}");
    }
    Ok(if outcome.disagreements.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Checks the flags and builds the algorithm list, their options and the scenes.
/// Most rounds: a thousand medians of medians already say all that rounds can say.
const MAX_ROUNDS: usize = 1000;

/// Most random box queries and ray casts per step: a million take about a second a step;
/// more would make a run endless without saying more.
const MAX_QUERIES: usize = 1_000_000;

fn plan(args: &BenchArgs) -> anyhow::Result<Plan> {
    let config = args
        .config
        .as_deref()
        .map(AlgorithmConfig::load)
        .transpose()?;
    let names = algorithm_names(args, config.as_ref())?;
    if args.max_step_ms.is_nan() || args.max_step_ms <= 0.0 {
        anyhow::bail!("--max-step-ms must be positive");
    }
    if args.rounds == 0 || args.rounds > MAX_ROUNDS {
        anyhow::bail!(
            "--rounds must be between 1 and {MAX_ROUNDS} (got {})",
            args.rounds
        );
    }
    if args.queries > MAX_QUERIES {
        anyhow::bail!(
            "--queries must be at most {MAX_QUERIES} per step (got {})",
            args.queries
        );
    }
    Ok(Plan {
        names,
        options: algorithm_options(args, config.as_ref())?,
        scenes: scenes(args)?,
    })
}

/// The configuration file's algorithm first (if any), then `--algorithms` (default: all).
fn algorithm_names(
    args: &BenchArgs,
    config: Option<&AlgorithmConfig>,
) -> anyhow::Result<Vec<String>> {
    Ok(match (config, &args.algorithms) {
        (Some(c), None) => vec![c.algorithm.clone()],
        (Some(c), Some(_)) => {
            let mut names = parse_list(&args.algorithms)?;
            if !names.contains(&c.algorithm) {
                names.insert(0, c.algorithm.clone());
            }
            names
        }
        (None, _) => parse_list(&args.algorithms)?,
    })
}

/// The options flags set, or the configuration file's, plus `--adaptive-candidates`.
fn algorithm_options(
    args: &BenchArgs,
    config: Option<&AlgorithmConfig>,
) -> anyhow::Result<AlgorithmOptions> {
    let mut options = match config {
        Some(c) => c.options()?,
        None => {
            let mut options = AlgorithmOptions::default();
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
        return Ok(vec![builder.build().map_err(|e| args.scene.explain(e))?]);
    }
    args.objects
        .iter()
        .map(|&objects| {
            let mut b = builder.clone();
            b.set("objects", &objects.to_string())
                .map_err(|e| anyhow::anyhow!("--objects: {e}"))?;
            b.build().map_err(|e| args.scene.explain(e))
        })
        .collect()
}

/// Measures every algorithm on every scene, `--rounds` times in rotation; keeps each
/// algorithm's median round and checks that all report the same pairs.
fn measure_all(args: &BenchArgs, plan: &Plan) -> anyhow::Result<Outcome> {
    let total_steps: u64 = plan
        .scenes
        .iter()
        .map(|s| (args.rounds * plan.names.len() * (s.steps + s.warmup)) as u64)
        .sum();
    let progress = ProgressBar::new(total_steps);
    progress.set_style(
        ProgressStyle::with_template("{msg:>20} [{bar:30}] {pos}/{len} steps")
            .expect("valid template"),
    );
    let mut outcome = Outcome {
        runs: Vec::new(),
        disagreements: Vec::new(),
    };
    for scene in &plan.scenes {
        let mut reference: Option<Measurement> = None;
        let mut rounds: Vec<Vec<Measurement>> = vec![Vec::new(); plan.names.len()];
        for (k, name) in (0..args.rounds).flat_map(|_| plan.names.iter().enumerate()) {
            progress.set_message(format!("{name} {}", scene.objects));
            let m = measure(
                name,
                &plan.options,
                scene,
                &Settings {
                    queries: args.queries,
                    max_step_ms: args.max_step_ms,
                    narrow: !args.no_narrow,
                },
                &progress,
            )?;
            progress.suspend(|| log_run(args, &m));
            if let Some(d) = disagreement(&mut reference, &m) {
                outcome.disagreements.push(d);
            }
            rounds[k].push(m);
        }
        for mut measured in rounds {
            outcome.runs.push(median_round(&mut measured));
        }
    }
    progress.finish_and_clear();
    Ok(outcome)
}

/// Each scene's runs (`per_scene` consecutive runs) fastest first by `total_ms_median`; runs
/// that measured nothing last.
fn sort_by_total(runs: &mut [Measurement], per_scene: usize) {
    for scene in runs.chunks_mut(per_scene.max(1)) {
        scene.sort_by(|a, b| {
            crate::measure::unmeasured(a)
                .cmp(&crate::measure::unmeasured(b))
                .then(a.total.median.total_cmp(&b.total.median))
        });
    }
}

/// The lines above the table for people: what ran (scene, objects, steps, rounds, processor)
/// and what the columns' units are.
fn header(args: &BenchArgs, plan: &Plan) -> String {
    use crate::console::count;
    let objects: Vec<String> = plan.scenes.iter().map(|s| s.objects.to_string()).collect();
    let first = &plan.scenes[0];
    let scene = match &args.scene.scene {
        Some(path) => format!("scene {}", path.display()),
        None => "the default scene [Zych16, ch. 4.1]".to_string(),
    };
    format!(
        "bench: {scene}, {} objects, {} warm-up + {} per run, {}; CPU {}\n{}; rows sorted by \
         total_ms_median (the median of the steps' totals, not the sum of the parts' medians)",
        objects.join(", "),
        first.warmup,
        count(first.steps, "measured step"),
        count(args.rounds, "round"),
        crate::measure::cpu_model(),
        crate::export::units_legend(&run_fields(args.queries > 0)),
    )
}

/// To stderr: where a run stopped, and with `--verbose` what `adaptive` did.
fn log_run(args: &BenchArgs, m: &Measurement) {
    let name = &m.algorithm;
    if let Some((step, ms)) = m.stopped {
        crate::console::note!(
            "{name} {}: stopped at measured step {step}: its broad phase took {ms:.0} ms (--max-step-ms {})",
            m.objects,
            args.max_step_ms
        );
    }
    if !args.verbose {
        return;
    }
    if let Some(overhead) = m.choice_overhead {
        crate::console::note!(
            "{name} {}: choosing took {:.1} ms, updates {:.1} ms ({})",
            m.objects,
            overhead.choosing_seconds * 1e3,
            overhead.updating_seconds * 1e3,
            crate::console::count(m.switches.len(), "switch")
        );
    }
    for switch in &m.switches {
        crate::console::note!(
            "{name} {}: step {}: {} -> {}: {}",
            m.objects,
            switch.step,
            switch.from,
            switch.to,
            switch.reason
        );
    }
}

/// Compares `m`'s pair counts with the first complete run of the scene (over the steps
/// both measured); the first complete run becomes the reference.
fn disagreement(reference: &mut Option<Measurement>, m: &Measurement) -> Option<String> {
    match reference {
        Some(r) => {
            let common = m.pair_counts.len().min(r.pair_counts.len());
            (r.pair_counts[..common] != m.pair_counts[..common]).then(|| {
                format!(
                    "{} and {} report different pair counts at {}",
                    r.algorithm,
                    m.algorithm,
                    crate::console::count(m.objects, "object")
                )
            })
        }
        None => {
            if m.stopped.is_none() {
                *reference = Some(m.clone());
            }
            None
        }
    }
}

/// An algorithm's rounds (at least one) as one run: its round with the median whole time,
/// and each phase from the round with that phase's median sum (one phase's noise does not
/// follow the whole run's).
fn median_round(measured: &mut [Measurement]) -> Measurement {
    let round_totals: Vec<f64> = measured.iter().map(|m| m.total.median).collect();
    measured.sort_by(|a, b| whole_time(a).total_cmp(&whole_time(b)));
    let mut run = measured[(measured.len() - 1) / 2].clone();
    if round_totals.len() > 1 {
        run.round_totals = round_totals;
    }
    for (k, phase) in run.phases.iter_mut().enumerate() {
        let mut same: Vec<_> = measured
            .iter()
            .filter_map(|m| m.phases.get(k))
            .filter(|p| p.steps == phase.steps)
            .collect();
        same.sort_by(|a, b| a.total_ms.total_cmp(&b.total_ms));
        if let Some(p) = same.get(same.len().saturating_sub(1) / 2) {
            phase.total_ms = p.total_ms;
            phase.total = p.total;
        }
    }
    run
}

/// A run's whole time: the sum over phases, or the median step for a scene without phases.
fn whole_time(m: &Measurement) -> f64 {
    if m.phases.is_empty() {
        m.total.median
    } else {
        m.phases.iter().map(|p| p.total_ms).sum()
    }
}

/// The runs as a table (each with its phases below it, for programs), and for people the
/// phases side by side.
fn report(runs: &[Measurement], with_queries: bool) -> Report {
    let mut table = Table::new("runs", run_fields(with_queries));
    if runs.iter().any(|m| !m.phases.is_empty()) {
        table.children = Some(phase_children());
    }
    for m in runs {
        let fastest = fastest_total(runs.iter().filter(|r| r.objects == m.objects));
        let mut row = Row::from(run_values(m, fastest, with_queries));
        row.note = m
            .stopped
            .map(|(step, _)| format!("(stopped at step {step})"));
        row.children = m.phases.iter().map(phase_values).collect();
        table.push(row);
    }
    let mut report = Report::of(table);
    report.tables.extend(phases::side_by_side(runs));
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::PhaseMeasurement;

    fn round(phase_sums: [f64; 2]) -> Measurement {
        let mut m = Measurement {
            algorithm: "a".into(),
            steps: 20,
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
        };
        m.total.mean = phase_sums.iter().sum::<f64>() / 20.0;
        m
    }

    #[test]
    fn each_phase_comes_from_its_own_median_round() {
        // Whole times 21, 11, 32: the median round is the first, whose first phase took 20;
        // that phase's median over the rounds is 10.
        let mut rounds = vec![round([20.0, 1.0]), round([10.0, 1.0]), round([10.0, 22.0])];
        let run = median_round(&mut rounds);
        let sums: Vec<f64> = run.phases.iter().map(|p| p.total_ms).collect();
        assert_eq!(sums, vec![10.0, 1.0]);
    }
}
