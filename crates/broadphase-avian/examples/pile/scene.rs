//! The pile scene shared by the `pile` example and the tests: N boxes and balls falling on a
//! static ground, laid out on a jittered grid from a seed.
#![allow(dead_code)]

use avian3d::prelude::*;
use bevy::prelude::*;

/// A small deterministic generator (SplitMix64), so that both runs of a comparison and every
/// test see the same scene.
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A float in `[lo, hi)`.
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        let unit = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        lo + (hi - lo) * unit
    }
}

/// The grid width of a pile of `n` bodies: about ten layers high.
pub fn pile_width(n: usize) -> usize {
    ((n as f64 / 10.0).sqrt().ceil() as usize).max(1)
}

/// Spawns the ground: a static box under the whole pile.
pub fn spawn_ground(world: &mut World, n: usize) -> Entity {
    let half = pile_width(n) as f32 * 0.75 + 5.0;
    world
        .spawn((
            RigidBody::Static,
            Collider::cuboid(2.0 * half, 1.0, 2.0 * half),
            Transform::from_xyz(0.0, -0.5, 0.0),
        ))
        .id()
}

/// Spawns `n` dynamic bodies, alternately boxes and balls of random size, on a jittered grid
/// with spacing 1.5 above the ground; returns them in spawn order.
pub fn spawn_pile(world: &mut World, n: usize, seed: u64) -> Vec<Entity> {
    let mut rng = Rng::new(seed);
    let width = pile_width(n);
    let offset = (width as f32 - 1.0) * 0.75;
    let mut bodies = Vec::with_capacity(n);
    for i in 0..n {
        let (x, z, y) = (i % width, (i / width) % width, i / (width * width));
        let position = Vec3::new(
            x as f32 * 1.5 - offset + rng.range(-0.2, 0.2),
            1.0 + y as f32 * 1.5 + rng.range(0.0, 0.3),
            z as f32 * 1.5 - offset + rng.range(-0.2, 0.2),
        );
        let rotation = Quat::from_euler(
            EulerRot::XYZ,
            rng.range(0.0, 3.0),
            rng.range(0.0, 3.0),
            rng.range(0.0, 3.0),
        );
        let collider = if i % 2 == 0 {
            Collider::cuboid(
                rng.range(0.4, 1.0),
                rng.range(0.4, 1.0),
                rng.range(0.4, 1.0),
            )
        } else {
            Collider::sphere(rng.range(0.2, 0.5))
        };
        let entity = world
            .spawn((
                RigidBody::Dynamic,
                collider,
                Transform::from_translation(position).with_rotation(rotation),
            ))
            .id();
        bodies.push(entity);
    }
    bodies
}
