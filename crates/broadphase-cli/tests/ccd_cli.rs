//! `broadphase ccd` and `broadphase reproduce`: output, event log, check mode, exit codes.

mod common;

use common::broadphase;

#[test]
fn ccd_json_and_event_log_agree_across_methods() {
    let dir = std::env::temp_dir().join(format!("ccd_cli_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut logs = Vec::new();
    for method in ["all-pairs", "swept-bvh", "calendar"] {
        let log = dir.join(format!("{method}.csv"));
        let (code, stdout, stderr) = broadphase(&[
            "ccd",
            "--objects",
            "40",
            "--seconds",
            "0.5",
            "--method",
            method,
            "--format",
            "json",
            "--events",
            log.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{stderr}");
        let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(json["method"], method);
        assert!(json["collisions"].as_u64().unwrap() > 0);
        let text = std::fs::read_to_string(&log).unwrap();
        assert_eq!(text.lines().next(), Some("time,kind,a,b"));
        let events = json["collisions"].as_u64().unwrap() + json["wall_hits"].as_u64().unwrap();
        assert_eq!(text.lines().count() as u64, events + 1);
        logs.push(text);
    }
    assert!(
        logs.windows(2).all(|w| w[0] == w[1]),
        "event logs differ between methods"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A run that fails after the log was opened (here, a scene that cannot be built) leaves no
/// log, partial or empty, and no temporary file; an earlier log of that name is untouched.
#[test]
fn ccd_failed_run_leaves_no_event_log() {
    let dir = std::env::temp_dir().join(format!("ccd_failed_log_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fresh = dir.join("fresh.csv");
    let kept = dir.join("kept.csv");
    std::fs::write(&kept, "an earlier log\n").unwrap();
    for log in [&fresh, &kept] {
        let (code, _, stderr) = broadphase(&[
            "ccd",
            "--objects",
            "100",
            "--packing-fraction",
            "0.95",
            "--events",
            log.to_str().unwrap(),
        ]);
        assert_eq!(code, 2, "{stderr}");
    }
    assert!(!fresh.exists(), "a failed run left a log");
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "an earlier log\n");
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["kept.csv"], "files left behind");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--no-simd` runs the calendar's scalar kernels: accepted, and the same event log, byte for
/// byte, as the default kernels (times are printed exactly).
#[test]
fn ccd_no_simd_gives_the_same_event_log() {
    let dir = std::env::temp_dir().join(format!("ccd_no_simd_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut logs = Vec::new();
    for extra in [None, Some("--no-simd")] {
        let log = dir.join(format!("{}.csv", extra.unwrap_or("default")));
        let mut args = vec![
            "ccd",
            "--objects",
            "300",
            "--seconds",
            "0.2",
            "--dim",
            "3",
            "--events",
            log.to_str().unwrap(),
        ];
        args.extend(extra);
        let (code, _, stderr) = broadphase(&args);
        assert_eq!(code, 0, "{stderr}");
        logs.push(std::fs::read_to_string(&log).unwrap());
    }
    assert!(logs[0].lines().count() > 100, "too few events to compare");
    assert_eq!(logs[0], logs[1], "--no-simd changed the events");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn ccd_check_mode_reports_agreement() {
    let (code, stdout, stderr) = broadphase(&[
        "ccd",
        "--objects",
        "60",
        "--seconds",
        "0.3",
        "--method",
        "swept-bvh",
        "--check",
        "--dim",
        "3",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("identical to all-pairs"), "{stdout}");
}

#[test]
fn ccd_bad_arguments_exit_2_with_one_line() {
    for args in [
        &["ccd", "--objects", "0"][..],
        &["ccd", "--radius-min", "-1"],
        &["ccd", "--objects", "100", "--packing-fraction", "0.95"],
        &["ccd", "--dim", "4"],
        &["ccd", "--method", "octree"],
        &["reproduce", "table-9"],
    ] {
        let (code, _, stderr) = broadphase(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        if args[0] != "ccd" || args[1] != "--method" {
            assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
        }
    }
}

#[test]
fn reproduce_small_table_5_2_writes_files() {
    let dir = std::env::temp_dir().join(format!("ccd_repro_{}", std::process::id()));
    let (code, stdout, stderr) = broadphase(&[
        "reproduce",
        "ccd-table-5.2",
        "--objects",
        "64",
        "--seconds",
        "0.2",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("discrete time (dt = 1)"), "{stdout}");
    assert!(dir.join("results.csv").exists() && dir.join("summary.md").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
