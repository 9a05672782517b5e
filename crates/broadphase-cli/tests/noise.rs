//! A busy machine is flagged: `bench` run while something keeps taking the core away from it
//! prints the one-line noise warning and suggests more rounds.
//!
//! The test makes the machine busy the way another process does, from the benchmark's point
//! of view: the benchmark is descheduled for long stretches. It stops the process with
//! SIGSTOP for 10 ms of every 12 and lets it run in between. Each step that straddles a stop
//! takes ten milliseconds longer, the others do not, so the spread of the step times is far
//! beyond every threshold. The algorithms run span three orders of magnitude of step time, so
//! on a faster or slower machine some of them still have steps both with and without a stop.

#![cfg(unix)]

mod common;

use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use common::{bin, temp_dir};

/// Sends `signal` to `pid` with the shell's `kill` (a builtin, present wherever `sh` is).
fn signal(pid: u32, signal: &str) {
    let _ = Command::new("sh")
        .args(["-c", &format!("kill -{signal} {pid} 2>/dev/null")])
        .status();
}

/// Stops and continues `pid` in a loop until dropped, then leaves it running.
struct Pauser {
    done: Arc<AtomicBool>,
    thread: Option<thread::JoinHandle<()>>,
}

impl Pauser {
    fn start(pid: u32) -> Self {
        let done = Arc::new(AtomicBool::new(false));
        let flag = done.clone();
        let thread = thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                thread::sleep(Duration::from_millis(2));
                signal(pid, "STOP");
                thread::sleep(Duration::from_millis(10));
                signal(pid, "CONT");
            }
        });
        Self {
            done,
            thread: Some(thread),
        }
    }
}

impl Drop for Pauser {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn finish(child: Child, pauser: Pauser) -> (i32, String, String) {
    // The pauser's last act is a CONT, so the child runs to its end once the pauser is gone
    // (also when the wait below panics).
    let output = {
        let _pauser = pauser;
        child.wait_with_output().unwrap()
    };
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_benchmark_that_keeps_losing_its_core_is_flagged_as_noisy() {
    let dir = temp_dir("noise", "busy");
    let scene = dir.join("busy.toml");
    std::fs::write(
        &scene,
        "objects = 1500\nwarmup = 3\nsteps = 60\nmean_speed = 20.0\n",
    )
    .unwrap();
    let child = bin()
        .args([
            "bench",
            "--scene",
            scene.to_str().unwrap(),
            "--algorithms",
            "brute-force,sap,grid,sort-and-sweep",
            "--rounds",
            "2",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pauser = Pauser::start(child.id());
    let (code, stdout, stderr) = finish(child, pauser);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("warning: noisy timings"))
        .collect();
    assert_eq!(warnings.len(), 1, "one warning line expected:\n{stderr}");
    let warning = warnings[0];
    assert!(warning.contains("the machine was likely busy"), "{warning}");
    // It names what spread and suggests more rounds than were run.
    assert!(warning.contains('×'), "{warning}");
    assert!(warning.ends_with("--rounds 4"), "{warning}");
}
