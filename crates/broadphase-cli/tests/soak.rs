//! `broadphase soak` on a short run: several rounds of every scenario, memory judged.

mod common;

#[test]
fn short_soak_runs_rounds_and_judges_memory() {
    let output = common::bin()
        .args([
            "soak",
            "--algorithms",
            "sap,grid,bvh",
            "--objects",
            "30",
            "--scenario-steps",
            "20",
            "--check-every",
            "2",
            "--ops",
            "100000",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    let first = stdout.lines().next().unwrap();
    assert!(first.starts_with("soak: 3 algorithms, "), "{first}");
    // Each step counts (30 / 3 + 4) * 3 operations at most: the op limit ends the run.
    let ops: u64 = first
        .split(" steps, ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((100_000..100_100).contains(&ops), "{first}");
    for name in ["sap", "grid", "bvh"] {
        let line = stdout
            .lines()
            .find(|l| l.trim_start().starts_with(name) && l.contains("structure memory peak"))
            .unwrap_or_else(|| panic!("no memory line for {name}: {stdout}"));
        assert!(line.ends_with(": ok"), "{line}");
    }
    assert!(first.ends_with(" 0 mismatches"), "{first}");
    assert!(
        stdout.contains("after round 1") && stdout.contains("(peak "),
        "{stdout}"
    );
    assert_eq!(stdout.lines().last(), Some("soak: ok"), "{stdout}");
}
