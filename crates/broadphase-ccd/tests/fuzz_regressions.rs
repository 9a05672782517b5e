//! Inputs found by the `ccd` fuzz target (fuzz/fuzz_targets/ccd.rs), kept as tests.

use broadphase_ccd::{Body, FinderOptions, MassModel, Method, Simulation, World};

/// Every method's first `max` events, as `(time, kind name, a, b)`.
fn first_events(world: &World, max: usize) -> Vec<Vec<(f64, &'static str, u32, u32)>> {
    Method::ALL
        .into_iter()
        .map(|method| {
            let mut sim = Simulation::new(world.clone(), method, &FinderOptions::default()).unwrap();
            std::iter::from_fn(|| sim.next_event())
                .take(max)
                .map(|e| (e.time, e.kind.name(), e.a, e.b))
                .collect()
        })
        .collect()
}

/// A subnormal speed puts every wall hit beyond the largest f64: all-pairs reported no event
/// while swept-bvh (its horizon grown to infinity) reported a wall hit at `t = inf`.
#[test]
fn wall_hit_beyond_f64_is_never() {
    let speed = 2.037115985883e-312 / 16.0;
    let body = Body::new(
        [6.1875, 0.75, 2.4375],
        [-32.0 * speed, 96.0 * speed, 96.0 * speed],
        0.75,
        MassModel::Equal,
        3,
    );
    let world = World::new(3, [16.5, 2.0, 6.5], &[body]).unwrap();
    for events in first_events(&world, 5) {
        assert_eq!(events, []);
    }
}

/// The same for a collision: two bodies closing at a subnormal speed meet after more than
/// `f64::MAX` seconds, which is never.
#[test]
fn collision_beyond_f64_is_never() {
    let speed = 1e-310;
    let bodies = [
        Body::new([2.0, 5.0, 0.0], [speed, 0.0, 0.0], 1.0, MassModel::Equal, 2),
        Body::new([8.0, 5.0, 0.0], [0.0, 0.0, 0.0], 1.0, MassModel::Equal, 2),
    ];
    let world = World::new(2, [10.0, 10.0, 0.0], &bodies).unwrap();
    for events in first_events(&world, 5) {
        assert_eq!(events, []);
    }
}
