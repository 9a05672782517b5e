//! `bench`'s table says what ran and in which units, and its rows come fastest first.

mod common;

use common::{broadphase, temp_dir};

fn tiny_scene(name: &str) -> String {
    let dir = temp_dir("bench-output", name);
    let scene = dir.join("tiny.toml");
    std::fs::write(
        &scene,
        "objects = 40\nwarmup = 2\nsteps = 5\nmean_speed = 20.0\nshapes = \"sphere,box\"\n",
    )
    .unwrap();
    scene.to_str().unwrap().to_string()
}

/// The `total_ms_median` of each data row of a text table, in order.
fn totals_in_table(text: &str) -> Vec<f64> {
    let lines: Vec<&str> = text.lines().collect();
    let header = lines
        .iter()
        .position(|l| l.starts_with("algorithm "))
        .unwrap_or_else(|| panic!("no header line:\n{text}"));
    let tops: Vec<&str> = lines[header].split_whitespace().collect();
    let bottoms: Vec<&str> = lines[header + 1].split_whitespace().collect();
    // Columns with a statistic take one word of each header line, in order; `algorithm` and
    // `objects` have none.
    let with_statistic: Vec<&str> = tops.iter().skip(2).copied().collect();
    let position = with_statistic
        .iter()
        .zip(&bottoms)
        .position(|(top, bottom)| *top == "total_ms" && *bottom == "median")
        .unwrap_or_else(|| panic!("no total_ms median column:\n{text}"))
        + 2;
    lines[header + 2..]
        .iter()
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().nth(position).unwrap().parse().unwrap())
        .collect()
}

#[test]
fn the_table_says_what_ran_and_in_which_units_fastest_first() {
    let scene = tiny_scene("table");
    let (code, stdout, stderr) = broadphase(&[
        "bench",
        "--scene",
        &scene,
        "--algorithms",
        "brute-force,sap,grid,sort-and-sweep",
        "--rounds",
        "1",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let first = stdout.lines().next().unwrap();
    assert!(first.starts_with("bench: scene "), "{stdout}");
    assert!(first.contains("tiny.toml"), "{first}");
    assert!(first.contains("40 objects"), "{first}");
    assert!(
        first.contains("2 warm-up + 5 measured steps per run"),
        "{first}"
    );
    assert!(first.contains("1 round;"), "{first}");
    assert!(first.contains("CPU "), "{first}");
    let legend = stdout.lines().nth(1).unwrap();
    assert!(legend.starts_with("units: "), "{stdout}");
    for key in ["set_aabbs_ms", "update_ms", "narrow_ms", "total_ms"] {
        assert!(legend.contains(key), "{key} not in {legend}");
    }
    assert!(legend.contains("ms per step") && legend.contains("bytes_per_proxy: bytes"));
    assert!(
        legend.contains("rows sorted by total_ms_median"),
        "{legend}"
    );
    let totals = totals_in_table(&stdout);
    assert_eq!(totals.len(), 4, "{stdout}");
    assert!(
        totals.windows(2).all(|w| w[0] <= w[1]),
        "rows not sorted by total_ms_median: {totals:?}\n{stdout}"
    );
}

#[test]
fn json_rows_come_fastest_first_and_carry_no_header() {
    let scene = tiny_scene("json");
    let (code, stdout, stderr) = broadphase(&[
        "bench",
        "--scene",
        &scene,
        "--algorithms",
        "brute-force,sap,grid",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let rows: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let totals: Vec<f64> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["total_ms_median"].as_f64().unwrap())
        .collect();
    assert_eq!(totals.len(), 3);
    assert!(totals.windows(2).all(|w| w[0] <= w[1]), "{totals:?}");
}

#[test]
fn the_docs_call_each_quantity_by_its_key() {
    // "update-AABB" and "set ms" were other names of `set_aabbs_ms`; the guides now use the
    // key (the quantity table keeps the source's own name in its own column).
    for doc in [
        "README.md",
        "docs/cli.md",
        "ARCHITECTURE.md",
        "docs/outputs.md",
    ] {
        let path = format!("{}/../../{doc}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            // The renaming table of docs/outputs.md lists the old names on purpose.
            if line.starts_with("| `bench` table")
                || line.starts_with("| `results.csv`")
                || line.starts_with("| `summary.md`")
            {
                continue;
            }
            assert!(
                !line.contains("update-AABB") && !line.contains("set ms"),
                "{doc}:{}: {line}",
                n + 1
            );
        }
    }
}

#[test]
fn ratios_come_with_the_ratio_of_the_fastest_samples() {
    let scene = tiny_scene("ratios");
    let (code, stdout, stderr) = broadphase(&[
        "bench",
        "--scene",
        &scene,
        "--algorithms",
        "brute-force,sap",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let rows: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let rows = rows.as_array().unwrap();
    for row in rows {
        let min = &row["vs_fastest_min"];
        assert!(min.as_f64().is_some_and(|r| r > 0.0), "{row}");
    }
    // The first row is the fastest: both its ratios are 1.
    assert_eq!(rows[0]["vs_fastest"].as_f64(), Some(1.0));
    assert_eq!(rows[0]["vs_fastest_min"].as_f64(), Some(1.0));
    let (code, stdout, stderr) = broadphase(&[
        "prune",
        "--objects",
        "500",
        "--repeat",
        "3",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let rows = report["rows"].as_array().unwrap();
    assert_eq!(rows[0]["vs_complete_pairs_min"].as_f64(), Some(1.0));
    for row in rows {
        assert!(row["vs_complete_pairs_min"].as_f64().is_some(), "{row}");
    }
}
