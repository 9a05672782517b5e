//! `broadphase verify`: differential testing of algorithms against an exact model.

use std::process::ExitCode;

use broadphase::verify::{Scenario, Verifier, VerifyConfig};
use broadphase::BroadPhase;
use clap::Args;

/// Most live proxies `verify` and `soak` drive: the exact model compares every pair.
pub const MAX_OBJECTS: usize = 100_000;

/// Most updates of one verification: each runs every algorithm and the O(n²) model, so more
/// would make a run endless; `soak` runs for a given time instead.
const MAX_STEPS: usize = 10_000_000;

/// Options of `broadphase verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Comma-separated algorithms to check (default: all).
    #[arg(long)]
    algorithms: Option<String>,
    /// Target number of live proxies (at most 100000).
    #[arg(long, default_value_t = 200)]
    objects: usize,
    /// Number of updates, spread over the scenarios.
    #[arg(long, default_value_t = 1200)]
    steps: usize,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Only this scenario (default: all); the list is the library's own, so none is left out.
    #[arg(long, help = scenario_help())]
    scenario: Option<String>,
    /// Make `adaptive` switch to the next algorithm every N steps, whatever the times, to
    /// check that switching never changes the pairs or events.
    #[arg(long)]
    switch_every: Option<u64>,
    /// `bvh`: build strategy (median, sah, bottom-up, insertion).
    #[arg(long, default_value = "median")]
    bvh_build: broadphase::tree::BvhBuild,
    /// `bvh`: descend rule of the pair traversal (simultaneous, larger-volume).
    #[arg(long, default_value = "simultaneous")]
    bvh_descend: broadphase::tree::DescendRule,
    /// `dynamic-tree`: leaf box margin (default: the library's).
    #[arg(long)]
    tree_margin: Option<f32>,
}

/// `--scenario`'s help: every scenario of [`Scenario::ALL`].
fn scenario_help() -> String {
    let names: Vec<String> = Scenario::ALL.iter().map(|s| s.to_string()).collect();
    format!("Only this scenario: {} (default: all)", names.join(", "))
}

pub fn run(args: &VerifyArgs) -> anyhow::Result<ExitCode> {
    let names = crate::options::algorithms::parse_list(&args.algorithms)?;
    if args.objects == 0 || args.steps == 0 {
        anyhow::bail!("--objects and --steps must be at least 1");
    }
    if args.steps > MAX_STEPS {
        anyhow::bail!(
            "--steps must be at most {MAX_STEPS} (got {}); use `soak` for longer runs",
            args.steps
        );
    }
    if args.objects > MAX_OBJECTS {
        anyhow::bail!(
            "--objects must be at most {MAX_OBJECTS} (got {}): the exact model is O(n^2)",
            args.objects
        );
    }
    let scenario = match &args.scenario {
        None => None,
        Some(name) => Some(
            Scenario::ALL
                .into_iter()
                .find(|s| s.to_string() == *name)
                .ok_or_else(|| {
                    let known: Vec<String> = Scenario::ALL.iter().map(|s| s.to_string()).collect();
                    anyhow::anyhow!("unknown scenario '{name}' (known: {})", known.join(", "))
                })?,
        ),
    };
    let mut options = broadphase::AlgorithmOptions::default();
    options.bvh.build = args.bvh_build;
    options.bvh.descend = args.bvh_descend;
    if let Some(margin) = args.tree_margin {
        options.dynamic_tree.margin = margin;
    }
    if let Some(every) = args.switch_every {
        if every == 0 {
            anyhow::bail!("--switch-every must be at least 1");
        }
        options.adaptive.policy = broadphase::adaptive::SwitchPolicy::RoundRobin;
        options.adaptive.min_trial_interval = every;
        options.adaptive.max_trial_interval = every;
    }
    let algorithms: Vec<Box<dyn BroadPhase>> = names
        .iter()
        .map(|name| crate::options::algorithms::create(name, &options))
        .collect::<Result<_, _>>()?;
    let config = VerifyConfig {
        objects: args.objects,
        steps: args.steps,
        seed: args.seed,
        scenario,
    };
    let mut verifier = Verifier::new(algorithms);
    let report = verifier.run(&config);
    for algorithm in verifier.algorithms() {
        let switches = algorithm.diagnostics().switches;
        if !switches.is_empty() {
            crate::console::out!(
                "{}: {}",
                algorithm.name(),
                crate::console::count(switches.len(), "switch")
            )?;
        }
    }
    if let Some(first) = &report.first_mismatch {
        crate::console::out!("first mismatch: {first}")?;
    }
    use crate::console::count;
    crate::console::out!(
        "verify: {}, {}, {}, {} ({} refused on a pair limit)",
        count(report.algorithms, "algorithm"),
        count(report.steps, "step"),
        count(report.checks, "check"),
        count(report.mismatches, "mismatch"),
        count(report.refused, "update")
    )?;
    Ok(if report.mismatches == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
