//! The switching policy's decisions as pure functions of measured numbers: which candidates a
//! round tries and in what order, whether its winner replaces the active algorithm, which
//! candidates sit out the next rounds, and when the next round starts. `Adaptive` feeds them
//! what it measured; time itself comes from an injected [`Clock`], so that tests can decide
//! every measurement.

use super::options::SwitchPolicy;

/// Where `Adaptive` reads time: seconds since an origin of the clock's choosing.
pub(crate) trait Clock: Send + Sync + std::fmt::Debug {
    /// Seconds since the clock's origin; never decreases.
    fn seconds(&self) -> f64;
}

/// The system's monotonic clock.
#[derive(Debug)]
pub(crate) struct SystemClock(std::time::Instant);

impl SystemClock {
    pub(crate) fn new() -> Self {
        Self(std::time::Instant::now())
    }
}

impl Clock for SystemClock {
    fn seconds(&self) -> f64 {
        self.0.elapsed().as_secs_f64()
    }
}

/// What the policy needs to know of a candidate algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Traits {
    /// Its cost grows with n² (tried only up to `quadratic_limit` proxies).
    pub(crate) quadratic: bool,
    /// It keeps sorted endpoints that a move passes one by one, so its cost per move grows
    /// with the box ends per unit of length: a trial on a sample scales by more than n.
    pub(crate) sorts_endpoints: bool,
}

/// The traits of the registered algorithms, by name; the others have none.
const TRAITS: &[(&str, Traits)] = &[
    (
        "brute-force",
        Traits {
            quadratic: true,
            sorts_endpoints: false,
        },
    ),
    (
        "masking",
        Traits {
            quadratic: true,
            sorts_endpoints: false,
        },
    ),
    (
        "sap",
        Traits {
            quadratic: false,
            sorts_endpoints: true,
        },
    ),
];

/// The traits of the algorithm called `name`.
pub(crate) fn traits(name: &str) -> Traits {
    TRAITS
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(Traits::default(), |&(_, t)| t)
}

/// A candidate's measured step time in a round (corrected to its running cost).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TrialResult {
    pub(crate) name: &'static str,
    pub(crate) seconds: f64,
}

/// The fastest candidate of a round other than the active one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Best {
    pub(crate) name: &'static str,
    /// Its step time.
    pub(crate) seconds: f64,
    /// The time to build it on every box: what a switch costs.
    pub(crate) build_seconds: f64,
}

/// A candidate that was far slower than a round's best: it sits out rounds, more of them
/// each time it stays hopeless.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Benched {
    pub(crate) name: &'static str,
    /// Full rounds it still sits out.
    pub(crate) sit_out: u32,
    /// Rounds it sits out next time it is hopeless (doubling, at most 8).
    pub(crate) next_sit_out: u32,
}

/// A candidate whose trial takes more than this many times the round's best sits out the
/// next rounds, and one already this much slower stops its trial after one timed step.
pub(crate) const HOPELESS: f64 = 3.0;

/// A switch must pay for itself within this many steps (about two seconds at 60 Hz). A
/// switch that turns out slower is undone by its probation, so a long horizon risks one
/// build; a short one keeps small scenes whose winner builds slowly (large static boxes in
/// many grid cells) on an algorithm several times slower for good.
pub(crate) const PAYBACK_STEPS: f64 = 128.0;

/// The candidates of a measured round, in the order they are tried (the last first: the
/// list is popped): every candidate but the active one, without the quadratic ones past
/// `quadratic_limit` proxies and the ones sitting out (whose count this decrements), slowest
/// of the last round first; then the active one, tried first because its trial calibrates.
pub(crate) fn measured_round(
    candidates: &[&'static str],
    active: &'static str,
    proxies: usize,
    quadratic_limit: usize,
    benched: &mut [Benched],
    last_round: &[TrialResult],
    out: &mut Vec<&'static str>,
) {
    out.clear();
    for &c in candidates.iter().rev() {
        if c == active || traits(c).quadratic && proxies > quadratic_limit {
            continue;
        }
        if let Some(b) = benched.iter_mut().find(|b| b.name == c) {
            if b.sit_out > 0 {
                b.sit_out -= 1;
                continue;
            }
        }
        out.push(c);
    }
    let last = |name: &str| {
        last_round
            .iter()
            .find(|r| r.name == name)
            .map_or(f64::INFINITY, |r| r.seconds)
    };
    out.sort_by(|a, b| last(b).total_cmp(&last(a)));
    out.push(active);
}

/// The candidate a round-robin round tries: the one after the active one, if another.
pub(crate) fn round_robin_next(
    candidates: &[&'static str],
    active: &'static str,
) -> Option<&'static str> {
    let position = candidates.iter().position(|&c| c == active).unwrap_or(0);
    let next = candidates[(position + 1) % candidates.len()];
    (next != active).then_some(next)
}

/// After a full round (more than two results), benches the candidates that were
/// [`HOPELESS`] times slower than the fastest and frees the others; the active one is left
/// alone.
pub(crate) fn update_benched(
    benched: &mut Vec<Benched>,
    results: &[TrialResult],
    active: &'static str,
) {
    if results.len() <= 2 {
        return;
    }
    let fastest = results
        .iter()
        .map(|r| r.seconds)
        .fold(f64::INFINITY, f64::min);
    for r in results.iter().filter(|r| r.name != active) {
        let entry = match benched.iter().position(|b| b.name == r.name) {
            Some(i) => &mut benched[i],
            None => {
                benched.push(Benched {
                    name: r.name,
                    sit_out: 0,
                    next_sit_out: 1,
                });
                benched.last_mut().expect("just pushed")
            }
        };
        if r.seconds > HOPELESS * fastest {
            entry.sit_out = entry.next_sit_out;
            entry.next_sit_out = (entry.next_sit_out * 2).min(8);
        } else {
            entry.sit_out = 0;
            entry.next_sit_out = 1;
        }
    }
}

/// The candidate that a round's results call for, before confirmation: the best one when
/// it is faster than `margin` times the active algorithm and saves its own build within
/// [`PAYBACK_STEPS`] steps, so that nothing flaps between near-free choices.
pub(crate) fn winner(
    best: Option<Best>,
    active_seconds: Option<f64>,
    margin: f64,
) -> Option<&'static str> {
    match (best, active_seconds) {
        (Some(best), Some(active))
            if best.seconds < margin * active
                && (active - best.seconds) * PAYBACK_STEPS > best.build_seconds =>
        {
            Some(best.name)
        }
        _ => None,
    }
}

/// A measured winner must win two rounds in a row (one noisy trial does not switch); a
/// round-robin one switches at once. Returns the confirmed switch and the winner left to
/// confirm by the next round.
pub(crate) fn confirm(
    policy: SwitchPolicy,
    candidate: Option<&'static str>,
    unconfirmed: Option<&'static str>,
) -> (Option<&'static str>, Option<&'static str>) {
    let confirmed = match policy {
        SwitchPolicy::Measured => candidate.filter(|&c| unconfirmed == Some(c)),
        SwitchPolicy::RoundRobin => candidate,
    };
    let pending = if confirmed.is_some() { None } else { candidate };
    (confirmed, pending)
}

/// What the schedule needs to know after a round.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Schedule {
    pub(crate) policy: SwitchPolicy,
    pub(crate) step: u64,
    pub(crate) interval: u64,
    pub(crate) min_interval: u64,
    pub(crate) max_interval: u64,
    /// Whether the round switched, and whether a winner waits for confirmation.
    pub(crate) switched: bool,
    pub(crate) unconfirmed: bool,
    /// Seconds spent in trials and in steps so far, and the share trials may take.
    pub(crate) trial_seconds: f64,
    pub(crate) step_seconds: f64,
    pub(crate) trial_budget: f64,
}

/// The next trial interval and the step of the next round: the interval resets after a
/// switch or an unconfirmed winner and doubles (up to the maximum) otherwise; a winner is
/// confirmed at once; and rounds wait as long as it takes to keep trials within their
/// budget share of the running time.
pub(crate) fn next_round(s: &Schedule) -> (u64, u64) {
    let interval = if s.switched || s.unconfirmed {
        s.min_interval
    } else {
        (s.interval * 2).min(s.max_interval)
    };
    let mean_step = s.step_seconds / s.step.max(1) as f64;
    let budget_steps = match s.policy {
        SwitchPolicy::Measured => {
            (s.trial_seconds / s.trial_budget - s.step_seconds).max(0.0) / mean_step.max(1e-9)
        }
        SwitchPolicy::RoundRobin => 0.0,
    };
    let next = if s.unconfirmed {
        s.step + 1
    } else {
        s.step + interval.max(budget_steps.min(1e9) as u64)
    };
    (interval, next)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(name: &'static str, seconds: f64) -> TrialResult {
        TrialResult { name, seconds }
    }

    #[test]
    fn a_winner_needs_the_margin_and_must_pay_back_its_build() {
        let best = |seconds, build_seconds| {
            Some(Best {
                name: "grid",
                seconds,
                build_seconds,
            })
        };
        assert_eq!(winner(best(0.7, 0.0), Some(1.0), 0.8), Some("grid"));
        assert_eq!(
            winner(best(0.85, 0.0), Some(1.0), 0.8),
            None,
            "within the margin"
        );
        // Saves 0.3 s a step: a build of 38 s pays back in 128 steps, 38.5 s does not.
        assert_eq!(winner(best(0.7, 38.0), Some(1.0), 0.8), Some("grid"));
        assert_eq!(winner(best(0.7, 38.5), Some(1.0), 0.8), None);
        assert_eq!(winner(None, Some(1.0), 0.8), None);
        assert_eq!(
            winner(best(0.1, 0.0), None, 0.8),
            None,
            "active not measured"
        );
    }

    #[test]
    fn measured_winners_are_confirmed_by_a_second_round() {
        let m = SwitchPolicy::Measured;
        assert_eq!(confirm(m, Some("grid"), None), (None, Some("grid")));
        assert_eq!(confirm(m, Some("grid"), Some("grid")), (Some("grid"), None));
        assert_eq!(confirm(m, Some("bvh"), Some("grid")), (None, Some("bvh")));
        assert_eq!(confirm(m, None, Some("grid")), (None, None));
        let rr = SwitchPolicy::RoundRobin;
        assert_eq!(confirm(rr, Some("grid"), None), (Some("grid"), None));
    }

    #[test]
    fn rounds_try_the_active_first_then_the_fastest_and_skip_the_benched() {
        let candidates = ["brute-force", "sap", "grid", "bvh", "masking"];
        let mut benched = vec![Benched {
            name: "bvh",
            sit_out: 1,
            next_sit_out: 2,
        }];
        let last = [r("grid", 2.0), r("sap", 1.0)];
        let mut order = Vec::new();
        measured_round(
            &candidates,
            "sap",
            5000,
            1500,
            &mut benched,
            &last,
            &mut order,
        );
        // Popped from the end: sap (active), then grid (measured), then untried masking
        // and brute-force are left out at 5000 proxies; bvh sits this round out.
        assert_eq!(order, vec!["grid", "sap"]);
        assert_eq!(benched[0].sit_out, 0, "one round sat out");
        measured_round(
            &candidates,
            "sap",
            100,
            1500,
            &mut benched,
            &last,
            &mut order,
        );
        assert_eq!(order.last(), Some(&"sap"));
        assert_eq!(order.len(), 5, "every candidate at 100 proxies");
        assert_eq!(
            order[order.len() - 2],
            "grid",
            "the fastest of the last round next"
        );
    }

    #[test]
    fn hopeless_candidates_sit_out_doubling_rounds_up_to_eight() {
        let mut benched = Vec::new();
        let round = [r("sap", 1.0), r("grid", 1.5), r("masking", 10.0)];
        let mut sat_out = Vec::new();
        for _ in 0..6 {
            update_benched(&mut benched, &round, "sap");
            let m = benched.iter().find(|b| b.name == "masking").unwrap();
            sat_out.push(m.sit_out);
        }
        assert_eq!(sat_out, vec![1, 2, 4, 8, 8, 8]);
        let grid = benched.iter().find(|b| b.name == "grid").unwrap();
        assert_eq!((grid.sit_out, grid.next_sit_out), (0, 1));
        assert!(
            benched.iter().all(|b| b.name != "sap"),
            "the active one is never benched"
        );
        // A round of two results (a confirming round) changes nothing.
        let before = benched.clone();
        update_benched(&mut benched, &[r("sap", 1.0), r("masking", 99.0)], "sap");
        assert_eq!(benched, before);
        // Back within HOPELESS of the fastest: freed.
        update_benched(
            &mut benched,
            &[r("sap", 1.0), r("grid", 1.5), r("masking", 2.0)],
            "sap",
        );
        let m = benched.iter().find(|b| b.name == "masking").unwrap();
        assert_eq!((m.sit_out, m.next_sit_out), (0, 1));
    }

    #[test]
    fn the_schedule_doubles_resets_confirms_and_keeps_the_budget() {
        let base = Schedule {
            policy: SwitchPolicy::Measured,
            step: 100,
            interval: 8,
            min_interval: 8,
            max_interval: 1024,
            switched: false,
            unconfirmed: false,
            trial_seconds: 0.0,
            step_seconds: 1.0,
            trial_budget: 0.05,
        };
        assert_eq!(next_round(&base), (16, 116));
        assert_eq!(
            next_round(&Schedule {
                interval: 1024,
                ..base
            }),
            (1024, 1124)
        );
        assert_eq!(
            next_round(&Schedule {
                switched: true,
                interval: 64,
                ..base
            }),
            (8, 108)
        );
        assert_eq!(
            next_round(&Schedule {
                unconfirmed: true,
                ..base
            }),
            (8, 101)
        );
        // Trials took 0.1 s of 1 s in 100 steps: 0.1 / 0.05 - 1 = 1 s more of steps, 100
        // steps at 0.01 s, before the next round.
        let busy = Schedule {
            trial_seconds: 0.1,
            ..base
        };
        assert_eq!(next_round(&busy), (16, 200));
        let rr = Schedule {
            policy: SwitchPolicy::RoundRobin,
            ..busy
        };
        assert_eq!(next_round(&rr), (16, 116), "round robin ignores the budget");
    }

    #[test]
    fn round_robin_takes_the_next_candidate() {
        let c = ["sap", "grid", "bvh"];
        assert_eq!(round_robin_next(&c, "sap"), Some("grid"));
        assert_eq!(round_robin_next(&c, "bvh"), Some("sap"));
        assert_eq!(round_robin_next(&["sap"], "sap"), None);
        assert!(traits("masking").quadratic);
        assert!(traits("sap").sorts_endpoints);
        assert_eq!(traits("grid"), Traits::default());
    }
}
