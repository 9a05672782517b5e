//! The world: an axis-aligned box with static walls and the bodies' motion state.

use crate::body::Body;
use crate::error::CcdError;
use crate::vector::{dot, mul_add, sub, Vec3};

/// Largest magnitude of a world extent, radius, mass or velocity component a [`World`]
/// accepts: with extents and speeds up to `1e75`, the squared distances and speeds and their
/// products in the time of impact (up to about `1e302`) stay finite.
pub const MAX_MAGNITUDE: f64 = 1e75;

/// Smallest magnitude of a world extent, radius, mass or non-zero velocity component a
/// [`World`] accepts: below it, squared speeds underflow to zero and a slow approach would
/// be taken for a miss.
pub const MIN_MAGNITUDE: f64 = 1e-75;

fn in_range(x: f64) -> bool {
    (MIN_MAGNITUDE..=MAX_MAGNITUDE).contains(&x.abs())
}

/// The bodies of a continuous-time simulation inside the box `[0, size]` (walls on every face).
///
/// Motion state is stored per body as (position, velocity, time of that position): a body is
/// only brought up to date when it takes part in an event, so an event costs O(1) state
/// updates and memory is O(n). Read positions at any time with [`World::position_at`].
///
/// ```
/// use broadphase_ccd::{Body, MassModel, World};
/// let bodies = [
///     Body::new([1.0, 1.0, 0.0], [1.0, 0.0, 0.0], 0.5, MassModel::Equal, 2),
///     Body::new([4.0, 1.0, 0.0], [0.0, 0.0, 0.0], 0.5, MassModel::Equal, 2),
/// ];
/// let world = World::new(2, [10.0, 2.0, 0.0], &bodies).unwrap();
/// assert_eq!(world.len(), 2);
/// assert_eq!(world.position_at(0, 2.0), [3.0, 1.0, 0.0]);
/// ```
#[derive(Debug, Clone)]
pub struct World {
    pub(crate) dim: usize,
    pub(crate) size: Vec3,
    pub(crate) motion: Vec<Motion>,
    pub(crate) mass: Vec<f64>,
}

/// A body's motion state: centre `position` at `time`, constant `velocity`, and its radius.
///
/// Packed into one 64-byte cache line because the finders read all four together for every
/// candidate pair.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C, align(64))]
pub(crate) struct Motion {
    pub(crate) position: Vec3,
    pub(crate) time: f64,
    pub(crate) velocity: Vec3,
    pub(crate) radius: f64,
}

impl World {
    /// Validates and builds a world of `bodies` at time 0 in the box `[0, size]`.
    ///
    /// Errors: dimension not 2 or 3, no bodies, non-finite or non-positive sizes, radii or
    /// masses, extents, radii, masses or non-zero velocity components of magnitude outside
    /// [`MIN_MAGNITUDE`, `MAX_MAGNITUDE`], bodies outside the box, or initially overlapping
    /// bodies (checked in O(n log n) by a sweep along x).
    pub fn new(dim: usize, size: Vec3, bodies: &[Body]) -> Result<Self, CcdError> {
        if dim != 2 && dim != 3 {
            return Err(CcdError::BadDimension(dim));
        }
        if bodies.is_empty() {
            return Err(CcdError::NoObjects);
        }
        if bodies.len() >= (1 << 31) {
            return Err(CcdError::TooManyObjects(bodies.len()));
        }
        let mut size = size;
        if dim == 2 {
            size[2] = 0.0;
        }
        if size[..dim].iter().any(|s| !s.is_finite() || *s <= 0.0) {
            return Err(CcdError::BadWorldSize(size));
        }
        if let Some(&extent) = size[..dim].iter().find(|s| !in_range(**s)) {
            return Err(CcdError::OutOfRange {
                what: "world extent".to_string(),
                value: extent,
            });
        }
        let n = bodies.len();
        let mut world = World {
            dim,
            size,
            motion: Vec::with_capacity(n),
            mass: Vec::with_capacity(n),
        };
        for (index, body) in bodies.iter().enumerate() {
            let (mut p, mut v) = (body.position, body.velocity);
            if dim == 2 {
                p[2] = 0.0;
                v[2] = 0.0;
            }
            if !(body.radius.is_finite() && body.radius > 0.0) {
                return Err(CcdError::BadRadius {
                    index,
                    radius: body.radius,
                });
            }
            if !(body.mass.is_finite() && body.mass > 0.0) {
                return Err(CcdError::BadMass {
                    index,
                    mass: body.mass,
                });
            }
            if p.iter().chain(v.iter()).any(|c| !c.is_finite()) {
                return Err(CcdError::NotFinite { index });
            }
            let out_of_range = |what: &str, value: f64| CcdError::OutOfRange {
                what: format!("object {index}: {what}"),
                value,
            };
            if !in_range(body.radius) {
                return Err(out_of_range("radius", body.radius));
            }
            if !in_range(body.mass) {
                return Err(out_of_range("mass", body.mass));
            }
            if let Some(&speed) = v.iter().find(|c| **c != 0.0 && !in_range(**c)) {
                return Err(out_of_range("velocity component", speed));
            }
            if (0..dim).any(|k| p[k] - body.radius < 0.0 || p[k] + body.radius > size[k]) {
                return Err(CcdError::OutsideWorld {
                    index,
                    radius: body.radius,
                });
            }
            world.motion.push(Motion {
                position: p,
                time: 0.0,
                velocity: v,
                radius: body.radius,
            });
            world.mass.push(body.mass);
        }
        if let Some((a, b)) = world.first_overlap() {
            return Err(CcdError::InitialOverlap { a, b });
        }
        Ok(world)
    }

    /// Finds a pair of bodies that overlap (strictly) at their stored positions, sweeping
    /// along x; the bodies must all be stored at the same time.
    fn first_overlap(&self) -> Option<(usize, usize)> {
        let mut order: Vec<u32> = (0..self.len() as u32).collect();
        let low = |i: u32| self.motion[i as usize].position[0] - self.motion[i as usize].radius;
        order.sort_unstable_by(|&a, &b| low(a).total_cmp(&low(b)));
        for (k, &i) in order.iter().enumerate() {
            let i = i as usize;
            let high = self.motion[i].position[0] + self.motion[i].radius;
            for &j in &order[k + 1..] {
                let j = j as usize;
                if low(j as u32) > high {
                    break;
                }
                let d = sub(self.motion[i].position, self.motion[j].position);
                let sum = self.motion[i].radius + self.motion[j].radius;
                if dot(d, d) < sum * sum {
                    return Some((i.min(j), i.max(j)));
                }
            }
        }
        None
    }

    /// Number of bodies.
    pub fn len(&self) -> usize {
        self.motion.len()
    }

    /// Always `false`: a world holds at least one body.
    pub fn is_empty(&self) -> bool {
        self.motion.is_empty()
    }

    /// 2 (circles) or 3 (spheres).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Extents of the world box `[0, size]` (`size[2] == 0` in 2D).
    pub fn size(&self) -> Vec3 {
        self.size
    }

    /// Radius of body `i`.
    pub fn radius(&self, i: usize) -> f64 {
        self.motion[i].radius
    }

    /// Mass of body `i`.
    pub fn mass(&self, i: usize) -> f64 {
        self.mass[i]
    }

    /// Current velocity of body `i`.
    pub fn velocity(&self, i: usize) -> Vec3 {
        self.motion[i].velocity
    }

    /// Centre of body `i` at time `t`, assuming no event of `i` between its last event and `t`
    /// (true for any `t` up to the simulation's next event).
    pub fn position_at(&self, i: usize, t: f64) -> Vec3 {
        mul_add(
            self.motion[i].position,
            t - self.motion[i].time,
            self.motion[i].velocity,
        )
    }

    /// Total kinetic energy `sum m v^2 / 2`.
    pub fn kinetic_energy(&self) -> f64 {
        (0..self.len())
            .map(|i| 0.5 * self.mass[i] * dot(self.motion[i].velocity, self.motion[i].velocity))
            .sum()
    }

    /// Total momentum `sum m v`.
    pub fn momentum(&self) -> Vec3 {
        let mut total = [0.0; 3];
        for i in 0..self.len() {
            total = mul_add(total, self.mass[i], self.motion[i].velocity);
        }
        total
    }

    /// The largest overlap depth relative to the sum of radii, over all pairs at time `t`
    /// (0 if no pair overlaps). O(n log n + overlapping candidates); meant for validation.
    pub fn max_relative_overlap_at(&self, t: f64) -> f64 {
        let positions: Vec<Vec3> = (0..self.len()).map(|i| self.position_at(i, t)).collect();
        let mut order: Vec<usize> = (0..self.len()).collect();
        let low = |i: usize| positions[i][0] - self.motion[i].radius;
        order.sort_unstable_by(|&a, &b| low(a).total_cmp(&low(b)));
        let mut worst = 0.0f64;
        for (k, &i) in order.iter().enumerate() {
            let high = positions[i][0] + self.motion[i].radius;
            for &j in &order[k + 1..] {
                if low(j) > high {
                    break;
                }
                let d = sub(positions[i], positions[j]);
                let sum = self.motion[i].radius + self.motion[j].radius;
                let distance = dot(d, d).sqrt();
                worst = worst.max((sum - distance) / sum);
            }
        }
        worst
    }

    /// The largest distance by which any body sticks out of the box at time `t`, relative to
    /// its radius (0 if every body is inside).
    pub fn max_relative_wall_penetration_at(&self, t: f64) -> f64 {
        let mut worst = 0.0f64;
        for i in 0..self.len() {
            let p = self.position_at(i, t);
            let r = self.motion[i].radius;
            for k in 0..self.dim {
                worst = worst.max((r - p[k]) / r).max((p[k] + r - self.size[k]) / r);
            }
        }
        worst
    }
}
