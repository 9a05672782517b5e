//! The narrow phase: exact shape intersection tests of the broad phase's pairs.

use parry3d::query::intersection_test;

use crate::motion::World;

/// Tests pairs of objects with parry3d's exact shape intersection (GJK/EPA or the
/// specialised routines), giving the "Actual Collisions" of [Zych16, ch. 4.1].
///
/// ```
/// use broadphase_sim::{narrow_phase::shapes_intersect, Scene, World};
/// let world = World::new(&Scene { objects: 2, ..Default::default() }).unwrap();
/// assert!(shapes_intersect(&world, 0, 0));
/// ```
pub fn shapes_intersect(world: &World, a: usize, b: usize) -> bool {
    let (sa, sb) = (world.shape(a), world.shape(b));
    // Every pair of our convex shapes is supported; treat the impossible error as a miss.
    intersection_test(
        &world.pose(a),
        sa.shape.as_ref(),
        &world.pose(b),
        sb.shape.as_ref(),
    )
    .map(|r| r.intersecting)
    .unwrap_or(false)
}

/// Counts the pairs (object indices) whose shapes intersect. O(pairs).
pub fn count_collisions(world: &World, pairs: impl IntoIterator<Item = (u32, u32)>) -> usize {
    pairs
        .into_iter()
        .filter(|&(a, b)| shapes_intersect(world, a as usize, b as usize))
        .count()
}

/// Exact tests with temporal coherence: a pair whose two objects kept still since its last
/// test keeps its result, as a physics engine keeps the contacts of resting bodies. The
/// count is the same as [`count_collisions`]; only pairs with a moved object are re-tested.
///
/// ```
/// use broadphase_sim::{narrow_phase::ContactCache, Scene, World};
/// let mut world = World::new(&Scene { objects: 2, ..Default::default() }).unwrap();
/// let mut cache = ContactCache::default();
/// world.step();
/// assert_eq!(cache.count(&world, [(0, 1)]), broadphase_sim::narrow_phase::count_collisions(&world, [(0, 1)]));
/// ```
#[derive(Debug, Default)]
pub struct ContactCache {
    /// Per object pair (smaller index first): the result and the call that last saw it.
    results: rustc_hash::FxHashMap<(u32, u32), (bool, u64)>,
    moved: Vec<bool>,
    calls: u64,
}

impl ContactCache {
    /// Counts the pairs whose shapes intersect after the world's last step. Call it once per
    /// step: it takes the step's moved objects from `world`. O(pairs) lookups plus a shape
    /// test per pair with a moved object.
    pub fn count(&mut self, world: &World, pairs: impl IntoIterator<Item = (u32, u32)>) -> usize {
        self.calls += 1;
        self.moved.clear();
        self.moved.resize(world.len(), false);
        for &i in world.moving().iter().chain(world.spawned()) {
            self.moved[i as usize] = true;
        }
        let mut count = 0;
        let mut seen = 0usize;
        for (a, b) in pairs {
            let key = (a.min(b), a.max(b));
            seen += 1;
            let moved = self.moved[a as usize] || self.moved[b as usize];
            let entry = self.results.entry(key);
            let hit = match entry {
                std::collections::hash_map::Entry::Occupied(mut e) if !moved => {
                    e.get_mut().1 = self.calls;
                    e.get().0
                }
                entry => {
                    let hit = shapes_intersect(world, a as usize, b as usize);
                    entry.insert_entry((hit, self.calls));
                    hit
                }
            };
            count += usize::from(hit);
        }
        // Forget pairs that are no longer reported, now and then (amortised O(1)).
        if self.results.len() > 2 * seen + 1024 {
            let calls = self.calls;
            self.results.retain(|_, (_, last)| *last == calls);
        }
        count
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::Scene;
    use crate::shapes::PlacedShape;
    use glam::{Quat, Vec3};
    use parry3d::math::Pose;
    use parry3d::shape::{Ball, Capsule, Cone, Cuboid, Cylinder, SharedShape};

    fn hit(a: &SharedShape, pa: Vec3, ra: Quat, b: &SharedShape, pb: Vec3) -> bool {
        intersection_test(
            &Pose::from_parts(pa, ra),
            a.as_ref(),
            &Pose::from_translation(pb),
            b.as_ref(),
        )
        .unwrap()
        .intersecting
    }

    #[test]
    fn known_shape_pairs() {
        let ball = SharedShape::new(Ball::new(1.0));
        let cube = SharedShape::new(Cuboid::new(Vec3::splat(1.0)));
        let capsule = SharedShape::new(Capsule::new_y(1.0, 0.5));
        let cylinder = SharedShape::new(Cylinder::new(1.0, 1.0));
        let cone = SharedShape::new(Cone::new(1.0, 1.0));
        let id = Quat::IDENTITY;
        // Balls: centers 1.9 apart overlap, 2.1 apart do not.
        assert!(hit(&ball, Vec3::ZERO, id, &ball, Vec3::X * 1.9));
        assert!(!hit(&ball, Vec3::ZERO, id, &ball, Vec3::X * 2.1));
        // A ball near a cube's corner: inside the cube's AABB+radius but not touching it.
        assert!(!hit(&cube, Vec3::ZERO, id, &ball, Vec3::splat(1.0 + 0.7)));
        assert!(hit(&cube, Vec3::ZERO, id, &ball, Vec3::splat(1.0 + 0.5)));
        // A cube rotated 45° about z reaches √2 along x.
        let rot = Quat::from_rotation_z(std::f32::consts::FRAC_PI_4);
        assert!(hit(&cube, Vec3::ZERO, rot, &ball, Vec3::X * 2.3));
        assert!(!hit(&cube, Vec3::ZERO, id, &ball, Vec3::X * 2.3));
        // Capsule tip reaches 1.5 along y.
        assert!(hit(&capsule, Vec3::ZERO, id, &ball, Vec3::Y * 2.4));
        assert!(!hit(&capsule, Vec3::ZERO, id, &ball, Vec3::Y * 2.6));
        // The cone's apex is at +y: a ball beside the apex misses, beside the base hits.
        assert!(!hit(&cone, Vec3::ZERO, id, &ball, Vec3::new(1.2, 0.9, 0.0)));
        assert!(hit(&cone, Vec3::ZERO, id, &ball, Vec3::new(1.2, -0.9, 0.0)));
        // Cylinder vs cylinder side by side.
        assert!(hit(&cylinder, Vec3::ZERO, id, &cylinder, Vec3::X * 1.9));
        assert!(!hit(
            &cylinder,
            Vec3::ZERO,
            id,
            &cylinder,
            Vec3::new(1.5, 0.0, 1.5)
        ));
    }

    #[test]
    fn every_kind_pair_is_supported_and_counted() {
        let world = World::new(&Scene {
            objects: 400,
            density: 0.5,
            ..Default::default()
        })
        .unwrap();
        let n = world.len() as u32;
        let mut overlapping = Vec::new();
        for a in 0..n {
            for b in a + 1..n {
                if world.aabbs()[a as usize].overlaps(&world.aabbs()[b as usize]) {
                    overlapping.push((a, b));
                }
            }
        }
        let actual = count_collisions(&world, overlapping.iter().copied());
        assert!(
            actual > 0 && actual < overlapping.len(),
            "{actual} of {}",
            overlapping.len()
        );
        for kind_a in crate::ShapeKind::ALL {
            for kind_b in crate::ShapeKind::ALL {
                let (a, b) = (
                    (0..n)
                        .find(|&i| world.shape(i as usize).kind == kind_a)
                        .unwrap(),
                    (0..n)
                        .find(|&i| world.shape(i as usize).kind == kind_b)
                        .unwrap(),
                );
                let (sa, sb) = (world.shape(a as usize), world.shape(b as usize));
                assert!(intersection_test(
                    &world.pose(a as usize),
                    sa.shape.as_ref(),
                    &world.pose(b as usize),
                    sb.shape.as_ref()
                )
                .is_ok());
            }
        }
        let _ = PlacedShape::static_box(Vec3::ONE);
    }
}
