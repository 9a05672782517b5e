//! `broadphase`: the command-line workbench.
//!
//! `cli` parses the command line, `commands` holds one module per subcommand, `measure`
//! times algorithms on scenes, `options` reads algorithm lists, configuration files and
//! scenes, and `export` writes every result (the column names are in `export::quantity`).

mod cli;
mod commands;
mod export;
mod measure;
mod options;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
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
    match cli.command.run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
