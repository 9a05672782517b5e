//! The default bench scene: boxes of random sizes flying inside a cube and bouncing off its
//! walls.

use broadphase::verify::SplitMix64;
use broadphase::{Aabb, Error, Vec3};

/// Settings of [`BouncingBoxes`].
#[derive(Debug, Clone, PartialEq)]
pub struct BouncingBoxesConfig {
    /// Number of boxes.
    pub objects: usize,
    /// Half extents are uniform in `[min_half_extent, max_half_extent]` per axis.
    pub min_half_extent: f32,
    /// See `min_half_extent`.
    pub max_half_extent: f32,
    /// World volume per object; sets the cube's side as `(objects * volume_per_object)^(1/3)`.
    pub volume_per_object: f32,
    /// Speeds are uniform in `[0, max_speed]` units per second, in a random direction.
    pub max_speed: f32,
    /// Seconds per step.
    pub time_step: f32,
    /// Random seed: the same seed gives the same motion.
    pub seed: u64,
}

impl Default for BouncingBoxesConfig {
    fn default() -> Self {
        Self {
            objects: 5000,
            min_half_extent: 0.25,
            max_half_extent: 1.5,
            volume_per_object: 40.0,
            max_speed: 10.0,
            time_step: 1.0 / 60.0,
            seed: 1,
        }
    }
}

/// Boxes moving in straight lines inside a cube, reflected by its walls.
///
/// ```
/// use broadphase_sim::{BouncingBoxes, BouncingBoxesConfig};
/// let mut scene = BouncingBoxes::new(&BouncingBoxesConfig { objects: 10, ..Default::default() }).unwrap();
/// scene.step();
/// assert_eq!(scene.aabbs().len(), 10);
/// ```
#[derive(Debug, Clone)]
pub struct BouncingBoxes {
    centers: Vec<Vec3>,
    velocities: Vec<Vec3>,
    half_extents: Vec<Vec3>,
    aabbs: Vec<Aabb>,
    side: f32,
    time_step: f32,
}

impl BouncingBoxes {
    /// Places the boxes uniformly at random in the cube.
    pub fn new(config: &BouncingBoxesConfig) -> Result<Self, Error> {
        let valid = config.min_half_extent >= 0.0
            && config.max_half_extent >= config.min_half_extent
            && config.max_half_extent.is_finite()
            && config.volume_per_object > 0.0
            && config.volume_per_object.is_finite()
            && config.max_speed >= 0.0
            && config.max_speed.is_finite()
            && config.time_step > 0.0
            && config.time_step.is_finite();
        if !valid {
            return Err(Error::InvalidOption(
                "scene sizes, speed and time step must be finite and non-negative",
            ));
        }
        let side = (config.objects as f32 * config.volume_per_object)
            .cbrt()
            .max(4.0 * config.max_half_extent);
        if !side.is_finite() {
            return Err(Error::InvalidOption("scene is too large"));
        }
        let mut rng = SplitMix64::new(config.seed);
        let mut scene = Self {
            centers: Vec::with_capacity(config.objects),
            velocities: Vec::with_capacity(config.objects),
            half_extents: Vec::with_capacity(config.objects),
            aabbs: Vec::with_capacity(config.objects),
            side,
            time_step: config.time_step,
        };
        for _ in 0..config.objects {
            let h = Vec3::new(
                rng.range(config.min_half_extent, config.max_half_extent),
                rng.range(config.min_half_extent, config.max_half_extent),
                rng.range(config.min_half_extent, config.max_half_extent),
            );
            let c = Vec3::new(
                rng.range(h.x, side - h.x),
                rng.range(h.y, side - h.y),
                rng.range(h.z, side - h.z),
            );
            let direction = Vec3::new(
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
            )
            .normalize_or(Vec3::X);
            scene.centers.push(c);
            scene.half_extents.push(h);
            scene
                .velocities
                .push(direction * rng.range(0.0, config.max_speed));
        }
        scene.refresh_aabbs();
        Ok(scene)
    }

    fn refresh_aabbs(&mut self) {
        self.aabbs.clear();
        for (c, h) in self.centers.iter().zip(&self.half_extents) {
            self.aabbs
                .push(Aabb::from_center_half_extents(*c, *h).expect("finite box inside the world"));
        }
    }

    /// Advances one time step: move, then reflect off the walls.
    pub fn step(&mut self) {
        let dt = self.time_step;
        for ((c, v), h) in self
            .centers
            .iter_mut()
            .zip(&mut self.velocities)
            .zip(&self.half_extents)
        {
            *c += *v * dt;
            for axis in 0..3 {
                let (lo, hi) = (h[axis], self.side - h[axis]);
                if c[axis] < lo {
                    c[axis] = lo + (lo - c[axis]).min(hi - lo);
                    v[axis] = v[axis].abs();
                } else if c[axis] > hi {
                    c[axis] = hi - (c[axis] - hi).min(hi - lo);
                    v[axis] = -v[axis].abs();
                }
            }
        }
        self.refresh_aabbs();
    }

    /// The current boxes, by object.
    pub fn aabbs(&self) -> &[Aabb] {
        &self.aabbs
    }

    /// The side of the world cube.
    pub fn side(&self) -> f32 {
        self.side
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_stay_inside_and_motion_is_deterministic() {
        let config = BouncingBoxesConfig {
            objects: 200,
            max_speed: 200.0,
            ..Default::default()
        };
        let mut a = BouncingBoxes::new(&config).unwrap();
        let mut b = BouncingBoxes::new(&config).unwrap();
        let world = Aabb::new(Vec3::ZERO, Vec3::splat(a.side())).unwrap();
        for _ in 0..300 {
            a.step();
            b.step();
            assert!(a.aabbs().iter().all(|x| world.contains(x)));
        }
        assert_eq!(a.aabbs(), b.aabbs());
    }

    #[test]
    fn rejects_invalid_settings() {
        let bad = BouncingBoxesConfig {
            max_speed: f32::NAN,
            ..Default::default()
        };
        assert!(BouncingBoxes::new(&bad).is_err());
        let inverted = BouncingBoxesConfig {
            min_half_extent: 2.0,
            max_half_extent: 1.0,
            ..Default::default()
        };
        assert!(BouncingBoxes::new(&inverted).is_err());
    }
}
