//! Hostile input for the CLI: scene files that are truncated, enormous, deeply nested, of the
//! wrong types, with absurd counts or NaN; output directories that cannot be written. Each
//! must end with exit code 2, one line on stderr, no panic, and no results file.

mod common;

use common::{broadphase, temp_dir};

use std::fs;
use std::path::Path;

/// Runs `args` and checks the contract of a rejected input; returns stderr.
fn assert_rejected(args: &[&str]) -> String {
    let (code, stdout, stderr) = broadphase(args);
    let shown = format!("{args:?}: code {code}\nstdout: {stdout}\nstderr: {stderr}");
    assert_eq!(code, 2, "{shown}");
    assert!(!stderr.contains("panicked"), "{shown}");
    assert!(!stderr.contains("RUST_BACKTRACE"), "{shown}");
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "not one line: {shown}"
    );
    assert!(stderr.starts_with("error: "), "{shown}");
    stderr
}

/// No results, summary, chart or temporary file in `dir` (which may not exist).
fn assert_no_results(dir: &Path) {
    if let Ok(entries) = fs::read_dir(dir) {
        let names: Vec<String> = entries
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.is_empty(), "{} holds {names:?}", dir.display());
    }
}

/// The hostile scene files: (file name, contents, a word the error must contain).
fn hostile_scenes() -> Vec<(&'static str, Vec<u8>, &'static str)> {
    let nested = format!("a = {}1{}\n", "[".repeat(100_000), "]".repeat(100_000));
    let nested_tables = format!("a = {}1{}\n", "{b = ".repeat(100_000), "}".repeat(100_000));
    let mut comments = Vec::with_capacity(50 << 20);
    while comments.len() < 50 << 20 {
        comments.extend_from_slice(b"# a comment line that goes on and on and on and on\n");
    }
    comments.extend_from_slice(b"objects = 10\n");
    let mut array = b"objects = [".to_vec();
    for _ in 0..1_000_000 {
        array.extend_from_slice(b"1,");
    }
    array.extend_from_slice(b"1]\n");
    vec![
        (
            "truncated-value.toml",
            b"objects = 10\nmean_speed = ".to_vec(),
            ":2",
        ),
        (
            "truncated-string.toml",
            b"objects = 10\nshapes = \"sph".to_vec(),
            ":2",
        ),
        (
            "truncated-table.toml",
            b"objects = 10\n[[phases".to_vec(),
            ":2",
        ),
        ("comments-50mb.toml", comments, "large"),
        ("array-1e6.toml", array, "large"),
        ("nested-arrays.toml", nested.into_bytes(), "recursion"),
        (
            "nested-tables.toml",
            nested_tables.into_bytes(),
            "recursion",
        ),
        (
            "wrong-type-string.toml",
            b"objects = \"many\"\n".to_vec(),
            "objects",
        ),
        (
            "wrong-type-bool.toml",
            b"sphere_bounces = 3\n".to_vec(),
            "sphere_bounces",
        ),
        (
            "wrong-type-array.toml",
            b"objects = [1, 2]\n".to_vec(),
            "objects",
        ),
        (
            "wrong-type-table.toml",
            b"[objects]\nn = 1\n".to_vec(),
            ":1",
        ),
        (
            "negative-objects.toml",
            b"objects = -5\n".to_vec(),
            "objects",
        ),
        ("negative-steps.toml", b"steps = -1\n".to_vec(), "steps"),
        (
            "negative-terrain.toml",
            b"terrain_boxes = -3\n".to_vec(),
            "terrain_boxes",
        ),
        ("zero-objects.toml", b"objects = 0\n".to_vec(), "objects"),
        ("zero-steps.toml", b"steps = 0\n".to_vec(), "steps"),
        (
            "objects-1e12.toml",
            b"objects = 1000000000000\n".to_vec(),
            "objects",
        ),
        (
            "objects-u64-max.toml",
            b"objects = 18446744073709551615\n".to_vec(),
            "objects",
        ),
        (
            "seed-u64-max.toml",
            b"seed = 18446744073709551615\n".to_vec(),
            "seed",
        ),
        ("nan-density.toml", b"density = nan\n".to_vec(), "density"),
        (
            "inf-speed.toml",
            b"mean_speed = inf\n".to_vec(),
            "mean_speed",
        ),
        (
            "minus-inf-size.toml",
            b"size_min = -inf\n".to_vec(),
            "size_min",
        ),
        (
            "nan-time-step.toml",
            b"time_step = nan\n".to_vec(),
            "time_step",
        ),
        (
            "huge-world.toml",
            b"world_size = 3e38\n".to_vec(),
            "world_size",
        ),
        (
            "unknown-key.toml",
            b"objects = 10\nobjets = 11\n".to_vec(),
            "objets",
        ),
        (
            "duplicate-key.toml",
            b"objects = 10\nobjects = 11\n".to_vec(),
            ":2",
        ),
        (
            "not-utf8.toml",
            vec![0xff, 0xfe, b'o', b'b', 0x80, b'\n'],
            "UTF-8",
        ),
        ("nul-bytes.toml", b"objects = 1\0\0\n".to_vec(), ":1"),
    ]
}

/// Writes the hostile scenes into `dir` and calls `check` with each path.
fn for_each_hostile_scene(dir: &Path, mut check: impl FnMut(&str, &Path, &str)) {
    for (name, contents, expected) in hostile_scenes() {
        let path = dir.join(name);
        fs::write(&path, contents).unwrap();
        check(name, &path, expected);
        fs::remove_file(&path).unwrap();
    }
}

#[test]
fn bench_rejects_hostile_scene_files() {
    let dir = temp_dir("hostile", "bench");
    for_each_hostile_scene(&dir, |name, path, expected| {
        let stderr = assert_rejected(&[
            "bench",
            "--scene",
            path.to_str().unwrap(),
            "--algorithms",
            "sap",
        ]);
        assert!(stderr.contains(expected), "{name}: {stderr}");
    });
    for missing in [dir.join("missing.toml"), dir.clone()] {
        assert_rejected(&["bench", "--scene", missing.to_str().unwrap()]);
    }
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sweep_rejects_hostile_scene_files_without_writing() {
    let dir = temp_dir("hostile", "sweep");
    let out = dir.join("out");
    for_each_hostile_scene(&dir, |name, path, expected| {
        let stderr = assert_rejected(&[
            "sweep",
            "--param",
            "stationary_fraction",
            "--values",
            "0,0.5",
            "--algorithms",
            "sap",
            "--scene",
            path.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(stderr.contains(expected), "{name}: {stderr}");
        assert_no_results(&out);
    });
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn hostile_flags_and_counts_are_rejected() {
    let dir = temp_dir("hostile", "flags");
    let out = dir.join("out");
    let out = out.to_str().unwrap();
    for args in [
        &["bench", "--objects", "1000000000000", "--algorithms", "sap"][..],
        &["bench", "--mean-speed", "inf", "--algorithms", "sap"],
        &["bench", "--density=-1", "--algorithms", "sap"],
        &["bench", "--steps=-1", "--algorithms", "sap"],
        &[
            "sweep",
            "--param",
            "objects",
            "--values",
            "10,1000000000000",
            "--algorithms",
            "sap",
            "--out",
            out,
        ],
        &[
            "sweep",
            "--param",
            "objects",
            "--values",
            "0",
            "--algorithms",
            "sap",
            "--out",
            out,
        ],
        &[
            "sweep",
            "--param",
            "density",
            "--values",
            "nan",
            "--algorithms",
            "sap",
            "--out",
            out,
        ],
        &[
            "sweep",
            "--param",
            "nope",
            "--values",
            "1",
            "--algorithms",
            "sap",
            "--out",
            out,
        ],
        &["reproduce", "no-such-experiment", "--out", out],
        &["reproduce", "thesis-objects", "--steps", "0", "--out", out],
        &["verify", "--objects", "1000000000000", "--steps", "10"],
        &["verify", "--objects", "0"],
        &["verify", "--steps", "0"],
        &["soak", "--objects", "1000000000000", "--seconds", "1"],
        &["soak", "--seconds", "nan"],
        &["soak", "--seconds=-1"],
    ] {
        assert_rejected(args);
        assert_no_results(Path::new(out));
    }
    fs::remove_dir_all(&dir).unwrap();
}

/// `--out` under a regular file cannot be created, even by root.
#[test]
fn output_under_a_file_is_rejected_before_running() {
    let dir = temp_dir("hostile", "outfile");
    let file = dir.join("a-file");
    fs::write(&file, b"not a directory").unwrap();
    let out = file.join("results");
    let out = out.to_str().unwrap();
    for args in [
        &[
            "sweep",
            "--param",
            "mean_speed",
            "--values",
            "1,2",
            "--objects",
            "20",
            "--steps",
            "2",
            "--warmup",
            "0",
            "--algorithms",
            "sap",
            "--out",
            out,
        ][..],
        &[
            "reproduce",
            "thesis-objects",
            "--steps",
            "2",
            "--warmup",
            "0",
            "--algorithms",
            "sap",
            "--out",
            out,
        ],
        &["reproduce", "ccd-table-5.2", "--out", out],
    ] {
        let stderr = assert_rejected(args);
        assert!(stderr.contains("a-file"), "{args:?}: {stderr}");
    }
    assert_eq!(fs::read(&file).unwrap(), b"not a directory");
    assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
    fs::remove_dir_all(&dir).unwrap();
}

/// A read-only directory: rejected before running, nothing left in it. Root writes anyway,
/// so the case is skipped (with a message) when the directory turns out to be writable.
#[test]
fn read_only_output_directory_is_rejected_before_running() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("hostile", "readonly");
    let out = dir.join("out");
    fs::create_dir(&out).unwrap();
    fs::set_permissions(&out, fs::Permissions::from_mode(0o555)).unwrap();
    if fs::write(out.join("probe"), b"").is_ok() {
        eprintln!("skipped: a read-only directory is writable here (running as root)");
        fs::set_permissions(&out, fs::Permissions::from_mode(0o755)).unwrap();
        fs::remove_dir_all(&dir).unwrap();
        return;
    }
    let out_str = out.to_str().unwrap();
    for args in [
        &[
            "sweep",
            "--param",
            "mean_speed",
            "--values",
            "1,2",
            "--objects",
            "20",
            "--steps",
            "2",
            "--warmup",
            "0",
            "--algorithms",
            "sap",
            "--out",
            out_str,
        ][..],
        &[
            "reproduce",
            "thesis-objects",
            "--steps",
            "2",
            "--warmup",
            "0",
            "--algorithms",
            "sap",
            "--out",
            out_str,
        ],
    ] {
        assert_rejected(args);
        assert_no_results(&out);
    }
    fs::set_permissions(&out, fs::Permissions::from_mode(0o755)).unwrap();
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_algorithm_named_twice_is_measured_once() {
    let (code, stdout, stderr) = broadphase(&[
        "bench",
        "--algorithms",
        "sap,sap,brute-force,sap",
        "--objects",
        "60",
        "--warmup",
        "1",
        "--steps",
        "2",
        "--rounds",
        "2",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let rows: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    // Rows come fastest first, so compare the names whatever their order.
    let mut names: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["algorithm"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["brute-force", "sap"]);
}
