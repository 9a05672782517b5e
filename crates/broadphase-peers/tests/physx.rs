//! The PhysX peers against the exact model (feature `physx`).
#![cfg(feature = "physx")]

use broadphase::verify::{Scenario, Verifier, VerifyConfig};
use broadphase::{
    Aabb, BroadPhase, BruteForce, CollisionFilter, Pair, PairEvents, ProxyId, ProxyKind,
};
use broadphase_peers::{create_physx, PhysxBroadPhase, PhysxKind, PHYSX_PEERS};

fn physx_peers() -> Vec<Box<dyn BroadPhase>> {
    PHYSX_PEERS
        .iter()
        .map(|name| create_physx(name).unwrap().unwrap())
        .collect()
}

fn boxed(min: [f32; 3], max: [f32; 3]) -> Aabb {
    Aabb::from_arrays(min, max).unwrap()
}

fn assert_no_physx_errors() {
    assert_eq!(PhysxBroadPhase::physx_errors(), 0, "PhysX reported errors");
}

#[test]
fn names_and_kinds_agree() {
    assert_eq!(PHYSX_PEERS.len(), PhysxKind::ALL.len());
    for (name, kind) in PHYSX_PEERS.iter().zip(PhysxKind::ALL) {
        assert_eq!(kind.name(), *name);
        assert_eq!(PhysxKind::from_name(name), Some(kind));
        assert_eq!(create_physx(name).unwrap().unwrap().name(), *name);
    }
    assert!(create_physx("rapier").is_none());
}

#[test]
fn physx_peers_match_the_exact_model_on_every_scenario() {
    for scenario in Scenario::ALL {
        for objects in [1, 2, 30, 150] {
            let config = VerifyConfig {
                objects,
                steps: 80,
                seed: 17 + objects as u64,
                scenario: Some(scenario),
            };
            let report = Verifier::new(physx_peers()).run(&config);
            assert!(report.checks > 0);
            assert_eq!(
                report.mismatches, 0,
                "{scenario}, {objects} objects: {:?}",
                report.first_mismatch
            );
        }
    }
    assert_no_physx_errors();
}

#[test]
fn physx_peers_match_on_long_mixed_runs() {
    for seed in 1..4 {
        let config = VerifyConfig {
            objects: 300,
            steps: 300,
            seed,
            scenario: None,
        };
        let report = Verifier::new(physx_peers()).run(&config);
        assert_eq!(
            report.mismatches, 0,
            "seed {seed}: {:?}",
            report.first_mismatch
        );
    }
    assert_no_physx_errors();
}

/// Coordinates at which two boxes touch, from zero and subnormals to near `f32::MAX`.
const TOUCH_AT: [f32; 12] = [
    0.0, -0.0, 1e-40, -7.7, 1.0, 1000.1, -65536.0, 3.0e6, 1e30, -1e30, 1.5e38, -3.0e38,
];

#[test]
fn touching_boxes_pair_and_boxes_one_ulp_apart_do_not() {
    for kind in PhysxKind::ALL {
        let mut bp = PhysxBroadPhase::new(kind).unwrap();
        let mut events = PairEvents::new();
        for axis in 0..3 {
            for at in TOUCH_AT {
                // `a` ends at `at` on `axis`; `b` starts there (touching) or one ulp above.
                let size = (at.abs() * 0.1).max(1.0);
                let (mut a_min, mut a_max) = ([-1.0f32; 3], [1.0f32; 3]);
                let (mut b_min, mut b_max) = ([-1.0f32; 3], [1.0f32; 3]);
                a_min[axis] = at - size;
                a_max[axis] = at;
                b_max[axis] = at + size;
                b_min[axis] = at;
                // -0.0 against +0.0 must touch too.
                if at == 0.0 && at.is_sign_negative() {
                    b_min[axis] = 0.0;
                }
                let a = bp
                    .insert(
                        boxed(a_min, a_max),
                        ProxyKind::Dynamic,
                        CollisionFilter::ALL,
                    )
                    .unwrap();
                let b = bp
                    .insert(
                        boxed(b_min, b_max),
                        ProxyKind::Dynamic,
                        CollisionFilter::ALL,
                    )
                    .unwrap();
                bp.update(&mut events);
                let what = format!("{} axis {axis} at {at:e}", kind.name());
                assert_eq!((bp.pair_count(), events.begun.len()), (1, 1), "{what}");

                let mut apart = b_min;
                apart[axis] = b_min[axis].next_up();
                bp.set_aabb(b, boxed(apart, b_max)).unwrap();
                bp.update(&mut events);
                assert_eq!(
                    (bp.pair_count(), events.ended.len()),
                    (0, 1),
                    "{what}: one ulp apart"
                );
                // ABP compares the floats themselves: no extra candidate. SAP and MBP
                // compare quantized bounds, rounded outward: PhysX still reports the pair,
                // and the exact filter drops it.
                let extra = usize::from(matches!(kind, PhysxKind::Sap | PhysxKind::Mbp));
                assert_eq!(bp.stats().candidates, extra, "{what}: candidates");

                // Touching again, then apart by moving the other box down by one ulp.
                bp.set_aabb(b, boxed(b_min, b_max)).unwrap();
                bp.update(&mut events);
                assert_eq!(bp.pair_count(), 1, "{what}: touching again");
                let mut below = a_max;
                below[axis] = a_max[axis].next_down();
                bp.set_aabb(a, boxed(a_min, below)).unwrap();
                bp.update(&mut events);
                assert_eq!(bp.pair_count(), 0, "{what}: one ulp below");

                bp.remove(a).unwrap();
                bp.remove(b).unwrap();
                bp.update(&mut events);
                assert!(events.is_empty(), "{what}: removal");
            }
        }
    }
    assert_no_physx_errors();
}

/// Applies the same calls to a PhysX peer and to brute force and compares the pair sets.
struct Twin {
    physx: PhysxBroadPhase,
    exact: BruteForce,
    ids: Vec<(ProxyId, ProxyId)>,
    events: PairEvents,
}

impl Twin {
    fn new(kind: PhysxKind) -> Self {
        Self {
            physx: PhysxBroadPhase::new(kind).unwrap(),
            exact: BruteForce::new(),
            ids: Vec::new(),
            events: PairEvents::new(),
        }
    }

    fn insert(&mut self, aabb: Aabb, kind: ProxyKind) {
        let p = self.physx.insert(aabb, kind, CollisionFilter::ALL).unwrap();
        let e = self.exact.insert(aabb, kind, CollisionFilter::ALL).unwrap();
        self.ids.push((p, e));
    }

    fn set_aabb(&mut self, i: usize, aabb: Aabb) {
        let (p, e) = self.ids[i];
        self.physx.set_aabb(p, aabb).unwrap();
        self.exact.set_aabb(e, aabb).unwrap();
    }

    fn check(&mut self, what: &str) {
        self.physx.update(&mut self.events);
        let mut exact_events = PairEvents::new();
        self.exact.update(&mut exact_events);
        let sorted = |bp: &dyn BroadPhase| {
            let mut pairs: Vec<Pair> = Vec::new();
            bp.pairs(&mut pairs);
            let mut keys: Vec<(u32, u32)> = pairs
                .iter()
                .map(|p| {
                    let (a, b) = (p.a.index(), p.b.index());
                    (a.min(b), a.max(b))
                })
                .collect();
            keys.sort_unstable();
            keys
        };
        assert_eq!(sorted(&self.physx), sorted(&self.exact), "{what}");
    }
}

#[test]
fn boxes_far_outside_the_initial_mbp_regions_keep_their_pairs() {
    let mut twin = Twin::new(PhysxKind::Mbp);
    // The first update lays the grid over [0, 10]³ (x and z).
    for i in 0..20 {
        let x = (i % 5) as f32 * 2.0;
        let z = (i / 5) as f32 * 2.5;
        let kind = if i % 3 == 0 {
            ProxyKind::Static
        } else {
            ProxyKind::Dynamic
        };
        twin.insert(boxed([x, 0.0, z], [x + 2.0, 1.0, z + 2.0]), kind);
    }
    twin.check("initial grid");
    assert!(twin.physx.stats().pairs > 0);

    // Just outside the grid, in its outer cells (which reach ±f32::MAX): no rebuild.
    twin.set_aabb(1, boxed([14.0, 0.0, -4.0], [16.0, 1.0, -2.0]));
    twin.set_aabb(2, boxed([16.0, 0.5, -3.0], [18.0, 2.0, 5.0]));
    twin.set_aabb(4, boxed([-6.0, 0.0, 14.0], [-4.0, 1.0, 15.0]));
    twin.set_aabb(5, boxed([-4.0, 1.0, 15.0], [-3.0, 2.0, 16.0]));
    twin.check("outer cells");
    assert_eq!(twin.physx.stats().rebuilds, 0);

    // Far away, across the outer cells' boundaries and at the ends of the float range:
    // every one of these pairs touches or overlaps.
    let far: [([f32; 3], [f32; 3]); 8] = [
        ([1e6, 0.0, 1e6], [1e6 + 4.0, 1.0, 1e6 + 4.0]),
        ([1e6 + 4.0, 1.0, 1e6 + 4.0], [1e6 + 8.0, 2.0, 1e6 + 8.0]),
        ([-1e20, -5.0, 3e20], [-0.9e20, 5.0, 3.1e20]),
        ([-0.95e20, 0.0, 3.05e20], [-0.5e20, 1.0, 4e20]),
        ([-3.4e38, 0.0, -3.4e38], [-3e38, 1.0, -3e38]),
        ([-3e38, 1.0, -3e38], [-1e38, 2.0, -1e38]),
        ([3.3e38, 0.0, 0.0], [3.4e38, 1.0, 1.0]),
        ([-3.4e38, 0.5, 0.5], [3.4e38, 0.5, 0.5]),
    ];
    for (k, (min, max)) in far.into_iter().enumerate() {
        twin.set_aabb(7 + k, boxed(min, max));
    }
    twin.check("far away");
    let stats = twin.physx.stats();
    assert!(stats.rebuilds >= 1, "{stats:?}");
    assert_eq!(stats.out_of_bounds, 0, "{stats:?}");

    // Back near the origin, then new boxes far away again on the next steps.
    for k in 0..far.len() {
        let x = k as f32;
        twin.set_aabb(7 + k, boxed([x, 0.0, x], [x + 1.5, 1.0, x + 1.5]));
    }
    twin.check("back home");
    for step in 0..6 {
        let at = 10f32.powi(4 * step + 3);
        twin.insert(
            boxed([at, 0.0, -at], [at * 1.5, 1.0, -at * 0.5]),
            ProxyKind::Dynamic,
        );
        twin.insert(
            boxed([at * 1.5, 1.0, -at * 0.5], [at * 2.0, 2.0, 0.0]),
            ProxyKind::Static,
        );
        twin.check(&format!("far step {step}"));
    }
    assert_eq!(twin.physx.stats().out_of_bounds, 0);
    assert_no_physx_errors();
}

#[test]
fn statics_never_pair_and_clear_starts_over() {
    for kind in PhysxKind::ALL {
        let mut twin = Twin::new(kind);
        for i in 0..10 {
            let x = i as f32 * 0.5;
            let kind = if i < 5 {
                ProxyKind::Static
            } else {
                ProxyKind::Dynamic
            };
            twin.insert(boxed([x, 0.0, 0.0], [x + 3.0, 1.0, 1.0]), kind);
        }
        twin.check(kind.name());
        twin.physx.clear();
        twin.exact.clear();
        twin.ids.clear();
        for i in 0..4 {
            let x = i as f32;
            twin.insert(
                boxed([x, 0.0, 0.0], [x + 1.0, 1.0, 1.0]),
                ProxyKind::Dynamic,
            );
        }
        twin.check(kind.name());
        assert_eq!(twin.physx.pair_count(), 3);
    }
    assert_no_physx_errors();
}

#[test]
fn memory_counts_what_physx_holds() {
    for kind in PhysxKind::ALL {
        let mut bp = PhysxBroadPhase::new(kind).unwrap();
        let mut events = PairEvents::new();
        bp.update(&mut events);
        let empty = bp.memory_bytes();
        let mut store_only = broadphase::backend::ProxyStore::new();
        for i in 0..2000 {
            let x = (i % 50) as f32 * 1.5;
            let z = (i / 50) as f32 * 1.5;
            let aabb = boxed([x, 0.0, z], [x + 2.0, 1.0, z + 2.0]);
            bp.insert(aabb, ProxyKind::Dynamic, CollisionFilter::ALL)
                .unwrap();
            store_only
                .insert(aabb, ProxyKind::Dynamic, CollisionFilter::ALL)
                .unwrap();
        }
        bp.update(&mut events);
        let full = bp.memory_bytes();
        // PhysX's own copies of the boxes and its pairs come on top of our tables.
        assert!(
            full > empty + store_only.memory_bytes() + 2000 * 24,
            "{}: {empty} -> {full}",
            kind.name()
        );
        bp.clear();
        bp.update(&mut events);
        assert!(bp.memory_bytes() < full, "{}", kind.name());
    }
    assert_no_physx_errors();
}
