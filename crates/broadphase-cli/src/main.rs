//! `broadphase`: the command-line workbench.

mod bench;
mod ccd;
mod prune;
mod soak;
mod stats;
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
    /// One-shot complete box pruning on a generated workload, beside brute force and parry3d.
    Prune(prune::PruneArgs),
    /// Long random operation streams with sampled checks, operation rate and memory.
    Soak(soak::SoakArgs),
    /// Continuous-time collision detection: event-driven simulation of moving circles/spheres.
    Ccd(ccd::CcdArgs),
    /// Regenerates a table of the source documents (ccd-table-5.1, ccd-table-5.2).
    Reproduce(ReproduceArgs),
}

/// Options of `broadphase reproduce`.
#[derive(Debug, clap::Args)]
struct ReproduceArgs {
    /// Which table: ccd-table-5.1 or ccd-table-5.2.
    name: String,
    /// Also write the table (NAME.md) and its rows (NAME.csv) into this directory.
    #[arg(long)]
    out: Option<std::path::PathBuf>,
    #[command(flatten)]
    ccd: ccd::CcdReproduceArgs,
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
        Command::Prune(args) => prune::run(&args),
        Command::Soak(args) => soak::run(&args),
        Command::Ccd(args) => ccd::run_ccd(&args, &mut std::io::stdout().lock()),
        Command::Reproduce(args) => ccd::run_reproduce_ccd(
            &args.name,
            args.out.as_deref(),
            &args.ccd,
            &mut std::io::stdout().lock(),
        ),
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
    let names: Vec<String> = match list {
        None => broadphase::ALGORITHMS
            .iter()
            .map(|s| s.to_string())
            .collect(),
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
        if !broadphase::ALGORITHMS.contains(&name.as_str()) {
            anyhow::bail!(
                "unknown algorithm '{name}' (known: {})",
                broadphase::ALGORITHMS.join(", ")
            );
        }
    }
    Ok(names)
}
