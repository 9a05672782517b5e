//! One name per quantity: every output takes its column names from one table (listed in
//! docs/outputs.md), and two outputs that carry the same quantity call it the same.

mod common;

use std::collections::HashMap;

use common::{bin, broadphase, temp_dir};

/// The quantities and the statistic suffixes docs/outputs.md lists.
fn documented() -> (Vec<String>, Vec<String>) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/outputs.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let mut quantities = Vec::new();
    let mut suffixes = Vec::new();
    for line in doc.lines() {
        let Some(key) = line
            .strip_prefix("| `")
            .and_then(|rest| rest.split_once('`'))
            .map(|(key, _)| key.to_string())
        else {
            continue;
        };
        match key.strip_prefix('_') {
            Some(suffix) => suffixes.push(suffix.to_string()),
            None => quantities.push(key),
        }
    }
    assert!(quantities.len() > 20 && suffixes.len() >= 5, "{path}");
    (quantities, suffixes)
}

/// Panics unless every key is a documented quantity, alone or with a documented statistic.
fn assert_documented(output: &str, keys: &[String]) {
    let (quantities, suffixes) = documented();
    for key in keys {
        let known = quantities.contains(key)
            || suffixes.iter().any(|s| {
                key.strip_suffix(s.as_str())
                    .and_then(|k| k.strip_suffix('_'))
                    .is_some_and(|q| quantities.iter().any(|d| d == q))
            });
        assert!(known, "{output}: column `{key}` is not in docs/outputs.md");
    }
}

fn csv_header(text: &str) -> Vec<String> {
    text.lines()
        .next()
        .unwrap()
        .split(',')
        .map(str::to_string)
        .collect()
}

/// `key -> value` per data line of a CSV block.
fn csv_rows(text: &str) -> Vec<HashMap<String, String>> {
    let header = csv_header(text);
    text.lines()
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| {
            header
                .iter()
                .cloned()
                .zip(l.split(',').map(str::to_string))
                .collect()
        })
        .collect()
}

/// The keys of a JSON object, sorted (the parser does not keep their order).
fn json_keys(object: &serde_json::Value) -> Vec<String> {
    object.as_object().unwrap().keys().cloned().collect()
}

fn sorted(mut keys: Vec<String>) -> Vec<String> {
    keys.sort();
    keys
}

fn run_ok(args: &[&str]) -> String {
    let (code, stdout, stderr) = broadphase(args);
    assert_eq!(code, 0, "{args:?}: {stderr}");
    stdout
}

#[test]
fn bench_and_sweep_name_and_measure_the_same_quantities_alike() {
    let dir = temp_dir("columns", "bench-sweep");
    let scene = dir.join("tiny.toml");
    std::fs::write(
        &scene,
        "objects = 40\nwarmup = 2\nsteps = 5\nmean_speed = 20.0\nshapes = \"sphere,box\"\n",
    )
    .unwrap();
    let scene = scene.to_str().unwrap();
    let bench = |format: &str| {
        run_ok(&[
            "bench",
            "--scene",
            scene,
            "--algorithms",
            "sap,grid",
            "--format",
            format,
        ])
    };
    let bench_csv = bench("csv");
    let bench_json: serde_json::Value = serde_json::from_str(&bench("json")).unwrap();
    let out = dir.join("sweep");
    run_ok(&[
        "sweep",
        "--scene",
        scene,
        "--param",
        "objects",
        "--values",
        "40",
        "--algorithms",
        "sap,grid",
        "--out",
        out.to_str().unwrap(),
    ]);
    let sweep_csv = std::fs::read_to_string(out.join("results.csv")).unwrap();

    // The same columns, in the same order, in bench's JSON and CSV and the sweep's CSV
    // (which adds the swept parameter and its value in front).
    let bench_columns = csv_header(&bench_csv);
    assert_documented("bench --format csv", &bench_columns);
    for row in bench_json.as_array().unwrap() {
        assert_eq!(
            json_keys(row),
            sorted(bench_columns.clone()),
            "bench JSON keys vs CSV header"
        );
    }
    let mut expected = vec!["param".to_string(), "value".to_string()];
    expected.extend(bench_columns.iter().cloned());
    assert_eq!(
        csv_header(&sweep_csv),
        expected,
        "sweep's results.csv vs bench"
    );

    // The same scene gives the same counts under the same names.
    let bench_rows = csv_rows(&bench_csv);
    let sweep_rows = csv_rows(&sweep_csv);
    assert_eq!((bench_rows.len(), sweep_rows.len()), (2, 2));
    // Rows come fastest first, which the machine's load may swap between runs: pair them
    // by algorithm.
    for b in &bench_rows {
        let s = sweep_rows
            .iter()
            .find(|s| s["algorithm"] == b["algorithm"])
            .expect("the same algorithms in both");
        for key in [
            "algorithm",
            "objects",
            "steps",
            "possible_pairs_mean",
            "actual_pairs_mean",
        ] {
            assert_eq!(b[key], s[key], "{key}");
        }
    }

    // Charts are named by the columns they draw.
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    let charts = summary
        .lines()
        .find_map(|l| l.strip_prefix("Charts: "))
        .unwrap();
    for stem in charts.split('`').skip(1).step_by(2) {
        assert!(expected.iter().any(|c| c == stem), "chart {stem}");
        assert!(out.join(format!("{stem}.svg")).is_file(), "{stem}.svg");
    }
    // The summary's tables are headed by documented keys (after a group label, if any).
    let mut keys = Vec::new();
    let lines: Vec<&str> = summary.lines().collect();
    for (k, line) in lines.iter().enumerate() {
        // A header line is followed by the alignment line.
        if lines
            .get(k + 1)
            .is_some_and(|next| next.starts_with("|---"))
        {
            keys.extend(
                line.trim_matches('|')
                    .split('|')
                    .map(|cell| cell.trim().rsplit(' ').next().unwrap().to_string()),
            );
        }
    }
    assert!(keys.len() > 10, "{summary}");
    assert_documented("sweep summary.md", &keys);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_other_output_names_documented_columns() {
    let dir = temp_dir("columns", "others");
    let scene = dir.join("scene.toml");
    std::fs::write(&scene, "objects = 100\nwarmup = 1\nsteps = 10\n").unwrap();
    let recommendation = dir.join("best.toml");
    let output = bin()
        .args(["recommend", "--budget", "2", "--format", "json", "--scene"])
        .arg(&scene)
        .arg("--out")
        .arg(&recommendation)
        .output()
        .unwrap();
    assert!(output.status.success());
    let trials: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let keys = json_keys(&trials[0]);
    assert_documented("recommend --format json", &keys);
    assert!(keys.contains(&"total_ms_mean".to_string()), "{keys:?}");

    let prune: serde_json::Value = serde_json::from_str(&run_ok(&[
        "prune",
        "--objects",
        "500",
        "--repeat",
        "1",
        "--format",
        "json",
    ]))
    .unwrap();
    let mut keys = json_keys(&prune);
    keys.retain(|k| k != "rows");
    keys.extend(json_keys(&prune["rows"][0]));
    assert_documented("prune --format json", &keys);
    let prune_csv = run_ok(&[
        "prune",
        "--objects",
        "500",
        "--repeat",
        "1",
        "--format",
        "csv",
    ]);
    assert_documented("prune --format csv", &csv_header(&prune_csv));

    let ccd: serde_json::Value = serde_json::from_str(&run_ok(&[
        "ccd",
        "--objects",
        "30",
        "--seconds",
        "0.1",
        "--format",
        "json",
    ]))
    .unwrap();
    assert_documented("ccd --format json", &json_keys(&ccd));

    // A phased bench: its phases nested in JSON, as a second CSV block.
    std::fs::write(
        &scene,
        "objects = 40\nwarmup = 1\n[[phases]]\nsteps = 3\n[[phases]]\nsteps = 2\nobjects = 60\n",
    )
    .unwrap();
    let scene = scene.to_str().unwrap();
    let json: serde_json::Value = serde_json::from_str(&run_ok(&[
        "bench",
        "--scene",
        scene,
        "--algorithms",
        "sap",
        "--format",
        "json",
    ]))
    .unwrap();
    let phases = &json[0]["phases"];
    assert_eq!(phases.as_array().unwrap().len(), 2);
    assert_documented("bench phases", &json_keys(&phases[0]));
    let csv = run_ok(&[
        "bench",
        "--scene",
        scene,
        "--algorithms",
        "sap",
        "--format",
        "csv",
    ]);
    let blocks: Vec<&str> = csv.split("\n\n").collect();
    assert_eq!(blocks.len(), 2, "{csv}");
    let phase_header = csv_header(blocks[1]);
    assert_documented("bench phases CSV", &phase_header);
    let mut nested = vec!["algorithm".to_string(), "objects".to_string()];
    nested.extend(json_keys(&phases[0]));
    assert_eq!(sorted(phase_header), sorted(nested));
    let _ = std::fs::remove_dir_all(&dir);
}
