//! All methods produce the same event stream; runs are deterministic; physics invariants hold.

use broadphase_ccd::{
    generate_scene, run, Body, CcdError, Event, FinderOptions, MassModel, Method, RunConfig,
    SceneConfig, Simulation, SweptBvhOptions, World,
};
use proptest::prelude::*;

fn events_of(
    world: &World,
    method: Method,
    options: &FinderOptions,
    max_events: usize,
    until: f64,
) -> Vec<Event> {
    let mut sim = Simulation::new(world.clone(), method, options).unwrap();
    let mut events = Vec::new();
    while events.len() < max_events {
        match sim.next_event() {
            Some(e) if e.time <= until => events.push(e),
            _ => break,
        }
    }
    events
}

fn assert_same_streams(
    world: &World,
    options: &FinderOptions,
    max_events: usize,
    until: f64,
) -> Result<(), TestCaseError> {
    let reference = events_of(world, Method::AllPairs, options, max_events, until);
    for method in [Method::SweptBvh, Method::Calendar] {
        let got = events_of(world, method, options, max_events, until);
        for (k, (x, y)) in reference.iter().zip(&got).enumerate() {
            prop_assert!(
                x.matches(y, 1e-9),
                "{method} differs at event {k}: expected {x}, got {y}"
            );
        }
        prop_assert_eq!(reference.len(), got.len(), "{} event count", method);
    }
    Ok(())
}

fn try_scene(
    objects: usize,
    dim: usize,
    seed: u64,
    fraction: f64,
    equal: bool,
) -> Result<World, broadphase_ccd::CcdError> {
    let mut config = SceneConfig::new(objects, dim, seed);
    config.packing_fraction = Some(fraction);
    if equal {
        config.mass_model = MassModel::Equal;
    }
    generate_scene(&config)
}

fn scene(objects: usize, dim: usize, seed: u64, fraction: f64, equal: bool) -> World {
    try_scene(objects, dim, seed, fraction, equal).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn methods_agree_on_random_scenes(
        objects in 1usize..48,
        dim in 2usize..=3,
        seed in any::<u64>(),
        fraction in 0.02f64..0.2,
        equal in any::<bool>(),
        grow in 1.5f64..4.0,
        shrink in 0.2f64..1.0,
        rebuild_every in 1u32..20,
        simd in any::<bool>(),
    ) {
        // Random placement may not find room for every body in a small world at this
        // packing; such a draw is not a scene, so it is skipped (the error is tested apart).
        let placed = try_scene(objects, dim, seed, fraction, equal);
        prop_assume!(placed.is_ok());
        let world = placed.unwrap();
        let options = FinderOptions {
            swept_bvh: SweptBvhOptions { grow, shrink, rebuild_every, ..SweptBvhOptions::default() },
            simd,
        };
        assert_same_streams(&world, &options, 400, f64::INFINITY)?;
    }
}

/// The calendar's vector kernels (the AVX2 gather and collision search, where the CPU has
/// them) and its scalar ones give the same events with bit-identical times, through many
/// cell crossings, in 2D and 3D, at a sparse and a dense packing.
#[test]
fn calendar_vector_and_scalar_kernels_agree_bit_for_bit() {
    for dim in [2, 3] {
        for (seed, fraction) in [(11, 0.05), (12, 0.2)] {
            let world = scene(600, dim, seed, fraction, false);
            let scalar = FinderOptions {
                simd: false,
                ..FinderOptions::default()
            };
            let expected = events_of(&world, Method::Calendar, &scalar, 5000, f64::INFINITY);
            let got = events_of(
                &world,
                Method::Calendar,
                &FinderOptions::default(),
                5000,
                f64::INFINITY,
            );
            assert_eq!(expected.len(), 5000);
            for (k, (x, y)) in expected.iter().zip(&got).enumerate() {
                assert_eq!(
                    (x.kind, x.a, x.b, x.time.to_bits()),
                    (y.kind, y.a, y.b, y.time.to_bits()),
                    "dim {dim} seed {seed} event {k}: {x} vs {y}"
                );
            }
            assert_eq!(expected.len(), got.len());
        }
    }
}

/// A lattice of equal bodies with identical velocities: many exactly simultaneous wall hits
/// and collisions, which only the tie rule orders.
#[test]
fn methods_agree_on_simultaneous_events() {
    for dim in [2, 3] {
        let mut bodies = Vec::new();
        let per_side: usize = 4;
        for k in 0..per_side.pow(dim as u32) {
            let (x, y, z) = (
                k % per_side,
                (k / per_side) % per_side,
                k / (per_side * per_side),
            );
            let position = [
                2.0 + 3.0 * x as f64,
                2.0 + 3.0 * y as f64,
                if dim == 3 { 2.0 + 3.0 * z as f64 } else { 0.0 },
            ];
            // Alternate rows move in opposite directions so that rows collide head-on.
            let sign = if y % 2 == 0 { 1.0 } else { -1.0 };
            let velocity = [sign, sign * 0.5, 0.0];
            bodies.push(Body::new(position, velocity, 1.0, MassModel::Equal, dim));
        }
        let world = World::new(dim, [13.0, 13.0, 13.0], &bodies).unwrap();
        assert_same_streams(&world, &FinderOptions::default(), 600, f64::INFINITY).unwrap();
    }
}

#[test]
fn runs_are_deterministic() {
    let world = scene(300, 3, 99, 0.15, false);
    for method in Method::ALL {
        let a = events_of(
            &world,
            method,
            &FinderOptions::default(),
            1500,
            f64::INFINITY,
        );
        let b = events_of(
            &world,
            method,
            &FinderOptions::default(),
            1500,
            f64::INFINITY,
        );
        assert_eq!(a.len(), 1500);
        assert!(a
            .iter()
            .zip(&b)
            .all(|(x, y)| x.time.to_bits() == y.time.to_bits()
                && x.kind == y.kind
                && x.a == y.a
                && x.b == y.b));
    }
}

#[test]
fn no_overlap_and_energy_conserved_over_long_runs() {
    for (dim, seed) in [(2, 5u64), (3, 6u64)] {
        let world = scene(120, dim, seed, if dim == 2 { 0.35 } else { 0.2 }, false);
        let energy = world.kinetic_energy();
        let mut sim = Simulation::new(world, Method::Calendar, &FinderOptions::default()).unwrap();
        let mut worst_overlap = 0.0f64;
        let mut worst_wall = 0.0f64;
        for _ in 0..20_000 {
            let e = sim.next_event().unwrap();
            if sim.collisions().is_multiple_of(50) {
                worst_overlap = worst_overlap.max(sim.world().max_relative_overlap_at(e.time));
                worst_wall = worst_wall.max(sim.world().max_relative_wall_penetration_at(e.time));
            }
        }
        assert!(worst_overlap <= 1e-9, "dim {dim}: overlap {worst_overlap}");
        assert!(
            worst_wall <= 1e-9,
            "dim {dim}: wall penetration {worst_wall}"
        );
        let drift = (sim.world().kinetic_energy() - energy).abs() / energy;
        assert!(drift <= 1e-9, "dim {dim}: energy drift {drift}");
        assert!(sim.collisions() > 10_000);
    }
}

#[test]
fn momentum_conserved_without_wall_hits() {
    // A cluster in the middle of a huge box: many collisions long before any wall hit.
    let mut bodies = Vec::new();
    let mut state = 7u64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    for k in 0..64 {
        let (x, y, z) = (k % 4, (k / 4) % 4, k / 16);
        let position = [
            1000.0 + 2.5 * x as f64,
            1000.0 + 2.5 * y as f64,
            1000.0 + 2.5 * z as f64,
        ];
        let velocity = [next() - 0.5, next() - 0.5, next() - 0.5];
        bodies.push(Body::new(
            position,
            velocity,
            0.5 + 0.5 * next(),
            MassModel::ProportionalToVolume,
            3,
        ));
    }
    let world = World::new(3, [2000.0; 3], &bodies).unwrap();
    let (momentum, energy) = (world.momentum(), world.kinetic_energy());
    for method in Method::ALL {
        let mut sim = Simulation::new(world.clone(), method, &FinderOptions::default()).unwrap();
        sim.advance_to(100.0, |e| {
            assert_eq!(e.kind, broadphase_ccd::EventKind::Collision)
        })
        .unwrap();
        assert!(sim.collisions() > 20, "{method}: {}", sim.collisions());
        let p = sim.world().momentum();
        for k in 0..3 {
            assert!(
                (p[k] - momentum[k]).abs() <= 1e-12,
                "{method}: {p:?} vs {momentum:?}"
            );
        }
        assert!((sim.world().kinetic_energy() - energy).abs() <= 1e-12 * energy);
    }
}

#[test]
fn check_mode_passes_and_reports_counts() {
    for method in [Method::SweptBvh, Method::Calendar] {
        let config = RunConfig {
            scene: SceneConfig::new(64, 2, 11),
            seconds: 1.0,
            method,
            check: true,
            ..RunConfig::default()
        };
        let report = run(&config, &mut |_| {}).unwrap();
        assert!(
            report.completed && report.checked && report.collisions > 100,
            "{report:?}"
        );
    }
}

#[test]
fn advance_to_reads_positions_between_events() {
    let world = scene(50, 2, 3, 0.1, false);
    let mut sim = Simulation::new(world, Method::Calendar, &FinderOptions::default()).unwrap();
    let mut times = Vec::new();
    sim.advance_to(0.25, |e| times.push(e.time)).unwrap();
    assert!(times.windows(2).all(|w| w[0] <= w[1]) && times.iter().all(|&t| t <= 0.25));
    assert_eq!(sim.now(), 0.25);
    let next = sim.peek_event().unwrap();
    assert!(next.time > 0.25);
    assert!(sim.world().max_relative_overlap_at(0.25) <= 1e-9);
    assert!(matches!(
        sim.advance_to(0.1, |_| {}),
        Err(CcdError::BadTime(_))
    ));
}

#[test]
fn invalid_inputs_are_typed_errors() {
    let ok = Body::new([2.0, 2.0, 2.0], [0.0; 3], 1.0, MassModel::Equal, 3);
    let bad_radius = Body { radius: -1.0, ..ok };
    assert!(matches!(
        World::new(3, [10.0; 3], &[bad_radius]),
        Err(CcdError::BadRadius { index: 0, .. })
    ));
    assert!(matches!(
        World::new(3, [10.0; 3], &[]),
        Err(CcdError::NoObjects)
    ));
    assert!(matches!(
        World::new(4, [10.0; 3], &[ok]),
        Err(CcdError::BadDimension(4))
    ));
    let outside = Body {
        position: [9.5, 2.0, 2.0],
        ..ok
    };
    assert!(matches!(
        World::new(3, [10.0; 3], &[ok, outside]),
        Err(CcdError::OutsideWorld { index: 1, .. })
    ));
    let overlapping = Body {
        position: [3.0, 2.0, 2.0],
        ..ok
    };
    assert!(matches!(
        World::new(3, [10.0; 3], &[ok, overlapping]),
        Err(CcdError::InitialOverlap { a: 0, b: 1 })
    ));
    let nan = Body {
        velocity: [f64::NAN, 0.0, 0.0],
        ..ok
    };
    assert!(matches!(
        World::new(3, [10.0; 3], &[nan]),
        Err(CcdError::NotFinite { index: 0 })
    ));
    assert!(matches!(
        generate_scene(&SceneConfig::new(0, 2, 1)),
        Err(CcdError::NoObjects)
    ));
    let mut crowded = SceneConfig::new(100, 3, 1);
    crowded.packing_fraction = Some(0.6);
    assert!(matches!(
        generate_scene(&crowded),
        Err(CcdError::DoesNotFit { .. })
    ));
    let mut negative = SceneConfig::new(100, 2, 1);
    negative.radius_min = -0.5;
    assert!(matches!(
        generate_scene(&negative),
        Err(CcdError::BadRadiusRange { .. })
    ));
    let mut options = FinderOptions::default();
    options.swept_bvh.grow = 1.0;
    let world = World::new(3, [10.0; 3], &[ok]).unwrap();
    assert!(matches!(
        Simulation::new(world, Method::SweptBvh, &options),
        Err(CcdError::BadOption(_))
    ));
    assert!("quadtree".parse::<Method>().is_err());
}

/// Worlds whose cell grids are degenerate: one cell per axis, a single row of cells (the
/// grid's ring of empty cells is most of it), and a flat slab one cell thick. The calendar,
/// with and without its vector kernels, gives all-pairs' events.
#[test]
fn calendar_matches_all_pairs_on_degenerate_grids() {
    // Spread over [0, 1) by the golden ratio: varied speeds without a generator.
    let unit = |k: usize| (k as f64 * 0.618_033_988_749_895).fract();
    for (dim, size, count) in [
        (2, [3.0, 3.0, 0.0], 6),
        (3, [3.0, 3.0, 3.0], 8),
        (2, [400.0, 2.0, 0.0], 120),
        (3, [400.0, 2.0, 2.0], 120),
        (3, [60.0, 60.0, 2.0], 200),
    ] {
        // Bodies of radius 0.4 on a lattice of spacing 1 (no initial overlap), moving in
        // varied directions.
        let mut bodies = Vec::new();
        let cells = [0, 1, 2].map(|k| if k < dim { size[k] as usize - 1 } else { 1 });
        'fill: for z in 0..cells[2] {
            for y in 0..cells[1] {
                for x in 0..cells[0] {
                    if bodies.len() == count {
                        break 'fill;
                    }
                    let at = [x, y, z].map(|c| c as f64 + 1.0);
                    let position = [at[0], at[1], if dim == 3 { at[2] } else { 0.0 }];
                    let draw = 3 * bodies.len();
                    let velocity = [0, 1, 2].map(|k| {
                        if k < dim {
                            4.0 * unit(draw + k) - 2.0
                        } else {
                            0.0
                        }
                    });
                    bodies.push(Body::new(position, velocity, 0.4, MassModel::Equal, dim));
                }
            }
        }
        let world = World::new(dim, size, &bodies).unwrap();
        let reference = events_of(
            &world,
            Method::AllPairs,
            &FinderOptions::default(),
            3000,
            1e3,
        );
        assert!(
            reference.len() > 500,
            "{dim}D {size:?}: {}",
            reference.len()
        );
        for simd in [true, false] {
            let options = FinderOptions {
                simd,
                ..FinderOptions::default()
            };
            let got = events_of(&world, Method::Calendar, &options, 3000, 1e3);
            assert_eq!(got.len(), reference.len(), "{dim}D {size:?} simd {simd}");
            for (k, (x, y)) in reference.iter().zip(&got).enumerate() {
                assert!(
                    x.matches(y, 0.0),
                    "{dim}D {size:?} simd {simd}, event {k}: {x} vs {y}"
                );
            }
        }
    }
}
