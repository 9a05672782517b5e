//! The command line: one subcommand per command module.

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::commands::{bench, ccd, prune, recommend, reproduce, soak, sweep, verify, view};

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
    /// Tries every algorithm and its main options on your scene; ranks them by
    /// total_ms_median over alternating rounds, writes the best and the command that runs it.
    Recommend(recommend::RecommendArgs),
    /// Serves a live web viewer on 127.0.0.1 (the URL is the first line printed): the
    /// scene's boxes, the algorithm's structure and its timings, or with --ccd the
    /// continuous-time simulation.
    View(view::ViewArgs),
}

impl Cli {
    /// Parses the process's arguments. Every flag that takes a value accepts a negative
    /// number as that value, so that `--mean-speed -3` reaches the flag's own range check
    /// (which names the flag and its range) instead of being read as an unknown flag.
    pub fn parse_args() -> Result<Self, clap::Error> {
        let mut command = Self::command().mut_subcommands(|sub| {
            sub.mut_args(|arg| {
                if arg.get_action().takes_values() {
                    arg.allow_negative_numbers(true)
                } else {
                    arg
                }
            })
        });
        let matches = command.try_get_matches_from_mut(std::env::args_os())?;
        Self::from_arg_matches(&matches).map_err(|e| e.format(&mut command))
    }
}

/// A parse error as the one line every refused input gets: clap's first line (`error: …`),
/// with its tips (a similar flag, how to pass a value starting with `-`) after it on the
/// same line, and where to read more.
pub fn one_line_error(error: &clap::Error) -> String {
    let text = error.render().to_string();
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("error: invalid arguments");
    let mut line = if first.starts_with("error:") {
        first.to_string()
    } else {
        format!("error: {first}")
    };
    for tip in lines.filter(|l| l.starts_with("tip:")) {
        line.push_str("; ");
        line.push_str(tip);
    }
    line.push_str(" (see --help)");
    line
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
            Command::View(args) => view::run(&args),
        }
    }
}
