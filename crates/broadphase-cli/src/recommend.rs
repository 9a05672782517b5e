//! `broadphase recommend`: short trials of every algorithm and its main options on the
//! user's scene, within a time budget; a ranked table, a recommendation and a config file.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Args;
use indicatif::ProgressBar;
use serde::Serialize;

use crate::config::AlgorithmConfig;
use crate::measure::{measure, measure_until};
use crate::scene_args::SceneArgs;
use broadphase_sim::Scene;

/// Options of `broadphase recommend`.
#[derive(Debug, Args)]
pub struct RecommendArgs {
    /// Seconds to spend on trials in all (the scene's steps are shortened to fit).
    #[arg(long, default_value_t = 60.0)]
    budget: f64,
    /// Where to write the winning configuration (`bench --config` loads it).
    #[arg(long, default_value = "recommendation.toml")]
    out: PathBuf,
    /// Also print the table as JSON on stdout instead of the text table.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    scene: SceneArgs,
}

/// One configuration's trial. Times are milliseconds per step (set, update and narrow phase).
#[derive(Debug, Clone, Serialize)]
pub struct Trial {
    pub configuration: String,
    #[serde(skip)]
    pub config: AlgorithmConfig,
    pub steps: usize,
    pub mean_ms: f64,
    pub median_ms: f64,
    pub p95_ms: f64,
    pub bytes_per_proxy: f64,
    /// Why it has no full result: stopped as too slow, or not tried for lack of time.
    pub note: Option<String>,
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

pub fn run(args: &RecommendArgs) -> anyhow::Result<ExitCode> {
    if !(args.budget.is_finite() && args.budget > 0.0) {
        anyhow::bail!("--budget must be a positive number of seconds");
    }
    crate::output::check_writable_file(&args.out)?;
    let started = Instant::now();
    let scene = args.scene.builder(&[])?.build()?;
    let configs = configurations(&scene);
    let (trial_scene, probe_median) = trial_scene(args, &scene, configs.len(), started)?;
    eprintln!(
        "recommend: {} configurations, {} steps each ({} warm-up), budget {:.0} s",
        configs.len(),
        trial_scene.steps,
        trial_scene.warmup,
        args.budget
    );
    let mut trials = run_trials(args, configs, &trial_scene, probe_median, started)?;
    // Ranked by the mean step (the scene's total time), ties by name: deterministic order.
    trials.sort_by(|a, b| {
        a.mean_ms
            .total_cmp(&b.mean_ms)
            .then_with(|| a.configuration.cmp(&b.configuration))
    });
    let winner = trials
        .first()
        .filter(|t| t.note.is_none())
        .ok_or_else(|| anyhow::anyhow!("no configuration finished its trial"))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&trials)?);
    } else {
        print_table(&trials);
    }
    print_recommendation(&trials, winner);
    write_recommendation(args, winner)?;
    Ok(ExitCode::SUCCESS)
}

/// The scene shortened so that every configuration fits the budget, found by a probe: the
/// scene at a small scale with the all-rounder, timed with the simulation. Also the probe's
/// median step, the first "best so far".
fn trial_scene(
    args: &RecommendArgs,
    scene: &Scene,
    configurations: usize,
    started: Instant,
) -> anyhow::Result<(Scene, f64)> {
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
    let per_config =
        (args.budget - started.elapsed().as_secs_f64()).max(0.0) / configurations as f64;
    // The all-rounder should take a third of a configuration's share: slower ones get
    // their share and are stopped at its end (they lose to any that finished).
    let scale = (probe_scale * per_config / (3.0 * probe_seconds.max(1e-6))).clamp(0.0, 1.0);
    Ok((shortened(scene, scale), probed.total.median))
}

/// Times every configuration on `trial_scene`, each within its share of what is left of the
/// budget; one ten times slower than the best so far is stopped early.
fn run_trials(
    args: &RecommendArgs,
    configs: Vec<AlgorithmConfig>,
    trial_scene: &Scene,
    probe_median: f64,
    started: Instant,
) -> anyhow::Result<Vec<Trial>> {
    let hidden = ProgressBar::hidden();
    let mut trials: Vec<Trial> = Vec::new();
    let mut best_median = probe_median;
    let count = configs.len();
    for (k, config) in configs.into_iter().enumerate() {
        let label = config.label();
        let left = args.budget - started.elapsed().as_secs_f64();
        if left <= 0.0 {
            trials.push(Trial {
                configuration: label,
                config,
                steps: 0,
                mean_ms: f64::INFINITY,
                median_ms: f64::INFINITY,
                p95_ms: f64::INFINITY,
                bytes_per_proxy: 0.0,
                note: Some("not tried: budget spent".into()),
            });
            continue;
        }
        let options = config.options()?;
        let limit = 10.0 * best_median + 5.0;
        let share = std::time::Duration::from_secs_f64(left / (count - k) as f64);
        let m = measure_until(
            &config.algorithm,
            &options,
            trial_scene,
            0,
            limit,
            Some(Instant::now() + share),
            &hidden,
        )?;
        let note = m.stopped.map(|(step, _)| {
            format!(
                "too slow: stopped at step {step} of {} (out of its time share or 10× the best step)",
                trial_scene.steps
            )
        });
        if note.is_none() {
            best_median = best_median.min(m.total.median);
        }
        trials.push(Trial {
            configuration: label,
            config,
            steps: m.steps,
            mean_ms: if note.is_some() {
                f64::INFINITY
            } else {
                m.total.mean
            },
            median_ms: m.total.median,
            p95_ms: m.total.p95,
            bytes_per_proxy: m.bytes_per_proxy,
            note,
        });
    }
    Ok(trials)
}

/// The one-line recommendation, beside the all-rounder and the runner-up.
fn print_recommendation(trials: &[Trial], winner: &Trial) {
    let default = trials
        .iter()
        .find(|t| t.configuration == "sort-and-sweep" && t.note.is_none());
    let versus = match default {
        Some(d) if d.configuration != winner.configuration => format!(
            ", {:.2}× the time of the library's all-rounder sort-and-sweep",
            winner.mean_ms / d.mean_ms.max(1e-9)
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
                t.mean_ms / winner.mean_ms.max(1e-9)
            )
        })
        .unwrap_or_default();
    println!(
        "\nrecommendation: {} — {:.3} ms per step on average, p95 {:.3} ms{versus}{runner_up}",
        winner.configuration, winner.mean_ms, winner.p95_ms
    );
}

/// Writes the winner to `--out` with how it was found in its header comments.
fn write_recommendation(args: &RecommendArgs, winner: &Trial) -> anyhow::Result<()> {
    let source = args
        .scene
        .scene
        .as_ref()
        .map_or("the default scene".to_string(), |p| p.display().to_string());
    let header = vec![
        format!("broadphase recommend --scene {source} --budget {}", args.budget),
        format!(
            "{}: {:.3} ms per step on average ({} trial steps); load with `broadphase bench --config FILE`",
            winner.configuration, winner.mean_ms, winner.steps
        ),
        "or build it in Rust:".to_string(),
    ];
    crate::output::write_atomically(&args.out, winner.config.to_file_text(&header).as_bytes())?;
    println!("wrote {}", args.out.display());
    Ok(())
}

fn print_table(trials: &[Trial]) {
    println!(
        "{:>4}  {:<38} {:>6} {:>10} {:>10} {:>10} {:>8}",
        "rank", "configuration", "steps", "mean ms", "median ms", "p95 ms", "B/proxy"
    );
    for (rank, t) in trials.iter().enumerate() {
        match &t.note {
            None => println!(
                "{:>4}  {:<38} {:>6} {:>10.3} {:>10.3} {:>10.3} {:>8.0}",
                rank + 1,
                t.configuration,
                t.steps,
                t.mean_ms,
                t.median_ms,
                t.p95_ms,
                t.bytes_per_proxy
            ),
            Some(note) => println!("{:>4}  {:<38} {note}", "-", t.configuration),
        }
    }
}
