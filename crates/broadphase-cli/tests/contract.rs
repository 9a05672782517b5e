//! The binary's contract: exit codes, the verify summary line, and bench's JSON keys.

mod common;

use common::broadphase;

#[test]
fn verify_prints_the_summary_line() {
    let (code, stdout, _) = broadphase(&["verify", "--objects", "30", "--steps", "60"]);
    assert_eq!(code, 0, "{stdout}");
    let last = stdout.lines().last().unwrap();
    assert!(last.starts_with("verify: "), "{last}");
    assert!(last.contains(" 0 mismatches ("), "{last}");
    assert!(last.contains(" 60 steps"), "{last}");
}

#[test]
fn bench_json_has_stable_keys() {
    let (code, stdout, stderr) = broadphase(&[
        "bench",
        "--objects",
        "50",
        "--steps",
        "3",
        "--warmup",
        "1",
        "--format",
        "json",
        "--queries",
        "2",
        "--algorithms",
        "sap,sort-and-sweep",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let rows: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for key in [
        "algorithm",
        "objects",
        "steps",
        "set_aabbs_ms_median",
        "update_ms_median",
        "narrow_ms_median",
        "total_ms_median",
        "total_ms_max",
        "total_ms_p95",
        "possible_pairs_mean",
        "actual_pairs_mean",
        "bytes_per_proxy",
        "query_ms_median",
    ] {
        assert!(rows[0].get(key).is_some(), "missing key {key}");
    }
    assert_eq!(rows[0]["objects"], 50);
}

#[test]
fn bad_input_is_one_line_and_exit_code_2() {
    for args in [
        &["bench", "--algorithms", "nope"][..],
        &["bench", "--objects", "0"],
        &["bench", "--objects", "abc"],
        &["bench", "--mean-speed", "NaN"],
        &["verify", "--scenario", "sideways"],
        &["verify", "--steps", "0"],
        &["frobnicate"],
    ] {
        let (code, stdout, stderr) = broadphase(args);
        assert_eq!(code, 2, "{args:?}: {stdout} {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(stderr.contains("error"), "{args:?}: {stderr}");
    }
}
