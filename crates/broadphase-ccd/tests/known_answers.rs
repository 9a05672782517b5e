//! Two-sphere and sphere-wall cases with known answers, run through every method.

use broadphase_ccd::time_of_impact::{sphere_sphere, sphere_wall};
use broadphase_ccd::{Body, Event, EventKind, FinderOptions, MassModel, Method, Simulation, World};

fn body(p: [f64; 3], v: [f64; 3], r: f64) -> Body {
    Body::new(p, v, r, MassModel::Equal, 3)
}

fn first_events(bodies: &[Body], size: [f64; 3], count: usize) -> Vec<Vec<Event>> {
    Method::ALL
        .iter()
        .map(|&method| {
            let world = World::new(3, size, bodies).unwrap();
            let mut sim = Simulation::new(world, method, &FinderOptions::default()).unwrap();
            (0..count).map_while(|_| sim.next_event()).collect()
        })
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn head_on_equal_masses_exchange_velocities() {
    let bodies = [
        body([2.0, 5.0, 5.0], [1.0, 0.0, 0.0], 1.0),
        body([8.0, 5.0, 5.0], [-1.0, 0.0, 0.0], 1.0),
    ];
    for method in Method::ALL {
        let world = World::new(3, [10.0; 3], &bodies).unwrap();
        let mut sim = Simulation::new(world, method, &FinderOptions::default()).unwrap();
        let e = sim.next_event().unwrap();
        assert_eq!((e.kind, e.a, e.b), (EventKind::Collision, 0, 1), "{method}");
        assert!(close(e.time, 2.0), "{method}: {}", e.time);
        assert_eq!(sim.world().velocity(0), [-1.0, 0.0, 0.0]);
        assert_eq!(sim.world().velocity(1), [1.0, 0.0, 0.0]);
        // Touching after the bounce must not re-trigger: next events are the two wall hits.
        let next = sim.next_event().unwrap();
        assert_eq!(next.kind, EventKind::Wall, "{method}: {next}");
        assert!(close(next.time, 5.0), "{method}: {next}");
    }
}

#[test]
fn glancing_collision_time_and_normal_exchange() {
    let h: f64 = 1.5;
    let bodies = [
        body([2.0, 5.0, 5.0], [1.0, 0.0, 0.0], 1.0),
        body([8.0, 5.0 + h, 5.0], [-1.0, 0.0, 0.0], 1.0),
    ];
    let expected = (6.0 - (4.0 - h * h).sqrt()) / 2.0;
    for (events, method) in first_events(&bodies, [10.0; 3], 1).iter().zip(Method::ALL) {
        let e = events[0];
        assert_eq!((e.kind, e.a, e.b), (EventKind::Collision, 0, 1), "{method}");
        assert!(
            close(e.time, expected),
            "{method}: {} vs {expected}",
            e.time
        );
    }
    let world = World::new(3, [10.0; 3], &bodies).unwrap();
    let mut sim = Simulation::new(world, Method::Calendar, &FinderOptions::default()).unwrap();
    let energy = sim.world().kinetic_energy();
    sim.next_event().unwrap();
    let (va, vb) = (sim.world().velocity(0), sim.world().velocity(1));
    // Normal n = (sqrt(4 - h^2), h) / 2: equal masses swap normal components, keep tangential.
    let n = [(4.0 - h * h).sqrt() / 2.0, h / 2.0];
    let normal_a = va[0] * n[0] + va[1] * n[1];
    let normal_b = vb[0] * n[0] + vb[1] * n[1];
    assert!(
        close(normal_a, -n[0]) && close(normal_b, n[0]),
        "{va:?} {vb:?}"
    );
    assert!(close(sim.world().kinetic_energy(), energy));
}

#[test]
fn near_miss_does_not_collide() {
    // Impact parameter 2.5 > sum of radii 2: they pass; first events are wall hits.
    let bodies = [
        body([2.0, 5.0, 5.0], [1.0, 0.0, 0.0], 1.0),
        body([8.0, 7.5, 5.0], [-1.0, 0.0, 0.0], 1.0),
    ];
    for (events, method) in first_events(&bodies, [10.0; 3], 2).iter().zip(Method::ALL) {
        assert!(
            events.iter().all(|e| e.kind == EventKind::Wall),
            "{method}: {events:?}"
        );
        assert!(close(events[0].time, 7.0) && close(events[1].time, 7.0));
        // Tie rule: equal times are ordered by object index.
        assert_eq!((events[0].a, events[1].a), (0, 1));
    }
}

#[test]
fn touching_pairs() {
    // Touching and separating: never collides.
    assert_eq!(sphere_sphere([2.0, 0.0, 0.0], [1.0, 0.0, 0.0], 2.0), None);
    // Touching and at rest: never.
    assert_eq!(sphere_sphere([2.0, 0.0, 0.0], [0.0, 0.0, 0.0], 2.0), None);
    // Touching and approaching: now.
    assert_eq!(
        sphere_sphere([2.0, 0.0, 0.0], [-1.0, 0.0, 0.0], 2.0),
        Some(0.0)
    );
    // Touching, tangential relative motion: never.
    assert_eq!(sphere_sphere([2.0, 0.0, 0.0], [0.0, 1.0, 0.0], 2.0), None);
    // A row of three touching spheres hit from the left: the impulse travels through
    // (Newton's cradle), each collision once, at the same instant.
    let bodies = [
        body([2.0, 5.0, 5.0], [1.0, 0.0, 0.0], 1.0),
        body([5.0, 5.0, 5.0], [0.0, 0.0, 0.0], 1.0),
        body([7.0, 5.0, 5.0], [0.0, 0.0, 0.0], 1.0),
    ];
    for (events, method) in first_events(&bodies, [20.0, 10.0, 10.0], 3)
        .iter()
        .zip(Method::ALL)
    {
        let pairs: Vec<_> = events.iter().map(|e| (e.kind, e.a, e.b)).collect();
        assert_eq!(
            pairs,
            [
                (EventKind::Collision, 0, 1),
                (EventKind::Collision, 1, 2),
                (EventKind::Wall, 2, 1)
            ],
            "{method}"
        );
        assert!(
            close(events[0].time, 1.0) && close(events[1].time, 1.0),
            "{method}: {events:?}"
        );
        assert!(close(events[2].time, 1.0 + 12.0), "{method}: {events:?}");
    }
}

#[test]
fn parallel_and_equal_velocities_never_collide() {
    assert_eq!(sphere_sphere([3.0, 0.0, 0.0], [0.0, 0.0, 0.0], 2.0), None);
    assert_eq!(sphere_sphere([0.0, 3.0, 0.0], [5.0, 0.0, 0.0], 2.0), None);
    let bodies = [
        body([2.0, 3.0, 5.0], [1.0, 0.5, 0.0], 1.0),
        body([5.0, 3.0, 5.0], [1.0, 0.5, 0.0], 1.0),
    ];
    for (events, method) in first_events(&bodies, [100.0, 100.0, 10.0], 1)
        .iter()
        .zip(Method::ALL)
    {
        // Moving together until the leader hits the x-max wall at t = 94.
        assert_eq!(
            (events[0].kind, events[0].a, events[0].b),
            (EventKind::Wall, 1, 1),
            "{method}"
        );
        assert!(close(events[0].time, 94.0), "{method}: {events:?}");
    }
}

#[test]
fn one_at_rest_with_unequal_masses() {
    let (r1, r2) = (1.0f64, 0.5f64);
    let bodies = [
        Body::new(
            [2.0, 5.0, 5.0],
            [3.0, 0.0, 0.0],
            r1,
            MassModel::ProportionalToVolume,
            3,
        ),
        Body::new(
            [6.0, 5.0, 5.0],
            [0.0, 0.0, 0.0],
            r2,
            MassModel::ProportionalToVolume,
            3,
        ),
    ];
    let (m1, m2) = (r1.powi(3), r2.powi(3));
    for method in Method::ALL {
        let world = World::new(3, [20.0, 10.0, 10.0], &bodies).unwrap();
        let mut sim = Simulation::new(world, method, &FinderOptions::default()).unwrap();
        let e = sim.next_event().unwrap();
        assert_eq!((e.kind, e.a, e.b), (EventKind::Collision, 0, 1));
        assert!(close(e.time, 2.5 / 3.0), "{method}: {e}");
        let v1 = sim.world().velocity(0)[0];
        let v2 = sim.world().velocity(1)[0];
        assert!(close(v1, 3.0 * (m1 - m2) / (m1 + m2)), "{v1}");
        assert!(close(v2, 3.0 * 2.0 * m1 / (m1 + m2)), "{v2}");
    }
}

#[test]
fn sphere_wall_known_answers() {
    assert_eq!(sphere_wall(5.0, 3.0, 1.0, 10.0), Some((4.0 / 3.0, 1)));
    assert_eq!(sphere_wall(5.0, -2.0, 1.0, 10.0), Some((2.0, 0)));
    assert_eq!(sphere_wall(5.0, 0.0, 1.0, 10.0), None);
    // Touching the wall and moving away: the other wall is next, not this one.
    assert_eq!(sphere_wall(1.0, 1.0, 1.0, 10.0), Some((8.0, 1)));
    // Touching and moving in: immediately.
    assert_eq!(sphere_wall(1.0, -1.0, 1.0, 10.0), Some((0.0, 0)));
    let bodies = [body([5.0, 5.0, 5.0], [3.0, -1.0, 0.0], 1.0)];
    for (events, method) in first_events(&bodies, [10.0; 3], 3).iter().zip(Method::ALL) {
        let got: Vec<_> = events.iter().map(|e| (e.a, e.b)).collect();
        // x max at 4/3, x min at 4/3 + 8/3 = 4, y min at 4.
        assert_eq!(got, [(0, 1), (0, 0), (0, 2)], "{method}: {events:?}");
        assert!(
            close(events[0].time, 4.0 / 3.0)
                && close(events[1].time, 4.0)
                && close(events[2].time, 4.0)
        );
    }
}

#[test]
fn stable_root_avoids_cancellation() {
    // dp = (1, 2^-20, 0), s = 1: c = 2^-40 exactly; a fast head-on approach makes a*c tiny
    // against b^2, where the textbook root (-b - sqrt(b^2 - a c)) / a cancels.
    let dp = [1.0, 2f64.powi(-20), 0.0];
    let dv = [-1e8, 0.0, 0.0];
    let (a, b, c) = (1e16, -1e8, 2f64.powi(-40));
    let reference = c / (2.0 * -b) * (1.0 + a * c / (4.0 * b * b));
    let stable = sphere_sphere(dp, dv, 1.0).unwrap();
    assert!(
        (stable - reference).abs() <= 1e-14 * reference,
        "{stable} vs {reference}"
    );
    let naive = (-b - (b * b - a * c).sqrt()) / a;
    assert!(
        (naive - reference).abs() > 1e-6 * reference,
        "the naive form should be visibly worse here"
    );
}

#[test]
fn simultaneous_collision_precedes_wall_hit() {
    // Body 1 hits body 0 at t = 1 while body 2 hits the x-max wall at t = 1.
    let bodies = [
        body([2.0, 2.0, 5.0], [0.0, 0.0, 0.0], 1.0),
        body([5.0, 2.0, 5.0], [-1.0, 0.0, 0.0], 1.0),
        body([8.0, 7.0, 5.0], [1.0, 0.0, 0.0], 1.0),
    ];
    for (events, method) in first_events(&bodies, [10.0; 3], 2).iter().zip(Method::ALL) {
        let got: Vec<_> = events.iter().map(|e| (e.kind, e.a, e.b)).collect();
        assert_eq!(
            got,
            [(EventKind::Collision, 0, 1), (EventKind::Wall, 2, 1)],
            "{method}"
        );
    }
}
