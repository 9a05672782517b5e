//! Phases of a scene and churn: entering a phase (counts, speeds, stationary fraction), and
//! spawning, despawning and respawning objects.

use super::*;

impl World {
    /// The measured step under way (0-based), `None` during the warm-up.
    fn measured_step(&self) -> Option<usize> {
        (self.steps_done as usize)
            .checked_sub(self.scene.warmup + 1)
            .filter(|_| !self.scene.phases.is_empty())
    }

    /// Enters the phase that starts at this step, and spawns or despawns this step's share of
    /// the phase's change in object count.
    pub(super) fn advance_phase(&mut self) {
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

    pub(super) fn churn(&mut self) {
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
}
