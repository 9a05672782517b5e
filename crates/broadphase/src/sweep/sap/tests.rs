//! Tests of the parent module.

use super::*;
use crate::test_support::{assert_matches_brute_force, boxed};
use crate::util::SplitMix64;
use crate::BruteForce;
use std::collections::BTreeSet;

fn pair_set(bp: &dyn BroadPhase) -> BTreeSet<(u32, u32)> {
    let mut pairs = Vec::new();
    bp.pairs(&mut pairs);
    pairs
        .iter()
        .map(|p| {
            let (a, b) = (p.a.index(), p.b.index());
            (a.min(b), a.max(b))
        })
        .collect()
}

type SlotPairs = BTreeSet<(u32, u32)>;

/// Begun and ended pairs as sets of slot pairs.
fn events_set(events: &PairEvents) -> (SlotPairs, SlotPairs) {
    let key = |p: &crate::Pair| {
        let (a, b) = (p.a.index(), p.b.index());
        (a.min(b), a.max(b))
    };
    (
        events.begun.iter().map(key).collect(),
        events.ended.iter().map(key).collect(),
    )
}

/// Moves every box by `step(rng, i)` each update and checks pairs and events against
/// brute force; returns the rebuild count.
fn run(n: usize, steps: usize, teleport: bool) -> u64 {
    let mut rng = SplitMix64::new(7);
    let side = 60.0;
    let mut sap = SweepAndPrune::new();
    let mut model = BruteForce::new();
    let place = |rng: &mut SplitMix64| {
        let x = [
            rng.range(0.0, side),
            rng.range(0.0, side),
            rng.range(0.0, side),
        ];
        boxed(x, [x[0] + 1.5, x[1] + 1.5, x[2] + 1.5])
    };
    let mut ids = Vec::new();
    for _ in 0..n {
        let b = place(&mut rng);
        let kind = ProxyKind::Dynamic;
        let a = sap.insert(b, kind, CollisionFilter::ALL).unwrap();
        let m = model.insert(b, kind, CollisionFilter::ALL).unwrap();
        assert_eq!(a, m);
        ids.push(a);
    }
    let (mut e1, mut e2) = (PairEvents::new(), PairEvents::new());
    sap.update(&mut e1);
    model.update(&mut e2);
    for _ in 0..steps {
        for &id in &ids {
            let b = if teleport {
                place(&mut rng)
            } else {
                let old = sap.aabb(id).unwrap();
                let d = glam::Vec3::new(rng.range(-0.02, 0.02), rng.range(-0.02, 0.02), 0.0);
                Aabb::new(old.min() + d, old.max() + d).unwrap()
            };
            sap.set_aabb(id, b).unwrap();
            model.set_aabb(id, b).unwrap();
        }
        sap.update(&mut e1);
        model.update(&mut e2);
        assert_eq!(pair_set(&sap), pair_set(&model));
        assert_eq!(events_set(&e1), events_set(&e2));
    }
    sap.full_rebuilds()
}

#[test]
fn teleports_fall_back_to_a_full_rebuild_and_stay_exact() {
    assert!(
        run(3000, 4, true) >= 3,
        "every teleport step should rebuild"
    );
}

#[test]
fn coherent_motion_keeps_insertion_sort() {
    assert_eq!(run(3000, 4, false), 0);
}

#[test]
fn matches_brute_force_on_every_scenario() {
    assert_matches_brute_force(&|| Box::new(SweepAndPrune::new()), 300, 30, 17);
}
