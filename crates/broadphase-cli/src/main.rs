//! `broadphase`: the command-line workbench.
//!
//! `cli` parses the command line, `commands` holds one module per subcommand, `console`
//! writes results and notes (and says how a closed output ends the program), `interrupt`
//! removes temporary files on a signal, `measure`
//! times algorithms on scenes, `options` reads algorithm lists, configuration files and
//! scenes, and `export` writes every result (the column names are in `export::quantity`).

mod cli;
mod commands;
mod console;
mod export;
mod interrupt;
mod measure;
mod options;

use std::process::ExitCode;

fn main() -> ExitCode {
    if let Err(e) = interrupt::install() {
        console::note!("error: cannot handle interruption: {e}");
        return ExitCode::from(2);
    }
    let cli = match cli::Cli::parse_args() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // Help and version go to stdout with success.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            // `broadphase` alone: the list of commands is the useful answer.
            let _ = e.print();
            return ExitCode::from(2);
        }
        Err(e) => {
            console::note!("{}", cli::one_line_error(&e));
            return ExitCode::from(2);
        }
    };
    // Buffered output is flushed here, so that its write errors are reported like the others.
    let result = cli.command.run().and_then(|code| {
        std::io::Write::flush(&mut std::io::stdout()).map_err(console::writing_stdout)?;
        Ok(code)
    });
    match result {
        Ok(code) => code,
        Err(e) if console::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            console::note!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
