//! Elastic sphere–sphere bounces ([Owen18, Materials and Methods]).

use broadphase::{BroadPhase, CollisionFilter, Pair, PairEvents, ProxyId, ProxyKind, SortAndSweep};

use super::World;
use crate::scene::ShapeKind;

/// Elastic sphere–sphere bounces, found with a private sort-and-sweep so that the motion
/// never depends on the algorithm being measured.
#[derive(Debug)]
pub(super) struct SphereContacts {
    /// Object index and radius of each sphere, by slot of `broad_phase`.
    spheres: Vec<(u32, f32)>,
    ids: Vec<ProxyId>,
    broad_phase: SortAndSweep,
    events: PairEvents,
    pairs: Vec<Pair>,
}

impl SphereContacts {
    pub(super) fn new(world: &World) -> Self {
        let mut contacts = Self {
            spheres: Vec::new(),
            ids: Vec::new(),
            broad_phase: SortAndSweep::new(),
            events: PairEvents::new(),
            pairs: Vec::new(),
        };
        for i in 0..world.len() {
            let shape = world.shape(i);
            if shape.kind != ShapeKind::Sphere {
                continue;
            }
            if let (Some(ball), Ok(aabb)) = (shape.shape.as_ball(), world.box_of(i)) {
                if let Ok(id) =
                    contacts
                        .broad_phase
                        .insert(aabb, world.kind(i), CollisionFilter::ALL)
                {
                    contacts.spheres.push((i as u32, ball.radius));
                    contacts.ids.push(id);
                }
            }
        }
        contacts
    }

    /// Reflects the normal velocities of approaching overlapping spheres (masses ∝ r³,
    /// stationary spheres immovable).
    pub(super) fn bounce(&mut self, world: &mut World) {
        for (k, &(i, _)) in self.spheres.iter().enumerate() {
            if world.kinds[i as usize] == ProxyKind::Dynamic {
                if let Ok(aabb) = world.box_of(i as usize) {
                    // The id is live: set_aabb cannot fail.
                    let _ = self.broad_phase.set_aabb(self.ids[k], aabb);
                }
            }
        }
        self.broad_phase.update(&mut self.events);
        self.broad_phase.pairs(&mut self.pairs);
        // The pair set's order depends on history only, so it is the same in every run.
        for pair in &self.pairs {
            let (a, ra) = self.spheres[pair.a.index() as usize];
            let (b, rb) = self.spheres[pair.b.index() as usize];
            let (a, b) = (a as usize, b as usize);
            let d = world.centers[b] - world.centers[a];
            let dist2 = d.length_squared();
            if dist2 >= (ra + rb) * (ra + rb) || dist2 <= 1e-12 {
                continue;
            }
            let normal = d / dist2.sqrt();
            let approach = (world.velocities[a] - world.velocities[b]).dot(normal);
            if approach <= 0.0 {
                continue;
            }
            let inverse_mass = |i: usize, r: f32| {
                if world.kinds[i] == ProxyKind::Static {
                    0.0
                } else {
                    1.0 / (r * r * r)
                }
            };
            let (wa, wb) = (inverse_mass(a, ra), inverse_mass(b, rb));
            if wa + wb == 0.0 {
                continue;
            }
            let impulse = 2.0 * approach / (wa + wb);
            world.velocities[a] -= normal * (impulse * wa);
            world.velocities[b] += normal * (impulse * wb);
        }
    }
}
