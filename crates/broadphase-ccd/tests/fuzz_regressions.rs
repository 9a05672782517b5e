//! Inputs found by the `ccd` fuzz target (fuzz/fuzz_targets/ccd.rs), kept as tests.

use broadphase_ccd::{
    Body, CcdError, FinderOptions, MassModel, Method, Simulation, World, MAX_MAGNITUDE,
    MIN_MAGNITUDE,
};

/// Every method's first `max` events, as `(time, kind name, a, b)`.
fn first_events(world: &World, max: usize) -> Vec<Vec<(f64, &'static str, u32, u32)>> {
    Method::ALL
        .into_iter()
        .map(|method| {
            let mut sim =
                Simulation::new(world.clone(), method, &FinderOptions::default()).unwrap();
            std::iter::from_fn(|| sim.next_event())
                .take(max)
                .map(|e| (e.time, e.kind.name(), e.a, e.b))
                .collect()
        })
        .collect()
}

/// A subnormal speed put every wall hit beyond the largest f64: all-pairs reported no event
/// while swept-bvh (its horizon grown to infinity) reported a wall hit at `t = inf`. Times
/// beyond f64 now count as never, and such speeds are a typed error anyway.
#[test]
fn subnormal_speeds_are_typed_errors() {
    let speed = 2.037115985883e-312 / 16.0;
    let body = Body::new(
        [6.1875, 0.75, 2.4375],
        [-32.0 * speed, 96.0 * speed, 96.0 * speed],
        0.75,
        MassModel::Equal,
        3,
    );
    assert!(matches!(
        World::new(3, [16.5, 2.0, 6.5], &[body]),
        Err(CcdError::OutOfRange { .. })
    ));
    // The slowest accepted speed far from every wall: events at finite times, the same for
    // every method.
    let body = Body::new(
        [5.0, 5.0, 0.0],
        [MIN_MAGNITUDE, 0.0, 0.0],
        1.0,
        MassModel::Equal,
        2,
    );
    let world = World::new(2, [1e75, 10.0, 0.0], &[body]).unwrap();
    let events = first_events(&world, 2);
    for got in &events {
        assert_eq!(got.len(), 2);
        assert!(
            got.iter().all(|e| e.0.is_finite() && e.1 == "wall"),
            "{got:?}"
        );
        assert_eq!(got, &events[0]);
    }
}

/// A speed of about 4e156 overflowed the squared relative speed in the time of impact: the
/// collision was missed and the bodies passed through each other. Speeds (and extents and
/// masses) beyond `MAX_MAGNITUDE` are now a typed error.
#[test]
fn overflowing_speed_is_a_typed_error() {
    let speed = 39.0 / 16.0 * 1.7326042623822292e156;
    let bodies = [
        Body::new(
            [3.75, 1.5, 1.5],
            [6.0, 6.0, 2.625],
            0.375,
            MassModel::Equal,
            3,
        ),
        Body::new([1.5, 1.5, 1.5], [speed; 3], 0.375, MassModel::Equal, 3),
    ];
    let error = World::new(3, [62.25, 62.25, 62.25], &bodies).unwrap_err();
    assert!(
        matches!(&error, CcdError::OutOfRange { value, .. } if *value == speed),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .starts_with("object 1: velocity component"),
        "{error}"
    );
    // At the bound, the products stay finite and the simulation keeps bodies apart.
    let fast = [
        Body::new(
            [2.0, 5.0, 0.0],
            [MAX_MAGNITUDE, 0.0, 0.0],
            1.0,
            MassModel::Equal,
            2,
        ),
        Body::new(
            [8.0, 5.0, 0.0],
            [-MAX_MAGNITUDE, 0.0, 0.0],
            1.0,
            MassModel::Equal,
            2,
        ),
    ];
    let world = World::new(2, [10.0, 10.0, 0.0], &fast).unwrap();
    let events = first_events(&world, 1);
    for events in &events {
        assert_eq!(events.len(), 1);
        assert_eq!((events[0].1, events[0].2, events[0].3), ("collision", 0, 1));
    }
    let huge_mass = Body {
        mass: 1e76,
        ..fast[0]
    };
    assert!(matches!(
        World::new(2, [10.0, 10.0, 0.0], &[huge_mass]),
        Err(CcdError::OutOfRange { .. })
    ));
    assert!(matches!(
        World::new(2, [1e76, 10.0, 0.0], &fast),
        Err(CcdError::OutOfRange { .. })
    ));
}

/// Speeds of 1e-190 and 1e-306: the squared relative speed and `b^2` underflowed to zero, the
/// approach was taken for a graze and the bodies passed through each other. Non-zero speeds
/// (and extents, radii, masses) below `MIN_MAGNITUDE` are now a typed error; slow bodies at
/// the bound still collide, at the same time for every method.
#[test]
fn underflowing_speed_is_a_typed_error() {
    let bodies = [
        Body::new(
            [3.75, 3.75, 0.0],
            [12.0 * 8.76e-306, 0.0, 0.0],
            0.75,
            MassModel::Equal,
            2,
        ),
        Body::new(
            [1.5, 3.75, 0.0],
            [-2.0 * 3.79e-190, 0.0, 0.0],
            0.75,
            MassModel::Equal,
            2,
        ),
    ];
    let error = World::new(2, [6.0, 4.5, 0.0], &bodies).unwrap_err();
    assert!(
        matches!(&error, CcdError::OutOfRange { what, .. } if what == "object 0: velocity component"),
        "{error:?}"
    );
    let tiny_radius = Body {
        radius: 1e-80,
        ..bodies[0]
    };
    assert!(matches!(
        World::new(2, [6.0, 4.5, 0.0], &[tiny_radius]),
        Err(CcdError::OutOfRange { .. })
    ));
    let slow = [
        Body::new(
            [2.0, 5.0, 0.0],
            [MIN_MAGNITUDE, 0.0, 0.0],
            1.0,
            MassModel::Equal,
            2,
        ),
        Body::new(
            [8.0, 5.0, 0.0],
            [-MIN_MAGNITUDE, 0.0, 0.0],
            1.0,
            MassModel::Equal,
            2,
        ),
    ];
    let world = World::new(2, [10.0, 10.0, 0.0], &slow).unwrap();
    for events in first_events(&world, 1) {
        assert_eq!(events.len(), 1);
        assert_eq!((events[0].1, events[0].2, events[0].3), ("collision", 0, 1));
        assert!((events[0].0 - 2.0 / MIN_MAGNITUDE).abs() <= 1e-12 * events[0].0);
    }
}
