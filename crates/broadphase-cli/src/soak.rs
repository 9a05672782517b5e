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
    /// Stop after this many operations (inserts, moves, removals, updates) in total.
    #[arg(long, default_value_t = 20_000_000)]
    ops: u64,
    /// Stop after this many seconds, whichever comes first.
    #[arg(long, default_value_t = 600.0)]
    seconds: f64,
    /// Live proxies per algorithm.
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
    /// Allowed growth of the structures' memory between the end of the first round of
    /// scenarios and the end, as a factor (plus 1 MiB per algorithm).
    #[arg(long, default_value_t = 1.5)]
    memory_growth: f64,
}

/// Resident memory of this process in bytes, from /proc (Linux); `None` elsewhere.
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

fn megabytes(bytes: Option<u64>) -> String {
    bytes.map_or("n/a".into(), |b| {
        format!("{:.1} MiB", b as f64 / (1 << 20) as f64)
    })
}

pub fn run(args: &SoakArgs) -> anyhow::Result<ExitCode> {
    let names = crate::parse_algorithms(&args.algorithms)?;
    if args.objects == 0 || args.check_every == 0 || args.scenario_steps == 0 {
        anyhow::bail!("--objects, --check-every and --scenario-steps must be at least 1");
    }
    let valid = args.seconds > 0.0 && args.seconds.is_finite() && args.memory_growth >= 1.0;
    if !valid {
        anyhow::bail!("--seconds must be positive and --memory-growth at least 1");
    }
    let algorithms: Vec<Box<dyn BroadPhase>> = names
        .iter()
        .map(|name| broadphase::create(name, &Default::default()))
        .collect::<Result<_, _>>()?;
    let mut verifier = Verifier::new(algorithms);
    verifier.set_check_every(args.check_every);
    let mut rng = SplitMix64::new(args.seed);
    let deadline = Instant::now() + Duration::from_secs_f64(args.seconds);
    let start = Instant::now();
    let rss_start = resident_bytes();
    let mut steady: Option<(Option<u64>, Vec<usize>)> = None;
    let (mut steps, mut rounds) = (0usize, 0usize);
    let ops_per_step = |v: &Verifier| (v.live_count() as u64 / 3 + 4) * v.algorithms().len() as u64;
    let mut ops = 0u64;
    let outcome = catch_unwind(AssertUnwindSafe(|| 'run: loop {
        for scenario in Scenario::ALL {
            verifier.clear();
            for _ in 0..args.scenario_steps {
                verifier.random_step(scenario, args.objects, &mut rng);
                ops += ops_per_step(&verifier);
                steps += 1;
                if ops >= args.ops || Instant::now() >= deadline || verifier.report().mismatches > 0
                {
                    break 'run;
                }
            }
        }
        rounds += 1;
        if rounds == 1 {
            let memory = verifier
                .algorithms()
                .iter()
                .map(|a| a.memory_bytes())
                .collect();
            steady = Some((resident_bytes(), memory));
        }
    }));
    let elapsed = start.elapsed().as_secs_f64();
    let report = verifier.report().clone();
    println!(
        "soak: {} algorithms, {steps} steps, {ops} operations in {elapsed:.1} s ({:.0} ops/s), {} checks",
        report.algorithms,
        ops as f64 / elapsed,
        report.checks
    );
    println!(
        "memory: resident {} at start, {} after round 1, {} at end",
        megabytes(rss_start),
        megabytes(steady.as_ref().and_then(|s| s.0)),
        megabytes(resident_bytes())
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
    if let Some((_, memory)) = &steady {
        for (algorithm, &before) in verifier.algorithms().iter().zip(memory) {
            let now = algorithm.memory_bytes();
            let bound = (before as f64 * args.memory_growth) as usize + (1 << 20);
            let verdict = if now > bound { "GREW" } else { "ok" };
            println!("  {:<16} structure memory {before:>10} B after round 1, {now:>10} B at end: {verdict}", algorithm.name());
            failed |= now > bound;
        }
    } else {
        println!("  (memory growth not judged: the run ended before one round of all scenarios)");
    }
    println!("soak: {}", if failed { "FAILED" } else { "ok" });
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
