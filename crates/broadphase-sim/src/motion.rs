//! A scene in motion: objects placed, moved, bounced, churned; their boxes for the broad phase.

use broadphase::{
    Aabb, BroadPhase, CollisionFilter, Pair, PairEvents, ProxyId, ProxyKind, SortAndSweep,
};
use glam::Vec3;
use parry3d::math::Pose;
use rand::RngExt;

use crate::distributions::{random_direction, sample_speed, scene_rng, SceneRng, SizeSampler};
use crate::scene::{Scene, SceneError, ShapeKind};
use crate::shapes::PlacedShape;

/// Fraction of the vertical speed kept when an object lands on the ground under gravity, so
/// that objects settle into a layer (the clustering case of [Zych16, Fig. 2.26]).
const GROUND_RESTITUTION: f32 = 0.5;

/// The objects of a [`Scene`] moving step by step, independent of any broad phase.
///
/// Objects `0..scene.objects` are the scene's objects (moving and stationary), then come the
/// terrain boxes and the ground, all static; objects spawned by a phase come after them (or
/// reuse the slot of a despawned one). The same scene (and seed) always gives the same boxes
/// at every step.
///
/// ```
/// use broadphase_sim::{Scene, World};
/// let scene = Scene { objects: 100, ..Default::default() };
/// let mut world = World::new(&scene).unwrap();
/// world.step();
/// assert_eq!(world.aabbs().len(), 100);
/// ```
#[derive(Debug)]
pub struct World {
    scene: Scene,
    side: f32,
    shapes: Vec<PlacedShape>,
    centers: Vec<Vec3>,
    velocities: Vec<Vec3>,
    kinds: Vec<ProxyKind>,
    aabbs: Vec<Aabb>,
    /// Per object: in the world (false for despawned slots).
    alive: Vec<bool>,
    /// Per object: resting on the ground, not moved until a phase change.
    asleep: Vec<bool>,
    /// Per object: terrain or ground (never changes kind, never despawned).
    fixed: Vec<bool>,
    moving: Vec<u32>,
    /// `moving` must be rebuilt before the next use.
    moving_stale: bool,
    respawned: Vec<u32>,
    spawned: Vec<u32>,
    despawned: Vec<u32>,
    kind_changed: Vec<u32>,
    /// Live scene objects, in spawn order: a shrinking phase despawns the newest first.
    live_objects: Vec<u32>,
    /// Despawned slots, reused by the next spawns.
    free_slots: Vec<u32>,
    sizes: SizeSampler,
    shape_kinds: Vec<ShapeKind>,
    /// Index of the phase under way and the object count at its start.
    phase: Option<(usize, usize)>,
    steps_done: u64,
    rng: SceneRng,
    spheres: Option<SphereContacts>,
}

/// Elastic sphere–sphere bounces, found with a private sort-and-sweep so that the motion
/// never depends on the algorithm being measured.
#[derive(Debug)]
struct SphereContacts {
    /// Object index and radius of each sphere, by slot of `broad_phase`.
    spheres: Vec<(u32, f32)>,
    ids: Vec<ProxyId>,
    broad_phase: SortAndSweep,
    events: PairEvents,
    pairs: Vec<Pair>,
}

impl World {
    /// Places the scene's objects at random (seeded) positions.
    pub fn new(scene: &Scene) -> Result<Self, SceneError> {
        scene.validate()?;
        let shape_kinds = scene.shape_kinds()?;
        let sizes = SizeSampler::new(
            scene.size_distribution,
            scene.size_min,
            scene.size_max,
            scene.size_alpha,
            scene.size_beta,
            scene.size_mean,
            scene.size_std,
        )?;
        let side = scene.world_side();
        let mut rng = scene_rng(scene.seed);
        let n = scene.objects;
        let mut world = Self {
            scene: scene.clone(),
            side,
            shapes: Vec::with_capacity(n),
            centers: Vec::with_capacity(n),
            velocities: Vec::with_capacity(n),
            kinds: vec![ProxyKind::Dynamic; n],
            aabbs: Vec::with_capacity(n),
            alive: vec![true; n],
            asleep: vec![false; n],
            fixed: vec![false; n],
            moving: Vec::with_capacity(n),
            moving_stale: false,
            respawned: Vec::new(),
            spawned: Vec::new(),
            despawned: Vec::new(),
            kind_changed: Vec::new(),
            live_objects: (0..n as u32).collect(),
            free_slots: Vec::new(),
            sizes,
            shape_kinds,
            phase: None,
            steps_done: 0,
            rng: scene_rng(0),
            spheres: None,
        };
        for _ in 0..n {
            let kind = world.shape_kinds[rng.random_range(0..world.shape_kinds.len())];
            let shape = PlacedShape::random(kind, &world.sizes, &mut rng);
            let h = shape.aabb_half_extents.min(Vec3::splat(side / 2.0));
            let center = random_point(&mut rng, h, side);
            world.shapes.push(shape);
            world.centers.push(center);
            world.velocities.push(Vec3::ZERO);
        }
        // The stationary objects: a seeded partial shuffle picks exactly round(f * n).
        let stationary = (f64::from(scene.stationary_fraction) * n as f64).round() as usize;
        let mut order: Vec<u32> = (0..n as u32).collect();
        for i in 0..stationary {
            let j = rng.random_range(i..n);
            order.swap(i, j);
            world.kinds[order[i] as usize] = ProxyKind::Static;
        }
        world.moving = (0..n as u32)
            .filter(|&i| world.kinds[i as usize] == ProxyKind::Dynamic)
            .collect();
        world.rng = rng;
        world.draw_velocities(true);
        world.add_terrain();
        for i in 0..world.shapes.len() {
            let aabb = world.box_of(i)?;
            world.aabbs.push(aabb);
        }
        if scene.sphere_bounces {
            world.spheres = Some(SphereContacts::new(&world));
        }
        Ok(world)
    }

    fn add_terrain(&mut self) {
        let side = self.side;
        let n = self.scene.terrain_boxes;
        if n > 0 {
            let k = (n as f64).sqrt().ceil() as usize;
            let cell = side / k as f32;
            let max_height = cell.min(self.scene.size_max).max(f32::EPSILON);
            for t in 0..n {
                let (i, j) = (t % k, t / k);
                let height = self.rng.random_range(0.2..=1.0) * max_height;
                let half = Vec3::new(cell / 2.0, height / 2.0, cell / 2.0);
                let center = Vec3::new((i as f32 + 0.5) * cell, half.y, (j as f32 + 0.5) * cell);
                self.push_static(PlacedShape::static_box(half), center);
            }
        }
        if self.scene.has_gravity() {
            let half = Vec3::new(side / 2.0, 0.5, side / 2.0);
            self.push_static(
                PlacedShape::static_box(half),
                Vec3::new(side / 2.0, -0.5, side / 2.0),
            );
        }
    }

    fn push_static(&mut self, shape: PlacedShape, center: Vec3) {
        self.shapes.push(shape);
        self.centers.push(center);
        self.velocities.push(Vec3::ZERO);
        self.kinds.push(ProxyKind::Static);
        self.alive.push(true);
        self.asleep.push(false);
        self.fixed.push(true);
    }

    fn box_of(&self, i: usize) -> Result<Aabb, SceneError> {
        Aabb::from_center_half_extents(self.centers[i], self.shapes[i].aabb_half_extents)
            .map_err(|e| SceneError::field("objects", format!("object {i} has no valid box: {e}")))
    }

    fn draw_velocities(&mut self, initial: bool) {
        let horizontal_only = self.scene.gravity > 0.0 && !initial;
        for &i in &self.moving {
            let speed = sample_speed(
                self.scene.speed_distribution,
                self.scene.mean_speed,
                &mut self.rng,
            );
            let mut v = random_direction(&mut self.rng) * speed;
            if horizontal_only {
                v.y = self.velocities[i as usize].y;
            }
            self.velocities[i as usize] = v;
        }
    }

    /// Advances one time step: enter the next phase when due, spawn or despawn, re-draw
    /// velocities when due, move, bounce off walls, ground and (if enabled) other spheres,
    /// put resting objects to sleep, then teleport and respawn at the churn rates.
    pub fn step(&mut self) {
        self.steps_done += 1;
        self.spawned.clear();
        self.despawned.clear();
        self.kind_changed.clear();
        self.advance_phase();
        if self.moving_stale {
            self.rebuild_moving();
        }
        let interval = u64::from(self.scene.redraw_interval);
        if interval > 0 && self.steps_done.is_multiple_of(interval) {
            self.draw_velocities(false);
        }
        let dt = self.scene.time_step;
        let gravity = self.scene.gravity;
        let sleep_speed = if gravity > 0.0 {
            self.scene.sleep_speed
        } else {
            0.0
        };
        let side = self.side;
        for &i in &self.moving {
            let i = i as usize;
            let (c, v) = (&mut self.centers[i], &mut self.velocities[i]);
            let h = self.shapes[i]
                .aabb_half_extents
                .min(Vec3::splat(side / 2.0));
            v.y -= gravity * dt;
            *c += *v * dt;
            for axis in 0..3 {
                let (lo, hi) = (h[axis], side - h[axis]);
                if c[axis] < lo {
                    c[axis] = lo + (lo - c[axis]).min(hi - lo);
                    v[axis] = v[axis].abs();
                    if axis == 1 && gravity > 0.0 {
                        c[axis] = lo;
                        v[axis] *= GROUND_RESTITUTION;
                        // It still moved this step: `moving` drops it at the next step.
                        if v.length() < sleep_speed {
                            *v = Vec3::ZERO;
                            self.asleep[i] = true;
                            self.moving_stale = true;
                        }
                    }
                } else if c[axis] > hi {
                    c[axis] = hi - (c[axis] - hi).min(hi - lo);
                    v[axis] = -v[axis].abs();
                }
            }
        }
        if let Some(mut spheres) = self.spheres.take() {
            spheres.bounce(self);
            self.spheres = Some(spheres);
        }
        self.churn();
        for &i in &self.moving {
            let i = i as usize;
            // Centers stay inside the world, sizes are validated: the box is always valid.
            if let Ok(aabb) = self.box_of(i) {
                self.aabbs[i] = aabb;
            }
        }
    }

    fn rebuild_moving(&mut self) {
        self.moving.clear();
        self.moving
            .extend((0..self.shapes.len() as u32).filter(|&i| {
                let i = i as usize;
                self.alive[i] && !self.asleep[i] && self.kinds[i] == ProxyKind::Dynamic
            }));
        self.moving_stale = false;
    }

    /// The measured step under way (0-based), `None` during the warm-up.
    fn measured_step(&self) -> Option<usize> {
        (self.steps_done as usize)
            .checked_sub(self.scene.warmup + 1)
            .filter(|_| !self.scene.phases.is_empty())
    }

    /// Enters the phase that starts at this step, and spawns or despawns this step's share of
    /// the phase's change in object count.
    fn advance_phase(&mut self) {
        let Some(step) = self.measured_step() else {
            return;
        };
        let Some((index, start)) = self.scene.phase_at(step) else {
            return;
        };
        if step == start {
            self.enter_phase(index);
        }
        let phase = &self.scene.phases[index];
        let (Some(target), Some((_, start_count))) = (phase.objects, self.phase) else {
            return;
        };
        let done = (step - start + 1) as f64 / phase.steps as f64;
        let count = (start_count as f64 + (target as f64 - start_count as f64) * done).round();
        let count = count as usize;
        while self.live_objects.len() < count {
            self.spawn();
        }
        while self.live_objects.len() > count {
            self.despawn();
        }
    }

    fn enter_phase(&mut self, index: usize) {
        let phase = self.scene.phases[index].clone();
        let scene = &mut self.scene;
        scene.mean_speed = phase.mean_speed.unwrap_or(scene.mean_speed);
        scene.gravity = phase.gravity.unwrap_or(scene.gravity);
        scene.remove_rate = phase.remove_rate.unwrap_or(scene.remove_rate);
        scene.teleport_rate = phase.teleport_rate.unwrap_or(scene.teleport_rate);
        scene.redraw_interval = phase.redraw_interval.unwrap_or(scene.redraw_interval);
        self.phase = Some((index, self.live_objects.len()));
        if let Some(fraction) = phase.stationary_fraction {
            self.scene.stationary_fraction = fraction;
            self.assign_stationary(fraction);
        }
        // Every moving object wakes up with a new velocity.
        self.asleep.iter_mut().for_each(|a| *a = false);
        self.rebuild_moving();
        if phase.explode {
            let center = Vec3::splat(self.side / 2.0);
            for &i in &self.moving {
                let i = i as usize;
                let speed = sample_speed(
                    self.scene.speed_distribution,
                    self.scene.mean_speed,
                    &mut self.rng,
                );
                let away = (self.centers[i] - center)
                    .try_normalize()
                    .unwrap_or_else(|| random_direction(&mut self.rng));
                self.velocities[i] = away * speed;
            }
        } else {
            self.draw_velocities(false);
        }
    }

    /// Makes exactly `round(fraction * live objects)` of the scene's objects stationary, the
    /// choice seeded; objects whose kind changes are listed in [`World::kind_changed`].
    fn assign_stationary(&mut self, fraction: f32) {
        let mut order = self.live_objects.clone();
        order.sort_unstable();
        let n = order.len();
        let stationary = (f64::from(fraction) * n as f64).round() as usize;
        for i in 0..stationary {
            let j = self.rng.random_range(i..n);
            order.swap(i, j);
        }
        for (k, &object) in order.iter().enumerate() {
            let kind = if k < stationary {
                ProxyKind::Static
            } else {
                ProxyKind::Dynamic
            };
            let i = object as usize;
            if self.kinds[i] != kind {
                self.kinds[i] = kind;
                self.velocities[i] = Vec3::ZERO;
                self.kind_changed.push(object);
            }
        }
        self.kind_changed.sort_unstable();
    }

    fn spawn(&mut self) {
        let kind = self.shape_kinds[self.rng.random_range(0..self.shape_kinds.len())];
        let shape = PlacedShape::random(kind, &self.sizes, &mut self.rng);
        let h = shape.aabb_half_extents.min(Vec3::splat(self.side / 2.0));
        let center = random_point(&mut self.rng, h, self.side);
        let speed = sample_speed(
            self.scene.speed_distribution,
            self.scene.mean_speed,
            &mut self.rng,
        );
        // A share `stationary_fraction` of newcomers are stationary props.
        let kind = if self.rng.random::<f32>() < self.scene.stationary_fraction {
            ProxyKind::Static
        } else {
            ProxyKind::Dynamic
        };
        let velocity = match kind {
            ProxyKind::Dynamic => random_direction(&mut self.rng) * speed,
            ProxyKind::Static => Vec3::ZERO,
        };
        let Ok(aabb) = Aabb::from_center_half_extents(center, shape.aabb_half_extents) else {
            return; // sizes are validated: unreachable, and skipping one spawn is harmless
        };
        let slot = match self.free_slots.pop() {
            Some(slot) => {
                let i = slot as usize;
                self.shapes[i] = shape;
                self.centers[i] = center;
                self.velocities[i] = velocity;
                self.kinds[i] = kind;
                self.aabbs[i] = aabb;
                self.alive[i] = true;
                self.asleep[i] = false;
                slot
            }
            None => {
                self.shapes.push(shape);
                self.centers.push(center);
                self.velocities.push(velocity);
                self.kinds.push(kind);
                self.aabbs.push(aabb);
                self.alive.push(true);
                self.asleep.push(false);
                self.fixed.push(false);
                (self.shapes.len() - 1) as u32
            }
        };
        self.live_objects.push(slot);
        self.spawned.push(slot);
        self.moving_stale = true;
    }

    fn despawn(&mut self) {
        let Some(slot) = self.live_objects.pop() else {
            return;
        };
        let i = slot as usize;
        self.alive[i] = false;
        self.velocities[i] = Vec3::ZERO;
        self.free_slots.push(slot);
        // Spawned and despawned in the same step: it never existed for the broad phase.
        if let Some(k) = self.spawned.iter().position(|&s| s == slot) {
            self.spawned.remove(k);
        } else {
            self.despawned.push(slot);
        }
        self.moving_stale = true;
    }

    fn churn(&mut self) {
        self.respawned.clear();
        let (teleport, remove) = (self.scene.teleport_rate, self.scene.remove_rate);
        if teleport <= 0.0 && remove <= 0.0 {
            return;
        }
        for &i in &self.moving {
            let i = i as usize;
            let h = self.shapes[i]
                .aabb_half_extents
                .min(Vec3::splat(self.side / 2.0));
            let r: f32 = self.rng.random();
            if r < remove {
                self.centers[i] = random_point(&mut self.rng, h, self.side);
                self.respawned.push(i as u32);
            } else if r < remove + teleport {
                self.centers[i] = random_point(&mut self.rng, h, self.side);
            }
        }
    }

    /// Number of object slots, static and despawned ones included.
    pub fn len(&self) -> usize {
        self.shapes.len()
    }

    /// True when the world holds no object.
    pub fn is_empty(&self) -> bool {
        self.shapes.is_empty()
    }

    /// Current boxes, by object.
    pub fn aabbs(&self) -> &[Aabb] {
        &self.aabbs
    }

    /// Whether object `i` moves.
    pub fn kind(&self, i: usize) -> ProxyKind {
        self.kinds[i]
    }

    /// Whether object `i` is in the world (false for the slot of a despawned object).
    pub fn is_alive(&self, i: usize) -> bool {
        self.alive[i]
    }

    /// Objects in the world now, terrain and ground included.
    pub fn live_count(&self) -> usize {
        self.live_objects.len() + self.fixed.iter().filter(|&&f| f).count()
    }

    /// Objects that entered the world during the last step: insert their proxies.
    pub fn spawned(&self) -> &[u32] {
        &self.spawned
    }

    /// Objects that left the world during the last step: remove their proxies.
    pub fn despawned(&self) -> &[u32] {
        &self.despawned
    }

    /// Objects whose kind (stationary or moving) changed during the last step: remove their
    /// proxies and insert them again with the new kind.
    pub fn kind_changed(&self) -> &[u32] {
        &self.kind_changed
    }

    /// The phase under way (index into `scene().phases`), once the first one has begun.
    pub fn phase(&self) -> Option<usize> {
        self.phase.map(|(index, _)| index)
    }

    /// The objects whose boxes changed during the last step, increasing (sleeping,
    /// stationary and despawned objects excluded).
    pub fn moving(&self) -> &[u32] {
        &self.moving
    }

    /// The objects removed and re-inserted during the last step: the broad phase must
    /// remove their proxies and insert new ones.
    pub fn respawned(&self) -> &[u32] {
        &self.respawned
    }

    /// The shape of object `i`.
    pub fn shape(&self, i: usize) -> &PlacedShape {
        &self.shapes[i]
    }

    /// The pose of object `i`.
    pub fn pose(&self, i: usize) -> Pose {
        self.shapes[i].pose(self.centers[i])
    }

    /// Side of the world cube.
    pub fn side(&self) -> f32 {
        self.side
    }

    /// The scene this world was made from, with the settings of the phase under way.
    pub fn scene(&self) -> &Scene {
        &self.scene
    }
}

fn random_point(rng: &mut SceneRng, h: Vec3, side: f32) -> Vec3 {
    let mut coord = |h: f32| {
        if side - h > h {
            rng.random_range(h..=side - h)
        } else {
            side / 2.0
        }
    };
    Vec3::new(coord(h.x), coord(h.y), coord(h.z))
}

impl SphereContacts {
    fn new(world: &World) -> Self {
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
    fn bounce(&mut self, world: &mut World) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn scene() -> Scene {
        Scene {
            objects: 300,
            mean_speed: 50.0,
            stationary_fraction: 0.2,
            sphere_bounces: true,
            remove_rate: 0.01,
            teleport_rate: 0.01,
            terrain_boxes: 10,
            gravity: 9.8,
            ..Default::default()
        }
    }

    #[test]
    fn same_seed_same_motion_other_seed_other_motion() {
        let mut a = World::new(&scene()).unwrap();
        let mut b = World::new(&scene()).unwrap();
        let mut c = World::new(&Scene { seed: 2, ..scene() }).unwrap();
        for _ in 0..100 {
            a.step();
            b.step();
            c.step();
            assert_eq!(a.aabbs(), b.aabbs());
            assert_eq!(a.respawned(), b.respawned());
        }
        assert_ne!(a.aabbs(), c.aabbs());
    }

    #[test]
    fn objects_stay_in_the_world_and_statics_never_move() {
        let s = scene();
        let mut w = World::new(&s).unwrap();
        assert_eq!(w.len(), 300 + 10 + 1);
        let statics: Vec<usize> = (0..w.len())
            .filter(|&i| w.kind(i) == ProxyKind::Static)
            .collect();
        assert_eq!(statics.len(), 60 + 10 + 1);
        assert_eq!(w.moving().len(), 240);
        let before: Vec<Aabb> = statics.iter().map(|&i| w.aabbs()[i]).collect();
        let world = Aabb::new(Vec3::splat(-1e-3), Vec3::splat(w.side() + 1e-3)).unwrap();
        let mut respawns = 0;
        for _ in 0..200 {
            w.step();
            respawns += w.respawned().len();
            for &i in w.moving() {
                assert!(world.contains(&w.aabbs()[i as usize]));
            }
        }
        assert!(respawns > 0);
        let after: Vec<Aabb> = statics.iter().map(|&i| w.aabbs()[i]).collect();
        assert_eq!(before, after);
    }

    #[test]
    fn gravity_settles_objects_into_a_layer() {
        let s = Scene {
            objects: 200,
            gravity: 20.0,
            mean_speed: 1.0,
            ..Default::default()
        };
        let mut w = World::new(&s).unwrap();
        for _ in 0..600 {
            w.step();
        }
        let mean_height: f32 = w
            .moving()
            .iter()
            .map(|&i| w.aabbs()[i as usize].min().y)
            .sum::<f32>()
            / w.moving().len() as f32;
        assert!(
            mean_height < 0.1 * w.side(),
            "mean height {mean_height}, side {}",
            w.side()
        );
    }

    #[test]
    fn sphere_bounces_conserve_momentum_of_equal_spheres() {
        let s = Scene {
            objects: 2,
            shapes: "sphere".into(),
            size_distribution: crate::SizeDistribution::Fixed,
            world_size: Some(100.0),
            sphere_bounces: true,
            redraw_interval: 0,
            ..Default::default()
        };
        let mut w = World::new(&s).unwrap();
        w.centers[0] = Vec3::new(50.0, 50.0, 50.0);
        w.centers[1] = Vec3::new(51.0, 50.0, 50.0);
        w.velocities[0] = Vec3::new(1.0, 0.0, 0.0);
        w.velocities[1] = Vec3::new(-1.0, 0.0, 0.0);
        w.step();
        assert!(w.velocities[0].x < 0.0 && w.velocities[1].x > 0.0);
        assert!((w.velocities[0] + w.velocities[1]).length() < 1e-5);
    }

    fn phased(text: &str) -> Scene {
        Scene::from_toml_str(text, "test.toml").unwrap()
    }

    /// Follows the world's spawn, despawn and kind lists like a broad phase would, and
    /// checks they describe exactly the live objects and their kinds.
    #[test]
    fn phases_grow_shrink_and_change_kinds_consistently() {
        let scene = phased(
            "objects = 200\nwarmup = 3\nremove_rate = 0.01\n\
             [[phases]]\nsteps = 20\nobjects = 600\nstationary_fraction = 0.5\n\
             [[phases]]\nsteps = 10\nobjects = 150\n\
             [[phases]]\nsteps = 5\nstationary_fraction = 0.0\n",
        );
        let mut w = World::new(&scene).unwrap();
        let mut live: Vec<Option<ProxyKind>> = (0..w.len()).map(|i| Some(w.kind(i))).collect();
        let mut counts = Vec::new();
        for step in 0..scene.warmup + scene.steps {
            w.step();
            live.resize(w.len(), None);
            for &i in w.despawned() {
                assert!(live[i as usize].take().is_some(), "despawned twice: {i}");
            }
            for &i in w.spawned() {
                assert!(live[i as usize].is_none(), "spawned twice: {i}");
                live[i as usize] = Some(w.kind(i as usize));
            }
            for &i in w.kind_changed() {
                live[i as usize] = Some(w.kind(i as usize));
            }
            for (i, mirrored) in live.iter().enumerate() {
                assert_eq!(mirrored.is_some(), w.is_alive(i), "object {i}, step {step}");
                if let Some(kind) = mirrored {
                    assert_eq!(*kind, w.kind(i), "object {i}, step {step}");
                }
            }
            for &i in w.moving() {
                assert!(w.is_alive(i as usize) && w.kind(i as usize) == ProxyKind::Dynamic);
            }
            counts.push(live.iter().filter(|k| k.is_some()).count());
        }
        // Steady growth to 600, then down to 150, each phase ending on its count.
        assert_eq!(counts[scene.warmup + 19], 600);
        assert_eq!(counts[scene.warmup + 29], 150);
        assert!(counts[scene.warmup + 5] > 200 && counts[scene.warmup + 5] < 600);
        assert_eq!(w.live_count(), 150);
        // The last phase made every object move.
        assert_eq!(w.moving().len(), 150);
    }

    #[test]
    fn objects_fall_asleep_on_the_ground_and_a_phase_wakes_them() {
        let resting = phased(
            "objects = 100\nwarmup = 0\nsleep_speed = 2.0\nmean_speed = 0.0\ngravity = 30.0\n\
             [[phases]]\nsteps = 400\n",
        );
        let mut w = World::new(&resting).unwrap();
        for _ in 0..400 {
            w.step();
        }
        assert_eq!(w.moving().len(), 0, "everything rests after 400 steps");
        let scene = phased(
            "objects = 100\nwarmup = 0\nsleep_speed = 2.0\nmean_speed = 0.0\ngravity = 30.0\n\
             [[phases]]\nsteps = 400\n\
             [[phases]]\nsteps = 2\nmean_speed = 20.0\ngravity = 0.0\nexplode = true\n",
        );
        let mut w = World::new(&scene).unwrap();
        for _ in 0..400 {
            w.step();
        }
        // Asleep: not moved during the last step, and not listed as moving.
        let rested: Vec<Aabb> = w.aabbs().to_vec();
        w.step();
        assert_eq!(w.phase(), Some(1));
        let before: Vec<Aabb> = w.aabbs().to_vec();
        w.step();
        assert_eq!(w.moving().len(), 100, "the explosion wakes every object");
        assert!(rested.len() == 101 && rested[..100] != before[..100]);
        let center = Vec3::splat(w.side() / 2.0);
        let outward = (0..100)
            .filter(|&i| {
                // Horizontally: the ground reflects the downward half of the blast.
                let d = w.aabbs()[i].center() - before[i].center();
                let away = before[i].center() - center;
                d.x * away.x + d.z * away.z > 0.0
            })
            .count();
        assert!(
            outward >= 80,
            "{outward} of 100 flew outward (random: about 50)"
        );
    }
}
