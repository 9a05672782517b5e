//! Exact times of impact of two spheres ([Kaya16, eq. 3.9–3.12]) and of a sphere and a wall.
//!
//! The quadratic `a t^2 + 2 b t + c = 0` with `a = |dv|^2`, `b = dp·dv`, `c = |dp|^2 - s^2`
//! (`dp`, `dv` relative position and velocity, `s` the sum of radii) is solved only for
//! approaching pairs (`b < 0`); the earlier root is taken in the form
//! `t = c / (-b + sqrt(b^2 - a c))`, which has no cancellation because `-b > 0`. The
//! textbook form `(-b - sqrt(b^2 - a c)) / a` subtracts two nearly equal numbers when `a c` is
//! small (slow relative motion, near contact) and loses most digits.

use crate::event::{tie_key, RANK_COLLISION, RANK_WALL};
use crate::vector::{dot, mul_add, sub, Vec3};
use crate::world::{Motion, World};

/// Time from now until two spheres touch, or `None` if they never do.
///
/// `dp = p_b - p_a` and `dv = v_b - v_a` are the relative position and velocity now and
/// `contact_distance = r_a + r_b`. Pairs that are not approaching (`dp·dv >= 0`) never collide:
/// in particular a pair that is touching right after bouncing apart is not reported again.
/// Pairs that touch or overlap (by rounding) while approaching collide immediately (`Some(0)`).
/// Grazing paths (`disc <= 0`) do not collide.
///
/// ```
/// use broadphase_ccd::time_of_impact::sphere_sphere;
/// // Head-on: gap 2, closing speed 2.
/// assert_eq!(sphere_sphere([4.0, 0.0, 0.0], [-2.0, 0.0, 0.0], 2.0), Some(1.0));
/// // Separating: never.
/// assert_eq!(sphere_sphere([4.0, 0.0, 0.0], [2.0, 0.0, 0.0], 2.0), None);
/// ```
#[inline]
pub fn sphere_sphere(dp: Vec3, dv: Vec3, contact_distance: f64) -> Option<f64> {
    sphere_sphere_before(dp, dv, contact_distance, 0.0, f64::INFINITY)
}

/// [`sphere_sphere`] offset by `t0`, returning `None` early (before the square root) when the
/// absolute time `t0 + dt` is provably later than `bound`; otherwise exactly `t0 + dt`.
///
/// Since `sqrt(b^2 - a c) <= -b`, `dt >= c / (-2 b)`; the bound is shrunk by 1e-9 (far more
/// than the few ulps of rounding) so that a time that would compare `<= bound` is never
/// dropped, and ties at `bound` are kept.
#[inline(always)]
pub(crate) fn sphere_sphere_before(
    dp: Vec3,
    dv: Vec3,
    contact_distance: f64,
    t0: f64,
    bound: f64,
) -> Option<f64> {
    let b = dot(dp, dv);
    if b >= 0.0 {
        return None;
    }
    let c = dot(dp, dp) - contact_distance * contact_distance;
    impact_time_before(t0, b, c, || dot(dv, dv), bound)
}

/// The end of [`sphere_sphere_before`] from the coefficients `b = dp·dv < 0` and
/// `c = |dp|^2 - s^2` of an approaching pair, and `a() = |dv|^2` (evaluated only when
/// needed): finders that already computed the coefficients get bit-identical times.
#[inline(always)]
pub(crate) fn impact_time_before(
    t0: f64,
    b: f64,
    c: f64,
    a: impl FnOnce() -> f64,
    bound: f64,
) -> Option<f64> {
    debug_assert!(b < 0.0);
    if c <= 0.0 {
        return Some(t0);
    }
    if t0 + c / (-2.0 * b) * (1.0 - 1e-9) > bound {
        return None;
    }
    let a = a();
    let disc = b * b - a * c;
    if disc <= 0.0 {
        return None;
    }
    // A time beyond f64 (subnormal closing speed) is never.
    Some(t0 + c / (-b + disc.sqrt())).filter(|t| t.is_finite())
}

/// Time from now until a sphere at coordinate `p` with velocity `v` along one axis touches a
/// wall of the slab `[0, extent]`, and which wall (0 lower, 1 upper), or `None` if `v == 0`.
/// Only the wall the sphere moves towards is considered; a sphere already touching (or by
/// rounding slightly past) that wall hits it immediately.
#[inline]
pub fn sphere_wall(p: f64, v: f64, radius: f64, extent: f64) -> Option<(f64, u32)> {
    if v > 0.0 {
        Some((((extent - radius - p) / v).max(0.0), 1))
    } else if v < 0.0 {
        Some((((radius - p) / v).max(0.0), 0))
    } else {
        None
    }
}

/// Absolute time at which bodies `a < b` of `world` collide, from their stored motion states.
///
/// Both are brought to the later of their two state times first, so the result depends only on
/// the two bodies' states: every method computes bit-identical times for the same pair.
///
/// Returns `None` early when the time is provably later than `bound` (see
/// [`sphere_sphere_before`]); the result is the same whenever the time is `<= bound`.
#[inline]
pub(crate) fn pair_event_time_before(world: &World, a: usize, b: usize, bound: f64) -> Option<f64> {
    debug_assert!(a < b);
    motion_pair_time_before(&world.motion[a], &world.motion[b], bound)
}

/// [`pair_event_time_before`] on the motion states of bodies `a < b` (`ma` of `a`, `mb` of
/// `b`): the same arithmetic, for finders that keep copies of the states.
#[inline(always)]
pub(crate) fn motion_pair_time_before(ma: &Motion, mb: &Motion, bound: f64) -> Option<f64> {
    let t0 = ma.time.max(mb.time);
    let pa = if ma.time == t0 {
        ma.position
    } else {
        mul_add(ma.position, t0 - ma.time, ma.velocity)
    };
    let pb = if mb.time == t0 {
        mb.position
    } else {
        mul_add(mb.position, t0 - mb.time, mb.velocity)
    };
    let dv = sub(mb.velocity, ma.velocity);
    sphere_sphere_before(sub(pb, pa), dv, ma.radius + mb.radius, t0, bound)
}

/// Earliest wall hit of body `i`: `(absolute time, tie key)`; ties between walls go to the
/// smaller wall index.
#[inline(always)]
pub(crate) fn wall_event(world: &World, i: usize) -> Option<(f64, u64)> {
    // Compiled per dimension: a loop of constant length over constant indices.
    if world.dim == 2 {
        wall_event_in::<2>(world, i)
    } else {
        wall_event_in::<3>(world, i)
    }
}

/// [`wall_event`] in `D` dimensions.
#[inline(always)]
fn wall_event_in<const D: usize>(world: &World, i: usize) -> Option<(f64, u64)> {
    let m = &world.motion[i];
    let (p, v, r) = (m.position, m.velocity, m.radius);
    // Selects rather than branches (the walls' order is a coin flip); an axis without a hit
    // (`v == 0`) or with an infinite time is never taken, and neither is ever returned.
    let (mut best_dt, mut best_wall) = (f64::INFINITY, 0);
    for axis in 0..D {
        if let Some((dt, side)) = sphere_wall(p[axis], v[axis], r, world.size[axis]) {
            let take = dt < best_dt;
            best_dt = crate::simd::select_f64(take, dt, best_dt);
            best_wall = std::hint::select_unpredictable(take, 2 * axis as u32 + side, best_wall);
        }
    }
    // A time beyond f64 (subnormal speed far from the wall) is never.
    let time = m.time + best_dt;
    time.is_finite()
        .then(|| (time, tie_key(RANK_WALL, i as u32, best_wall)))
}

/// The collision tie key of bodies `a < b`.
#[inline]
pub(crate) fn collision_key(a: usize, b: usize) -> u64 {
    tie_key(RANK_COLLISION, a as u32, b as u32)
}
