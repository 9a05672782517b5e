//! `broadphase sweep`: the supervising script of [Zych16, ch. 4]. Every algorithm at every value of one
//! scene parameter, written as `results.csv`, charts and `summary.md`.

use crate::quantity;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use broadphase_sim::{Scene, SceneBuilder};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use crate::charts::{write_chart, Chart};
use crate::measure::{measure, Measurement};
use crate::output::{prepare_dir, write_atomically};
use crate::scene_args::SceneArgs;

/// The columns of `results.csv`, in order.
pub const CSV_HEADER: &str = "param,value,algorithm,objects,set_aabbs_ms,update_ms,narrow_ms,total_ms,total_ms_p95,total_ms_max,possible_pairs,actual_collisions";

/// Options of `broadphase sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// The scene field to vary (e.g. objects, density, mean_speed, shapes, size_alpha_beta).
    #[arg(long)]
    param: String,
    /// Comma-separated values of the field.
    #[arg(long, value_delimiter = ',', required = true)]
    values: Vec<String>,
    /// Comma-separated algorithms (default: all, peers included).
    #[arg(long)]
    algorithms: Option<String>,
    /// Output directory (created if needed).
    #[arg(long)]
    out: PathBuf,
    /// Number of objects (when it is not the swept parameter).
    #[arg(long)]
    objects: Option<String>,
    #[command(flatten)]
    scene: SceneArgs,
}

/// A sweep to run: the base scene, the parameter, its values and the algorithms.
#[derive(Debug, Clone)]
pub struct SweepSpec {
    /// Title of the summary and charts.
    pub title: String,
    /// The base scene (file plus flags).
    pub base: SceneBuilder,
    /// The field varied.
    pub param: String,
    /// Its values, as written.
    pub values: Vec<String>,
    /// The algorithms, in order.
    pub algorithms: Vec<String>,
    /// Object counts over which exponents are fitted (`None`: all values).
    pub fit_range: Option<(f64, f64)>,
}

/// One algorithm at one value.
#[derive(Debug, Clone)]
pub struct SweepRow {
    /// The parameter's value.
    pub value: String,
    /// The measurements.
    pub measurement: Measurement,
}

/// What a sweep measured.
#[derive(Debug, Clone)]
pub struct SweepOutcome {
    /// One row per value and algorithm.
    pub rows: Vec<SweepRow>,
    /// Pairs of algorithms whose pair counts differed (should be empty: all are exact).
    pub disagreements: Vec<String>,
    /// Fastest algorithm (median total) at each value, with the runner-up's ratio.
    pub winners: Vec<(String, String, f64)>,
    /// For an object-count sweep, per algorithm: exponents of the total time and of the
    /// broad-phase time (update-AABB + broad) against n.
    pub exponents: Vec<(String, Option<f64>, Option<f64>)>,
}

pub fn run(args: &SweepArgs) -> anyhow::Result<ExitCode> {
    let algorithms = crate::parse_algorithms(&args.algorithms)?;
    let mut base = args.scene.builder(&[])?;
    if let Some(objects) = &args.objects {
        base.set("objects", objects)
            .map_err(|e| anyhow::anyhow!("--objects: {e}"))?;
    }
    let spec = SweepSpec {
        title: format!("sweep of {}", args.param),
        base,
        param: args.param.clone(),
        values: args.values.iter().map(|v| v.trim().to_string()).collect(),
        algorithms,
        fit_range: None,
    };
    let outcome = run_sweep(&spec, &args.out, "")?;
    Ok(report(&outcome, &args.out))
}

/// Prints where the results are and any disagreement; the exit code.
pub fn report(outcome: &SweepOutcome, out: &Path) -> ExitCode {
    for (value, winner, ratio) in &outcome.winners {
        println!("{value:>12}: {winner} fastest (next ×{ratio:.2})");
    }
    for (name, total, broad) in &outcome.exponents {
        println!(
            "exponent vs objects, {name}: total {}, broad phase {}",
            fmt_exponent(*total),
            fmt_exponent(*broad)
        );
    }
    println!(
        "wrote {}, {} and the charts",
        out.join("results.csv").display(),
        out.join("summary.md").display()
    );
    for d in &outcome.disagreements {
        eprintln!("error: {d}");
    }
    if outcome.disagreements.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The scene of each value, checked before anything runs.
fn scenes(spec: &SweepSpec) -> anyhow::Result<Vec<Scene>> {
    if spec.values.is_empty() || spec.values.iter().any(|v| v.is_empty()) {
        anyhow::bail!("--values must list at least one non-empty value");
    }
    spec.values
        .iter()
        .map(|value| {
            let mut b = spec.base.clone();
            b.set(&spec.param, value)
                .map_err(|e| anyhow::anyhow!("--param {} = {value}: {e}", spec.param))?;
            b.build()
                .map_err(|e| anyhow::anyhow!("--param {} = {value}: {e}", spec.param))
        })
        .collect()
}

/// Runs the sweep and writes `out/results.csv`, the charts and `out/summary.md` (after
/// `preamble`, e.g. a source's claim).
pub fn run_sweep(spec: &SweepSpec, out: &Path, preamble: &str) -> anyhow::Result<SweepOutcome> {
    if spec.algorithms.is_empty() {
        anyhow::bail!("no algorithm to run");
    }
    let scenes = scenes(spec)?;
    prepare_dir(out)?;
    let total: u64 = scenes
        .iter()
        .map(|s| ((s.warmup + s.steps) * spec.algorithms.len()) as u64)
        .sum();
    let progress = ProgressBar::new(total);
    progress.set_style(
        ProgressStyle::with_template("{msg:>28} [{bar:30}] {pos}/{len} steps, eta {eta}")
            .expect("valid template"),
    );
    let mut rows = Vec::new();
    let mut disagreements = Vec::new();
    for (value, scene) in spec.values.iter().zip(&scenes) {
        let mut reference: Option<Measurement> = None;
        for name in &spec.algorithms {
            progress.set_message(format!("{}={value} {name}", spec.param));
            let m = measure(
                name,
                &Default::default(),
                scene,
                0,
                f64::INFINITY,
                &progress,
            )?;
            match &reference {
                Some(r) if r.pair_counts != m.pair_counts => disagreements.push(format!(
                    "{} and {} report different pair counts at {}={value}",
                    r.algorithm, m.algorithm, spec.param
                )),
                Some(_) => {}
                None => reference = Some(m.clone()),
            }
            rows.push(SweepRow {
                value: value.clone(),
                measurement: m,
            });
        }
    }
    progress.finish_and_clear();
    let outcome = SweepOutcome {
        winners: winners(spec, &rows),
        exponents: if spec.param == "objects" {
            exponents(spec, &rows)
        } else {
            Vec::new()
        },
        rows,
        disagreements,
    };
    write_atomically(
        &out.join("results.csv"),
        csv(spec, &outcome.rows).as_bytes(),
    )?;
    write_charts(spec, &outcome.rows, out)?;
    let summary = summary(spec, &scenes[0], &outcome, preamble);
    write_atomically(&out.join("summary.md"), summary.as_bytes())?;
    Ok(outcome)
}

/// The measured quantities: file stem, axis label, value of a row.
type Quantity = (&'static str, &'static str, fn(&Measurement) -> f64);

const QUANTITIES: [Quantity; 7] = [
    ("total_ms", "total ms per step (median)", |m| m.total.median),
    ("total_ms_p95", "total ms per step (p95)", |m| m.total.p95),
    (
        quantity::SET_AABBS.key,
        "hand boxes over (set_aabbs) ms per step (median)",
        |m| m.update.median,
    ),
    (
        quantity::UPDATE.key,
        "broad phase (update) ms per step (median)",
        |m| m.broad.median,
    ),
    (
        quantity::NARROW.key,
        "narrow phase ms per step (median)",
        |m| m.narrow.median,
    ),
    (
        quantity::POSSIBLE_PAIRS.key,
        "possible collisions (broad-phase pairs, mean)",
        |m| m.possible_mean,
    ),
    (
        quantity::ACTUAL_COLLISIONS.key,
        "actual collisions (intersecting shapes, mean)",
        |m| m.actual_mean,
    ),
];

/// The CSV text: [`CSV_HEADER`] then one line per row.
pub fn csv(spec: &SweepSpec, rows: &[SweepRow]) -> String {
    let mut text = format!("{CSV_HEADER}\n");
    for row in rows {
        let m = &row.measurement;
        let _ = writeln!(
            text,
            "{},{},{},{},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.3},{:.3}",
            spec.param,
            row.value,
            m.algorithm,
            m.objects,
            m.update.median,
            m.broad.median,
            m.narrow.median,
            m.total.median,
            m.total.p95,
            m.total.max,
            m.possible_mean,
            m.actual_mean
        );
    }
    text
}

fn value_of(spec: &SweepSpec, rows: &[SweepRow], value: &str, name: &str) -> Option<Measurement> {
    let _ = spec;
    rows.iter()
        .find(|r| r.value == value && r.measurement.algorithm == name)
        .map(|r| r.measurement.clone())
}

fn write_charts(spec: &SweepSpec, rows: &[SweepRow], out: &Path) -> anyhow::Result<()> {
    for (stem, label, get) in QUANTITIES {
        let series = spec
            .algorithms
            .iter()
            .map(|name| {
                let ys = spec
                    .values
                    .iter()
                    .map(|v| value_of(spec, rows, v, name).map_or(f64::NAN, |m| get(&m)))
                    .collect();
                (name.clone(), ys)
            })
            .collect();
        let chart = Chart {
            title: format!("{}: {}", spec.title, label),
            x_label: &spec.param,
            y_label: label,
            x_values: &spec.values,
            series,
        };
        write_chart(out, stem, &chart)?;
    }
    Ok(())
}

fn winners(spec: &SweepSpec, rows: &[SweepRow]) -> Vec<(String, String, f64)> {
    spec.values
        .iter()
        .filter_map(|value| {
            let mut at: Vec<&Measurement> = rows
                .iter()
                .filter(|r| &r.value == value)
                .map(|r| &r.measurement)
                .collect();
            at.sort_by(|a, b| a.total.median.total_cmp(&b.total.median));
            let best = at.first()?;
            let ratio = at.get(1).map_or(1.0, |second| {
                second.total.median / best.total.median.max(1e-12)
            });
            Some((value.clone(), best.algorithm.clone(), ratio))
        })
        .collect()
}

/// Least-squares slope of `ln y` against `ln x` over the points with both positive.
pub fn fit_exponent(points: &[(f64, f64)]) -> Option<f64> {
    let logs: Vec<(f64, f64)> = points
        .iter()
        .filter(|(x, y)| *x > 0.0 && *y > 0.0 && x.is_finite() && y.is_finite())
        .map(|(x, y)| (x.ln(), y.ln()))
        .collect();
    if logs.len() < 2 {
        return None;
    }
    let n = logs.len() as f64;
    let mx = logs.iter().map(|p| p.0).sum::<f64>() / n;
    let my = logs.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = logs.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    let sxy: f64 = logs.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

fn exponents(spec: &SweepSpec, rows: &[SweepRow]) -> Vec<(String, Option<f64>, Option<f64>)> {
    spec.algorithms
        .iter()
        .map(|name| {
            let fit = |time: fn(&Measurement) -> f64| {
                let points: Vec<(f64, f64)> = rows
                    .iter()
                    .filter(|r| &r.measurement.algorithm == name)
                    .filter(|r| {
                        spec.fit_range.is_none_or(|(lo, hi)| {
                            (lo..=hi).contains(&(r.measurement.objects as f64))
                        })
                    })
                    .map(|r| (r.measurement.objects as f64, time(&r.measurement)))
                    .collect();
                fit_exponent(&points)
            };
            (
                name.clone(),
                fit(|m| m.total.median),
                fit(|m| m.update.median + m.broad.median),
            )
        })
        .collect()
}

fn fmt_exponent(k: Option<f64>) -> String {
    k.map_or("-".to_string(), |k| format!("{k:.2}"))
}

fn summary(spec: &SweepSpec, first: &Scene, outcome: &SweepOutcome, preamble: &str) -> String {
    let mut s = format!("# {}\n\n", spec.title);
    s.push_str(preamble);
    let _ = writeln!(
        s,
        "## Measured here\n\nParameter `{}` over {}; {} warm-up + {} measured steps per run; \
         times are medians per step in ms (p95 and max of the total beside). \
         Fastest algorithm (median total) at each value:\n",
        spec.param,
        spec.values.join(", "),
        first.warmup,
        first.steps
    );
    for (value, winner, ratio) in &outcome.winners {
        let _ = writeln!(
            s,
            "- {} = {value}: **{winner}** (runner-up ×{ratio:.2})",
            spec.param
        );
    }
    if outcome
        .rows
        .iter()
        .any(|r| r.measurement.algorithm == "adaptive")
    {
        let _ = writeln!(
            s,
            "\n`adaptive` beside the fastest fixed algorithm (median total ms per step; p95):\n\n\
             | {} | adaptive | p95 | fastest fixed | its median | its p95 | adaptive ÷ fastest |\n|---|---:|---:|---|---:|---:|---:|",
            spec.param
        );
        for value in &spec.values {
            let at: Vec<&Measurement> = outcome
                .rows
                .iter()
                .filter(|r| &r.value == value)
                .map(|r| &r.measurement)
                .collect();
            let adaptive = at.iter().find(|m| m.algorithm == "adaptive");
            let fixed = at
                .iter()
                .filter(|m| m.algorithm != "adaptive")
                .min_by(|a, b| a.total.median.total_cmp(&b.total.median));
            if let (Some(a), Some(f)) = (adaptive, fixed) {
                let _ = writeln!(
                    s,
                    "| {value} | {:.3} | {:.3} | {} | {:.3} | {:.3} | {:.2} |",
                    a.total.median,
                    a.total.p95,
                    f.algorithm,
                    f.total.median,
                    f.total.p95,
                    a.total.median / f.total.median.max(1e-12)
                );
            }
        }
    }
    if !outcome.exponents.is_empty() {
        let range = match spec.fit_range {
            Some((lo, hi)) => format!("objects {lo}–{hi}"),
            None => "all values".to_string(),
        };
        let _ = writeln!(
            s,
            "\nFitted exponent k of time ∝ n^k (least squares on log–log, {range}):\n\n\
             | algorithm | total | broad phase (update-AABB + broad) |\n|---|---:|---:|",
        );
        for (name, total, broad) in &outcome.exponents {
            let _ = writeln!(
                s,
                "| {name} | {} | {} |",
                fmt_exponent(*total),
                fmt_exponent(*broad)
            );
        }
    }
    if !outcome.disagreements.is_empty() {
        s.push_str("\n**Pair counts disagreed:**\n\n");
        for d in &outcome.disagreements {
            let _ = writeln!(s, "- {d}");
        }
    }
    let _ = writeln!(
        s,
        "\n| {} | algorithm | total | p95 | max | update-AABB | broad | narrow | possible | actual |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        spec.param
    );
    for row in &outcome.rows {
        let m = &row.measurement;
        let _ = writeln!(
            s,
            "| {} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.1} | {:.1} |",
            row.value,
            m.algorithm,
            m.total.median,
            m.total.p95,
            m.total.max,
            m.update.median,
            m.broad.median,
            m.narrow.median,
            m.possible_mean,
            m.actual_mean
        );
    }
    let _ = writeln!(
        s,
        "\nCharts: {} (SVG and PNG).\n\n## Scene (first value)\n\n```toml\n{}```",
        QUANTITIES
            .iter()
            .map(|(stem, _, _)| format!("`{stem}`"))
            .collect::<Vec<_>>()
            .join(", "),
        first.to_toml()
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponent_of_power_laws() {
        let quadratic: Vec<(f64, f64)> = [50.0, 100.0, 200.0, 400.0]
            .iter()
            .map(|&n: &f64| (n, 3e-4 * n * n))
            .collect();
        assert!((fit_exponent(&quadratic).unwrap() - 2.0).abs() < 1e-9);
        let linear: Vec<(f64, f64)> = [10.0, 1000.0].iter().map(|&n: &f64| (n, 0.5 * n)).collect();
        assert!((fit_exponent(&linear).unwrap() - 1.0).abs() < 1e-9);
        // Noisy n^1.5: close to 1.5.
        let noisy = [
            (100.0, 1000.0 * 1.05),
            (400.0, 8000.0 * 0.95),
            (1600.0, 64000.0 * 1.02),
        ];
        assert!((fit_exponent(&noisy).unwrap() - 1.5).abs() < 0.05);
        assert_eq!(fit_exponent(&[(10.0, 1.0)]), None);
        assert_eq!(fit_exponent(&[(10.0, 1.0), (10.0, 2.0)]), None);
        assert_eq!(fit_exponent(&[(10.0, 0.0), (20.0, 0.0)]), None);
    }
}
