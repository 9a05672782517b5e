//! The `dynamic-tree` and `bvh` broad phases: internal invariants after every update, the
//! static tree left alone when no static proxy changes, and options.

mod common;

use std::collections::BTreeSet;

use broadphase::tree::{BvhBuild, DescendRule, DynamicTreeOptions};
use broadphase::verify::SplitMix64;
use broadphase::{
    create, Aabb, AlgorithmOptions, BroadPhase, BruteForce, BvhBroadPhase, CollisionFilter,
    DynamicTreeBroadPhase, PairEvents, ProxyId, ProxyKind, Vec3,
};
use common::random_box;

fn pair_set(bp: &dyn BroadPhase, ids: &[Option<ProxyId>]) -> BTreeSet<(usize, usize)> {
    // Map ids back to handles so different algorithms compare.
    let mut pairs = Vec::new();
    bp.pairs(&mut pairs);
    let handle = |id: ProxyId| {
        ids.iter()
            .position(|x| *x == Some(id))
            .expect("pair of a live id")
    };
    pairs
        .iter()
        .map(|p| {
            let (a, b) = (handle(p.a), handle(p.b));
            (a.min(b), a.max(b))
        })
        .collect()
}

/// Random inserts, moves (small and teleports) and removals; after every update the
/// structure validates and the pairs equal brute force's.
fn drive<T: BroadPhase>(bp: &mut T, validate: impl Fn(&T) -> Result<(), String>, seed: u64) {
    let mut reference = BruteForce::new();
    let mut rng = SplitMix64::new(seed);
    let mut ids: Vec<Option<ProxyId>> = Vec::new();
    let mut reference_ids: Vec<Option<ProxyId>> = Vec::new();
    let mut events = PairEvents::new();
    for step in 0..150 {
        let inserts = if step < 5 { 40 } else { rng.below(4) };
        for _ in 0..inserts {
            let b = random_box(&mut rng, 25.0);
            let kind = if rng.chance(0.3) {
                ProxyKind::Static
            } else {
                ProxyKind::Dynamic
            };
            let filter = if rng.chance(0.2) {
                CollisionFilter::new(1, 2)
            } else {
                CollisionFilter::ALL
            };
            ids.push(Some(bp.insert(b, kind, filter).unwrap()));
            reference_ids.push(Some(reference.insert(b, kind, filter).unwrap()));
        }
        for h in 0..ids.len() {
            let Some(id) = ids[h] else { continue };
            let roll = rng.below(20);
            if roll == 0 {
                bp.remove(id).unwrap();
                reference.remove(reference_ids[h].unwrap()).unwrap();
                ids[h] = None;
                reference_ids[h] = None;
            } else if roll < 8 {
                let old = bp.aabb(id).unwrap();
                let b = if roll == 1 {
                    random_box(&mut rng, 25.0)
                } else {
                    let d = Vec3::new(
                        rng.range(-0.4, 0.4),
                        rng.range(-0.4, 0.4),
                        rng.range(-0.4, 0.4),
                    );
                    Aabb::new(old.min() + d, old.max() + d).unwrap()
                };
                bp.set_aabb(id, b).unwrap();
                reference.set_aabb(reference_ids[h].unwrap(), b).unwrap();
            }
        }
        bp.update(&mut events);
        reference.update(&mut events);
        if let Err(e) = validate(bp) {
            panic!("{} step {step}: {e}", bp.name());
        }
        assert_eq!(
            pair_set(&*bp, &ids),
            pair_set(&reference, &reference_ids),
            "{} step {step}",
            bp.name()
        );
    }
}

#[test]
fn dynamic_tree_validates_after_every_update() {
    for margin in [0.0, 0.1, 2.0] {
        let mut bp = tree_with_margin(margin).unwrap();
        drive(&mut bp, DynamicTreeBroadPhase::validate, 1 + margin as u64);
    }
}

#[test]
fn dynamic_tree_structure_checked_each_step() {
    let mut bp = tree_with_margin(0.2).unwrap();
    let mut rng = SplitMix64::new(77);
    let mut ids = Vec::new();
    let mut events = PairEvents::new();
    for step in 0..200 {
        for _ in 0..rng.below(6) {
            let kind = if rng.chance(0.3) {
                ProxyKind::Static
            } else {
                ProxyKind::Dynamic
            };
            ids.push(
                bp.insert(random_box(&mut rng, 20.0), kind, CollisionFilter::ALL)
                    .unwrap(),
            );
        }
        if !ids.is_empty() && rng.chance(0.5) {
            let id = ids.swap_remove(rng.below(ids.len()));
            bp.remove(id).unwrap();
        }
        for &id in &ids {
            if rng.chance(0.3) {
                let old = bp.aabb(id).unwrap();
                let d = Vec3::new(
                    rng.range(-0.5, 0.5),
                    rng.range(-0.5, 0.5),
                    rng.range(-0.5, 0.5),
                );
                bp.set_aabb(id, Aabb::new(old.min() + d, old.max() + d).unwrap())
                    .unwrap();
            }
        }
        bp.update(&mut events);
        bp.validate().unwrap_or_else(|e| panic!("step {step}: {e}"));
    }
}

/// Steps in which a share of the proxies from none to all jump (most leave their leaves, so
/// the dynamic tree is rebuilt at once) or drift (a few leave, re-inserted one by one), among
/// insertions, removals (with and without events), kind and filter changes: the tree is
/// valid and the pairs and events equal brute force's after every step, and both ways of
/// updating the tree ran, and every way of finding the pairs: from the candidates, by a
/// traversal of the leaves' exact boxes, and by one that finds the candidates again. The
/// drifting steps re-find most candidates of the moved proxies (their leaves overlapped
/// before too) and re-test most pairs without a change.
#[test]
fn dynamic_tree_rebuilt_at_once_or_leaf_by_leaf_matches_the_model() {
    let mut bp = tree_with_margin(0.1).unwrap();
    let mut model = BruteForce::new();
    let mut rng = SplitMix64::new(31);
    let mut ids = Vec::new();
    let (mut events, mut model_events) = (PairEvents::new(), PairEvents::new());
    let (mut rebuilt, mut traversed, mut found_candidates) = (0, 0, 0);
    for step in 0..240 {
        let inserts = if step == 0 { 300 } else { rng.below(4) };
        for _ in 0..inserts {
            let b = random_box(&mut rng, 30.0);
            let kind = if rng.chance(0.15) {
                ProxyKind::Static
            } else {
                ProxyKind::Dynamic
            };
            let id = bp.insert(b, kind, CollisionFilter::ALL).unwrap();
            assert_eq!(model.insert(b, kind, CollisionFilter::ALL).unwrap(), id);
            ids.push(id);
        }
        if rng.chance(0.5) {
            let id = ids.swap_remove(rng.below(ids.len()));
            let report = rng.chance(0.5);
            bp.remove_with(id, report).unwrap();
            model.remove_with(id, report).unwrap();
        }
        if rng.chance(0.2) {
            let id = ids[rng.below(ids.len())];
            let filter = [
                CollisionFilter::ALL,
                CollisionFilter::new(1, 1),
                CollisionFilter::new(2, 1),
                CollisionFilter::new(1, 0),
            ][rng.below(4)];
            bp.set_filter(id, filter).unwrap();
            model.set_filter(id, filter).unwrap();
        }
        if rng.chance(0.2) {
            let id = ids[rng.below(ids.len())];
            let kind = if rng.chance(0.5) {
                ProxyKind::Static
            } else {
                ProxyKind::Dynamic
            };
            bp.set_kind(id, kind).unwrap();
            model.set_kind(id, kind).unwrap();
        }
        let share = [0.0, 0.02, 0.1, 0.3, 1.0][step % 5];
        let jump = step % 2 == 0;
        for &id in &ids {
            if rng.chance(share) {
                let b = if jump {
                    random_box(&mut rng, 30.0)
                } else {
                    let old = bp.aabb(id).unwrap();
                    let d = Vec3::new(rng.range(-0.3, 0.3), rng.range(-0.3, 0.3), 0.0);
                    Aabb::new(old.min() + d, old.max() + d).unwrap()
                };
                bp.set_aabb(id, b).unwrap();
                model.set_aabb(id, b).unwrap();
            }
        }
        bp.update(&mut events);
        model.update(&mut model_events);
        bp.validate().unwrap_or_else(|e| panic!("step {step}: {e}"));
        let sorted = |bp: &dyn BroadPhase| {
            let mut pairs = Vec::new();
            bp.pairs(&mut pairs);
            pairs.sort_unstable();
            pairs
        };
        assert_eq!(sorted(&bp), sorted(&model), "step {step}");
        let keys = |pairs: &[broadphase::Pair]| {
            let mut keys = pairs.to_vec();
            keys.sort_unstable();
            keys
        };
        assert_eq!(
            keys(&events.begun),
            keys(&model_events.begun),
            "begun, step {step}"
        );
        assert_eq!(
            keys(&events.ended),
            keys(&model_events.ended),
            "ended, step {step}"
        );
        let last = bp.last_step();
        rebuilt += last.rebuilt as usize;
        traversed += last.traversed as usize;
        found_candidates += last.found_candidates as usize;
    }
    assert!((20..200).contains(&rebuilt), "{rebuilt} rebuilds");
    assert!((20..200).contains(&traversed), "{traversed} traversals");
    assert!(
        found_candidates >= 10,
        "{found_candidates} candidates found again"
    );
}

#[test]
fn bvh_validates_after_every_update_for_every_build() {
    for build in BvhBuild::ALL {
        for descend in DescendRule::ALL {
            let mut bp = BvhBroadPhase::new(build, descend);
            let mut rng = SplitMix64::new(5);
            let mut ids = Vec::new();
            let mut events = PairEvents::new();
            for step in 0..120 {
                let inserts = if step == 0 { 200 } else { rng.below(5) };
                for _ in 0..inserts {
                    ids.push(
                        bp.insert(
                            random_box(&mut rng, 30.0),
                            ProxyKind::Dynamic,
                            CollisionFilter::ALL,
                        )
                        .unwrap(),
                    );
                }
                if !ids.is_empty() && rng.chance(0.5) {
                    let id = ids.swap_remove(rng.below(ids.len()));
                    bp.remove(id).unwrap();
                }
                for &id in &ids {
                    // Drift apart so that the area rule triggers rebuilds too.
                    let old = bp.aabb(id).unwrap();
                    let d = (old.center() - Vec3::splat(15.0)) * 0.02;
                    bp.set_aabb(id, Aabb::new(old.min() + d, old.max() + d).unwrap())
                        .unwrap();
                }
                bp.update(&mut events);
                bp.validate()
                    .unwrap_or_else(|e| panic!("{build} {descend} step {step}: {e}"));
            }
            assert!(bp.rebuilds() > 1, "{build}: the rebuild rules never fired");
        }
    }
}

#[test]
fn bvh_pairs_match_brute_force_and_validate_for_every_configuration() {
    for build in BvhBuild::ALL {
        for descend in DescendRule::ALL {
            let mut bp = BvhBroadPhase::new(build, descend);
            drive(&mut bp, BvhBroadPhase::validate, 9);
        }
    }
}

#[test]
fn static_tree_untouched_when_no_static_proxy_changes() {
    let mut bp = tree_with_margin(0.1).unwrap();
    let mut rng = SplitMix64::new(2);
    let mut dynamic = Vec::new();
    for i in 0..500 {
        let kind = if i % 10 == 0 {
            ProxyKind::Dynamic
        } else {
            ProxyKind::Static
        };
        let id = bp
            .insert(random_box(&mut rng, 30.0), kind, CollisionFilter::ALL)
            .unwrap();
        if kind == ProxyKind::Dynamic {
            dynamic.push(id);
        }
    }
    let mut events = PairEvents::new();
    bp.update(&mut events);
    let revision = bp.static_tree().revision();
    for _ in 0..50 {
        for &id in &dynamic {
            let old = bp.aabb(id).unwrap();
            let b = Aabb::new(old.min() + Vec3::X, old.max() + Vec3::X).unwrap();
            bp.set_aabb(id, b).unwrap();
        }
        bp.update(&mut events);
    }
    assert_eq!(bp.static_tree().revision(), revision);
    assert_eq!(bp.static_tree().len(), 450);
    bp.validate().unwrap();
}

#[test]
fn tree_memory_is_at_most_64_bytes_per_proxy() {
    let mut bp = DynamicTreeBroadPhase::default();
    let mut rng = SplitMix64::new(1);
    let n = 10_000;
    for i in 0..n {
        let kind = if i % 3 == 0 {
            ProxyKind::Static
        } else {
            ProxyKind::Dynamic
        };
        bp.insert(random_box(&mut rng, 100.0), kind, CollisionFilter::ALL)
            .unwrap();
    }
    bp.update(&mut PairEvents::new());
    // Two trees of n_s and n_d leaves hold n - 2 internal nodes of 36 bytes and n leaves of 28.
    assert!(
        bp.tree_used_bytes() <= 64 * n,
        "{} bytes",
        bp.tree_used_bytes()
    );
}

#[test]
fn options_are_validated_and_used() {
    let mut options = AlgorithmOptions::default();
    options.dynamic_tree.margin = -1.0;
    assert!(create("dynamic-tree", &options).is_err());
    options.dynamic_tree.margin = f32::NAN;
    assert!(create("dynamic-tree", &options).is_err());
    options.dynamic_tree.margin = 0.0;
    assert!(create("dynamic-tree", &options).is_ok());
    assert!(tree_with_margin(f32::INFINITY).is_err());
    for build in BvhBuild::ALL {
        for descend in DescendRule::ALL {
            options.bvh.build = build;
            options.bvh.descend = descend;
            assert_eq!(create("bvh", &options).unwrap().name(), "bvh");
        }
    }
}

fn tree_with_margin(margin: f32) -> broadphase::Result<DynamicTreeBroadPhase> {
    let mut options = DynamicTreeOptions::default();
    options.margin = margin;
    DynamicTreeBroadPhase::with_options(&options)
}
