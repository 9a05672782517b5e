//! Collision response: elastic impulse between two spheres and reflection on a wall.

use crate::vector::{dot, mul_add, sub, Vec3};
use crate::world::World;

/// Velocities after an elastic collision of masses `ma`, `mb` with velocities `va`, `vb` along
/// the contact direction `normal` (any length, from a to b).
///
/// The impulse `J = 2 (n·(vb - va)) / ((ma + mb) |n|^2)` reverses the normal relative velocity
/// and conserves momentum and kinetic energy; the tangential components are untouched.
///
/// ```
/// use broadphase_ccd::response::elastic_velocities;
/// // Equal masses, head-on: they exchange velocities.
/// let (va, vb) = elastic_velocities(1.0, [1.0, 0.0, 0.0], 1.0, [-1.0, 0.0, 0.0], [2.0, 0.0, 0.0]);
/// assert_eq!((va, vb), ([-1.0, 0.0, 0.0], [1.0, 0.0, 0.0]));
/// ```
#[inline]
pub fn elastic_velocities(ma: f64, va: Vec3, mb: f64, vb: Vec3, normal: Vec3) -> (Vec3, Vec3) {
    let approach = dot(normal, sub(vb, va));
    let impulse = 2.0 * approach / ((ma + mb) * dot(normal, normal));
    (
        mul_add(va, impulse * mb, normal),
        mul_add(vb, -impulse * ma, normal),
    )
}

/// Moves bodies `a` and `b` to time `t` and applies the elastic impulse between them.
pub(crate) fn resolve_collision(world: &mut World, a: usize, b: usize, t: f64) {
    let pa = world.position_at(a, t);
    let pb = world.position_at(b, t);
    let (va, vb) = elastic_velocities(
        world.mass[a],
        world.motion[a].velocity,
        world.mass[b],
        world.motion[b].velocity,
        sub(pb, pa),
    );
    world.motion[a].position = pa;
    world.motion[b].position = pb;
    world.motion[a].time = t;
    world.motion[b].time = t;
    world.motion[a].velocity = va;
    world.motion[b].velocity = vb;
}

/// Moves body `i` to time `t` onto wall `wall` (`2 * axis + side`) and reflects its velocity.
pub(crate) fn resolve_wall(world: &mut World, i: usize, wall: u32, t: f64) {
    let axis = (wall / 2) as usize;
    let mut p = world.position_at(i, t);
    // Snap onto the wall: the contact position is known exactly, which stops rounding drift.
    p[axis] = if wall.is_multiple_of(2) {
        world.motion[i].radius
    } else {
        world.size[axis] - world.motion[i].radius
    };
    world.motion[i].position = p;
    world.motion[i].time = t;
    world.motion[i].velocity[axis] = -world.motion[i].velocity[axis];
}
