//! The command line: one subcommand per command module.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::commands::{bench, ccd, prune, recommend, reproduce, soak, sweep, verify};

/// Exact broad-phase collision detection: benchmark and verify the algorithms.
#[derive(Debug, Parser)]
#[command(name = "broadphase", version, about)]
pub struct Cli {
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands. Their outputs name every quantity as docs/outputs.md does.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Runs every algorithm on the same moving scene; prints set_aabbs_ms, update_ms,
    /// narrow_ms and total_ms per step, possible and actual pairs, bytes per proxy.
    Bench(bench::BenchArgs),
    /// Drives algorithms and an exact model with random operations and compares them.
    Verify(verify::VerifyArgs),
    /// Runs every algorithm at every value of one scene field; writes results.csv, one chart
    /// per quantity and summary.md.
    Sweep(sweep::SweepArgs),
    /// Runs one of the source documents' experiments (a preset sweep); --list lists them.
    Reproduce(reproduce::ReproduceArgs),
    /// One-shot complete box pruning on a generated workload, beside brute force and parry3d.
    Prune(prune::PruneArgs),
    /// Long random operation streams with sampled checks, operation rate and memory.
    Soak(soak::SoakArgs),
    /// Continuous-time collision detection: event-driven simulation of moving circles/spheres.
    Ccd(ccd::CcdArgs),
    /// Tries every algorithm and its main options on your scene; ranks them by total_ms_mean,
    /// writes the best.
    Recommend(recommend::RecommendArgs),
}

impl Command {
    /// Runs the command; its exit code, or an error (exit code 2).
    pub fn run(self) -> anyhow::Result<ExitCode> {
        match self {
            Command::Bench(args) => bench::run(&args),
            Command::Verify(args) => verify::run(&args),
            Command::Sweep(args) => sweep::run(&args),
            Command::Reproduce(args) => reproduce::run(&args),
            Command::Prune(args) => prune::run(&args),
            Command::Soak(args) => soak::run(&args),
            Command::Ccd(args) => ccd::run_ccd(&args, &mut std::io::stdout().lock()),
            Command::Recommend(args) => recommend::run(&args),
        }
    }
}
