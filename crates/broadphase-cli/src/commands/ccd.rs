//! `broadphase ccd`: continuous-time collision detection runs, and the reproductions of
//! [Kaya16, Tables 5.1–5.2] (`ccd-table-5.1`, `ccd-table-5.2`).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use broadphase_ccd::reproduce::{
    reproduce_table_5_1, reproduce_table_5_2, Table51Config, Table52Config,
};
use broadphase_ccd::{
    run, Event, FinderOptions, MassModel, Method, RunConfig, SceneConfig, SweptBvhOptions,
};
use clap::{Args, ValueEnum};

use crate::export::files::{prepare_dir, write_atomically, write_atomically_with};
use crate::export::quantity::{
    CHECKED, COLLISIONS, COLLISIONS_PER_SECOND, COMPLETED, DIM, EVENTS_PER_SECOND, METHOD, OBJECTS,
    SEED, SIMULATED_SECONDS, WALL_HITS, WALL_SECONDS,
};
use crate::export::{emit, Format, Report, Table, Value};

/// Next-event finder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CcdMethod {
    /// Every pair at every event, O(n²) per event.
    AllPairs,
    /// The swept-AABB BVH with adaptive time step of [Kaya16, Algorithm 4].
    SweptBvh,
    /// Event calendar with neighbour cells, O(log n) per event.
    Calendar,
}

impl From<CcdMethod> for Method {
    fn from(m: CcdMethod) -> Method {
        match m {
            CcdMethod::AllPairs => Method::AllPairs,
            CcdMethod::SweptBvh => Method::SweptBvh,
            CcdMethod::Calendar => Method::Calendar,
        }
    }
}

/// Options of the next-event finders: the swept-BVH method's constants, and the calendar's
/// choice of kernels.
#[derive(Debug, Clone, Args)]
pub struct FinderArgs {
    /// swept-bvh: initial time step Δt (seconds).
    #[arg(long, default_value_t = 1e-3)]
    initial_time_step: f64,
    /// swept-bvh: factor applied to Δt while no event is found (> 1).
    #[arg(long, default_value_t = 2.0)]
    grow: f64,
    /// swept-bvh: factor applied to Δt after an event (in (0, 1]).
    #[arg(long, default_value_t = 0.5)]
    shrink: f64,
    /// swept-bvh: rebuild the hierarchy every N events, refit in between (1: as in
    /// [Kaya16, Algorithm 4]).
    #[arg(long, default_value_t = 1)]
    rebuild_every: u32,
    /// calendar: use the scalar kernels instead of the AVX2 ones the CPU may have (the same
    /// events, bit for bit; for comparing their speed).
    #[arg(long)]
    no_simd: bool,
}

impl FinderArgs {
    fn options(&self) -> FinderOptions {
        FinderOptions {
            swept_bvh: SweptBvhOptions {
                initial_time_step: self.initial_time_step,
                grow: self.grow,
                shrink: self.shrink,
                rebuild_every: self.rebuild_every,
            },
            simd: !self.no_simd,
        }
    }
}

/// Options of `broadphase ccd`.
#[derive(Debug, Args)]
pub struct CcdArgs {
    /// Number of objects.
    #[arg(long, default_value_t = 1024, allow_hyphen_values = true)]
    objects: i64,
    /// Simulated seconds.
    #[arg(long, default_value_t = 5.0, allow_hyphen_values = true)]
    seconds: f64,
    /// Next-event finder.
    #[arg(long, value_enum, default_value_t = CcdMethod::Calendar)]
    method: CcdMethod,
    /// 2 (circles, as in [Kaya16, Table 5.1]) or 3 (spheres).
    #[arg(long, default_value_t = 2)]
    dim: usize,
    /// Scene seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output format (the columns are named in docs/outputs.md).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Write the event log as CSV (`time,kind,a,b`) to this file.
    #[arg(long)]
    events: Option<PathBuf>,
    /// Run all-pairs beside the method and stop at the first differing event.
    #[arg(long)]
    check: bool,
    /// Smallest radius of the generated objects.
    #[arg(long, default_value_t = 0.5, allow_hyphen_values = true)]
    radius_min: f64,
    /// Largest radius of the generated objects.
    #[arg(long, default_value_t = 1.0, allow_hyphen_values = true)]
    radius_max: f64,
    /// Fraction of the box covered by objects (default 0.3 in 2D, 0.15 in 3D).
    #[arg(long, allow_hyphen_values = true)]
    packing_fraction: Option<f64>,
    /// Give every object mass 1 instead of mass proportional to volume.
    #[arg(long)]
    equal_masses: bool,
    /// Stop after this many wall-clock seconds (then `completed` is false).
    #[arg(long)]
    time_cap: Option<f64>,
    #[command(flatten)]
    finder: FinderArgs,
}

/// Most simulated seconds: at the default density every body collides a few times a second,
/// so a million seconds are billions of events already.
const MAX_SIMULATED_SECONDS: f64 = 1e6;

/// Runs `broadphase ccd`, printing the report to `out`.
pub fn run_ccd(args: &CcdArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    if args.objects <= 0 {
        anyhow::bail!("--objects must be at least 1 (got {})", args.objects);
    }
    if !(args.seconds.is_finite() && args.seconds > 0.0 && args.seconds <= MAX_SIMULATED_SECONDS) {
        anyhow::bail!(
            "--seconds must be positive and at most {MAX_SIMULATED_SECONDS} simulated seconds \
             (got {}); a longer run would not end",
            crate::options::duration::short(args.seconds)
        );
    }
    // A body's motion, mass, events, calendar entries and cells, with growth slack.
    crate::options::budget::Budget::available().check(
        &format!("ccd on {}", crate::console::count(args.objects, "body")),
        args.objects as u128 * 2048,
    )?;
    let time_cap = match args.time_cap {
        Some(s) => Some(crate::options::duration::seconds("--time-cap", s)?),
        None => None,
    };
    let mut scene = SceneConfig::new(args.objects as usize, args.dim, args.seed);
    scene.radius_min = args.radius_min;
    scene.radius_max = args.radius_max;
    scene.packing_fraction = args.packing_fraction;
    if args.equal_masses {
        scene.mass_model = MassModel::Equal;
    }
    let config = RunConfig {
        scene,
        seconds: args.seconds,
        method: args.method.into(),
        options: args.finder.options(),
        check: args.check,
        time_cap,
    };
    let report = match &args.events {
        // The log is written beside its name and renamed into place once complete: a run
        // that fails (bad scene, `--check` mismatch, full disk) leaves no partial log.
        Some(path) => {
            let mut report = None;
            write_atomically_with(path, |tmp| {
                let file = File::create(tmp)
                    .with_context(|| format!("cannot create {}", path.display()))?;
                let mut log = BufWriter::new(file);
                writeln!(log, "{}", Event::CSV_HEADER).context("cannot write the event log")?;
                let mut write_error: Option<std::io::Error> = None;
                let finished = run(&config, &mut |event| {
                    if write_error.is_none() {
                        if let Err(e) = writeln!(log, "{}", event.csv_row()) {
                            write_error = Some(e);
                        }
                    }
                })?;
                if let Some(e) = write_error {
                    return Err(e).context("cannot write the event log");
                }
                log.flush().context("cannot write the event log")?;
                report = Some(finished);
                Ok(())
            })?;
            report.context("the run ended without a report")?
        }
        None => run(&config, &mut |_| {})?,
    };
    emit(&report_of(args, &report), args.format, out)?;
    Ok(ExitCode::SUCCESS)
}

/// A run as a one-row record.
fn report_of(args: &CcdArgs, report: &broadphase_ccd::RunReport) -> Report {
    let fields = [
        (METHOD.plain(), Value::text(report.method.name())),
        (OBJECTS.plain(), Value::int(report.objects)),
        (DIM.plain(), Value::int(report.dim)),
        (SEED.plain(), Value::Int(args.seed)),
        (
            SIMULATED_SECONDS.plain(),
            Value::Float(report.simulated_seconds),
        ),
        (COMPLETED.plain(), Value::Bool(report.completed)),
        (CHECKED.plain(), Value::Bool(report.checked)),
        (COLLISIONS.plain(), Value::Int(report.collisions)),
        (WALL_HITS.plain(), Value::Int(report.wall_hits)),
        (
            WALL_SECONDS.plain(),
            Value::Float(report.wall_time.as_secs_f64()),
        ),
        (
            EVENTS_PER_SECOND.plain(),
            Value::Float(report.events_per_second()),
        ),
        (
            COLLISIONS_PER_SECOND.plain(),
            Value::Float(report.collisions_per_second()),
        ),
    ];
    let mut table = Table::new("run", fields.iter().map(|(c, _)| (*c).into()).collect());
    table.record = true;
    let mut row = crate::export::Row::from(fields.into_iter().map(|(_, v)| v).collect::<Vec<_>>());
    if report.checked {
        row.note = Some("check: every event identical to all-pairs".to_string());
    }
    table.push(row);
    Report::of(table)
}

/// Options of the continuous-time reproductions (`ccd-table-5.1`, `ccd-table-5.2`).
#[derive(Debug, Clone, Args)]
pub struct CcdReproduceArgs {
    /// ccd tables: 2 (as in [Kaya16, Table 5.1]) or 3.
    #[arg(long, default_value_t = 2)]
    dim: usize,
    /// ccd tables: simulated seconds per run.
    #[arg(long, default_value_t = 5.0)]
    seconds: f64,
    /// ccd tables: scene seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// ccd-table-5.1: largest N for swept-bvh and calendar.
    #[arg(long, default_value_t = 1 << 17)]
    max_objects: usize,
    /// ccd-table-5.1: largest N for all-pairs.
    #[arg(long, default_value_t = 2048)]
    all_pairs_max_objects: usize,
    /// ccd-table-5.1: wall-clock cap per run in seconds; a method that hits it stops growing N.
    #[arg(long, default_value_t = 120.0)]
    time_cap: f64,
    /// ccd-table-5.2: number of objects.
    #[arg(long, default_value_t = 1024)]
    objects: usize,
    #[command(flatten)]
    finder: FinderArgs,
}

/// The reproductions this module provides.
pub const CCD_REPRODUCTIONS: [&str; 2] = ["ccd-table-5.1", "ccd-table-5.2"];

/// Runs reproduction `name` (`ccd-table-5.1` or `ccd-table-5.2`): the Markdown table goes to
/// `out`, progress to stderr, and with `out_dir` the files every preset of `reproduce`
/// writes: `summary.md` (`preamble`, the source's claim, then the table) and `results.csv`.
pub fn run_reproduce_ccd(
    name: &str,
    out_dir: Option<&Path>,
    args: &CcdReproduceArgs,
    preamble: &str,
    out: &mut dyn Write,
) -> anyhow::Result<ExitCode> {
    // An unwritable directory is an error before the long run, not after it.
    if let Some(dir) = out_dir {
        prepare_dir(dir)?;
    }
    let (markdown, csv) = match name {
        "ccd-table-5.1" => {
            let time_cap = crate::options::duration::seconds("--time-cap", args.time_cap)?;
            let config = Table51Config {
                dim: args.dim,
                seconds: args.seconds,
                seed: args.seed,
                max_objects: args.max_objects,
                all_pairs_max_objects: args.all_pairs_max_objects,
                time_cap,
                options: args.finder.options(),
                ..Table51Config::default()
            };
            let table = reproduce_table_5_1(&config, &mut |r| {
                crate::console::note!(
                    "N = {:>7} {:>9}: {:>10} collisions, {:>10.3} s{}",
                    r.objects,
                    r.method.name(),
                    r.collisions,
                    r.wall_time.as_secs_f64(),
                    if r.completed { "" } else { " (time cap)" }
                );
            })?;
            (table.to_markdown(), table.to_csv())
        }
        "ccd-table-5.2" => {
            let config = Table52Config {
                objects: args.objects,
                dim: args.dim,
                seconds: args.seconds,
                seed: args.seed,
                ..Table52Config::default()
            };
            let table = reproduce_table_5_2(&config, &mut |line| crate::console::note!("{line}"))?;
            (table.to_markdown(), table.to_csv())
        }
        other => anyhow::bail!(
            "unknown reproduction '{other}' (known: {})",
            CCD_REPRODUCTIONS.join(", ")
        ),
    };
    write!(out, "{markdown}")?;
    if let Some(dir) = out_dir {
        let summary = format!("# {name}\n\n{preamble}\n## Measured here\n\n{markdown}");
        write_atomically(&dir.join("results.csv"), csv.as_bytes())?;
        write_atomically(&dir.join("summary.md"), summary.as_bytes())?;
    }
    Ok(ExitCode::SUCCESS)
}
