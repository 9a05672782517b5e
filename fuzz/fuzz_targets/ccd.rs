//! The event-driven simulation on tiny scenes: a handful of circles or spheres in a small box.
//!
//! Checked, for every input:
//! - invalid inputs (NaN or infinite values, bad radii, bodies outside the box, overlapping
//!   start) give the typed error the input calls for, never a panic;
//! - at every event time no two bodies overlap by more than `OVERLAP_TOLERANCE` of their
//!   summed radii plus `ROUNDING_TOLERANCE` of the box size (positions are rounded at the
//!   scale of the box, which matters for tiny radii), and no body sticks out of the box by
//!   more than the same bound for its radius;
//! - every collision conserves momentum and (when it is representable) kinetic energy, to
//!   `CONSERVATION_TOLERANCE` relative to the magnitudes involved; a wall hit reverses exactly
//!   the velocity component along its axis;
//! - swept-bvh (with fuzzed options) and calendar give the same events as all-pairs: same
//!   kind and bodies, times equal to `TIME_TOLERANCE` relative;
//! - the calendar's vector and scalar kernels give bit-identical events.
#![no_main]

use arbitrary::Arbitrary;
use broadphase_ccd::{
    Body, CcdError, Event, EventKind, FinderOptions, MassModel, Method, Simulation,
    SweptBvhOptions, World, MAX_MAGNITUDE, MIN_MAGNITUDE,
};
use libfuzzer_sys::fuzz_target;

/// Largest overlap depth allowed at an event, relative to the sum of the two radii.
const OVERLAP_TOLERANCE: f64 = 1e-9;
/// Absolute rounding allowance of positions, relative to the largest box extent.
const ROUNDING_TOLERANCE: f64 = 1e-12;
/// Largest relative change of momentum (collisions) and kinetic energy (every event).
const CONSERVATION_TOLERANCE: f64 = 1e-9;
/// Largest relative difference between the methods' times of the same event.
const TIME_TOLERANCE: f64 = 1e-9;
/// Events simulated per method.
const MAX_EVENTS: usize = 300;

/// A value: mostly on a small grid (exact contacts, shared coordinates), sometimes raw.
#[derive(Arbitrary, Debug, Clone, Copy)]
enum Value {
    /// `k / 8`.
    Grid(u8),
    /// Any float, including NaN, infinities, subnormals and huge values.
    Raw(f64),
}

#[derive(Arbitrary, Debug)]
struct InputBody {
    /// Fractions of the box along each axis (grid) or raw coordinates.
    position: [Value; 3],
    velocity: [i8; 3],
    /// A raw velocity scale: mostly 1, occasionally hostile.
    velocity_scale: Option<Value>,
    radius: Value,
    mass: Option<Value>,
}

#[derive(Arbitrary, Debug)]
struct Input {
    three_d: bool,
    size: [u8; 3],
    equal_masses: bool,
    bodies: Vec<InputBody>,
    initial_time_step: u8,
    grow: u8,
    shrink: u8,
    rebuild_every: u8,
}

fn value(v: Value, grid_scale: f64) -> f64 {
    match v {
        Value::Grid(k) => f64::from(k) / 8.0 * grid_scale,
        Value::Raw(x) => x,
    }
}

/// Sum of `|x|` over the components, for relative tolerances.
fn norm1(v: [f64; 3]) -> f64 {
    v.iter().map(|x| x.abs()).sum()
}

/// The error `World::new` must give for these bodies, if any, computed independently.
fn expected_error(dim: usize, size: [f64; 3], bodies: &[Body]) -> Option<&'static str> {
    if bodies.is_empty() {
        return Some("no objects");
    }
    for b in bodies {
        if !(b.radius.is_finite() && b.radius > 0.0) {
            return Some("radius");
        }
        if !(b.mass.is_finite() && b.mass > 0.0) {
            return Some("mass");
        }
        if b.position[..dim]
            .iter()
            .chain(&b.velocity[..dim])
            .any(|c| !c.is_finite())
        {
            return Some("not finite");
        }
        let in_range = |x: f64| (MIN_MAGNITUDE..=MAX_MAGNITUDE).contains(&x.abs());
        if !in_range(b.radius)
            || !in_range(b.mass)
            || b.velocity[..dim].iter().any(|&c| c != 0.0 && !in_range(c))
        {
            return Some("out of range");
        }
        if (0..dim).any(|k| b.position[k] - b.radius < 0.0 || b.position[k] + b.radius > size[k]) {
            return Some("outside");
        }
    }
    for (i, a) in bodies.iter().enumerate() {
        for b in &bodies[i + 1..] {
            let d: f64 = (0..dim)
                .map(|k| (a.position[k] - b.position[k]).powi(2))
                .sum();
            if d < (a.radius + b.radius).powi(2) {
                return Some("overlap");
            }
        }
    }
    None
}

fn matches_kind(expected: &str, error: &CcdError) -> bool {
    match error {
        CcdError::NoObjects => expected == "no objects",
        CcdError::BadRadius { .. } => expected == "radius",
        CcdError::BadMass { .. } => expected == "mass",
        CcdError::NotFinite { .. } => expected == "not finite",
        CcdError::OutsideWorld { .. } => expected == "outside",
        CcdError::OutOfRange { .. } => expected == "out of range",
        CcdError::InitialOverlap { .. } => expected == "overlap",
        _ => false,
    }
}

/// No overlap between bodies and no body out of the box at time `t`, within the tolerances.
fn check_positions(world: &World, t: f64, event: &Event, method: Method) {
    let dim = world.dim();
    let size = world.size();
    let rounding = ROUNDING_TOLERANCE * size.iter().fold(0.0f64, |m, s| m.max(*s));
    let positions: Vec<[f64; 3]> = (0..world.len()).map(|i| world.position_at(i, t)).collect();
    for i in 0..world.len() {
        let r = world.radius(i);
        for k in 0..dim {
            let out = (r - positions[i][k]).max(positions[i][k] + r - size[k]);
            assert!(
                out <= OVERLAP_TOLERANCE * r + rounding,
                "{method}: body {i} out of the box by {out} on axis {k} at {event}"
            );
        }
        for j in i + 1..world.len() {
            let sum = r + world.radius(j);
            let distance = (0..dim)
                .map(|k| (positions[i][k] - positions[j][k]).powi(2))
                .sum::<f64>()
                .sqrt();
            assert!(
                sum - distance <= OVERLAP_TOLERANCE * sum + rounding,
                "{method}: bodies {i} and {j} overlap by {} at {event}",
                sum - distance
            );
        }
    }
}

/// Runs `method` for at most `MAX_EVENTS` events, checking the physics after each.
fn events_of(world: &World, method: Method, options: &FinderOptions) -> Vec<Event> {
    let mut sim = Simulation::new(world.clone(), method, options).expect("validated options");
    let mut events = Vec::with_capacity(MAX_EVENTS);
    while events.len() < MAX_EVENTS {
        let before = sim.world().clone();
        let Some(event) = sim.next_event() else { break };
        assert!(
            event.time.is_finite() && event.time >= 0.0,
            "{method}: event time {event}"
        );
        let after = sim.world();
        check_positions(after, event.time, &event, method);
        let (a, b) = (event.a as usize, event.b as usize);
        match event.kind {
            EventKind::Collision => {
                let momentum = |w: &World, i: usize| w.velocity(i).map(|v| v * w.mass(i));
                let energy = |w: &World, i: usize| {
                    0.5 * w.mass(i) * w.velocity(i).iter().map(|v| v * v).sum::<f64>()
                };
                let (pa, pb) = (momentum(&before, a), momentum(&before, b));
                let (qa, qb) = (momentum(after, a), momentum(after, b));
                let scale = norm1(pa) + norm1(pb);
                for k in 0..3 {
                    let change = (pa[k] + pb[k] - qa[k] - qb[k]).abs();
                    assert!(
                        change <= CONSERVATION_TOLERANCE * scale,
                        "{method}: momentum change {change} of {scale} at {event}"
                    );
                }
                let e0 = energy(&before, a) + energy(&before, b);
                let e1 = energy(after, a) + energy(after, b);
                if e0.is_finite() {
                    assert!(
                        (e0 - e1).abs() <= CONSERVATION_TOLERANCE * e0,
                        "{method}: energy {e0} -> {e1} at {event}"
                    );
                }
            }
            EventKind::Wall => {
                // A wall hit reverses the one component along the wall's axis, exactly.
                let axis = event.b as usize / 2;
                let (v0, v1) = (before.velocity(a), after.velocity(a));
                for k in 0..3 {
                    let expected = if k == axis { -v0[k] } else { v0[k] };
                    assert_eq!(
                        v1[k], expected,
                        "{method}: wall hit velocity {v0:?} -> {v1:?} at {event}"
                    );
                }
            }
        }
        events.push(event);
    }
    events
}

fuzz_target!(|input: Input| {
    let dim = if input.three_d { 3 } else { 2 };
    let size = input.size.map(|s| 1.0 + f64::from(s % 32) * 0.5);
    let model = if input.equal_masses {
        MassModel::Equal
    } else {
        MassModel::ProportionalToVolume
    };
    let bodies: Vec<Body> = input
        .bodies
        .iter()
        .take(if dim == 2 { 10 } else { 8 })
        .map(|b| {
            let mut position = [0.0; 3];
            for k in 0..3 {
                position[k] = value(b.position[k], size[k] / 32.0);
            }
            let scale = b.velocity_scale.map_or(1.0, |v| value(v, 1.0));
            let velocity = b.velocity.map(|v| f64::from(v) / 16.0 * scale);
            let radius = value(b.radius, 1.0 / 16.0);
            let mut body = Body::new(position, velocity, radius, model, dim);
            if let Some(mass) = b.mass {
                body.mass = value(mass, 1.0);
            }
            body
        })
        .collect();
    let world = match World::new(dim, size, &bodies) {
        Ok(world) => {
            assert_eq!(
                expected_error(dim, size, &bodies),
                None,
                "accepted invalid bodies {bodies:?}"
            );
            world
        }
        Err(error) => {
            let text = error.to_string();
            assert!(!text.contains('\n'), "multi-line error: {text}");
            let expected = expected_error(dim, size, &bodies);
            assert!(
                expected.is_some_and(|e| matches_kind(e, &error)),
                "unexpected error {error:?} (expected {expected:?}) for {bodies:?}"
            );
            return;
        }
    };
    let options = FinderOptions {
        swept_bvh: SweptBvhOptions {
            initial_time_step: (f64::from(input.initial_time_step) + 1.0) / 64.0,
            grow: 1.25 + f64::from(input.grow % 16) * 0.25,
            shrink: (f64::from(input.shrink % 16) + 1.0) / 16.0,
            rebuild_every: u32::from(input.rebuild_every % 8) + 1,
        },
        simd: true,
    };
    let reference = events_of(&world, Method::AllPairs, &options);
    let mut calendar = Vec::new();
    for method in [Method::SweptBvh, Method::Calendar] {
        let got = events_of(&world, method, &options);
        for (k, (x, y)) in reference.iter().zip(&got).enumerate() {
            assert!(
                x.matches(y, TIME_TOLERANCE),
                "{method} differs at event {k}: all-pairs {x}, {method} {y}"
            );
        }
        assert_eq!(reference.len(), got.len(), "{method}: event count");
        calendar = got;
    }
    // The calendar's scalar kernels give the vector kernels' events bit for bit.
    let scalar = events_of(
        &world,
        Method::Calendar,
        &FinderOptions {
            simd: false,
            ..options
        },
    );
    let bits = |e: &Event| (e.kind, e.a, e.b, e.time.to_bits());
    assert_eq!(
        calendar.iter().map(bits).collect::<Vec<_>>(),
        scalar.iter().map(bits).collect::<Vec<_>>(),
        "calendar: vector and scalar kernels differ"
    );
});
