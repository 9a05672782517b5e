//! The benchmark scene of [Kaya16, ch. 5.2]: constant density whatever N, uniform random sizes
//! and speeds such that the fastest body crosses the box corner to corner in one second.

use crate::body::{Body, MassModel};
use crate::error::CcdError;
use crate::world::World;
use crate::world::{MAX_MAGNITUDE, MIN_MAGNITUDE};

/// Parameters of a generated scene.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SceneConfig {
    /// Number of bodies (at least 1).
    pub objects: usize,
    /// 2 (circles in a square) or 3 (spheres in a cube).
    pub dim: usize,
    /// Seed of the deterministic random generator.
    pub seed: u64,
    /// Radii are uniform in `[radius_min, radius_max]`.
    pub radius_min: f64,
    /// See `radius_min`.
    pub radius_max: f64,
    /// Fraction of the box area (2D) or volume (3D) covered by bodies; `None` for the default
    /// (0.3 in 2D, 0.15 in 3D). The box grows with N to keep it constant.
    pub packing_fraction: Option<f64>,
    /// How masses follow from radii.
    pub mass_model: MassModel,
}

impl Default for SceneConfig {
    fn default() -> Self {
        SceneConfig {
            objects: 1024,
            dim: 2,
            seed: 1,
            radius_min: 0.5,
            radius_max: 1.0,
            packing_fraction: None,
            mass_model: MassModel::ProportionalToVolume,
        }
    }
}

impl SceneConfig {
    /// A default scene of `objects` bodies in `dim` dimensions with `seed`.
    pub fn new(objects: usize, dim: usize, seed: u64) -> Self {
        SceneConfig {
            objects,
            dim,
            seed,
            ..SceneConfig::default()
        }
    }

    /// The packing fraction in effect.
    pub fn effective_packing_fraction(&self) -> f64 {
        self.packing_fraction
            .unwrap_or(if self.dim == 2 { 0.3 } else { 0.15 })
    }
}

/// SplitMix64: tiny, fast, and stable across platforms and crate versions.
#[derive(Debug, Clone)]
pub(crate) struct SceneRng(u64);

impl SceneRng {
    pub(crate) fn new(seed: u64) -> Self {
        SceneRng(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    pub(crate) fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
}

/// Generates the benchmark scene: N bodies with radii uniform in the interval, placed
/// uniformly at random without overlap (random sequential addition, checked against a cell
/// grid) in a square/cube sized for the packing fraction, then numbered in grid order; speeds
/// uniform in `[0, diagonal / 1 s]`, directions uniform.
///
/// Errors: zero objects, dimension not 2 or 3, a bad radius interval or packing fraction, or
/// a packing fraction too high for the lattice (the objects do not fit).
///
/// ```
/// use broadphase_ccd::{generate_scene, SceneConfig};
/// let world = generate_scene(&SceneConfig::new(100, 3, 7)).unwrap();
/// assert_eq!(world.len(), 100);
/// assert!(generate_scene(&SceneConfig::new(0, 3, 7)).is_err());
/// ```
pub fn generate_scene(config: &SceneConfig) -> Result<World, CcdError> {
    let (n, dim) = (config.objects, config.dim);
    if dim != 2 && dim != 3 {
        return Err(CcdError::BadDimension(dim));
    }
    if n == 0 {
        return Err(CcdError::NoObjects);
    }
    let (r_min, r_max) = (config.radius_min, config.radius_max);
    if !(r_min.is_finite() && r_max.is_finite() && r_min > 0.0 && r_min <= r_max) {
        return Err(CcdError::BadRadiusRange {
            min: r_min,
            max: r_max,
        });
    }
    let fraction = config.effective_packing_fraction();
    if !(fraction > 0.0 && fraction < 1.0) {
        return Err(CcdError::BadPackingFraction(fraction));
    }
    let mut rng = SceneRng::new(config.seed);
    let radii: Vec<f64> = (0..n).map(|_| rng.range(r_min, r_max)).collect();
    let unit_volume = if dim == 2 {
        std::f64::consts::PI
    } else {
        4.0 / 3.0 * std::f64::consts::PI
    };
    for (what, value) in [("radius_min", r_min), ("radius_max", r_max)] {
        if !(MIN_MAGNITUDE..=MAX_MAGNITUDE).contains(&value) {
            return Err(CcdError::OutOfRange {
                what: what.to_string(),
                value,
            });
        }
    }
    let body_volume: f64 = radii.iter().map(|r| unit_volume * r.powi(dim as i32)).sum();
    let side = (body_volume / fraction).powf(1.0 / dim as f64);
    // Checked before anything is sized from it: a side that overflowed (huge radii, or a
    // packing fraction near zero) must not size the grid below.
    if !(side.is_finite() && (MIN_MAGNITUDE..=MAX_MAGNITUDE).contains(&side)) {
        return Err(CcdError::OutOfRange {
            what: "world extent".to_string(),
            value: side,
        });
    }
    // Random sequential placement against a grid of cells one maximum diameter wide.
    let limit = if dim == 2 { 0.9069 } else { 0.7405 };
    if fraction >= limit {
        return Err(CcdError::DoesNotFit {
            objects: n,
            reason: format!(
                "packing fraction {fraction} exceeds the densest packing ({limit}) in {dim}D"
            ),
        });
    }
    // Cells at least one largest diameter wide, and no more of them than about four per
    // body, so that the grid's memory follows the body count whatever the radii's spread.
    let most_per_side = ((4 * n) as f64).powf(1.0 / dim as f64).floor();
    let cells_per_side = (side / (2.0 * r_max))
        .floor()
        .clamp(1.0, most_per_side.max(1.0)) as usize;
    let cell_width = side / cells_per_side as f64;
    let cell_of = |p: &[f64; 3]| -> [usize; 3] {
        let mut c = [0usize; 3];
        for k in 0..dim {
            c[k] = ((p[k] / cell_width) as usize).min(cells_per_side - 1);
        }
        c
    };
    let flat = |c: [usize; 3]| c[0] + cells_per_side * (c[1] + cells_per_side * c[2]);
    let mut cells: Vec<Vec<u32>> = vec![Vec::new(); cells_per_side.pow(dim as u32)];
    let mut positions: Vec<[f64; 3]> = Vec::with_capacity(n);
    const ATTEMPTS: usize = 10_000;
    for (k, &radius) in radii.iter().enumerate() {
        let mut placed = false;
        for _ in 0..ATTEMPTS {
            let mut p = [0.0; 3];
            for c in p.iter_mut().take(dim) {
                *c = rng.range(radius, side - radius);
            }
            let c = cell_of(&p);
            let mut free = true;
            'search: for dz in 0..if dim == 3 { 3 } else { 1 } {
                for dy in 0..3 {
                    for dx in 0..3 {
                        let q = [c[0] + dx, c[1] + dy, c[2] + dz];
                        if q[0] == 0
                            || q[1] == 0
                            || (dim == 3 && q[2] == 0)
                            || q[0] > cells_per_side
                            || q[1] > cells_per_side
                            || q[2] > cells_per_side
                        {
                            continue;
                        }
                        let cell = [q[0] - 1, q[1] - 1, if dim == 3 { q[2] - 1 } else { 0 }];
                        for &j in &cells[flat(cell)] {
                            let other = positions[j as usize];
                            let d: f64 = (0..dim).map(|a| (p[a] - other[a]).powi(2)).sum();
                            let sum = radius + radii[j as usize];
                            if d < sum * sum * (1.0 + 1e-9) {
                                free = false;
                                break 'search;
                            }
                        }
                    }
                }
            }
            if free {
                cells[flat(c)].push(k as u32);
                positions.push(p);
                placed = true;
                break;
            }
        }
        if !placed {
            return Err(CcdError::DoesNotFit {
                objects: n,
                reason: format!("object {k} found no free place in {ATTEMPTS} random tries at packing fraction {fraction}; lower it"),
            });
        }
    }
    // Number bodies in grid-cell order so that spatial neighbours are close in memory.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&k| flat(cell_of(&positions[k])));
    let max_speed = side * (dim as f64).sqrt();
    let mut bodies = Vec::with_capacity(n);
    for k in order {
        let (position, radius) = (positions[k], radii[k]);
        let speed = rng.range(0.0, max_speed);
        let direction = if dim == 2 {
            let angle = rng.range(0.0, std::f64::consts::TAU);
            [angle.cos(), angle.sin(), 0.0]
        } else {
            let z = rng.range(-1.0, 1.0);
            let angle = rng.range(0.0, std::f64::consts::TAU);
            let planar = (1.0 - z * z).max(0.0).sqrt();
            [planar * angle.cos(), planar * angle.sin(), z]
        };
        let velocity = direction.map(|c| c * speed);
        bodies.push(Body::new(
            position,
            velocity,
            radius,
            config.mass_model,
            dim,
        ));
    }
    World::new(
        dim,
        [side, side, if dim == 3 { side } else { 0.0 }],
        &bodies,
    )
}
