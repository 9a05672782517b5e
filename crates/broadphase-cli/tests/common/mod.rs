//! Helpers shared by the CLI's integration tests.
// Each test file compiles its own copy and uses only some of the helpers.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

/// The `broadphase` binary under test.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_broadphase"))
}

/// A fresh, empty directory for one test: `prefix`, `name` and the process id keep tests of
/// different files and concurrent runs apart.
pub fn temp_dir(prefix: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("bp-{prefix}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs the binary with `args`: exit code (-1 when killed by a signal), stdout, stderr.
pub fn broadphase(args: &[&str]) -> (i32, String, String) {
    let output = bin().args(args).output().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}
