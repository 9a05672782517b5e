//! A scene in motion: objects placed, moved, bounced, churned; their boxes for the broad phase.

use broadphase::{Aabb, ProxyKind};
use glam::Vec3;
use parry3d::math::Pose;
use rand::RngExt;

use crate::distributions::{random_direction, sample_speed, scene_rng, SceneRng, SizeSampler};
use crate::scene::{Scene, SceneError, ShapeKind};
use crate::shapes::PlacedShape;

/// Fraction of the vertical speed kept when an object lands on the ground under gravity, so
/// that objects settle into a layer (the clustering case of [Zych16, ch. 2.3, Fig. 2.26]).
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
    spheres: Option<bounces::SphereContacts>,
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
            world.spheres = Some(bounces::SphereContacts::new(&world));
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

mod bounces;
#[cfg(test)]
mod tests;
