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
use crate::measure::{measure, measure_until, Measurement, Settings};
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
    /// Number of objects (default: the scene's).
    #[arg(long)]
    objects: Option<usize>,
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
    /// `total_ms_median` of each round it ran (the rounds alternate the order of trials).
    pub round_medians: Vec<f64>,
    /// `total_ms_p95` of each round it ran.
    pub round_p95s: Vec<f64>,
}

impl Trial {
    /// The ranking's key: the median of its rounds' `total_ms_median` (one slow round on a
    /// shared machine does not decide), infinite without a full result.
    fn median_ms(&self) -> f64 {
        if self.note.is_some() || self.round_medians.is_empty() {
            return f64::INFINITY;
        }
        let mut medians = self.round_medians.clone();
        crate::measure::stats::summarize(&mut medians).median
    }

    /// How far its rounds differ, relative to its median (0 with one round).
    fn round_spread(&self) -> f64 {
        let (lo, hi) = self
            .round_medians
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(lo, hi), &m| {
                (lo.min(m), hi.max(m))
            });
        if self.round_medians.len() < 2 || lo <= 0.0 {
            0.0
        } else {
            hi / lo - 1.0
        }
    }

    /// The largest `total_ms_p95` of its rounds: the tail it may show.
    fn p95_ms(&self) -> f64 {
        self.round_p95s.iter().copied().fold(f64::NAN, f64::max)
    }

    /// Whether it is an algorithm with the library's defaults (simpler than a tuned variant).
    fn is_plain(&self) -> bool {
        self.config == AlgorithmConfig::plain(&self.config.algorithm)
    }
}

/// Rounds of trials, the order reversed each round, so that a configuration's rounds fall at
/// different times of a machine whose speed drifts.
const ROUNDS: usize = 2;

/// Two medians closer than this (relative) are within noise whatever the rounds say.
const LEAST_NOISE: f64 = 0.05;

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
    // A variant within a quarter of what the defaults already use would spend the budget
    // on the same configuration twice: the grid's automatic cell is about twice the mean
    // object size, and the tree's margin has a fixed default.
    let near = |x: f32, default: f32| (x - default).abs() <= 0.25 * default.abs();
    for factor in [1.0f32, 2.0, 4.0] {
        let cell = round2(extent * factor);
        if !near(cell, 2.0 * extent) {
            configs.push(AlgorithmConfig {
                grid_cell_size: Some(cell),
                ..AlgorithmConfig::plain("grid")
            });
        }
    }
    let default_margin = broadphase::AlgorithmOptions::default().dynamic_tree.margin;
    for margin in [0.0f32, 0.05 * extent, 0.25 * extent] {
        let margin = round2(margin);
        if !near(margin, default_margin) && !configs.iter().any(|c| c.tree_margin == Some(margin)) {
            configs.push(AlgorithmConfig {
                tree_margin: Some(margin),
                ..AlgorithmConfig::plain("dynamic-tree")
            });
        }
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
    let mut builder = args.scene.builder(&[])?;
    if let Some(objects) = args.objects {
        builder
            .set("objects", &objects.to_string())
            .map_err(|e| anyhow::anyhow!("--objects: {e}"))?;
    }
    let scene = builder.build().map_err(|e| args.scene.explain(e))?;
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
    let (winner, within_noise) =
        choose(&trials).ok_or_else(|| anyhow::anyhow!("no configuration finished its trial"))?;
    let mut report = Report::of(ranking(&trials));
    report
        .footer
        .push(recommendation(&trials, winner, &within_noise));
    report.footer.push(format!("wrote {}", args.out.display()));
    write_config(args, &scene, &plan.scene, winner)?;
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
        &Settings::default(),
        &ProgressBar::hidden(),
    )?;
    let probe_seconds = probe_start.elapsed().as_secs_f64();
    let per_config =
        (budget - started.elapsed().as_secs_f64()).max(0.0) / (configurations * ROUNDS) as f64;
    // The all-rounder should take a third of a configuration's share: slower ones get
    // their share and are stopped at its end (they lose to any that finished).
    let scale = (probe_scale * per_config / (3.0 * probe_seconds.max(1e-6))).clamp(0.0, 1.0);
    Ok(TrialPlan {
        scene: shortened(scene, scale),
        started,
        probe_median_ms: probed.total.median,
    })
}

/// Every configuration, [`ROUNDS`] times, the order reversed each round, each trial within
/// its share of what is left of the budget. A configuration stopped as too slow is not tried
/// again.
fn run_trials(
    configs: Vec<AlgorithmConfig>,
    plan: &TrialPlan,
    budget: f64,
) -> anyhow::Result<Vec<Trial>> {
    let mut trials: Vec<Trial> = configs
        .into_iter()
        .map(|config| Trial {
            configuration: config.label(),
            config,
            measured: None,
            note: None,
            round_medians: Vec::new(),
            round_p95s: Vec::new(),
        })
        .collect();
    let mut best_median = plan.probe_median_ms;
    let total = trials.len() * ROUNDS;
    let mut done = 0;
    for round in 0..ROUNDS {
        let order: Vec<usize> = if round % 2 == 0 {
            (0..trials.len()).collect()
        } else {
            (0..trials.len()).rev().collect()
        };
        for k in order {
            let trial = &mut trials[k];
            done += 1;
            if trial.note.is_some() {
                continue;
            }
            let left = budget - plan.started.elapsed().as_secs_f64();
            if left <= 0.0 {
                if trial.round_medians.is_empty() {
                    trial.note = Some("not tried: budget spent".into());
                }
                continue;
            }
            // Ten times slower than the best so far cannot win: stop it early. `adaptive`
            // times its candidates in its first steps, the slow ones too, so only its time
            // share stops it.
            let limit = if trial.config.algorithm == "adaptive" {
                f64::INFINITY
            } else {
                10.0 * best_median + 5.0
            };
            let share = std::time::Duration::from_secs_f64(left / (total - done + 1).max(1) as f64);
            let m = measure_until(
                &trial.config.algorithm,
                &trial.config.options()?,
                &plan.scene,
                &Settings {
                    max_step_ms: limit,
                    ..Settings::default()
                },
                Some(Instant::now() + share),
                &ProgressBar::hidden(),
            )?;
            if let Some((step, _)) = m.stopped {
                if trial.round_medians.is_empty() {
                    trial.note = Some(format!(
                        "too slow: stopped at step {step} of {} (out of its time share or 10× \
                         the best step)",
                        plan.scene.steps
                    ));
                    trial.measured = Some(m);
                }
                continue;
            }
            best_median = best_median.min(m.total.median);
            trial.round_medians.push(m.total.median);
            trial.round_p95s.push(m.total.p95);
            trial.measured = Some(m);
        }
    }
    Ok(trials)
}

/// Ranked by the median of the rounds' `total_ms_median`, ties by name: a deterministic
/// order.
fn rank(trials: &mut [Trial]) {
    trials.sort_by(|a, b| {
        a.median_ms()
            .total_cmp(&b.median_ms())
            .then_with(|| a.configuration.cmp(&b.configuration))
    });
}

/// The recommended trial, and the others within noise of the fastest (ranked trials). When
/// the fastest trials are within noise of each other the simplest of them is chosen: the
/// library's all-rounder `sort-and-sweep`, else an algorithm with its defaults, else the
/// fastest.
fn choose(trials: &[Trial]) -> Option<(&Trial, Vec<&Trial>)> {
    let best = trials.first().filter(|t| t.note.is_none())?;
    let noise = |t: &Trial| LEAST_NOISE.max(best.round_spread()).max(t.round_spread());
    // The ranking's head while it stays within noise of the fastest: a trial outside ends
    // it, so every trial left out is slower than every one kept.
    let close: Vec<&Trial> = trials
        .iter()
        .take_while(|t| t.note.is_none())
        .take_while(|t| t.median_ms() <= best.median_ms() * (1.0 + noise(t)))
        .collect();
    let simplest = close
        .iter()
        .find(|t| t.config == AlgorithmConfig::plain("sort-and-sweep"))
        .or_else(|| close.iter().find(|t| t.is_plain()))
        .copied()
        .unwrap_or(best);
    Some((simplest, close))
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
            Value::float_or_missing(full.map(|_| t.median_ms())),
            Value::float_or_missing(full.map(|_| t.p95_ms())),
            Value::float_or_missing(t.measured.as_ref().map(|m| m.bytes_per_proxy)),
            t.note.as_ref().map_or(Value::Missing, Value::text),
        ]);
        row.note = t.note.clone();
        table.push(row);
    }
    table
}

/// The recommendation line: the winner and its times, the others within noise of it (when
/// the choice among them went to the simpler one), the library's all-rounder and the next
/// one.
fn recommendation(trials: &[Trial], winner: &Trial, within_noise: &[&Trial]) -> String {
    let ratio = |t: &Trial| t.median_ms() / winner.median_ms().max(1e-9);
    let others: Vec<&&Trial> = within_noise
        .iter()
        .filter(|t| t.configuration != winner.configuration)
        .collect();
    let noise = if others.is_empty() {
        String::new()
    } else {
        let names: Vec<String> = others
            .iter()
            .map(|t| format!("{} {:.2}×", t.configuration, ratio(t)))
            .collect();
        format!(
            "; within noise of it: {} (the simpler configuration is recommended)",
            names.join(", ")
        )
    };
    let default = trials
        .iter()
        .find(|t| t.configuration == "sort-and-sweep" && t.note.is_none());
    let versus = match default {
        Some(d) if d.configuration != winner.configuration && others.is_empty() => format!(
            ", {:.2}× the time of the library's all-rounder sort-and-sweep",
            1.0 / ratio(d).max(1e-9)
        ),
        _ => String::new(),
    };
    let runner_up = trials
        .iter()
        .filter(|t| t.note.is_none() && t.configuration != winner.configuration)
        .find(|t| !others.iter().any(|o| o.configuration == t.configuration))
        .map(|t| format!("; next: {} ({:.2}×)", t.configuration, ratio(t)))
        .unwrap_or_default();
    let p95 = winner.p95_ms();
    format!(
        "recommendation: {} — total_ms_median {:.3}, total_ms_p95 {p95:.3}{versus}{noise}{runner_up}",
        winner.configuration,
        winner.median_ms()
    )
}

/// `text` as one shell word (quoted when it holds anything but plain characters).
fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=,:+@%".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// The scene arguments that give `recommend`'s scene again: the file, the flags, `--objects`.
fn scene_words(args: &RecommendArgs) -> Vec<String> {
    let mut words = Vec::new();
    if let Some(path) = &args.scene.scene {
        words.push("--scene".to_string());
        words.push(shell_word(&path.display().to_string()));
    }
    for (field, value) in &args.scene.overrides {
        if *field == "warmup" || *field == "steps" {
            continue;
        }
        words.push(format!("--{}", field.replace('_', "-")));
        words.push(shell_word(value));
    }
    if let Some(objects) = args.objects {
        words.push(format!("--objects {objects}"));
    }
    words
}

/// The command that runs the recommended configuration on the whole scene (not the trials'
/// shortened one): `broadphase bench` with the scene, its steps and `--config`.
pub fn bench_command(args: &RecommendArgs, scene: &Scene) -> String {
    let mut words = vec!["broadphase bench".to_string()];
    words.extend(scene_words(args));
    words.push(format!("--warmup {}", scene.warmup));
    // A phased scene's measured steps are its phases'.
    if scene.phases.is_empty() {
        words.push(format!("--steps {}", scene.steps));
    }
    words.push(format!(
        "--config {}",
        shell_word(&args.out.display().to_string())
    ));
    words.join(" ")
}

/// Writes the winner's configuration file, its origin in comments above it.
fn write_config(
    args: &RecommendArgs,
    scene: &Scene,
    trial_scene: &Scene,
    winner: &Trial,
) -> anyhow::Result<()> {
    let mut made_by = vec!["broadphase recommend".to_string()];
    made_by.extend(scene_words(args));
    made_by.push(format!("--budget {}", args.budget));
    let header = vec![
        format!("made by: {}", made_by.join(" ")),
        format!(
            "{}: total_ms_median {:.3} over {} of {} each",
            winner.configuration,
            winner.median_ms(),
            crate::console::count(winner.round_medians.len(), "round"),
            crate::console::count(trial_scene.steps, "trial step"),
        ),
        format!("run: {}", bench_command(args, scene)),
        "or build it in Rust:".to_string(),
    ];
    write_atomically(&args.out, winner.config.to_file_text(&header).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(config: AlgorithmConfig, rounds: &[f64]) -> Trial {
        Trial {
            configuration: config.label(),
            config,
            measured: None,
            note: None,
            round_medians: rounds.to_vec(),
            round_p95s: rounds.to_vec(),
        }
    }

    #[test]
    fn within_noise_the_simpler_configuration_is_chosen() {
        let variant = AlgorithmConfig {
            bvh_build: Some("bottom-up".into()),
            ..AlgorithmConfig::plain("bvh")
        };
        // The variant is 2% faster: within noise of the all-rounder, which is chosen.
        let mut trials = vec![
            trial(variant.clone(), &[0.98, 0.98]),
            trial(AlgorithmConfig::plain("sort-and-sweep"), &[1.0, 1.0]),
            trial(AlgorithmConfig::plain("grid"), &[3.0, 3.0]),
        ];
        rank(&mut trials);
        let (chosen, close) = choose(&trials).unwrap();
        assert_eq!(chosen.configuration, "sort-and-sweep");
        assert_eq!(close.len(), 2);
        let line = recommendation(&trials, chosen, &close);
        assert!(line.contains("within noise of it: bvh bottom-up"), "{line}");
        assert!(line.contains("next: grid"), "{line}");
        // Twice as fast is not noise.
        let mut trials = vec![
            trial(variant, &[0.49, 0.5]),
            trial(AlgorithmConfig::plain("sort-and-sweep"), &[1.0, 0.9]),
        ];
        rank(&mut trials);
        let (chosen, close) = choose(&trials).unwrap();
        assert_eq!(chosen.configuration, "bvh bottom-up");
        assert_eq!(close.len(), 1);
    }

    #[test]
    fn rounds_that_disagree_widen_the_noise_and_the_median_ranks() {
        // The median over rounds ranks, not one lucky round: 0.8 against 1.0.
        let mut trials = vec![
            trial(AlgorithmConfig::plain("grid"), &[0.5, 1.5, 1.6]),
            trial(AlgorithmConfig::plain("sap"), &[1.0, 1.0, 1.0]),
        ];
        rank(&mut trials);
        assert_eq!(trials[0].configuration, "sap");
        // sap's rounds agree, grid's spread 3.2×: grid is within noise of sap.
        let (chosen, close) = choose(&trials).unwrap();
        assert_eq!(chosen.configuration, "sap");
        assert_eq!(close.len(), 2);
    }

    #[test]
    fn near_duplicate_configurations_are_tried_once() {
        let scene = broadphase_sim::SceneBuilder::new().build().unwrap();
        let configs = configurations(&scene);
        let labels: Vec<String> = configs.iter().map(AlgorithmConfig::label).collect();
        for (i, label) in labels.iter().enumerate() {
            assert!(!labels[i + 1..].contains(label), "{label} twice");
        }
        let extent = scene
            .size_mean
            .unwrap_or((scene.size_min + scene.size_max) / 2.0);
        for c in &configs {
            if let Some(cell) = c.grid_cell_size {
                // The automatic cell is about twice the mean size: the plain grid tries it.
                assert!((cell - 2.0 * extent).abs() > 0.25 * 2.0 * extent, "{cell}");
            }
        }
        assert!(labels.iter().any(|l| l.starts_with("grid cell")));
    }
}
