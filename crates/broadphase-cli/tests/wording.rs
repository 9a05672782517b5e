//! What a user reads: counts agree with their nouns, help texts list what the command takes and
//! name no internal constant, and every refused argument is one line with exit code 2, a
//! negative number included.

mod common;

use common::broadphase;

/// `text`'s counts written before a noun in the plural although the count is one ("1
/// algorithms", "(1 switches)").
fn singular_counts_in_the_plural(text: &str) -> Vec<String> {
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || c == '(' || c == ',' || c == ';')
        .filter(|w| !w.is_empty())
        .collect();
    words
        .windows(2)
        .filter(|w| w[0] == "1" && w[1].len() > 3 && w[1].ends_with('s') && !w[1].ends_with("ss"))
        // Units are not nouns in the plural: "1 ms", "1 ops/s".
        .filter(|w| !["ms", "ops/s", "yes"].contains(&w[1]))
        .map(|w| format!("{} {}", w[0], w[1]))
        .collect()
}

#[test]
fn one_algorithm_is_counted_in_the_singular() {
    let (code, stdout, stderr) = broadphase(&[
        "verify",
        "--algorithms",
        "adaptive",
        "--objects",
        "20",
        "--steps",
        "1",
        "--scenario",
        "mixed",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let last = stdout.lines().last().unwrap();
    assert!(
        last.starts_with("verify: 1 algorithm, 1 step, "),
        "{stdout}"
    );
    assert!(
        singular_counts_in_the_plural(&stdout).is_empty(),
        "{:?} in {stdout}",
        singular_counts_in_the_plural(&stdout)
    );
    let (code, stdout, stderr) = broadphase(&[
        "verify",
        "--algorithms",
        "sap,grid",
        "--objects",
        "20",
        "--steps",
        "2",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("verify: 2 algorithms, 2 steps, "),
        "{stdout}"
    );
}

#[test]
fn adaptive_forced_to_switch_counts_its_switches_alike() {
    let (code, stdout, stderr) = broadphase(&[
        "verify",
        "--algorithms",
        "adaptive",
        "--objects",
        "20",
        "--steps",
        "3",
        "--scenario",
        "mixed",
        "--switch-every",
        "2",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let switches = stdout
        .lines()
        .find(|l| l.starts_with("adaptive: "))
        .unwrap_or_else(|| panic!("no switch line: {stdout}"));
    let n: usize = switches["adaptive: ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let noun = if n == 1 { "switch" } else { "switches" };
    assert_eq!(switches, format!("adaptive: {n} {noun}"));
}

#[test]
fn verify_help_lists_every_scenario_of_the_library() {
    let (code, help, _) = broadphase(&["verify", "--help"]);
    assert_eq!(code, 0);
    for scenario in broadphase::verify::Scenario::ALL {
        assert!(
            help.contains(&scenario.to_string()),
            "verify --help does not list `{scenario}`:\n{help}"
        );
    }
    assert!(help.contains("drift"));
}

#[test]
fn no_help_text_names_an_internal_constant() {
    let commands = [
        "bench",
        "verify",
        "sweep",
        "reproduce",
        "prune",
        "soak",
        "ccd",
        "recommend",
        "view",
    ];
    for command in commands {
        let (code, help, stderr) = broadphase(&[command, "--help"]);
        assert_eq!(code, 0, "{command}: {stderr}");
        // A Rust constant's name: upper case with an underscore (`RESIDENT_SLACK`); value
        // names such as `MEAN_SPEED` in `--mean-speed <MEAN_SPEED>` are clap's, between <>.
        let leaked: Vec<&str> = help
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '<' || c == '>'))
            .filter(|w| !w.starts_with('<'))
            .filter(|w| {
                w.contains('_')
                    && w.chars().filter(|c| c.is_ascii_uppercase()).count() >= 2
                    && !w.chars().any(|c| c.is_ascii_lowercase())
            })
            .collect();
        assert!(
            leaked.is_empty(),
            "{command} --help names {leaked:?}:\n{help}"
        );
    }
}

/// Runs a refused command line: exit code 2 and one line on stderr; that line.
fn refused(args: &[&str]) -> String {
    let (code, stdout, stderr) = broadphase(args);
    assert_eq!(code, 2, "{args:?}: {stdout}{stderr}");
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "{args:?}: not one line:\n{stderr}"
    );
    assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    stderr.trim_end().to_string()
}

#[test]
fn a_negative_number_gets_the_flags_range_error() {
    let line = refused(&["bench", "--mean-speed", "-3", "--objects", "10"]);
    assert!(!line.contains("unexpected argument"), "{line}");
    assert!(line.contains("--mean-speed"), "{line}");
    let line = refused(&["soak", "--seconds", "-1"]);
    assert!(!line.contains("unexpected argument"), "{line}");
    assert!(line.contains("--seconds"), "{line}");
    let line = refused(&["bench", "--rounds", "-2"]);
    assert!(!line.contains("unexpected argument"), "{line}");
    assert!(line.contains("--rounds"), "{line}");
}

#[test]
fn clap_errors_are_one_line_with_exit_code_2() {
    let line = refused(&["bench", "--objcts", "10"]);
    assert!(line.contains("--objcts"), "{line}");
    assert!(line.contains("--objects"), "the tip is kept: {line}");
    refused(&["bench", "--format", "yaml"]);
    refused(&["sweep", "--param", "objects"]);
    refused(&["no-such-command"]);
    refused(&["verify", "--steps", "many"]);
}

#[test]
fn a_bad_scene_flag_is_reported_against_the_flag_in_sweep_too() {
    let out = common::temp_dir("wording", "sweep-flag");
    let line = refused(&[
        "sweep",
        "--param",
        "objects",
        "--values",
        "20",
        "--mean-speed",
        "-3",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(line.starts_with("error: --mean-speed: "), "{line}");
    assert!(!line.contains("--param"), "{line}");
}
