//! `broadphase`: the command-line workbench.

mod algorithms;
mod bench;
mod ccd;
mod charts;
mod config;
mod measure;
mod output;
mod prune;
mod quantity;
mod recommend;
mod reproduce;
mod scene_args;
mod soak;
mod stats;
mod sweep;
mod verify;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Exact broad-phase collision detection: benchmark and verify the algorithms.
#[derive(Debug, Parser)]
#[command(name = "broadphase", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Runs every algorithm on the same moving scene and prints time per step.
    Bench(bench::BenchArgs),
    /// Drives algorithms and an exact model with random operations and compares them.
    Verify(verify::VerifyArgs),
    /// Runs every algorithm at every value of one scene parameter; writes CSV, charts, summary.
    Sweep(sweep::SweepArgs),
    /// Runs one of the source documents' experiments (a preset sweep); --list lists them.
    Reproduce(reproduce::ReproduceArgs),
    /// One-shot complete box pruning on a generated workload, beside brute force and parry3d.
    Prune(prune::PruneArgs),
    /// Long random operation streams with sampled checks, operation rate and memory.
    Soak(soak::SoakArgs),
    /// Continuous-time collision detection: event-driven simulation of moving circles/spheres.
    Ccd(ccd::CcdArgs),
    /// Tries every algorithm and its main options on your scene; ranks them, writes the best.
    Recommend(recommend::RecommendArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout with success; usage errors exit with 2.
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let result = match cli.command {
        Command::Bench(args) => bench::run(&args),
        Command::Verify(args) => verify::run(&args),
        Command::Sweep(args) => sweep::run(&args),
        Command::Reproduce(args) => reproduce::run(&args),
        Command::Prune(args) => prune::run(&args),
        Command::Soak(args) => soak::run(&args),
        Command::Ccd(args) => ccd::run_ccd(&args, &mut std::io::stdout().lock()),
        Command::Recommend(args) => recommend::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Splits a comma-separated algorithm list and checks every name; empty means all.
pub(crate) fn parse_algorithms(list: &Option<String>) -> anyhow::Result<Vec<String>> {
    let known = algorithms::all_names();
    let names: Vec<String> = match list {
        None => known.iter().map(|s| s.to_string()).collect(),
        Some(list) => list
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
    };
    if names.is_empty() {
        anyhow::bail!("--algorithms lists no algorithm");
    }
    for name in &names {
        if !known.contains(&name.as_str()) {
            anyhow::bail!("unknown algorithm '{name}' (known: {})", known.join(", "));
        }
    }
    Ok(names)
}
