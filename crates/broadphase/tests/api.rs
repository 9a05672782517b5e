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

/// Every tuning value at its extremes (zero, the largest integer, infinities, NaN) either
/// builds an algorithm that stays exact or is refused with a typed error; nothing overflows
/// or panics (tests run with overflow checks on).
#[test]
fn extreme_options_are_exact_or_refused() {
    use broadphase::AlgorithmOptions;
    let floats = [
        0.0,
        -1.0,
        f32::MIN_POSITIVE,
        f32::MAX,
        f32::INFINITY,
        f32::NAN,
    ];
    let sizes = [0usize, 1, usize::MAX];
    let mut variants: Vec<AlgorithmOptions> = Vec::new();
    for &f in &floats {
        let mut o = AlgorithmOptions::default();
        o.grid.cell_size = Some(f);
        o.hgrid.motion_factor = f;
        o.dynamic_tree.margin = f;
        o.bvh.rebuild_area_growth = f as f64;
        o.adaptive.switch_margin = f as f64;
        o.adaptive.trial_budget = f as f64;
        variants.push(o);
    }
    for &n in &sizes {
        let mut o = AlgorithmOptions::default();
        o.grid.max_cells_per_box = n;
        o.hgrid.scan_limit = n;
        o.octree.split_threshold = n;
        o.octree.max_depth = n.min(u32::MAX as usize) as u32;
        o.loose_octree.max_depth = n.min(u32::MAX as usize) as u32;
        o.bvh.rebuild_change_base = n;
        o.bvh.rebuild_change_divisor = n;
        o.adaptive.quadratic_limit = n;
        o.adaptive.trial_proxies = n;
        o.adaptive.min_trial_interval = n as u64;
        o.adaptive.max_trial_interval = n as u64;
        variants.push(o);
    }
    let mut rng = SplitMix64::new(3);
    for options in &variants {
        for name in ALGORITHMS {
            let Ok(mut bp) = create(name, options) else {
                continue; // a typed refusal
            };
            let mut events = PairEvents::new();
            let mut ids = Vec::new();
            for step in 0..12 {
                for _ in 0..20 {
                    let p = [
                        rng.range(0.0, 20.0),
                        rng.range(0.0, 20.0),
                        rng.range(0.0, 20.0),
                    ];
                    let e = rng.range(0.0, 3.0);
                    let aabb = Aabb::from_arrays(p, [p[0] + e, p[1] + e, p[2] + e]).unwrap();
                    if step % 3 == 0 || ids.is_empty() {
                        ids.push(
                            bp.insert(aabb, ProxyKind::Dynamic, CollisionFilter::ALL)
                                .unwrap(),
                        );
                    } else {
                        let id = ids[rng.below(ids.len())];
                        bp.set_aabb(id, aabb).unwrap();
                    }
                }
                bp.update(&mut events);
            }
            let boxes: Vec<Aabb> = ids.iter().map(|&id| bp.aabb(id).unwrap()).collect();
            let mut expected = 0;
            for (i, a) in boxes.iter().enumerate() {
                expected += boxes[i + 1..].iter().filter(|b| a.overlaps(b)).count();
            }
            assert_eq!(bp.pair_count(), expected, "{name} with {options:?}");
        }
    }
}

/// A pair limit bounds memory: thousands of identical boxes (millions of pairs) under a limit
/// of ten thousand make every algorithm refuse the update with a typed error, holding memory
/// for about the limit; without the limit the same update succeeds.
#[test]
fn a_pair_limit_refuses_a_pair_explosion_with_bounded_memory() {
    let n = 1_500; // 1.1 million pairs
    let limit = 10_000;
    for mut bp in algorithms() {
        let name = bp.name();
        bp.set_pair_limit(Some(limit));
        for _ in 0..n {
            bp.insert(cube(0.0, 1.0), ProxyKind::Dynamic, CollisionFilter::ALL)
                .unwrap();
        }
        let mut events = PairEvents::new();
        assert_eq!(
            bp.try_update(&mut events),
            Err(Error::PairLimit { limit }),
            "{name}"
        );
        assert!(events.is_empty() && bp.pair_count() == 0, "{name}");
        // The pairs' share: at most about 100 bytes per pair of the limit, beside what the
        // proxies take.
        let bound = 100 * limit + 2_000 * n;
        assert!(
            bp.memory_bytes() < bound,
            "{name}: {} bytes",
            bp.memory_bytes()
        );
        bp.set_pair_limit(None);
        bp.try_update(&mut events).unwrap();
        assert_eq!(events.begun.len(), n * (n - 1) / 2, "{name}");
    }
}
