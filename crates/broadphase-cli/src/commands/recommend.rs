//! `broadphase recommend`: short trials of every algorithm and its main options on the
//! user's scene, within a time budget; a ranked table, a recommendation and a config file.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use broadphase_sim::Scene;
use clap::Args;
use indicatif::ProgressBar;

use crate::export::files::{check_writable_file, write_atomically};
use crate::export::quantity::{BYTES_PER_PROXY, CONFIGURATION, NOTE, RANK, STEPS, TOTAL_MS};
use crate::export::{emit, Field, Format, Report, Row, Statistic, Table, Value};
use crate::measure::{measure, measure_until, Measurement};
use crate::options::config::AlgorithmConfig;
use crate::options::scene::SceneArgs;

/// Options of `broadphase recommend`.
#[derive(Debug, Args)]
pub struct RecommendArgs {
    /// Seconds to spend on trials in all (the scene's steps are shortened to fit).
    #[arg(long, default_value_t = 60.0)]
    budget: f64,
    /// Where to write the winning configuration (`bench --config` loads it).
    #[arg(long, default_value = "recommendation.toml")]
    out: PathBuf,
    /// Output format of the ranking (the columns are named in docs/outputs.md).
    #[arg(long, value_enum, default_value_t = Format::Table, conflicts_with = "json")]
    format: Format,
    /// The same as `--format json`.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    scene: SceneArgs,
}

/// One configuration's trial: its `total_ms` per step (set_aabbs, update and narrow phase).
#[derive(Debug, Clone)]
pub struct Trial {
    /// The configuration's label.
    pub configuration: String,
    /// The configuration.
    pub config: AlgorithmConfig,
    /// The measured steps (none when not tried).
    pub measured: Option<Measurement>,
    /// Why it has no full result: stopped as too slow, or not tried for lack of time.
    pub note: Option<String>,
}

impl Trial {
    /// `total_ms_mean`, the ranking's key: infinite without a full result.
    fn mean_ms(&self) -> f64 {
        match (&self.measured, &self.note) {
            (Some(m), None) => m.total.mean,
            _ => f64::INFINITY,
        }
    }
}

/// The configurations tried: every library algorithm with its defaults, then the variants of
/// the options that matter most, scaled to the scene's object sizes.
pub fn configurations(scene: &Scene) -> Vec<AlgorithmConfig> {
    // The all-rounder first: it sets the bar that stops hopeless trials early.
    let mut configs = vec![AlgorithmConfig::plain("sort-and-sweep")];
    configs.extend(
        broadphase::ALGORITHMS
            .iter()
            .filter(|&&name| name != "sort-and-sweep")
            .map(|name| AlgorithmConfig::plain(name)),
    );
    let extent = scene
        .size_mean
        .unwrap_or((scene.size_min + scene.size_max) / 2.0);
    for factor in [1.0f32, 2.0, 4.0] {
        configs.push(AlgorithmConfig {
            grid_cell_size: Some(round2(extent * factor)),
            ..AlgorithmConfig::plain("grid")
        });
    }
    for margin in [0.0f32, 0.05 * extent, 0.25 * extent] {
        configs.push(AlgorithmConfig {
            tree_margin: Some(round2(margin)),
            ..AlgorithmConfig::plain("dynamic-tree")
        });
    }
    for build in broadphase::tree::BvhBuild::ALL {
        for rule in broadphase::tree::DescendRule::ALL {
            if build == broadphase::tree::BvhBuild::default()
                && rule == broadphase::tree::DescendRule::default()
            {
                continue;
            }
            configs.push(AlgorithmConfig {
                bvh_build: Some(build.to_string()),
                bvh_descend: Some(rule.to_string()),
                ..AlgorithmConfig::plain("bvh")
            });
        }
    }
    configs
}

/// Two significant decimals: cell sizes and margins people can read and type.
fn round2(x: f32) -> f32 {
    (x * 100.0).round() / 100.0
}

/// The scene with its warm-up and steps (and every phase's steps) multiplied by `scale`,
/// keeping at least a few steps of each.
fn shortened(scene: &Scene, scale: f64) -> Scene {
    let mut short = scene.clone();
    let shrink = |steps: usize, least: usize| {
        ((steps as f64 * scale).round() as usize).clamp(least.min(steps), steps)
    };
    short.warmup = shrink(scene.warmup, 2);
    for phase in &mut short.phases {
        phase.steps = shrink(phase.steps, 3);
    }
    short.steps = if short.phases.is_empty() {
        shrink(scene.steps, 5)
    } else {
        short.measured_steps()
    };
    short
}

/// How long trials run: the scene shortened to fit every configuration in the budget.
struct TrialPlan {
    scene: Scene,
    started: Instant,
    /// The probe's median step: the first bar that stops hopeless trials.
    probe_median_ms: f64,
}

pub fn run(args: &RecommendArgs) -> anyhow::Result<ExitCode> {
    crate::options::duration::seconds("--budget", args.budget)?;
    check_writable_file(&args.out)?;
    let scene = args
        .scene
        .builder(&[])?
        .build()
        .map_err(|e| args.scene.explain(e))?;
    let configs = configurations(&scene);
    let plan = plan_trials(&scene, configs.len(), args.budget)?;
    crate::console::note!(
        "recommend: {}, {} each ({} warm-up), budget {:.0} s",
        crate::console::count(configs.len(), "configuration"),
        crate::console::count(plan.scene.steps, "step"),
        plan.scene.warmup,
        args.budget
    );
    let mut trials = run_trials(configs, &plan, args.budget)?;
    rank(&mut trials);
    let winner = trials
        .first()
        .filter(|t| t.note.is_none())
        .ok_or_else(|| anyhow::anyhow!("no configuration finished its trial"))?;
    let mut report = Report::of(ranking(&trials));
    report.footer.push(recommendation(&trials, winner));
    report.footer.push(format!("wrote {}", args.out.display()));
    write_config(args, winner)?;
    let format = if args.json { Format::Json } else { args.format };
    emit(&report, format, &mut std::io::stdout().lock())?;
    Ok(ExitCode::SUCCESS)
}

/// A probe: the scene at a small scale with the all-rounder, timed with the simulation, to
/// pick the scale that fits `configurations` trials in the budget.
fn plan_trials(scene: &Scene, configurations: usize, budget: f64) -> anyhow::Result<TrialPlan> {
    let started = Instant::now();
    let probe_scale = 0.05;
    let probe = shortened(scene, probe_scale);
    let probe_start = Instant::now();
    let probed = measure(
        "sort-and-sweep",
        &Default::default(),
        &probe,
        0,
        f64::INFINITY,
        &ProgressBar::hidden(),
    )?;
    let probe_seconds = probe_start.elapsed().as_secs_f64();
    let per_config = (budget - started.elapsed().as_secs_f64()).max(0.0) / configurations as f64;
    // The all-rounder should take a third of a configuration's share: slower ones get
    // their share and are stopped at its end (they lose to any that finished).
    let scale = (probe_scale * per_config / (3.0 * probe_seconds.max(1e-6))).clamp(0.0, 1.0);
    Ok(TrialPlan {
        scene: shortened(scene, scale),
        started,
        probe_median_ms: probed.total.median,
    })
}

/// Each configuration in turn, within its share of what is left of the budget.
fn run_trials(
    configs: Vec<AlgorithmConfig>,
    plan: &TrialPlan,
    budget: f64,
) -> anyhow::Result<Vec<Trial>> {
    let mut trials: Vec<Trial> = Vec::new();
    let mut best_median = plan.probe_median_ms;
    let count = configs.len();
    for (k, config) in configs.into_iter().enumerate() {
        let configuration = config.label();
        let left = budget - plan.started.elapsed().as_secs_f64();
        if left <= 0.0 {
            trials.push(Trial {
                configuration,
                config,
                measured: None,
                note: Some("not tried: budget spent".into()),
            });
            continue;
        }
        // A configuration ten times slower than the best so far cannot win: stop it early.
        let limit = 10.0 * best_median + 5.0;
        let share = std::time::Duration::from_secs_f64(left.max(0.0) / (count - k) as f64);
        let m = measure_until(
            &config.algorithm,
            &config.options()?,
            &plan.scene,
            0,
            limit,
            Some(Instant::now() + share),
            &ProgressBar::hidden(),
        )?;
        let note = m.stopped.map(|(step, _)| {
            format!(
                "too slow: stopped at step {step} of {} (out of its time share or 10× the best step)",
                plan.scene.steps
            )
        });
        if note.is_none() {
            best_median = best_median.min(m.total.median);
        }
        trials.push(Trial {
            configuration,
            config,
            measured: Some(m),
            note,
        });
    }
    Ok(trials)
}

/// Ranked by `total_ms_mean` (the scene's total time), ties by name: a deterministic order.
fn rank(trials: &mut [Trial]) {
    trials.sort_by(|a, b| {
        a.mean_ms()
            .total_cmp(&b.mean_ms())
            .then_with(|| a.configuration.cmp(&b.configuration))
    });
}

/// The ranking: `rank`, `configuration`, `steps`, `total_ms_mean`, `total_ms_median`,
/// `total_ms_p95`, `bytes_per_proxy` (and `note` for programs; a row's note for people).
fn ranking(trials: &[Trial]) -> Table {
    let fields: Vec<Field> = vec![
        RANK.plain().into(),
        CONFIGURATION.plain().into(),
        STEPS.plain().into(),
        TOTAL_MS.mean().into(),
        TOTAL_MS.median().into(),
        TOTAL_MS.with(Statistic::P95).into(),
        BYTES_PER_PROXY.plain().into(),
        Field::from(NOTE.plain()).for_programs(),
    ];
    let mut table = Table::new("trials", fields);
    for (k, t) in trials.iter().enumerate() {
        let full = t.measured.as_ref().filter(|_| t.note.is_none());
        let time = |get: fn(&Measurement) -> f64| Value::float_or_missing(full.map(get));
        let mut row = Row::from(vec![
            if full.is_some() {
                Value::int(k + 1)
            } else {
                Value::Missing
            },
            Value::text(&t.configuration),
            Value::int_or_missing(t.measured.as_ref().map(|m| m.steps)),
            time(|m| m.total.mean),
            time(|m| m.total.median),
            time(|m| m.total.p95),
            Value::float_or_missing(t.measured.as_ref().map(|m| m.bytes_per_proxy)),
            t.note.as_ref().map_or(Value::Missing, Value::text),
        ]);
        row.note = t.note.clone();
        table.push(row);
    }
    table
}

/// The recommendation line: the winner, beside the library's all-rounder and the next one.
fn recommendation(trials: &[Trial], winner: &Trial) -> String {
    let default = trials
        .iter()
        .find(|t| t.configuration == "sort-and-sweep" && t.note.is_none());
    let versus = match default {
        Some(d) if d.configuration != winner.configuration => format!(
            ", {:.2}× the time of the library's all-rounder sort-and-sweep",
            winner.mean_ms() / d.mean_ms().max(1e-9)
        ),
        _ => String::new(),
    };
    let runner_up = trials
        .get(1)
        .filter(|t| t.note.is_none())
        .map(|t| {
            format!(
                "; next: {} ({:.2}×)",
                t.configuration,
                t.mean_ms() / winner.mean_ms().max(1e-9)
            )
        })
        .unwrap_or_default();
    let p95 = winner.measured.as_ref().map_or(f64::NAN, |m| m.total.p95);
    format!(
        "recommendation: {} — total_ms_mean {:.3}, total_ms_p95 {p95:.3}{versus}{runner_up}",
        winner.configuration,
        winner.mean_ms()
    )
}

/// Writes the winner's configuration file, its origin in comments above it.
fn write_config(args: &RecommendArgs, winner: &Trial) -> anyhow::Result<()> {
    let steps = winner.measured.as_ref().map_or(0, |m| m.steps);
    let header = vec![
        format!(
            "broadphase recommend --scene {} --budget {}",
            args.scene.source(),
            args.budget
        ),
        format!(
            "{}: total_ms_mean {:.3} ({}); load with `broadphase bench --config FILE`",
            winner.configuration,
            winner.mean_ms(),
            crate::console::count(steps, "trial step")
        ),
        "or build it in Rust:".to_string(),
    ];
    write_atomically(&args.out, winner.config.to_file_text(&header).as_bytes())
}
