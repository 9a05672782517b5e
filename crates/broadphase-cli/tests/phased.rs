//! Phased scenes through `bench`, and `recommend` with the file it writes.

mod common;

use common::{bin, temp_dir};

/// Growth, shrinking, kind changes, churn, an explosion and sleep, in a few steps.
const TINY_PHASED: &str = "objects = 60\nwarmup = 2\nsleep_speed = 2.0\nremove_rate = 0.02\n\
    [[phases]]\nname = \"grow\"\nsteps = 8\nobjects = 150\nstationary_fraction = 0.5\n\
    [[phases]]\nname = \"burst\"\nsteps = 6\nmean_speed = 60.0\nexplode = true\nobjects = 90\n\
    [[phases]]\nname = \"settle\"\nsteps = 30\nmean_speed = 0.0\ngravity = 40.0\nstationary_fraction = 0.0\n";

#[test]
fn bench_runs_a_phased_scene_and_every_algorithm_agrees() {
    let dir = temp_dir("phased", "bench");
    let scene = dir.join("phased.toml");
    std::fs::write(&scene, TINY_PHASED).unwrap();
    let output = bin()
        .args(["bench", "--scene"])
        .arg(&scene)
        .args([
            "--algorithms",
            "brute-force,sap,sort-and-sweep,adaptive,grid,hgrid,loose-octree,dynamic-tree,bvh,parry-bvh",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Exit 1 would mean two algorithms reported different pair counts at some step.
    assert!(output.status.success(), "{stdout}\n{stderr}");
    for needle in [
        "grow (8 steps)",
        "burst (6 steps)",
        "settle (30 steps)",
        "fastest_fixed",
        "adaptive_vs_fastest_fixed",
    ] {
        assert!(stdout.contains(needle), "missing {needle}:\n{stdout}");
    }
    let objects_line = stdout
        .lines()
        .find(|l| l.starts_with("objects_at_end"))
        .unwrap();
    let counts: Vec<&str> = objects_line.split_whitespace().skip(1).collect();
    // 150 and 90 objects plus the ground (gravity in the last phase).
    assert_eq!(counts, ["151", "91", "91"], "{objects_line}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn recommend_ranks_writes_a_config_and_bench_loads_it() {
    let dir = temp_dir("phased", "recommend");
    let scene = dir.join("scene.toml");
    std::fs::write(&scene, "objects = 200\nwarmup = 2\nsteps = 20\n").unwrap();
    let out = dir.join("best.toml");
    let output = bin()
        .args(["recommend", "--budget", "4", "--scene"])
        .arg(&scene)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("recommendation: "), "{stdout}");
    for config in ["grid cell", "dynamic-tree margin", "bvh sah larger-volume"] {
        assert!(stdout.contains(config), "no {config} trial:\n{stdout}");
    }
    // The ranked rows are in increasing median time (the median over the trial's rounds).
    let means: Vec<f64> = stdout
        .lines()
        .filter(|l| {
            l.trim_start()
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit())
        })
        .map(|l| l.split_whitespace().rev().nth(2).unwrap().parse().unwrap())
        .collect();
    assert!(
        means.len() >= 3 && means.windows(2).all(|w| w[0] <= w[1]),
        "{means:?}"
    );
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("algorithm = "), "{text}");
    assert!(text.contains("broadphase::create("), "{text}");
    let output = bin()
        .args(["bench", "--objects", "100", "--steps", "5", "--config"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(output.status.success());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn recommend_and_config_errors_are_one_line_with_exit_code_2() {
    let dir = temp_dir("phased", "errors");
    let file = dir.join("plain-file");
    std::fs::write(&file, "x").unwrap();
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "algorithm = \"bvh\"\nbvh_build = \"fastest\"\n").unwrap();
    let cases: Vec<Vec<std::ffi::OsString>> = vec![
        // A path under a regular file cannot be written, even by root.
        vec![
            "recommend".into(),
            "--budget".into(),
            "1".into(),
            "--out".into(),
            file.join("x.toml").into(),
        ],
        vec!["recommend".into(), "--budget=-3".into()],
        vec!["recommend".into(), "--budget".into(), "nan".into()],
        vec!["bench".into(), "--config".into(), bad.clone().into()],
        vec![
            "bench".into(),
            "--config".into(),
            dir.join("missing.toml").into(),
        ],
        vec!["bench".into(), "--max-step-ms".into(), "0".into()],
    ];
    for args in cases {
        let output = bin().args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        2,
        "no file left behind"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
