//! `recommend`: `--objects`, and a configuration file whose command runs as written.

mod common;

use common::{bin, temp_dir};

#[test]
fn the_written_command_runs_the_recommendation_on_the_same_scene() {
    let dir = temp_dir("recommend", "command");
    let scene = dir.join("scene.toml");
    std::fs::write(&scene, "objects = 200\nwarmup = 2\nsteps = 12\n").unwrap();
    let out = dir.join("best.toml");
    let output = bin()
        .args(["recommend", "--budget", "3", "--objects", "90"])
        .args(["--mean-speed", "15", "--scene"])
        .arg(&scene)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("recommendation: "), "{stdout}");
    assert!(stdout.contains("total_ms_median"), "{stdout}");
    let text = std::fs::read_to_string(&out).unwrap();
    let command = text
        .lines()
        .find_map(|l| l.strip_prefix("# run: "))
        .unwrap_or_else(|| panic!("no command in:\n{text}"));
    assert!(!command.contains("default scene"), "{command}");
    let words: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(words[0], "broadphase", "{command}");
    for flag in [
        "--scene",
        "--objects",
        "--mean-speed",
        "--warmup",
        "--steps",
        "--config",
    ] {
        assert!(words.contains(&flag), "{flag} missing from {command}");
    }
    let output = bin().args(&words[1..]).output().unwrap();
    let ran = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{command}: {ran}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(ran.contains("90 objects"), "{ran}");
    assert!(ran.contains("2 warm-up + 12 measured steps"), "{ran}");
    let algorithm = text
        .lines()
        .find_map(|l| l.strip_prefix("algorithm = "))
        .unwrap()
        .trim_matches('"');
    assert!(
        ran.lines().any(|l| l.starts_with(algorithm)),
        "{algorithm} not run by {command}:\n{ran}"
    );
}
