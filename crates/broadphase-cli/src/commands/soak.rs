//! `broadphase soak`: long random operation streams, sampled comparison with the exact model,
//! operation rate and memory, for every algorithm at once.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use broadphase::verify::{Scenario, SplitMix64, Verifier};
use broadphase::BroadPhase;
use clap::Args;

use crate::console::count;

/// Options of `broadphase soak`.
#[derive(Debug, Args)]
pub struct SoakArgs {
    /// Comma-separated algorithms (default: all).
    #[arg(long)]
    algorithms: Option<String>,
    /// Stop after this many operations (inserts, moves, removals, updates) in total
    /// (default: no limit, `--seconds` decides).
    #[arg(long)]
    ops: Option<u64>,
    /// Stop after this many seconds, or after `--ops`, whichever comes first.
    #[arg(long, default_value_t = 600.0)]
    seconds: f64,
    /// Live proxies per algorithm (at most 100000). The `identical` scenario, where every box
    /// overlaps every other, is capped at 100 (4950 pairs): its cost per step grows with the
    /// square of the count, and at 400 it would take most of the run.
    #[arg(long, default_value_t = 400)]
    objects: usize,
    /// Compare with the exact model on two consecutive updates out of this many.
    #[arg(long, default_value_t = 16)]
    check_every: usize,
    /// Steps per scenario before moving to the next (all scenarios in turn, drift included).
    #[arg(long, default_value_t = 2000)]
    scenario_steps: usize,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Allowed growth of memory between the end of the first round of scenarios and the end,
    /// as a factor: each structure's own (plus 1 MiB) and the process's resident memory (plus
    /// the resident slack, stated in the help text).
    #[arg(long, default_value_t = 1.5, help = memory_growth_help())]
    memory_growth: f64,
}

/// Live proxies of the `identical` scenario at most: every pair overlaps there.
const IDENTICAL_OBJECTS: usize = 100;

/// Resident memory growth allowed beyond `--memory-growth` (allocator slack, stdout buffers).
const RESIDENT_SLACK: u64 = 64 << 20;

/// `--memory-growth`'s help, with the slack in MiB (the constant's name means nothing to a
/// user).
fn memory_growth_help() -> String {
    format!(
        "Allowed growth of memory between the end of the first round of scenarios and the \
         end, as a factor: each structure's own (plus 1 MiB) and the process's resident memory \
         (plus {} MiB)",
        RESIDENT_SLACK >> 20
    )
}

/// `peak[i] = max(peak[i], round[i])`.
fn sample_max(peak: &mut [usize], round: &[usize]) {
    for (p, &r) in peak.iter_mut().zip(round) {
        *p = (*p).max(r);
    }
}

/// Live proxies of `scenario` in a run of `objects`.
fn scenario_objects(scenario: Scenario, objects: usize) -> usize {
    match scenario {
        Scenario::Identical => objects.min(IDENTICAL_OBJECTS),
        _ => objects,
    }
}

/// Resident memory of this process in bytes, from /proc (Linux); `None` elsewhere.
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// Peak resident memory of this process (`VmHWM`), from /proc (Linux); `None` elsewhere.
fn peak_resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn megabytes(bytes: Option<u64>) -> String {
    bytes.map_or("n/a".into(), |b| {
        format!("{:.1} MiB", b as f64 / (1 << 20) as f64)
    })
}

/// What a soak run did: its length, and structure memory sampled at the same points of the
/// cycle (the largest value at the end of each scenario, in round 1 and in later rounds).
struct Soaked {
    steps: usize,
    ops: u64,
    rounds: usize,
    elapsed: f64,
    rss_start: Option<u64>,
    /// Resident memory and each structure's peak at the end of round 1.
    first_round: Option<(Option<u64>, Vec<usize>)>,
    /// Each structure's peak after round 1.
    later_peak: Vec<usize>,
    /// A panic was caught.
    panicked: bool,
}

pub fn run(args: &SoakArgs) -> anyhow::Result<ExitCode> {
    let names = check(args)?;
    let algorithms: Vec<Box<dyn BroadPhase>> = names
        .iter()
        .map(|name| crate::options::algorithms::create(name, &Default::default()))
        .collect::<Result<_, _>>()?;
    let mut verifier = Verifier::new(algorithms);
    verifier.set_check_every(args.check_every);
    let soaked = drive(&mut verifier, args);
    let report = verifier.report().clone();
    crate::console::out!(
        "soak: {}, {}, {} in {:.1} s ({:.0} ops/s), {}, {}",
        count(report.algorithms, "algorithm"),
        count(soaked.steps, "step"),
        count(soaked.ops, "operation"),
        soaked.elapsed,
        soaked.ops as f64 / soaked.elapsed,
        count(report.checks, "check"),
        count(report.mismatches, "mismatch")
    )?;
    crate::console::out!(
        "memory: resident {} at start, {} after round 1, {} at end (peak {})",
        megabytes(soaked.rss_start),
        megabytes(soaked.first_round.as_ref().and_then(|s| s.0)),
        megabytes(resident_bytes()),
        megabytes(peak_resident_bytes())
    )?;
    let mut failed = false;
    if soaked.panicked {
        crate::console::out!("FAILED: a panic was caught (message above)")?;
        failed = true;
    }
    if let Some(first) = &report.first_mismatch {
        println!(
            "FAILED: {}; first: {first}",
            count(report.mismatches, "mismatch")
        );
        failed = true;
    }
    failed |= resident_grew(args, &soaked)?;
    failed |= structures_grew(args, &verifier, &soaked)?;
    crate::console::out!("soak: {}", if failed { "FAILED" } else { "ok" })?;
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Checks the flags; the algorithm names.
fn check(args: &SoakArgs) -> anyhow::Result<Vec<String>> {
    let names = crate::options::algorithms::parse_list(&args.algorithms)?;
    if args.objects == 0 || args.check_every == 0 || args.scenario_steps == 0 {
        anyhow::bail!("--objects, --check-every and --scenario-steps must be at least 1");
    }
    if args.objects > super::verify::MAX_OBJECTS {
        anyhow::bail!(
            "--objects must be at most {} (got {})",
            super::verify::MAX_OBJECTS,
            args.objects
        );
    }
    crate::options::duration::seconds("--seconds", args.seconds)?;
    if !(args.memory_growth >= 1.0 && args.memory_growth.is_finite()) {
        anyhow::bail!("--memory-growth must be a finite number at least 1");
    }
    Ok(names)
}

/// Every scenario in turn, round after round, until the time, the operation limit or a
/// mismatch ends the run; a panic is caught and reported.
fn drive(verifier: &mut Verifier, args: &SoakArgs) -> Soaked {
    let mut rng = SplitMix64::new(args.seed);
    let deadline = Instant::now() + Duration::from_secs_f64(args.seconds);
    let start = Instant::now();
    let count = verifier.algorithms().len();
    let mut soaked = Soaked {
        steps: 0,
        ops: 0,
        rounds: 0,
        elapsed: 0.0,
        rss_start: resident_bytes(),
        first_round: None,
        later_peak: vec![0; count],
        panicked: false,
    };
    let mut round_peak = vec![0usize; count];
    let sample = |verifier: &Verifier, peak: &mut [usize]| {
        for (p, algorithm) in peak.iter_mut().zip(verifier.algorithms()) {
            *p = (*p).max(algorithm.memory_bytes());
        }
    };
    let ops_per_step = |v: &Verifier| (v.live_count() as u64 / 3 + 4) * v.algorithms().len() as u64;
    let outcome = catch_unwind(AssertUnwindSafe(|| 'run: loop {
        for scenario in Scenario::ALL {
            verifier.clear();
            for _ in 0..args.scenario_steps {
                verifier.random_step(scenario, scenario_objects(scenario, args.objects), &mut rng);
                soaked.ops += ops_per_step(verifier);
                soaked.steps += 1;
                if soaked.ops >= args.ops.unwrap_or(u64::MAX)
                    || Instant::now() >= deadline
                    || verifier.report().mismatches > 0
                {
                    sample(verifier, &mut round_peak);
                    break 'run;
                }
            }
            sample(verifier, &mut round_peak);
        }
        soaked.rounds += 1;
        if soaked.rounds == 1 {
            soaked.first_round = Some((resident_bytes(), round_peak.clone()));
        } else {
            sample_max(&mut soaked.later_peak, &round_peak);
        }
        round_peak.fill(0);
    }));
    if soaked.rounds >= 1 {
        // The unfinished last round counts as a later one.
        sample_max(&mut soaked.later_peak, &round_peak);
    }
    soaked.panicked = outcome.is_err();
    soaked.elapsed = start.elapsed().as_secs_f64();
    soaked
}

/// Whether resident memory grew beyond `--memory-growth` (plus slack) after round 1.
fn resident_grew(args: &SoakArgs, soaked: &Soaked) -> std::io::Result<bool> {
    let (Some((Some(steady_rss), _)), Some(end_rss)) = (&soaked.first_round, resident_bytes())
    else {
        return Ok(false);
    };
    let bound = (*steady_rss as f64 * args.memory_growth) as u64 + RESIDENT_SLACK;
    if end_rss <= bound {
        return Ok(false);
    }
    crate::console::out!(
        "FAILED: resident memory grew from {} after round 1 to {} (bound {})",
        megabytes(Some(*steady_rss)),
        megabytes(Some(end_rss)),
        megabytes(Some(bound))
    )?;
    Ok(true)
}

/// Prints each structure's peak memory in round 1 and after; whether one grew beyond
/// `--memory-growth` (plus 1 MiB).
fn structures_grew(args: &SoakArgs, verifier: &Verifier, soaked: &Soaked) -> std::io::Result<bool> {
    let judged = soaked.rounds >= 2 || soaked.later_peak.iter().any(|&b| b > 0);
    let Some((_, first)) = soaked.first_round.as_ref().filter(|_| judged) else {
        crate::console::out!(
            "  (memory growth not judged: the run ended before one round of all scenarios)"
        )?;
        return Ok(false);
    };
    let mut grew = false;
    for ((algorithm, &before), &after) in verifier
        .algorithms()
        .iter()
        .zip(first)
        .zip(&soaked.later_peak)
    {
        let bound = (before as f64 * args.memory_growth) as usize + (1 << 20);
        let verdict = if after > bound { "GREW" } else { "ok" };
        crate::console::out!(
            "  {:<16} structure memory peak {before:>10} B in round 1, {after:>10} B after: {verdict}",
            algorithm.name()
        )?;
        grew |= after > bound;
    }
    Ok(grew)
}
