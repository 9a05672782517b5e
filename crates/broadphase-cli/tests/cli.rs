//! End-to-end runs of the `broadphase` binary on tiny scenes.

mod common;

use common::{bin, temp_dir};

#[test]
fn sweep_writes_csv_charts_and_summary() {
    let dir = temp_dir("cli", "sweep");
    let scene = dir.join("tiny.toml");
    std::fs::write(
        &scene,
        "objects = 40\nwarmup = 2\nsteps = 5\nmean_speed = 20.0\nshapes = \"sphere,box\"\n",
    )
    .unwrap();
    let out = dir.join("out");
    let output = bin()
        .args(["sweep", "--scene"])
        .arg(&scene)
        .args([
            "--param",
            "objects",
            "--values",
            "20,60",
            "--algorithms",
            "brute-force,sap,parry-bvh,rapier",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "param,value,algorithm,objects,steps,set_aabbs_ms_median,update_ms_median,narrow_ms_median,\
         total_ms_median,total_ms_mean,total_ms_p95,total_ms_max,total_ms_sum,vs_fastest,vs_fastest_min,\
         possible_pairs_mean,actual_pairs_mean,bytes_per_proxy,stopped_at_step"
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 8);
    for row in &rows {
        assert_eq!(row.len(), 19);
        assert_eq!(row[0], "objects");
        assert_eq!(row[1], row[3]);
        for x in &row[4..18] {
            assert!(x.parse::<f64>().unwrap() >= 0.0);
        }
        // No run of a sweep stops early.
        assert_eq!(row[18], "");
    }
    // Every algorithm reports the same pairs at the same value.
    for value in ["20", "60"] {
        let pairs: Vec<&str> = rows
            .iter()
            .filter(|r| r[1] == value)
            .map(|r| r[15])
            .collect();
        assert!(pairs.windows(2).all(|w| w[0] == w[1]), "{pairs:?}");
    }
    for stem in [
        "total_ms_median",
        "possible_pairs_mean",
        "actual_pairs_mean",
        "narrow_ms_median",
    ] {
        assert!(out.join(format!("{stem}.svg")).is_file());
        assert!(out.join(format!("{stem}.png")).is_file());
    }
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("exponent"), "{summary}");
    let leftovers = std::fs::read_dir(&out)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with('.')
        })
        .count();
    assert_eq!(leftovers, 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_is_one_line_with_exit_code_2() {
    let dir = temp_dir("cli", "bad");
    let scene = dir.join("bad.toml");
    std::fs::write(&scene, "objects = 10\ncolour = \"red\"\n").unwrap();
    let run = |args: &[&str]| {
        let output = bin().args(args).output().unwrap();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).to_string(),
        )
    };
    let scene_arg = scene.to_str().unwrap();
    let out_arg = dir.join("o");
    let out_arg = out_arg.to_str().unwrap();
    let (code, err) = run(&[
        "sweep", "--scene", scene_arg, "--param", "objects", "--values", "5", "--out", out_arg,
    ]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("bad.toml:2") && err.contains("colour"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let (code, err) = run(&[
        "sweep", "--param", "density", "--values", "nan", "--out", out_arg,
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("density"), "{err}");
    let (code, _) = run(&[
        "sweep", "--param", "objects", "--values", "0", "--out", out_arg,
    ]);
    assert_eq!(code, Some(2));
    let (code, err) = run(&["bench", "--algorithms", "nope"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("nope"), "{err}");
    let (code, err) = run(&["reproduce", "thesis-nope", "--out", out_arg]);
    assert_eq!(code, Some(2));
    assert!(err.contains("thesis-nope"), "{err}");
    let (code, err) = run(&["reproduce", "thesis-objects"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--out"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // An output "directory" that is a file: error, and nothing written.
    let blocker = dir.join("file");
    std::fs::write(&blocker, b"x").unwrap();
    let bad_out = blocker.join("out");
    let (code, err) = run(&[
        "sweep",
        "--param",
        "objects",
        "--values",
        "5",
        "--steps",
        "1",
        "--warmup",
        "0",
        "--out",
        bad_out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(!dir.join("o").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn reproduce_list_names_every_experiment() {
    let output = bin().args(["reproduce", "--list"]).output().unwrap();
    assert!(output.status.success());
    let text = String::from_utf8_lossy(&output.stdout);
    for name in [
        "thesis-objects",
        "thesis-size-uniformity",
        "thesis-stationary",
        "thesis-velocity",
        "thesis-density",
        "thesis-shapes",
        "report-objects",
        "report-speed",
        "report-world-size",
        "report-size-variance",
        "report-extreme",
        "blog-naive-vs-sap",
        "ccd-table-5.1",
        "ccd-table-5.2",
    ] {
        assert!(text.contains(name), "{name} missing from:\n{text}");
    }
    assert_eq!(text.lines().count(), 14);
}

#[test]
fn bench_reads_the_scene_file_and_flags_override_it() {
    let dir = temp_dir("cli", "bench");
    let scene = dir.join("scene.toml");
    std::fs::write(
        &scene,
        "objects = 30\nwarmup = 1\nsteps = 3\nstationary_fraction = 0.5\nterrain_boxes = 4\nremove_rate = 0.1\n",
    )
    .unwrap();
    let output = bin()
        .args([
            "bench",
            "--format",
            "json",
            "--algorithms",
            "sap,rapier",
            "--steps",
            "4",
            "--scene",
        ])
        .arg(&scene)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let rows: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for row in rows {
        assert_eq!(row["objects"], 30);
        assert_eq!(row["steps"], 4);
    }
    assert_eq!(
        rows[0]["possible_pairs_mean"],
        rows[1]["possible_pairs_mean"]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
