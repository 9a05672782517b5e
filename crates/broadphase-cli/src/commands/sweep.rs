//! `broadphase sweep`: the supervising script of [Zych16, ch. 4.1]. Every algorithm at every
//! value of one scene parameter, written as `results.csv`, one chart per quantity and
//! `summary.md`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use broadphase_sim::{Scene, SceneBuilder};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use crate::export::charts::{write_chart, Chart};
use crate::export::files::{prepare_dir, write_atomically};
use crate::export::quantity::{
    ACTUAL_PAIRS, ADAPTIVE_VS_FASTEST_FIXED, ALGORITHM, FASTEST, FASTEST_FIXED, NARROW_MS, PARAM,
    POSSIBLE_PAIRS, RUNNER_UP, SET_AABBS_AND_UPDATE_MS, SET_AABBS_MS, TOTAL_MS, UPDATE_MS, VALUE,
    VS_FASTEST,
};
use crate::export::{
    emit, exporter, markdown, Column, Field, Format, Report, Statistic, Table, Value,
};
use crate::measure::{fastest_total, measure, run_fields, run_values, Measurement, Settings};
use crate::options::algorithms::parse_list;
use crate::options::scene::SceneArgs;

/// Options of `broadphase sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// The scene field to vary: any flag of the scene (see below; size_alpha_beta sets both
    /// beta parameters).
    #[arg(long)]
    param: String,
    /// Comma-separated values of the field.
    #[arg(long, value_delimiter = ',', required = true)]
    values: Vec<String>,
    /// Comma-separated algorithms (default: all, peers included).
    #[arg(long)]
    algorithms: Option<String>,
    /// Output directory (created if needed): results.csv, the charts, summary.md.
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

/// The fastest algorithms at one value.
#[derive(Debug, Clone)]
pub struct Winner {
    /// The value.
    pub value: String,
    /// The algorithm with the smallest `total_ms_median`.
    pub fastest: String,
    /// The second, and its `total_ms_median` over the fastest's.
    pub runner_up: Option<(String, f64)>,
}

/// The fitted exponents of one algorithm.
#[derive(Debug, Clone)]
pub struct Exponents {
    /// The algorithm.
    pub algorithm: String,
    /// Of `total_ms_median`.
    pub total_ms: Option<f64>,
    /// Of `set_aabbs_ms_median + update_ms_median`.
    pub set_aabbs_and_update_ms: Option<f64>,
}

/// What a sweep measured.
#[derive(Debug, Clone)]
pub struct SweepOutcome {
    /// One row per value and algorithm.
    pub rows: Vec<SweepRow>,
    /// Pairs of algorithms whose pair counts differed (should be empty: all are exact).
    pub disagreements: Vec<String>,
    /// The fastest algorithms at each value.
    pub winners: Vec<Winner>,
    /// For an object-count sweep, per algorithm.
    pub exponents: Vec<Exponents>,
}

/// The columns charted, one chart each, named by the column's key.
const CHARTS: [Column; 7] = [
    TOTAL_MS.median(),
    TOTAL_MS.with(Statistic::P95),
    SET_AABBS_MS.median(),
    UPDATE_MS.median(),
    NARROW_MS.median(),
    POSSIBLE_PAIRS.mean(),
    ACTUAL_PAIRS.mean(),
];

pub fn run(args: &SweepArgs) -> anyhow::Result<ExitCode> {
    let algorithms = parse_list(&args.algorithms)?;
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
    let outcome = run_sweep(&spec, &args.out, "").map_err(|e| args.scene.explain(e))?;
    report(&outcome, &args.out)
}

/// Prints the fastest algorithms, the exponents, where the results are and any
/// disagreement; the exit code.
pub fn report(outcome: &SweepOutcome, out: &Path) -> anyhow::Result<ExitCode> {
    let mut report = Report::of(winners_table(outcome));
    if !outcome.exponents.is_empty() {
        report.tables.push(exponents_table(outcome));
    }
    report.footer.push(format!(
        "wrote {}, {} and the charts",
        out.join("results.csv").display(),
        out.join("summary.md").display()
    ));
    emit(&report, Format::Table, &mut std::io::stdout().lock())?;
    // The fitted exponents and the fastest algorithm at each value rest on medians; a busy
    // machine skews them (brute force "cubic"), so say so.
    let spreads: Vec<_> = outcome
        .rows
        .iter()
        .filter(|r| !crate::measure::unmeasured(&r.measurement))
        .map(|r| r.measurement.spread())
        .collect();
    if let Some(noise) = crate::measure::noise::assess(&spreads) {
        let steps = outcome.rows.first().map_or(0, |r| r.measurement.steps);
        crate::console::note!(
            "{}",
            crate::measure::noise::warning(&noise, "--steps", steps)
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

/// The scene of each value, checked before anything runs.
fn scenes(spec: &SweepSpec) -> anyhow::Result<Vec<Scene>> {
    if spec.values.is_empty() || spec.values.iter().any(|v| v.is_empty()) {
        anyhow::bail!("--values must list at least one non-empty value");
    }
    spec.values
        .iter()
        .map(|value| {
            // An error about another field comes from the scene or its flags, not the value.
            let at_value = |e: anyhow::Error| {
                if e.to_string().contains(&format!("field `{}`", spec.param)) {
                    anyhow::anyhow!("--param {} = {value}: {e}", spec.param)
                } else {
                    e
                }
            };
            let mut b = spec.base.clone();
            b.set(&spec.param, value)
                .map_err(|e| anyhow::anyhow!("--param {} = {value}: {e}", spec.param))?;
            b.build().map_err(|e| at_value(e.into()))
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
    let (rows, disagreements) = measure_values(spec, &scenes)?;
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
    let results = results_table(spec, &outcome.rows);
    let csv = exporter(Format::Csv).export(&Report::of(results.clone()));
    write_atomically(&out.join("results.csv"), csv.as_bytes())?;
    write_charts(spec, &results, out)?;
    let summary = summary(spec, &scenes[0], &outcome, &results, preamble);
    write_atomically(&out.join("summary.md"), summary.as_bytes())?;
    Ok(outcome)
}

/// Every algorithm at every value; pair counts compared with the first algorithm's.
fn measure_values(
    spec: &SweepSpec,
    scenes: &[Scene],
) -> anyhow::Result<(Vec<SweepRow>, Vec<String>)> {
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
    for (value, scene) in spec.values.iter().zip(scenes) {
        let mut reference: Option<Measurement> = None;
        for name in &spec.algorithms {
            progress.set_message(format!("{}={value} {name}", spec.param));
            let m = measure(
                name,
                &Default::default(),
                scene,
                &Settings::default(),
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
    Ok((rows, disagreements))
}

/// `param`, `value`, then the columns of a measured run (as `bench` writes them).
pub fn results_fields() -> Vec<Field> {
    let mut fields = vec![
        Field::from(PARAM.plain()).for_programs(),
        VALUE.plain().into(),
    ];
    fields.extend(run_fields(false));
    fields
}

/// One row per value and algorithm: what `results.csv` holds and `summary.md` shows.
fn results_table(spec: &SweepSpec, rows: &[SweepRow]) -> Table {
    let mut table = Table::new("results", results_fields());
    for row in rows {
        let at_value = rows.iter().filter(|r| r.value == row.value);
        let fastest = fastest_total(at_value.map(|r| &r.measurement));
        let mut values = vec![Value::text(&spec.param), Value::text(&row.value)];
        values.extend(run_values(&row.measurement, fastest, false));
        table.push(values);
    }
    table
}

/// One chart per column of [`CHARTS`], its points read from the results table.
fn write_charts(spec: &SweepSpec, results: &Table, out: &Path) -> anyhow::Result<()> {
    let index = |key: &str| results.fields.iter().position(|f| f.key() == key);
    let (value_at, algorithm_at) = (
        index(VALUE.key).expect("a value column"),
        index(ALGORITHM.key).expect("an algorithm column"),
    );
    for column in CHARTS {
        let at = index(&column.key()).expect("charted columns are results columns");
        let point = |value: &str, name: &str| {
            results
                .rows
                .iter()
                .find(|r| {
                    r.values[value_at] == Value::text(value)
                        && r.values[algorithm_at] == Value::text(name)
                })
                .and_then(|r| match r.values[at] {
                    Value::Float(y) => Some(y),
                    _ => None,
                })
                .unwrap_or(f64::NAN)
        };
        let series = spec
            .algorithms
            .iter()
            .map(|name| {
                let ys = spec.values.iter().map(|v| point(v, name)).collect();
                (name.clone(), ys)
            })
            .collect();
        let chart = Chart {
            title: format!("{}: {}", spec.title, column.key()),
            x_label: &spec.param,
            y: column,
            x_values: &spec.values,
            series,
            power_law: spec.param == "objects",
        };
        write_chart(out, &chart)?;
    }
    Ok(())
}

fn winners(spec: &SweepSpec, rows: &[SweepRow]) -> Vec<Winner> {
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
            Some(Winner {
                value: value.clone(),
                fastest: best.algorithm.clone(),
                runner_up: at.get(1).map(|second| {
                    (
                        second.algorithm.clone(),
                        second.total.median / best.total.median.max(1e-12),
                    )
                }),
            })
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

fn exponents(spec: &SweepSpec, rows: &[SweepRow]) -> Vec<Exponents> {
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
            Exponents {
                algorithm: name.clone(),
                total_ms: fit(|m| m.total.median),
                set_aabbs_and_update_ms: fit(|m| m.set_aabbs.median + m.update.median),
            }
        })
        .collect()
}

/// `value`, `fastest`, `runner_up` and the runner-up's `vs_fastest`.
fn winners_table(outcome: &SweepOutcome) -> Table {
    let fields = vec![
        VALUE.plain().into(),
        FASTEST.plain().into(),
        RUNNER_UP.plain().into(),
        VS_FASTEST.plain().into(),
    ];
    let mut table = Table::new("fastest", fields);
    for w in &outcome.winners {
        table.push(vec![
            Value::text(&w.value),
            Value::text(&w.fastest),
            w.runner_up
                .as_ref()
                .map_or(Value::Missing, |(name, _)| Value::text(name)),
            Value::float_or_missing(w.runner_up.as_ref().map(|(_, ratio)| *ratio)),
        ]);
    }
    table
}

/// Per algorithm, the fitted exponents of `total_ms` and `set_aabbs_and_update_ms`.
fn exponents_table(outcome: &SweepOutcome) -> Table {
    let fields = vec![
        ALGORITHM.plain().into(),
        TOTAL_MS.with(Statistic::Exponent).into(),
        SET_AABBS_AND_UPDATE_MS.with(Statistic::Exponent).into(),
    ];
    let mut table = Table::new("exponents", fields);
    for e in &outcome.exponents {
        table.push(vec![
            Value::text(&e.algorithm),
            Value::float_or_missing(e.total_ms),
            Value::float_or_missing(e.set_aabbs_and_update_ms),
        ]);
    }
    table
}

/// At each value, `adaptive` beside the fastest other algorithm (none without `adaptive`).
fn adaptive_table(spec: &SweepSpec, outcome: &SweepOutcome) -> Option<Table> {
    let in_sweep = |r: &SweepRow| r.measurement.algorithm == "adaptive";
    if !outcome.rows.iter().any(in_sweep) {
        return None;
    }
    let (median, p95) = (TOTAL_MS.median(), TOTAL_MS.with(Statistic::P95));
    let fields = vec![
        VALUE.plain().into(),
        Field::from(median).grouped("adaptive"),
        Field::from(p95).grouped("adaptive"),
        FASTEST_FIXED.plain().into(),
        Field::from(median).grouped(FASTEST_FIXED.key),
        Field::from(p95).grouped(FASTEST_FIXED.key),
        ADAPTIVE_VS_FASTEST_FIXED.plain().into(),
    ];
    let mut table = Table::new("adaptive", fields);
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
            table.push(vec![
                Value::text(value),
                Value::Float(a.total.median),
                Value::Float(a.total.p95),
                Value::text(&f.algorithm),
                Value::Float(f.total.median),
                Value::Float(f.total.p95),
                Value::Float(a.total.median / f.total.median.max(1e-12)),
            ]);
        }
    }
    Some(table)
}

fn summary(
    spec: &SweepSpec,
    first: &Scene,
    outcome: &SweepOutcome,
    results: &Table,
    preamble: &str,
) -> String {
    let mut s = format!("# {}\n\n", spec.title);
    s.push_str(preamble);
    let _ = writeln!(
        s,
        "## Measured here\n\n`value` is the value of `{}`: {}; {} warm-up + {} \
         per run. Columns as in docs/outputs.md. Fastest algorithm (`total_ms_median`) at each \
         value, and the runner-up's `vs_fastest`:\n\n{}",
        spec.param,
        spec.values.join(", "),
        first.warmup,
        crate::console::count(first.steps, "measured step"),
        markdown::table(&winners_table(outcome))
    );
    if let Some(adaptive) = adaptive_table(spec, outcome) {
        let _ = writeln!(
            s,
            "`adaptive` beside the fastest other algorithm:\n\n{}",
            markdown::table(&adaptive)
        );
    }
    if !outcome.exponents.is_empty() {
        let range = match spec.fit_range {
            Some((lo, hi)) => format!("objects {lo}–{hi}"),
            None => "all values".to_string(),
        };
        let _ = writeln!(
            s,
            "Fitted exponent k of median ∝ objects^k (least squares on log–log, {range}):\n\n{}",
            markdown::table(&exponents_table(outcome))
        );
    }
    if !outcome.disagreements.is_empty() {
        s.push_str("**Pair counts disagreed:**\n\n");
        for d in &outcome.disagreements {
            let _ = writeln!(s, "- {d}");
        }
        s.push('\n');
    }
    let _ = writeln!(
        s,
        "Every run (`results.csv` has these columns and more):\n\n{}",
        markdown::table(results)
    );
    let _ = writeln!(
        s,
        "Charts: {} (SVG and PNG).\n\n## Scene (first value)\n\n```toml\n{}```",
        CHARTS
            .iter()
            .map(|c| format!("`{}`", c.key()))
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

    #[test]
    fn charted_columns_are_results_columns() {
        let keys: Vec<String> = results_fields().iter().map(Field::key).collect();
        for column in CHARTS {
            assert!(keys.contains(&column.key()), "{}", column.key());
        }
    }
}
