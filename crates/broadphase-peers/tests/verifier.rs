//! The peers against the exact model, on every scenario of the library's verifier.

use broadphase::verify::{Scenario, Verifier, VerifyConfig};
use broadphase::{Aabb, BroadPhase, CollisionFilter, PairEvents, ProxyKind};
use broadphase_peers::{create, PEERS};

fn peers() -> Vec<Box<dyn BroadPhase>> {
    PEERS.iter().map(|name| create(name).unwrap()).collect()
}

#[test]
fn peers_match_the_exact_model_on_every_scenario() {
    for scenario in Scenario::ALL {
        for objects in [1, 2, 30, 150] {
            let config = VerifyConfig {
                objects,
                steps: 80,
                seed: 11 + objects as u64,
                scenario: Some(scenario),
            };
            let report = Verifier::new(peers()).run(&config);
            assert!(report.checks > 0);
            assert_eq!(
                report.mismatches, 0,
                "{scenario}, {objects} objects: {:?}",
                report.first_mismatch
            );
        }
    }
}

#[test]
fn peers_match_on_long_mixed_runs() {
    for seed in 1..4 {
        let config = VerifyConfig {
            objects: 300,
            steps: 300,
            seed,
            scenario: None,
        };
        let report = Verifier::new(peers()).run(&config);
        assert_eq!(
            report.mismatches, 0,
            "seed {seed}: {:?}",
            report.first_mismatch
        );
    }
}

#[test]
fn touching_boxes_far_from_the_origin_pair_in_every_peer() {
    // Rounding of center ± half extents must not lose a pair of exactly touching boxes.
    for name in PEERS {
        let mut bp = create(name).unwrap();
        let a = Aabb::from_arrays([1000.1, 5.3, -7.7], [1003.7, 6.1, -2.9]).unwrap();
        let b = Aabb::from_arrays([1003.7, 6.1, -2.9], [1010.0, 9.0, 4.0]).unwrap();
        bp.insert(a, ProxyKind::Dynamic, CollisionFilter::ALL)
            .unwrap();
        let id = bp
            .insert(b, ProxyKind::Dynamic, CollisionFilter::ALL)
            .unwrap();
        let mut events = PairEvents::new();
        bp.update(&mut events);
        assert_eq!(bp.pair_count(), 1, "{name}");
        let apart = Aabb::from_arrays([1003.71, 6.1, -2.9], [1010.0, 9.0, 4.0]).unwrap();
        bp.set_aabb(id, apart).unwrap();
        bp.update(&mut events);
        assert_eq!((bp.pair_count(), events.ended.len()), (0, 1), "{name}");
        bp.remove(id).unwrap();
        bp.update(&mut events);
        assert!(events.is_empty(), "{name}");
    }
}
