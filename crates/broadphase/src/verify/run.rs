//! Random operations: a run over the configured scenarios, one step at a time.

use glam::Vec3;

use super::{Scenario, SplitMix64, Verifier, VerifyConfig, VerifyReport};
use crate::{Aabb, CollisionFilter, ProxyKind, Ray};

impl Verifier {
    /// Runs random operations as configured and returns the report.
    pub fn run(&mut self, config: &VerifyConfig) -> VerifyReport {
        let mut rng = SplitMix64::new(config.seed);
        let scenarios: Vec<Scenario> = match config.scenario {
            Some(s) => vec![s],
            None => Scenario::ALL.to_vec(),
        };
        let per_scenario = config.steps.div_ceil(scenarios.len()).max(1);
        let mut done = 0;
        for (index, &scenario) in scenarios.iter().enumerate() {
            if index > 0 {
                self.clear();
            }
            let steps = per_scenario.min(config.steps - done);
            for _ in 0..steps {
                self.random_step(scenario, config.objects, &mut rng);
            }
            done += steps;
        }
        self.report.clone()
    }

    /// One step of random operations followed by an update and the checks.
    pub fn random_step(&mut self, scenario: Scenario, objects: usize, rng: &mut SplitMix64) {
        let objects = objects.max(1);
        // Grow towards the target count, then churn around it.
        let inserts = if self.live.len() < objects {
            (objects - self.live.len()).min(objects / 4 + 1)
        } else {
            rng.below(3)
        };
        for _ in 0..inserts {
            let aabb = scenario.random_box(rng);
            let kind = if rng.chance(0.2) {
                ProxyKind::Static
            } else {
                ProxyKind::Dynamic
            };
            let filter = random_filter(rng);
            self.insert(aabb, kind, filter);
        }
        let removals = if self.live.len() > objects / 2 {
            rng.below(3)
        } else {
            0
        };
        for _ in 0..removals {
            if self.live.is_empty() {
                break;
            }
            let handle = self.live[rng.below(self.live.len())];
            self.remove(handle, !rng.chance(0.3));
            if rng.chance(0.3) {
                let aabb = scenario.random_box(rng);
                self.use_stale(handle, aabb);
            }
        }
        if scenario == Scenario::Drift {
            // Each box keeps its own direction; speed grows with time, without bound.
            let speed = 0.5 * (1.0 + self.report.steps as f32 / 64.0);
            for k in 0..self.live.len() {
                let handle = self.live[k];
                let mut h = SplitMix64::new(handle as u64);
                let direction =
                    Vec3::new(h.range(-1.0, 1.0), h.range(-1.0, 1.0), h.range(-1.0, 1.0));
                let current = self.model[handle as usize].expect("live handle").aabb;
                let d = direction * speed;
                if let Ok(aabb) = Aabb::new(current.min() + d, current.max() + d) {
                    self.set_aabb(handle, aabb);
                }
            }
        }
        let moves = rng.below(self.live.len() / 3 + 2);
        // Half the steps move proxies one call each, half in one batch (a proxy may appear
        // twice in a batch: the later box wins).
        let batched = rng.chance(0.5);
        let mut batch = Vec::new();
        for _ in 0..moves {
            if self.live.is_empty() {
                break;
            }
            let handle = self.live[rng.below(self.live.len())];
            let current = match batch.iter().rev().find(|(h, _)| *h == handle) {
                Some(&(_, aabb)) => aabb,
                None => self.model[handle as usize].expect("live handle").aabb,
            };
            let aabb = scenario.moved_box(&current, rng);
            if batched {
                batch.push((handle, aabb));
            } else {
                self.set_aabb(handle, aabb);
            }
        }
        if !batch.is_empty() {
            self.set_aabbs(&batch);
        }
        self.random_edits(rng);
        if rng.chance(0.03) {
            // Limits around the current pair count, so that updates both fail and recover;
            // half the time none.
            let pairs = self.previous.len();
            let limit = match rng.below(6) {
                0..=2 => None,
                3 => Some(rng.below(pairs + 1)),
                4 => Some(pairs / 2 + rng.below(pairs + 2)),
                _ => Some(pairs * 2 + 8),
            };
            self.set_pair_limit(limit);
        }
        self.update();
        if rng.chance(0.25) {
            let query = scenario.random_box(rng);
            let origin = scenario.random_box(rng).center();
            let direction = match rng.below(4) {
                0 => Vec3::X,
                1 => Vec3::new(0.0, -1.0, 0.0),
                2 => Vec3::ZERO,
                _ => Vec3::new(
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                ),
            };
            let length = if rng.chance(0.1) {
                f32::INFINITY
            } else {
                rng.range(0.0, 100.0)
            };
            let filter = if rng.chance(0.5) {
                CollisionFilter::ALL
            } else {
                CollisionFilter::new(1, 1)
            };
            let ray = Ray::new(origin, direction, length).expect("finite ray");
            self.check_queries(&query, &ray, filter);
        }
    }

    /// Now and then: new filters and kinds, pairs asked for again, a new fat margin (back
    /// to 0 half the time, so that runs see both).
    fn random_edits(&mut self, rng: &mut SplitMix64) {
        if self.live.is_empty() {
            return;
        }
        let edits = match rng.below(8) {
            0 => rng.below(3) + 1,
            1 => rng.below(self.live.len() / 4 + 1) + 17,
            _ => 0,
        };
        for _ in 0..edits {
            let handle = self.live[rng.below(self.live.len())];
            if rng.chance(0.5) {
                self.set_filter(handle, random_filter(rng));
            } else {
                let kind = if rng.chance(0.5) {
                    ProxyKind::Static
                } else {
                    ProxyKind::Dynamic
                };
                self.set_kind(handle, kind);
            }
        }
        if rng.chance(0.1) {
            let handle = self.live[rng.below(self.live.len())];
            self.report_pairs_again(handle);
        }
        if rng.chance(0.01) {
            let margin = match rng.below(4) {
                0 => 0.05,
                1 => 0.5,
                _ => 0.0,
            };
            self.set_fat_margin(margin);
        }
    }
}

/// Mostly `ALL`, sometimes groups that collide only with some others.
fn random_filter(rng: &mut SplitMix64) -> CollisionFilter {
    match rng.below(8) {
        0 => CollisionFilter::new(1, 2),
        1 => CollisionFilter::new(2, 1),
        2 => CollisionFilter::new(4, 4),
        _ => CollisionFilter::ALL,
    }
}
