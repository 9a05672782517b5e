//! Unit tests of the adaptive broad phase: regime changes and a frozen clock.

use super::*;

fn stats(moved_fraction: f64, relative_speed: f64, pairs_per_proxy: f64) -> SceneStats {
    SceneStats {
        proxies: 1000,
        moved_fraction,
        relative_speed,
        churn: 0.0,
        pairs_per_proxy,
    }
}

#[test]
fn a_shift_of_regime_is_a_change_twice_over() {
    let moving = stats(1.0, 0.5, 1.0);
    assert!(!moving.differs_from(&stats(0.9, 0.6, 1.5), 1.0));
    // A third fewer boxes moving: a change, not a shift.
    let slowing = stats(0.6, 0.5, 1.0);
    assert!(slowing.differs_from(&moving, 1.0));
    assert!(!slowing.differs_from(&moving, SHIFT));
    // Everything at rest, or pairs five times denser: a shift.
    assert!(stats(0.0, 0.0, 1.0).differs_from(&moving, SHIFT));
    assert!(stats(1.0, 0.5, 5.0).differs_from(&moving, SHIFT));
    // Speeds three times higher: a change only.
    let faster = stats(1.0, 1.5, 1.0);
    assert!(faster.differs_from(&moving, 1.0) && !faster.differs_from(&moving, SHIFT));
}

/// A clock that always reads the same time.
#[derive(Debug)]
struct Frozen;

impl Clock for Frozen {
    fn seconds(&self) -> f64 {
        1.0
    }
}

/// With a frozen clock every trial takes no time, so no candidate wins by the margin:
/// rounds run (the trials still build and step every candidate), nothing switches, and
/// the pairs stay those of brute force.
#[test]
fn a_frozen_clock_never_switches_and_stays_exact() {
    let options = AdaptiveOptions {
        min_trial_interval: 1,
        max_trial_interval: 4,
        ..AdaptiveOptions::default()
    };
    crate::test_support::assert_matches_brute_force(
        &|| Box::new(Adaptive::with_clock(options.clone(), Box::new(Frozen)).unwrap()),
        200,
        40,
        3,
    );
    let mut bp = Adaptive::with_clock(options, Box::new(Frozen)).unwrap();
    let mut events = PairEvents::new();
    let ids: Vec<_> = (0..300)
        .map(|i| {
            let x = (i % 20) as f32 * 1.5;
            let aabb = Aabb::from_arrays(
                [x, (i / 20) as f32, 0.0],
                [x + 1.0, (i / 20) as f32 + 1.0, 1.0],
            )
            .unwrap();
            bp.insert(aabb, ProxyKind::Dynamic, CollisionFilter::ALL)
                .unwrap()
        })
        .collect();
    for step in 0..60 {
        for &id in &ids {
            let b = bp.aabb(id).unwrap();
            let d = crate::Vec3::splat(if step % 2 == 0 { 0.1 } else { -0.1 });
            bp.set_aabb(id, Aabb::new(b.min() + d, b.max() + d).unwrap())
                .unwrap();
        }
        bp.update(&mut events);
    }
    assert!(bp.last_round > 0, "trial rounds ran");
    assert!(bp.diagnostics().switches.is_empty());
    assert_eq!(bp.active_name(), "sort-and-sweep");
}

/// A few boxes teleported across the world among many drifting ones leave the speed
/// statistic near the drift's: otherwise every step with a jump in the sample would look
/// like a shift of regime and start a trial round over budget.
#[test]
fn a_few_jumps_do_not_shift_the_speed_statistic() {
    let speed = |jumps: usize| {
        let mut bp = Adaptive::new(AdaptiveOptions::default()).unwrap();
        let mut events = PairEvents::new();
        let ids: Vec<_> = (0..400)
            .map(|i| {
                let min = [(i % 20) as f32 * 3.0, (i / 20) as f32 * 3.0, 0.0];
                let aabb = Aabb::from_arrays(min, [min[0] + 1.0, min[1] + 1.0, 1.0]).unwrap();
                bp.insert(aabb, ProxyKind::Dynamic, CollisionFilter::ALL)
                    .unwrap()
            })
            .collect();
        bp.update(&mut events);
        for (k, &id) in ids.iter().enumerate() {
            let b = bp.aabb(id).unwrap();
            let d = crate::Vec3::splat(if k % 100 < jumps { 1000.0 } else { 0.1 });
            bp.set_aabb(id, Aabb::new(b.min() + d, b.max() + d).unwrap())
                .unwrap();
        }
        bp.update(&mut events);
        bp.stats.relative_speed
    };
    let (drift, with_jumps) = (speed(0), speed(1));
    assert!(drift > 0.1 && drift < 0.2, "{drift}");
    // One box in a hundred jumped: the statistic does not pass for a change, let alone a shift.
    assert!(with_jumps < 2.0 * drift, "{with_jumps} against {drift}");
    // Every box jumping is a change.
    assert!(speed(100) > 4.0 * drift);
}
