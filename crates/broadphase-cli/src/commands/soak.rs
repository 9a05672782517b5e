//! `broadphase soak`: long random operation streams, sampled comparison with the exact model,
//! operation rate and memory, for every algorithm at once.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use broadphase::verify::{Scenario, SplitMix64, Verifier};
use broadphase::BroadPhase;
use clap::Args;

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
    /// `RESIDENT_SLACK`).
    #[arg(long, default_value_t = 1.5)]
    memory_growth: f64,
}

/// Live proxies of the `identical` scenario at most: every pair overlaps there.
const IDENTICAL_OBJECTS: usize = 100;

/// Resident memory growth allowed beyond `--memory-growth` (allocator slack, stdout buffers).
const RESIDENT_SLACK: u64 = 64 << 20;

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

pub fn run(args: &SoakArgs) -> anyhow::Result<ExitCode> {
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
    let valid = args.seconds > 0.0 && args.seconds.is_finite() && args.memory_growth >= 1.0;
    if !valid {
        anyhow::bail!("--seconds must be positive and --memory-growth at least 1");
    }
    let algorithms: Vec<Box<dyn BroadPhase>> = names
        .iter()
        .map(|name| crate::options::algorithms::create(name, &Default::default()))
        .collect::<Result<_, _>>()?;
    let mut verifier = Verifier::new(algorithms);
    verifier.set_check_every(args.check_every);
    let mut rng = SplitMix64::new(args.seed);
    let deadline = Instant::now() + Duration::from_secs_f64(args.seconds);
    let start = Instant::now();
    let rss_start = resident_bytes();
    // Structure memory is compared at the same points of the cycle: the largest value seen
    // at the end of each scenario, in round 1 and in every later round.
    let mut first_round: Option<(Option<u64>, Vec<usize>)> = None;
    let mut round_peak = vec![0usize; names.len()];
    let mut later_peak = vec![0usize; names.len()];
    let sample = |verifier: &Verifier, peak: &mut [usize]| {
        for (p, algorithm) in peak.iter_mut().zip(verifier.algorithms()) {
            *p = (*p).max(algorithm.memory_bytes());
        }
    };
    let (mut steps, mut rounds) = (0usize, 0usize);
    let ops_per_step = |v: &Verifier| (v.live_count() as u64 / 3 + 4) * v.algorithms().len() as u64;
    let mut ops = 0u64;
    let outcome = catch_unwind(AssertUnwindSafe(|| 'run: loop {
        for scenario in Scenario::ALL {
            verifier.clear();
            for _ in 0..args.scenario_steps {
                verifier.random_step(scenario, scenario_objects(scenario, args.objects), &mut rng);
                ops += ops_per_step(&verifier);
                steps += 1;
                if ops >= args.ops.unwrap_or(u64::MAX)
                    || Instant::now() >= deadline
                    || verifier.report().mismatches > 0
                {
                    sample(&verifier, &mut round_peak);
                    break 'run;
                }
            }
            sample(&verifier, &mut round_peak);
        }
        rounds += 1;
        if rounds == 1 {
            first_round = Some((resident_bytes(), round_peak.clone()));
        } else {
            sample_max(&mut later_peak, &round_peak);
        }
        round_peak.fill(0);
    }));
    if rounds >= 1 {
        // The unfinished last round counts as a later one.
        sample_max(&mut later_peak, &round_peak);
    }
    let elapsed = start.elapsed().as_secs_f64();
    let report = verifier.report().clone();
    println!(
        "soak: {} algorithms, {steps} steps, {ops} operations in {elapsed:.1} s ({:.0} ops/s), {} checks, {} mismatches",
        report.algorithms,
        ops as f64 / elapsed,
        report.checks,
        report.mismatches
    );
    println!(
        "memory: resident {} at start, {} after round 1, {} at end (peak {})",
        megabytes(rss_start),
        megabytes(first_round.as_ref().and_then(|s| s.0)),
        megabytes(resident_bytes()),
        megabytes(peak_resident_bytes())
    );
    let mut failed = false;
    if outcome.is_err() {
        println!("FAILED: a panic was caught (message above)");
        failed = true;
    }
    if let Some(first) = &report.first_mismatch {
        println!("FAILED: {} mismatches; first: {first}", report.mismatches);
        failed = true;
    }
    if let (Some((Some(steady_rss), _)), Some(end_rss)) = (&first_round, resident_bytes()) {
        let bound = (*steady_rss as f64 * args.memory_growth) as u64 + RESIDENT_SLACK;
        if end_rss > bound {
            println!(
                "FAILED: resident memory grew from {} after round 1 to {} (bound {})",
                megabytes(Some(*steady_rss)),
                megabytes(Some(end_rss)),
                megabytes(Some(bound))
            );
            failed = true;
        }
    }
    match &first_round {
        Some((_, first)) if rounds >= 2 || later_peak.iter().any(|&b| b > 0) => {
            for ((algorithm, &before), &after) in
                verifier.algorithms().iter().zip(first).zip(&later_peak)
            {
                let bound = (before as f64 * args.memory_growth) as usize + (1 << 20);
                let verdict = if after > bound { "GREW" } else { "ok" };
                println!(
                    "  {:<16} structure memory peak {before:>10} B in round 1, {after:>10} B after: {verdict}",
                    algorithm.name()
                );
                failed |= after > bound;
            }
        }
        _ => println!(
            "  (memory growth not judged: the run ended before one round of all scenarios)"
        ),
    }
    println!("soak: {}", if failed { "FAILED" } else { "ok" });
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
