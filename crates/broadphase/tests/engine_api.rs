//! The calls an engine needs, on every registered algorithm: thread safety, keys, removal
//! without events, filter and kind changes, pairs reported again, and the fat margin. The
//! random mix of all of them against the exact model runs in `oracle.rs` (through
//! `verify`); here each contract is pinned down on its own.

use broadphase::{
    create, Aabb, Adaptive, BroadPhase, BruteForce, BvhBroadPhase, CollisionFilter,
    DynamicTreeBroadPhase, Error, HierarchicalGrid, LooseOctree, Octree, Pair, PairEvents,
    ProxyKind, SortAndSweep, SpatialMasking, SweepAndPrune, UniformGrid, ALGORITHMS,
};

/// Compiles only if `T` can move to another thread and be shared between threads.
fn assert_send_sync<T: Send + Sync + ?Sized>() {}

#[test]
fn every_algorithm_is_send_and_sync() {
    assert_send_sync::<BruteForce>();
    assert_send_sync::<SortAndSweep>();
    assert_send_sync::<SweepAndPrune>();
    assert_send_sync::<UniformGrid>();
    assert_send_sync::<HierarchicalGrid>();
    assert_send_sync::<SpatialMasking>();
    assert_send_sync::<Octree>();
    assert_send_sync::<LooseOctree>();
    assert_send_sync::<BvhBroadPhase>();
    assert_send_sync::<DynamicTreeBroadPhase>();
    assert_send_sync::<Adaptive>();
    assert_send_sync::<dyn BroadPhase>();
    assert_send_sync::<Box<dyn BroadPhase>>();
    // And a box really crosses threads.
    let mut bp = create("adaptive", &Default::default()).unwrap();
    bp.insert(cube(0.0, 1.0), ProxyKind::Dynamic, CollisionFilter::ALL)
        .unwrap();
    let bp = std::thread::spawn(move || {
        bp.update(&mut PairEvents::new());
        bp
    })
    .join()
    .unwrap();
    assert_eq!(bp.len(), 1);
}

fn algorithms() -> impl Iterator<Item = Box<dyn BroadPhase>> {
    ALGORITHMS
        .iter()
        .map(|name| create(name, &Default::default()).unwrap())
}

fn cube(min: f32, max: f32) -> Aabb {
    Aabb::from_arrays([min; 3], [max; 3]).unwrap()
}

fn sorted_keys(pairs: &[Pair]) -> Vec<(u64, u64)> {
    let mut keys: Vec<_> = pairs
        .iter()
        .map(|p| (p.key_a.min(p.key_b), p.key_a.max(p.key_b)))
        .collect();
    keys.sort_unstable();
    keys
}

#[test]
fn keys_are_carried_into_events_and_pairs() {
    for mut bp in algorithms() {
        let name = bp.name();
        let a = bp
            .insert_keyed(cube(0.0, 1.0), ProxyKind::Dynamic, CollisionFilter::ALL, 7)
            .unwrap();
        let b = bp
            .insert_keyed(
                cube(0.5, 2.0),
                ProxyKind::Dynamic,
                CollisionFilter::ALL,
                u64::MAX,
            )
            .unwrap();
        bp.insert(cube(1.5, 3.0), ProxyKind::Static, CollisionFilter::ALL)
            .unwrap();
        let mut events = PairEvents::new();
        bp.update(&mut events);
        assert_eq!(
            sorted_keys(&events.begun),
            [(0, u64::MAX), (7, u64::MAX)],
            "{name}"
        );
        for pair in &events.begun {
            assert_eq!(bp.key(pair.a), Ok(pair.key_a), "{name}");
            assert_eq!(bp.key(pair.b), Ok(pair.key_b), "{name}");
        }
        let mut pairs = Vec::new();
        bp.pairs(&mut pairs);
        assert_eq!(
            sorted_keys(&pairs),
            [(0, u64::MAX), (7, u64::MAX)],
            "{name}"
        );
        bp.remove(a).unwrap();
        bp.update(&mut events);
        assert_eq!(
            sorted_keys(&events.ended),
            [(7, u64::MAX)],
            "{name}: keys of a removed proxy"
        );
        assert_eq!(bp.key(a), Err(Error::StaleProxy(a)), "{name}");
        assert_eq!(bp.key(b), Ok(u64::MAX), "{name}");
    }
}

#[test]
fn removal_without_events_ends_pairs_silently() {
    for mut bp in algorithms() {
        let name = bp.name();
        let a = bp
            .insert(cube(0.0, 1.0), ProxyKind::Dynamic, CollisionFilter::ALL)
            .unwrap();
        let b = bp
            .insert(cube(0.5, 2.0), ProxyKind::Dynamic, CollisionFilter::ALL)
            .unwrap();
        let c = bp
            .insert(cube(1.5, 3.0), ProxyKind::Dynamic, CollisionFilter::ALL)
            .unwrap();
        let mut events = PairEvents::new();
        bp.update(&mut events);
        assert_eq!(events.begun.len(), 2, "{name}");
        bp.remove_without_events(a).unwrap();
        bp.remove(c).unwrap();
        assert_eq!(
            bp.remove_without_events(a),
            Err(Error::StaleProxy(a)),
            "{name}"
        );
        bp.update(&mut events);
        assert_eq!(
            events.ended,
            vec![Pair::new(b, c)],
            "{name}: only c's pair is reported"
        );
        assert!(events.begun.is_empty(), "{name}");
        assert_eq!(bp.pair_count(), 0, "{name}");
        // The slot is reused and the silent removal does not leak into the new proxy.
        let d = bp
            .insert(cube(0.0, 1.0), ProxyKind::Dynamic, CollisionFilter::ALL)
            .unwrap();
        bp.update(&mut events);
        assert_eq!(events.begun, vec![Pair::new(d, b)], "{name}");
    }
}

#[test]
fn a_new_filter_ends_forbidden_pairs_and_begins_allowed_ones() {
    for mut bp in algorithms() {
        let name = bp.name();
        let a = bp
            .insert(
                cube(0.0, 1.0),
                ProxyKind::Dynamic,
                CollisionFilter::new(1, 1),
            )
            .unwrap();
        let b = bp
            .insert(
                cube(0.5, 2.0),
                ProxyKind::Dynamic,
                CollisionFilter::new(1, 1),
            )
            .unwrap();
        let far = bp
            .insert(
                cube(10.0, 11.0),
                ProxyKind::Dynamic,
                CollisionFilter::new(2, 2),
            )
            .unwrap();
        let mut events = PairEvents::new();
        bp.update(&mut events);
        assert_eq!(events.begun.len(), 1, "{name}");
        bp.set_filter(b, CollisionFilter::new(2, 2)).unwrap();
        bp.update(&mut events);
        assert_eq!(events.ended, vec![Pair::new(a, b)], "{name}");
        assert!(events.begun.is_empty(), "{name}");
        // Allowed again, still overlapping: begins; the same filter again changes nothing.
        bp.set_filter(b, CollisionFilter::new(1, 1)).unwrap();
        bp.update(&mut events);
        assert_eq!(events.begun, vec![Pair::new(a, b)], "{name}");
        bp.set_filter(b, CollisionFilter::new(1, 1)).unwrap();
        bp.set_filter(far, CollisionFilter::ALL).unwrap();
        bp.update(&mut events);
        assert!(events.is_empty(), "{name}: {events:?}");
        // A filter change and a move in one step.
        bp.set_filter(far, CollisionFilter::new(1, 1)).unwrap();
        bp.set_aabb(far, cube(1.5, 3.0)).unwrap();
        bp.update(&mut events);
        assert_eq!(events.begun, vec![Pair::new(b, far)], "{name}");
    }
}

#[test]
fn many_filter_changes_beside_removed_proxies_stay_within_a_small_pair_limit() {
    // Removed proxies leave big boxes behind in their slots; 20 small disjoint live boxes
    // that no filter lets pair sit inside them, under a limit of 4 pairs. Changing all 20
    // filters at once (the bulk re-evaluation) must not count the removed slots' boxes, nor
    // each box with itself, against the limit: there are no box pairs, the update succeeds.
    for mut bp in algorithms() {
        let name = bp.name();
        let mut events = PairEvents::new();
        let dead: Vec<_> = (0..40)
            .map(|_| {
                bp.insert(
                    cube(-100.0, 100.0),
                    ProxyKind::Dynamic,
                    CollisionFilter::ALL,
                )
                .unwrap()
            })
            .collect();
        bp.update(&mut events);
        for id in dead {
            bp.remove(id).unwrap();
        }
        bp.update(&mut events);
        bp.set_pair_limit(Some(4));
        let live: Vec<_> = (0..20)
            .map(|i| {
                let x = 3.0 * i as f32;
                bp.insert(
                    cube(x, x + 1.0),
                    ProxyKind::Dynamic,
                    CollisionFilter::new(1, 2),
                )
                .unwrap()
            })
            .collect();
        bp.try_update(&mut events)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        for &id in &live {
            bp.set_filter(id, CollisionFilter::new(4, 8)).unwrap();
        }
        bp.try_update(&mut events)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(events.is_empty(), "{name}: {events:?}");
    }
}

#[test]
fn a_new_kind_re_evaluates_pairs() {
    for mut bp in algorithms() {
        let name = bp.name();
        let a = bp
            .insert(cube(0.0, 1.0), ProxyKind::Static, CollisionFilter::ALL)
            .unwrap();
        let b = bp
            .insert(cube(0.5, 2.0), ProxyKind::Dynamic, CollisionFilter::ALL)
            .unwrap();
        let mut events = PairEvents::new();
        bp.update(&mut events);
        assert_eq!(events.begun.len(), 1, "{name}");
        bp.set_kind(b, ProxyKind::Static).unwrap();
        bp.update(&mut events);
        assert_eq!(events.ended, vec![Pair::new(a, b)], "{name}: both static");
        bp.set_kind(a, ProxyKind::Dynamic).unwrap();
        bp.update(&mut events);
        assert_eq!(events.begun, vec![Pair::new(a, b)], "{name}");
        // A static proxy that moves and changes kind keeps exact pairs afterwards.
        bp.set_kind(a, ProxyKind::Static).unwrap();
        bp.set_kind(b, ProxyKind::Dynamic).unwrap();
        bp.update(&mut events);
        assert!(events.is_empty(), "{name}: {events:?}");
        bp.set_aabb(b, cube(5.0, 6.0)).unwrap();
        bp.update(&mut events);
        assert_eq!(events.ended.len(), 1, "{name}");
        bp.set_aabb(b, cube(0.5, 0.7)).unwrap();
        bp.update(&mut events);
        assert_eq!(events.begun.len(), 1, "{name}");
    }
}

#[test]
fn pairs_asked_for_again_are_reported_as_begun() {
    for mut bp in algorithms() {
        let name = bp.name();
        let a = bp
            .insert(cube(0.0, 1.0), ProxyKind::Dynamic, CollisionFilter::ALL)
            .unwrap();
        let b = bp
            .insert(cube(0.5, 2.0), ProxyKind::Dynamic, CollisionFilter::ALL)
            .unwrap();
        let c = bp
            .insert(cube(1.5, 3.0), ProxyKind::Dynamic, CollisionFilter::ALL)
            .unwrap();
        let mut events = PairEvents::new();
        bp.update(&mut events);
        bp.report_pairs_again(a).unwrap();
        bp.update(&mut events);
        assert_eq!(events.begun, vec![Pair::new(a, b)], "{name}");
        assert!(events.ended.is_empty(), "{name}");
        bp.update(&mut events);
        assert!(events.is_empty(), "{name}: reported once");
        // Asked for again while a pair ends and another begins: the pairs after the update.
        bp.report_pairs_again(b).unwrap();
        bp.set_aabb(c, cube(5.0, 6.0)).unwrap();
        let d = bp
            .insert(cube(1.9, 2.5), ProxyKind::Dynamic, CollisionFilter::ALL)
            .unwrap();
        bp.update(&mut events);
        let mut begun = events.begun.clone();
        begun.sort_by_key(|p| (p.a.index(), p.b.index()));
        let mut expected = vec![Pair::new(a, b), Pair::new(b, d)];
        expected.sort_by_key(|p| (p.a.index(), p.b.index()));
        assert_eq!(begun, expected, "{name}");
        assert_eq!(events.ended, vec![Pair::new(b, c)], "{name}");
        // A proxy asked for and then removed reports nothing.
        bp.report_pairs_again(d).unwrap();
        bp.remove(d).unwrap();
        bp.update(&mut events);
        assert!(events.begun.is_empty(), "{name}: {events:?}");
    }
}

#[test]
fn a_fat_margin_gives_the_pairs_of_the_fat_boxes_and_skips_small_moves() {
    for mut bp in algorithms() {
        let name = bp.name();
        assert!(
            matches!(bp.set_fat_margin(-1.0), Err(Error::InvalidOption(_))),
            "{name}"
        );
        assert!(
            matches!(bp.set_fat_margin(f32::NAN), Err(Error::InvalidOption(_))),
            "{name}"
        );
        assert!(
            matches!(
                bp.set_fat_margin(f32::INFINITY),
                Err(Error::InvalidOption(_))
            ),
            "{name}"
        );
        bp.set_fat_margin(0.5).unwrap();
        let a = bp
            .insert(cube(0.0, 1.0), ProxyKind::Dynamic, CollisionFilter::ALL)
            .unwrap();
        assert_eq!(bp.aabb(a), Ok(cube(-0.5, 1.5)), "{name}: stored fat");
        // 1.8 - 0.5 = 1.3 <= 1.5: the fat boxes overlap, the given ones do not.
        let b = bp
            .insert(cube(1.8, 2.0), ProxyKind::Dynamic, CollisionFilter::ALL)
            .unwrap();
        let mut events = PairEvents::new();
        bp.update(&mut events);
        assert_eq!(events.begun.len(), 1, "{name}");
        // Inside the fat box: nothing changes.
        bp.set_aabb(a, cube(0.4, 1.4)).unwrap();
        assert_eq!(bp.aabb(a), Ok(cube(-0.5, 1.5)), "{name}");
        bp.update(&mut events);
        assert!(events.is_empty(), "{name}");
        // Out of it: a new fat box around the given one.
        bp.set_aabb(a, cube(-3.0, -2.0)).unwrap();
        assert_eq!(bp.aabb(a), Ok(cube(-3.5, -1.5)), "{name}");
        bp.update(&mut events);
        assert_eq!(events.ended, vec![Pair::new(a, b)], "{name}");
        // Back to exact boxes for what is given from now on.
        bp.set_fat_margin(0.0).unwrap();
        bp.set_aabb(a, cube(-3.0, -2.0)).unwrap();
        assert_eq!(bp.aabb(a), Ok(cube(-3.0, -2.0)), "{name}");
    }
}
