//! API contracts every registered algorithm must keep: stale ids, filters, static pairs,
//! determinism of the event stream, clear, and events of removed proxies.

mod common;

use broadphase::verify::SplitMix64;
use broadphase::{
    create, Aabb, BroadPhase, CollisionFilter, Error, Pair, PairEvents, ProxyId, ProxyKind,
    ALGORITHMS,
};
use common::assert_exact_on_every_scenario;

fn algorithms() -> impl Iterator<Item = Box<dyn BroadPhase>> {
    ALGORITHMS
        .iter()
        .map(|name| create(name, &Default::default()).unwrap())
}

fn cube(min: f32, max: f32) -> Aabb {
    Aabb::from_arrays([min; 3], [max; 3]).unwrap()
}

#[test]
fn stale_and_foreign_ids_are_errors_and_change_nothing() {
    for mut bp in algorithms() {
        let a = bp
            .insert(cube(0.0, 1.0), ProxyKind::Dynamic, CollisionFilter::ALL)
            .unwrap();
        let b = bp
            .insert(cube(0.5, 2.0), ProxyKind::Dynamic, CollisionFilter::ALL)
            .unwrap();
        let mut events = PairEvents::new();
        bp.update(&mut events);
        bp.remove(a).unwrap();
        assert_eq!(bp.remove(a), Err(Error::StaleProxy(a)), "{}", bp.name());
        bp.update(&mut events);
        assert_eq!(events.ended, vec![Pair::new(a, b)], "{}", bp.name());
        // The slot is reused by the next insert; the old id must not reach it.
        let c = bp
            .insert(cube(5.0, 6.0), ProxyKind::Dynamic, CollisionFilter::ALL)
            .unwrap();
        assert_eq!(c.index(), a.index(), "{}: slot reuse", bp.name());
        assert_eq!(
            bp.set_aabb(a, cube(0.0, 1.0)),
            Err(Error::StaleProxy(a)),
            "{}",
            bp.name()
        );
        let never = ProxyId::from_parts(1000, 0);
        assert_eq!(
            bp.set_aabb(never, cube(0.0, 1.0)),
            Err(Error::StaleProxy(never))
        );
        bp.update(&mut events);
        assert!(events.is_empty(), "{}: {events:?}", bp.name());
        assert_eq!(bp.aabb(c), Ok(cube(5.0, 6.0)));
        assert_eq!(bp.len(), 2);
    }
}

#[test]
fn filters_and_static_pairs() {
    for mut bp in algorithms() {
        let mut insert = |kind, filter| bp.insert(cube(0.0, 1.0), kind, filter).unwrap();
        let s1 = insert(ProxyKind::Static, CollisionFilter::ALL);
        let _s2 = insert(ProxyKind::Static, CollisionFilter::ALL);
        let d1 = insert(ProxyKind::Dynamic, CollisionFilter::new(0b01, 0b10));
        let d2 = insert(ProxyKind::Dynamic, CollisionFilter::new(0b10, 0b11));
        let d3 = insert(ProxyKind::Dynamic, CollisionFilter::new(0b01, 0b01));
        let mut events = PairEvents::new();
        bp.update(&mut events);
        let mut pairs = Vec::new();
        bp.pairs(&mut pairs);
        pairs.sort();
        // Statics pair with every dynamic (filters ALL), never with each other; d1–d2 allowed
        // both ways; d1–d3 (d3.group & d1.mask == 0) and d2–d3 (d3.mask & d2.group == 0) not.
        let mut expected: Vec<Pair> = [(s1, d1), (s1, d2), (s1, d3), (d1, d2)]
            .iter()
            .map(|&(x, y)| Pair::new(x, y))
            .collect();
        expected.extend([d1, d2, d3].iter().map(|&d| Pair::new(_s2, d)));
        expected.sort();
        assert_eq!(pairs, expected, "{}", bp.name());
    }
}

fn event_stream(mut bp: Box<dyn BroadPhase>, seed: u64) -> Vec<PairEvents> {
    let mut rng = SplitMix64::new(seed);
    let mut ids = Vec::new();
    let mut stream = Vec::new();
    let mut events = PairEvents::new();
    for step in 0..60 {
        for _ in 0..5 {
            let c = rng.range(0.0, 20.0);
            let s = rng.range(0.0, 3.0);
            ids.push(
                bp.insert(cube(c, c + s), ProxyKind::Dynamic, CollisionFilter::ALL)
                    .unwrap(),
            );
        }
        for id in &ids {
            if rng.chance(0.5) {
                let c = rng.range(0.0, 20.0);
                bp.set_aabb(*id, cube(c, c + rng.range(0.0, 3.0))).unwrap();
            }
        }
        if step % 4 == 0 {
            let id = ids.remove(rng.below(ids.len()));
            bp.remove(id).unwrap();
        }
        bp.update(&mut events);
        stream.push(events.clone());
    }
    stream
}

#[test]
fn same_calls_give_the_same_events_in_the_same_order() {
    for name in ALGORITHMS {
        let first = event_stream(create(name, &Default::default()).unwrap(), 42);
        let second = event_stream(create(name, &Default::default()).unwrap(), 42);
        assert!(first
            .iter()
            .any(|e| !e.begun.is_empty() && !e.ended.is_empty()));
        assert_eq!(first, second, "{name}");
    }
}

#[test]
fn clear_resets_without_events_and_invalidates_ids() {
    for mut bp in algorithms() {
        let ids: Vec<_> = (0..10)
            .map(|i| {
                bp.insert(
                    cube(i as f32 * 0.5, i as f32 * 0.5 + 1.0),
                    ProxyKind::Dynamic,
                    CollisionFilter::ALL,
                )
                .unwrap()
            })
            .collect();
        let mut events = PairEvents::new();
        bp.update(&mut events);
        assert!(bp.pair_count() > 0);
        bp.clear();
        assert_eq!(bp.len(), 0);
        assert_eq!(bp.pair_count(), 0);
        for id in ids {
            assert!(bp.set_aabb(id, cube(0.0, 1.0)).is_err(), "{}", bp.name());
        }
        let a = bp
            .insert(cube(0.0, 1.0), ProxyKind::Dynamic, CollisionFilter::ALL)
            .unwrap();
        let b = bp
            .insert(cube(1.0, 2.0), ProxyKind::Dynamic, CollisionFilter::ALL)
            .unwrap();
        bp.update(&mut events);
        assert_eq!(events.begun, vec![Pair::new(a, b)], "{}", bp.name());
        assert!(events.ended.is_empty());
    }
}

#[test]
fn long_run_on_every_scenario() {
    // A longer run than the property tests, so that structures see many rebuild cycles.
    assert_exact_on_every_scenario(&|| algorithms().collect(), 200, 120, 99);
}
