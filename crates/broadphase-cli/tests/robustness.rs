//! The second round of hostile use, one test per class of defect, each on the real binary:
//! closed and full standard output, inputs that would need more memory than the machine has
//! or would never end, interruption by a signal, and pair explosions.

mod common;

use common::{bin, broadphase, temp_dir};

use std::fs;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The contract of a refused input: exit code 2, one line on stderr starting with `error: `,
/// no panic; returns stderr.
fn assert_refused(code: i32, stdout: &str, stderr: &str, what: &str) -> String {
    let shown = format!("{what}: code {code}\nstdout: {stdout}\nstderr: {stderr}");
    assert_eq!(code, 2, "{shown}");
    assert!(!stderr.contains("panicked"), "{shown}");
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "not one line: {shown}"
    );
    assert!(stderr.starts_with("error: "), "{shown}");
    stderr.to_string()
}

fn refused(args: &[&str]) -> String {
    let (code, stdout, stderr) = broadphase(args);
    assert_refused(code, &stdout, &stderr, &format!("{args:?}"))
}

/// Runs the binary under `sh` with the address space limited to `kib` KiB (`ulimit -v`), as
/// a machine with that much memory: exit code, stdout, stderr.
fn with_memory(kib: u64, args: &[&str]) -> (i32, String, String) {
    let command = format!("ulimit -v {kib} && exec \"$0\" \"$@\"",);
    let output = Command::new("sh")
        .arg("-c")
        .arg(command)
        .arg(env!("CARGO_BIN_EXE_broadphase"))
        .args(args)
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Waits for `child` (spawned with its stderr piped): its exit code and stderr.
fn wait_for(mut child: std::process::Child) -> (Option<i32>, String) {
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        pipe.read_to_string(&mut stderr).unwrap();
    }
    (child.wait().unwrap().code(), stderr)
}

/// Class 1: a reader that goes away (`… | head -1`) ends the program quietly with success; a
/// full device (`> /dev/full`) is a one-line error and exit code 2.
#[test]
fn closed_output_ends_quietly_and_full_output_is_an_error() {
    // The pipe is closed before the run has printed anything (it measures for a while first).
    for args in [
        &[
            "bench",
            "--objects",
            "300",
            "--steps",
            "60",
            "--algorithms",
            "sap,grid",
        ][..],
        &["verify", "--steps", "400", "--objects", "60"][..],
        &["soak", "--seconds", "1", "--objects", "30"][..],
    ] {
        let mut child = bin()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let (code, stderr) = wait_for(child);
        assert_eq!(code, Some(0), "{args:?}: stderr: {stderr}");
        assert!(
            !stderr.contains("panicked") && !stderr.contains("error"),
            "{args:?}: {stderr}"
        );
    }
    if Path::new("/dev/full").exists() {
        for args in [
            &["reproduce", "--list"][..],
            &["ccd", "--objects", "50", "--seconds", "1"],
        ] {
            let output = bin()
                .args(args)
                .stdout(
                    fs::OpenOptions::new()
                        .write(true)
                        .open("/dev/full")
                        .unwrap(),
                )
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            let message = assert_refused(output.status.code().unwrap_or(-1), "", &stderr, "full");
            assert!(message.contains("No space left"), "{args:?}: {message}");
        }
    }
}

/// Class 2: counts that would need more memory than the machine has, or would never end, are
/// refused before anything is allocated, with one line and exit code 2.
#[test]
fn impossible_memory_and_endless_runs_are_refused_up_front() {
    let message = refused(&["prune", "--objects", "4000000000"]);
    assert!(message.contains("memory"), "{message}");
    let message = refused(&[
        "ccd",
        "--objects",
        "100",
        "--radius-min",
        "1e300",
        "--radius-max",
        "1e300",
    ]);
    assert!(message.contains("radius"), "{message}");
    refused(&["ccd", "--objects", "100000000000"]);
    refused(&["ccd", "--seconds", "1e300"]);
    refused(&["ccd", "--time-cap", "1e300"]);
    refused(&[
        "bench",
        "--objects",
        "100",
        "--queries",
        "18446744073709551615",
    ]);
    refused(&["bench", "--objects", "100", "--rounds", "1000000000"]);
    refused(&["verify", "--steps", "18446744073709551615"]);
    refused(&["soak", "--seconds", "1e300"]);
    refused(&["recommend", "--budget", "inf"]);
    // A machine with 1.5 GiB: a hundred million steps of samples do not fit.
    let (code, stdout, stderr) = with_memory(
        1_500_000,
        &[
            "bench",
            "--objects",
            "100",
            "--steps",
            "100000000",
            "--algorithms",
            "sap",
        ],
    );
    let message = assert_refused(code, &stdout, &stderr, "bench with 1.5 GiB");
    assert!(message.contains("memory"), "{message}");
}

/// Class 4 through the binary: a scene whose boxes all overlap (twenty thousand boxes in a
/// world of side 1, two hundred million pairs) on a machine with 2 GiB ends with one line and
/// exit code 2 (the pair limit derived from the memory), not an abort; so does `prune`.
#[test]
fn a_pair_explosion_is_refused_not_aborted() {
    let (code, stdout, stderr) = with_memory(
        2_000_000,
        &[
            "bench",
            "--objects",
            "20000",
            "--world-size",
            "10",
            "--size-min",
            "5",
            "--size-max",
            "5",
            "--steps",
            "2",
            "--warmup",
            "0",
            "--algorithms",
            "sort-and-sweep",
        ],
    );
    let message = assert_refused(code, &stdout, &stderr, "bench pile");
    assert!(message.contains("pair limit"), "{message}");
    let (code, stdout, stderr) = with_memory(
        2_000_000,
        &[
            "prune",
            "--objects",
            "3000000",
            "--workload",
            "cube",
            "--repeat",
            "1",
        ],
    );
    let message = assert_refused(code, &stdout, &stderr, "prune cube");
    assert!(message.contains("pair limit"), "{message}");
}

/// Sends `signal` to a `ccd --events` run once its temporary file exists; the run must remove
/// it, print one line and exit with `128 + signal`.
fn interrupt_ccd(signal: &str, number: i32) {
    let dir = temp_dir("robust", &format!("signal-{signal}"));
    let events = dir.join("events.csv");
    let mut child = bin()
        .args([
            "ccd",
            "--objects",
            "2000",
            "--seconds",
            "100000",
            "--events",
        ])
        .arg(&events)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let listed = |dir: &Path| -> Vec<String> {
        fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    };
    while listed(&dir).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no temporary file appeared"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Let the run write for a moment, then interrupt it.
    std::thread::sleep(Duration::from_millis(300));
    let sent = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(sent.success());
    let (code, stderr) = wait_for(child);
    assert_eq!(code, Some(128 + number), "{signal}: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{signal}: {stderr}");
    assert!(stderr.contains("interrupted"), "{signal}: {stderr}");
    assert!(listed(&dir).is_empty(), "{signal} left {:?}", listed(&dir));
    let _ = fs::remove_dir_all(&dir);
}

/// Class 3: SIGINT (Ctrl-C) and SIGTERM remove the temporary files and exit with 130 and 143.
#[test]
fn signals_leave_no_partial_file() {
    interrupt_ccd("INT", 2);
    interrupt_ccd("TERM", 15);
}

/// Class 7 through the binary: tuning values at their extremes either run (and every
/// algorithm agrees: `bench` exits 1 when pair counts differ) or are refused with one line.
#[test]
fn extreme_tuning_values_run_or_are_refused() {
    for margin in ["3e38", "0", "1e-30"] {
        let (code, stdout, stderr) = broadphase(&[
            "bench",
            "--algorithms",
            "dynamic-tree,sap",
            "--tree-margin",
            margin,
            "--objects",
            "300",
            "--steps",
            "5",
            "--warmup",
            "0",
        ]);
        assert_eq!(code, 0, "--tree-margin {margin}: {stdout}{stderr}");
    }
    for margin in ["inf", "NaN", "-1e9"] {
        let (code, stdout, stderr) = broadphase(&[
            "bench",
            "--algorithms",
            "dynamic-tree",
            "--objects",
            "50",
            "--steps",
            "2",
            &format!("--tree-margin={margin}"),
        ]);
        assert_refused(code, &stdout, &stderr, margin);
    }
}
