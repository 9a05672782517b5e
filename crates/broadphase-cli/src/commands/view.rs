//! `broadphase view`: the live web viewer. The flags and the server are the
//! `broadphase-view` crate's; this command only hands them over.

use std::process::ExitCode;

pub use broadphase_view::ViewArgs;

/// Serves the viewer until Ctrl-C or SIGTERM.
pub fn run(args: &ViewArgs) -> anyhow::Result<ExitCode> {
    broadphase_view::run(args)
}
