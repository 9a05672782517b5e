//! One contract for every `reproduce` preset: `--list`, the unknown-name error and the guide
//! name the same presets; every preset prints its source's claim beside the measurement and
//! writes `summary.md` (the claim at the top) and `results.csv`; `--list` gives the seed the
//! run uses.

mod common;

use common::{broadphase, temp_dir};

/// The presets `--list` names (its first column), and its lines.
fn listed(extra: &[&str]) -> (Vec<String>, Vec<String>) {
    let mut args = vec!["reproduce", "--list"];
    args.extend_from_slice(extra);
    let (code, stdout, stderr) = broadphase(&args);
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<String> = stdout.lines().map(str::to_string).collect();
    let names = lines
        .iter()
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect();
    (names, lines)
}

#[test]
fn the_list_the_error_and_the_guide_name_the_same_presets() {
    let (names, _) = listed(&[]);
    assert_eq!(names.len(), 14, "{names:?}");
    let (code, _, stderr) = broadphase(&["reproduce", "no-such-preset", "--out", "/tmp"]);
    assert_eq!(code, 2);
    let known = stderr
        .split("(known: ")
        .nth(1)
        .and_then(|rest| rest.split(';').next())
        .unwrap_or_else(|| panic!("{stderr}"));
    let in_error: Vec<String> = known.split(", ").map(str::to_string).collect();
    assert_eq!(in_error, names, "{stderr}");
    let guide = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/reproduce.md"
    ))
    .unwrap();
    for name in &names {
        assert!(
            guide.contains(&format!("`{name}`")),
            "docs/reproduce.md lacks {name}"
        );
    }
    assert!(guide.contains("Fourteen presets"));
}

#[test]
fn the_list_gives_the_seed_the_run_uses() {
    let (_, lines) = listed(&["--seed", "7"]);
    let line = lines
        .iter()
        .find(|l| l.starts_with("ccd-table-5.2"))
        .unwrap();
    assert!(line.ends_with("seed 7"), "{line}");
    for line in &lines {
        assert!(line.contains("; seed "), "{line}");
    }
    // The run with that seed says so: `a_continuous_time_preset_keeps_the_contract`.
}

/// Checks a preset's run: the claim first on stdout, and the two files every preset writes.
fn check_contract(stdout: &str, dir: &std::path::Path, source: &str) {
    let first = stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(&format!("source's claim {source}: ")),
        "{stdout}"
    );
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(
        summary.contains(&format!("## Source's claim {source}")),
        "{summary}"
    );
    assert!(summary.contains("## Measured here"), "{summary}");
    let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    assert!(csv.lines().count() >= 2, "{csv}");
}

#[test]
fn a_continuous_time_preset_keeps_the_contract() {
    let dir = temp_dir("reproduce", "ccd");
    let (code, stdout, stderr) = broadphase(&[
        "reproduce",
        "ccd-table-5.2",
        "--objects",
        "32",
        "--seconds",
        "0.1",
        "--seed",
        "7",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    check_contract(&stdout, &dir, "[Kaya16, Table 5.2]");
    assert!(stdout.contains("seed 7"), "{stdout}");
}

#[test]
fn a_sweep_preset_keeps_the_contract() {
    let dir = temp_dir("reproduce", "sweep");
    let (code, stdout, stderr) = broadphase(&[
        "reproduce",
        "blog-naive-vs-sap",
        "--algorithms",
        "sap",
        "--warmup",
        "1",
        "--steps",
        "2",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    check_contract(&stdout, &dir, "[SapBlog, naive vs SAP measurement]");
}
