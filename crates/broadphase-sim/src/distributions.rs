//! Random draws of object sizes and speeds, deterministic for a seed.

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use rand_distr::{Beta, Distribution, Normal};

use crate::scene::{SceneError, SizeDistribution, SpeedDistribution};

/// The scene's random number generator: portable and seeded, so a seed gives the same scene
/// on every machine and for every algorithm.
pub type SceneRng = Xoshiro256PlusPlus;

/// A generator seeded from `seed`.
pub fn scene_rng(seed: u64) -> SceneRng {
    Xoshiro256PlusPlus::seed_from_u64(seed)
}

/// Draws object extents (full lengths along one dimension) between `min` and `max`.
#[derive(Debug, Clone)]
pub struct SizeSampler(Sampler);

#[derive(Debug, Clone)]
enum Sampler {
    /// `min + (max - min) * Beta(α, β)`, as in [Zych16, ch. 4.1].
    Beta {
        min: f32,
        span: f32,
        beta: Beta<f64>,
    },
    /// A normal clamped to `[min, max]`.
    Normal {
        min: f32,
        max: f32,
        normal: Normal<f64>,
    },
    /// A clamped normal mirrored about its mean, so sizes pile up at both ends
    /// (the "inverse-normal" of [Owen18, Materials and Methods]).
    InverseNormal {
        min: f32,
        max: f32,
        mean: f32,
        normal: Normal<f64>,
    },
    /// Uniform in `[min, max]`.
    Uniform { min: f32, max: f32 },
    /// Always the same size.
    Fixed(f32),
}

impl SizeSampler {
    /// The sampler of a validated size distribution.
    pub fn new(
        distribution: SizeDistribution,
        min: f32,
        max: f32,
        alpha: f64,
        beta: f64,
        mean: Option<f32>,
        std_dev: Option<f32>,
    ) -> Result<Self, SceneError> {
        let mean = mean.unwrap_or((min + max) / 2.0);
        let std_dev = std_dev.unwrap_or((max - min) / 6.0);
        let normal = || {
            Normal::new(f64::from(mean), f64::from(std_dev))
                .map_err(|e| SceneError::field("size_std", format!("{e}")))
        };
        Ok(Self(match distribution {
            SizeDistribution::Beta => Sampler::Beta {
                min,
                span: max - min,
                beta: Beta::new(alpha, beta)
                    .map_err(|e| SceneError::field("size_alpha", format!("{e}")))?,
            },
            SizeDistribution::Normal => Sampler::Normal {
                min,
                max,
                normal: normal()?,
            },
            SizeDistribution::InverseNormal => Sampler::InverseNormal {
                min,
                max,
                mean,
                normal: normal()?,
            },
            SizeDistribution::Uniform => Sampler::Uniform { min, max },
            SizeDistribution::Fixed => Sampler::Fixed(mean),
        }))
    }

    /// One extent.
    pub fn sample(&self, rng: &mut SceneRng) -> f32 {
        match &self.0 {
            Sampler::Beta { min, span, beta } => min + span * beta.sample(rng) as f32,
            Sampler::Normal { min, max, normal } => (normal.sample(rng) as f32).clamp(*min, *max),
            Sampler::InverseNormal {
                min,
                max,
                mean,
                normal,
            } => {
                let s = (normal.sample(rng) as f32).clamp(*min, *max);
                // Near the mean maps to an end, an end maps to the mean.
                if s < *mean {
                    (min + (mean - s)).min(*mean)
                } else {
                    (max - (s - mean)).max(*mean)
                }
            }
            Sampler::Uniform { min, max } => {
                if max > min {
                    rng.random_range(*min..=*max)
                } else {
                    *min
                }
            }
            Sampler::Fixed(size) => *size,
        }
    }
}

/// Draws a speed in units per second.
pub fn sample_speed(distribution: SpeedDistribution, mean: f32, rng: &mut SceneRng) -> f32 {
    match distribution {
        SpeedDistribution::Uniform => rng.random::<f32>() * 2.0 * mean,
        SpeedDistribution::Fixed => mean,
    }
}

/// A uniformly distributed unit vector.
pub fn random_direction(rng: &mut SceneRng) -> glam::Vec3 {
    loop {
        let v = glam::Vec3::new(
            rng.random_range(-1.0..=1.0),
            rng.random_range(-1.0..=1.0),
            rng.random_range(-1.0..=1.0),
        );
        let len2 = v.length_squared();
        if len2 > 1e-6 && len2 <= 1.0 {
            return v / len2.sqrt();
        }
    }
}

/// A uniformly distributed rotation.
pub fn random_rotation(rng: &mut SceneRng) -> glam::Quat {
    // Shoemake's method: uniform on the unit quaternion sphere.
    let (u1, u2, u3): (f32, f32, f32) = (rng.random(), rng.random(), rng.random());
    let (a, b) = ((1.0 - u1).sqrt(), u1.sqrt());
    let tau = std::f32::consts::TAU;
    glam::Quat::from_xyzw(
        a * (tau * u2).sin(),
        a * (tau * u2).cos(),
        b * (tau * u3).sin(),
        b * (tau * u3).cos(),
    )
    .normalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_stay_within_bounds_for_every_distribution() {
        let mut rng = scene_rng(7);
        for d in [
            SizeDistribution::Beta,
            SizeDistribution::Normal,
            SizeDistribution::InverseNormal,
            SizeDistribution::Uniform,
            SizeDistribution::Fixed,
        ] {
            let s = SizeSampler::new(d, 0.5, 3.0, 0.5, 0.5, None, None).unwrap();
            for _ in 0..1000 {
                let x = s.sample(&mut rng);
                assert!((0.5..=3.0).contains(&x), "{d:?} gave {x}");
            }
        }
    }

    #[test]
    fn inverse_normal_piles_up_at_the_ends() {
        let mut rng = scene_rng(3);
        let normal =
            SizeSampler::new(SizeDistribution::Normal, 0.0, 6.0, 1.0, 1.0, None, None).unwrap();
        let inverse = SizeSampler::new(
            SizeDistribution::InverseNormal,
            0.0,
            6.0,
            1.0,
            1.0,
            None,
            None,
        )
        .unwrap();
        let middle = |s: &SizeSampler, rng: &mut SceneRng| {
            (0..2000)
                .filter(|_| (2.0..4.0).contains(&s.sample(rng)))
                .count()
        };
        // A normal with std (max-min)/6 has ~68% within one std of the mean; the mirrored one
        // has ~the tails' share there.
        assert!(middle(&normal, &mut rng) > 1200);
        assert!(middle(&inverse, &mut rng) < 800);
    }

    #[test]
    fn directions_are_unit_and_seeded() {
        let mut a = scene_rng(1);
        let mut b = scene_rng(1);
        for _ in 0..100 {
            let (x, y) = (random_direction(&mut a), random_direction(&mut b));
            assert_eq!(x, y);
            assert!((x.length() - 1.0).abs() < 1e-5);
        }
        let q = random_rotation(&mut a);
        assert!((q.length() - 1.0).abs() < 1e-5);
    }
}
