//! Whether timings say the machine was busy while they were taken, and the one-line warning
//! that says so.
//!
//! A quiet machine gives step times close to each other: the median near the fastest step,
//! the 95th percentile near the median, and rounds of the same run near one another. Another
//! process taking the cores stretches some steps and not others, and these ratios grow. The
//! thresholds are loose on purpose: a structure's own rebuilds make some steps slower, and a
//! warning that fires on every run would be ignored.

/// The spread of one timed quantity (an algorithm's total per step, a method's call time).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Spread {
    /// What was timed (an algorithm's name).
    pub name: String,
    /// Median of the samples.
    pub median: f64,
    /// Smallest sample.
    pub min: f64,
    /// 95th percentile (NaN when not known, e.g. too few samples).
    pub p95: f64,
    /// The median of each round, when the run was repeated in rounds (else empty).
    pub rounds: Vec<f64>,
    /// How many samples the median, minimum and p95 are of.
    pub samples: usize,
}

/// Median ÷ minimum above this: most samples were slowed down.
pub const MEDIAN_OVER_MIN: f64 = 2.0;
/// 95th percentile ÷ median above this: many samples were slowed down.
pub const P95_OVER_MEDIAN: f64 = 2.5;
/// Slowest round's median ÷ fastest round's above this: the machine's speed drifted.
pub const ROUND_TO_ROUND: f64 = 1.5;

/// Fewest samples whose median over their minimum says something (fewer: one fast sample
/// decides).
const FEWEST_FOR_MEDIAN: usize = 5;
/// Fewest samples whose 95th percentile is not simply their maximum.
const FEWEST_FOR_P95: usize = 20;

/// Samples shorter than this (milliseconds) are not judged: the clock's resolution and a
/// single cache miss make their ratios meaningless.
const SHORTEST_JUDGED_MS: f64 = 0.02;

/// What the worst spread was: the quantity, the ratio and what it compares.
#[derive(Debug, Clone, PartialEq)]
pub struct Noise {
    pub name: String,
    pub ratio: f64,
    pub what: &'static str,
}

/// The worst spread beyond its threshold, if any: the timings were taken on a busy machine.
pub fn assess(spreads: &[Spread]) -> Option<Noise> {
    let mut worst: Option<(f64, Noise)> = None;
    for s in spreads.iter().filter(|s| s.median >= SHORTEST_JUDGED_MS) {
        let fastest_round = s.rounds.iter().copied().fold(f64::INFINITY, f64::min);
        let slowest_round = s.rounds.iter().copied().fold(0.0, f64::max);
        let enough = |fewest: usize, ratio: f64| {
            if s.samples >= fewest {
                ratio
            } else {
                f64::NAN
            }
        };
        let candidates = [
            (
                enough(FEWEST_FOR_MEDIAN, s.median / s.min),
                MEDIAN_OVER_MIN,
                "median over its fastest sample",
            ),
            (
                enough(FEWEST_FOR_P95, s.p95 / s.median),
                P95_OVER_MEDIAN,
                "p95 over its median",
            ),
            (
                if s.rounds.len() >= 2 && fastest_round > 0.0 {
                    slowest_round / fastest_round
                } else {
                    f64::NAN
                },
                ROUND_TO_ROUND,
                "slowest round over its fastest",
            ),
        ];
        for (ratio, threshold, what) in candidates {
            if !(ratio.is_finite() && ratio > threshold) {
                continue;
            }
            // Ranked by how far beyond its own threshold a ratio is.
            let excess = ratio / threshold;
            if worst.as_ref().is_none_or(|(e, _)| excess > *e) {
                worst = Some((
                    excess,
                    Noise {
                        name: s.name.clone(),
                        ratio,
                        what,
                    },
                ));
            }
        }
    }
    worst.map(|(_, noise)| noise)
}

/// The warning line for `noise`, suggesting `flag` (`--rounds`, `--repeat`) at more than
/// `now`.
pub fn warning(noise: &Noise, flag: &str, now: usize) -> String {
    format!(
        "warning: noisy timings, the machine was likely busy ({}: {} {:.2}×); compare ratios \
         with care, or rerun on a quieter machine with {flag} {}",
        noise.name,
        noise.what,
        noise.ratio,
        now.saturating_mul(2).max(3)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spread(median: f64, min: f64, p95: f64, rounds: &[f64]) -> Spread {
        Spread {
            name: "sap".into(),
            median,
            min,
            p95,
            rounds: rounds.to_vec(),
            samples: 100,
        }
    }

    #[test]
    fn a_quiet_run_is_not_flagged() {
        let quiet = [
            spread(1.0, 0.9, 1.3, &[]),
            spread(2.0, 1.8, 2.5, &[2.0, 2.1, 1.9]),
        ];
        assert_eq!(assess(&quiet), None);
        assert_eq!(assess(&[]), None);
    }

    #[test]
    fn each_spread_flags_a_busy_machine() {
        // The prune run of the issue: a median of 23.4 ms against a minimum of 3.6 ms.
        let n = assess(&[spread(23.4, 3.6, f64::NAN, &[])]).unwrap();
        assert_eq!(n.what, "median over its fastest sample");
        assert!((n.ratio - 6.5).abs() < 1e-9);
        let n = assess(&[spread(1.0, 0.9, 3.0, &[])]).unwrap();
        assert_eq!(n.what, "p95 over its median");
        let n = assess(&[spread(1.0, 0.9, 1.2, &[1.0, 2.0])]).unwrap();
        assert_eq!(n.what, "slowest round over its fastest");
        assert_eq!(n.ratio, 2.0);
    }

    #[test]
    fn the_worst_spread_is_named_and_tiny_times_are_not_judged() {
        let mut a = spread(1.0, 0.45, 1.1, &[]);
        a.name = "a".into();
        let mut b = spread(1.0, 0.2, 1.1, &[]);
        b.name = "b".into();
        assert_eq!(assess(&[a, b]).unwrap().name, "b");
        assert_eq!(assess(&[spread(0.001, 0.0001, 0.01, &[])]), None);
        let few = Spread {
            samples: 3,
            ..spread(1.0, 0.1, 50.0, &[])
        };
        assert_eq!(assess(&[few]), None, "three samples say nothing");
        let line = warning(
            &assess(&[spread(23.4, 3.6, f64::NAN, &[])]).unwrap(),
            "--rounds",
            1,
        );
        assert!(line.starts_with("warning: noisy timings"), "{line}");
        assert!(
            line.contains("--rounds 3") && !line.contains('\n'),
            "{line}"
        );
    }
}
