//! `broadphase prune`: JSON keys, the brute-force cross-check, and one-line errors with exit 2.

mod common;

use common::broadphase;

#[test]
fn prune_json_reports_every_method_with_the_same_pairs() {
    for workload in ["cube", "sparse", "clustered"] {
        let (code, stdout, stderr) = broadphase(&[
            "prune",
            "--objects",
            "1500",
            "--workload",
            workload,
            "--threads",
            "2",
            "--repeat",
            "2",
            "--techniques",
            "--format",
            "json",
        ]);
        assert_eq!(code, 0, "{stderr}");
        let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(report["objects"], 1500);
        assert_eq!(report["workload"], workload);
        let rows = report["rows"].as_array().unwrap();
        // complete_pairs, brute force, parry3d, then eight technique rows.
        assert_eq!(rows.len(), 11);
        let pairs = rows[0]["possible_pairs"].as_u64().unwrap();
        assert!(pairs > 0);
        for row in rows {
            for key in [
                "method",
                "runs",
                "prune_ms_median",
                "prune_ms_min",
                "possible_pairs",
                "ns_per_box",
                "vs_complete_pairs",
            ] {
                assert!(row.get(key).is_some(), "missing key {key}");
            }
            assert_eq!(
                row["possible_pairs"].as_u64().unwrap(),
                pairs,
                "{}",
                row["method"]
            );
        }
        assert_eq!(rows[1]["method"], "brute force");
    }
}

#[test]
fn prune_errors_are_one_line_with_exit_code_2() {
    let (code, _, stderr) = broadphase(&["prune", "--threads", "0", "--objects", "10"]);
    assert_eq!(code, 2);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    let (code, _, stderr) = broadphase(&["prune", "--repeat", "0"]);
    assert_eq!(code, 2);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    let (code, _, _) = broadphase(&["prune", "--workload", "nope"]);
    assert_eq!(code, 2);
}
