//! Every algorithm against the exact model, on every scenario, through `verify`.

use broadphase::verify::{Scenario, Verifier, VerifyConfig};
use broadphase::{create, ALGORITHMS};
use proptest::prelude::*;

fn all_algorithms() -> Vec<Box<dyn broadphase::BroadPhase>> {
    ALGORITHMS
        .iter()
        .map(|name| create(name, &Default::default()).unwrap())
        .collect()
}

#[test]
fn every_scenario_every_algorithm() {
    for scenario in Scenario::ALL {
        for objects in [1, 2, 17, 120] {
            let config = VerifyConfig {
                objects,
                steps: 60,
                seed: 7 + objects as u64,
                scenario: Some(scenario),
            };
            let report = Verifier::new(all_algorithms()).run(&config);
            assert!(report.checks > 0);
            assert_eq!(
                report.mismatches, 0,
                "{scenario}, {objects} objects: {:?}",
                report.first_mismatch
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    #[test]
    fn random_operation_sequences(seed in any::<u64>(), objects in 1usize..150, scenario in 0usize..6) {
        let config = VerifyConfig { objects, steps: 40, seed, scenario: Some(Scenario::ALL[scenario]) };
        let report = Verifier::new(all_algorithms()).run(&config);
        prop_assert_eq!(report.mismatches, 0, "{:?}", report.first_mismatch);
    }
}

#[test]
fn adaptive_switching_keeps_pairs_and_events_exact() {
    use broadphase::{Adaptive, AdaptiveOptions, BroadPhase, SwitchPolicy};
    for scenario in Scenario::ALL {
        let options = AdaptiveOptions {
            policy: SwitchPolicy::RoundRobin,
            min_trial_interval: 3,
            max_trial_interval: 3,
            trial_budget: 1.0,
            ..Default::default()
        };
        let adaptive: Box<dyn BroadPhase> = Box::new(Adaptive::new(options).unwrap());
        let mut verifier = Verifier::new(vec![adaptive]);
        let mut rng = broadphase::verify::SplitMix64::new(5);
        for _ in 0..120 {
            verifier.random_step(scenario, 80, &mut rng);
        }
        let report = verifier.report();
        assert_eq!(
            report.mismatches, 0,
            "{scenario}: {:?}",
            report.first_mismatch
        );
        let switches = verifier.algorithms()[0].switch_log();
        assert!(
            switches.len() >= 20,
            "{scenario}: only {} switches",
            switches.len()
        );
        let targets: std::collections::BTreeSet<_> = switches.iter().map(|s| s.to).collect();
        assert!(
            targets.len() >= 2,
            "{scenario}: switched only to {targets:?}"
        );
    }
}
