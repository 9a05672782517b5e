//! Scene descriptions: the fields, their TOML form, overrides and validation.

mod builder;
mod error;
mod fields;
#[cfg(test)]
mod tests;
mod validate;

use serde::{Deserialize, Serialize};

pub use builder::SceneBuilder;
use error::toml_error;
pub use error::SceneError;
pub use fields::{field_help, scene_fields};

/// How object extents are drawn between `size_min` and `size_max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SizeDistribution {
    /// `Beta(size_alpha, size_beta)` scaled to `[size_min, size_max]` ([Zych16, ch. 4.1]).
    Beta,
    /// Normal with `size_mean` and `size_std`, clamped.
    Normal,
    /// Normal mirrored about its mean: most sizes near the ends ([Owen18, Materials and
    /// Methods]).
    InverseNormal,
    /// Uniform.
    Uniform,
    /// Every object has extent `size_mean` (default: the middle of the range).
    Fixed,
}

/// How speeds are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SpeedDistribution {
    /// Uniform in `[0, 2 * mean_speed]` ([Zych16, ch. 4.1]: uniform with the given average).
    Uniform,
    /// Exactly `mean_speed` ([Owen18, Materials and Methods]).
    Fixed,
}

/// A scene: the objects, their sizes, shapes and motion, and the measurement lengths.
///
/// Every field has a default (the standard configuration of [Zych16, ch. 4.1], at speeds
/// stated in units per second); a TOML file or command-line flags set the ones that differ.
///
/// ```
/// let scene = broadphase_sim::Scene::from_toml_str("objects = 50\nshapes = \"sphere\"\n", "inline").unwrap();
/// assert_eq!(scene.objects, 50);
/// assert!(broadphase_sim::Scene::from_toml_str("objets = 50", "inline").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Scene {
    /// Number of objects (moving plus stationary; terrain and ground not included).
    pub objects: usize,
    /// Objects per unit volume; sets the side of the world cube as `(objects / density)^(1/3)`.
    pub density: f64,
    /// Explicit side of the world cube; overrides `density` when set.
    pub world_size: Option<f32>,
    /// Distribution of object extents.
    pub size_distribution: SizeDistribution,
    /// Smallest extent (full length along one dimension).
    pub size_min: f32,
    /// Largest extent.
    pub size_max: f32,
    /// α of the beta distribution.
    pub size_alpha: f64,
    /// β of the beta distribution.
    pub size_beta: f64,
    /// Mean of the normal distributions and the fixed size (default: middle of the range).
    pub size_mean: Option<f32>,
    /// Standard deviation of the normal distributions (default: range / 6).
    pub size_std: Option<f32>,
    /// Comma-separated shapes drawn uniformly: sphere, box, capsule, cylinder, cone (or `all`).
    pub shapes: String,
    /// Mean speed in units per second.
    pub mean_speed: f32,
    /// Distribution of speeds.
    pub speed_distribution: SpeedDistribution,
    /// Velocities are re-drawn every this many steps (0: never; [Zych16, ch. 4.1]: 10).
    pub redraw_interval: u32,
    /// Seconds per step.
    pub time_step: f32,
    /// Fraction of objects that never move; they are `ProxyKind::Static`.
    pub stationary_fraction: f32,
    /// Downward acceleration in units/s²; when positive, a static ground box lies under
    /// the world and objects settle on it.
    pub gravity: f32,
    /// Number of static terrain boxes tiling the floor (0: no terrain).
    pub terrain_boxes: usize,
    /// Spheres bounce elastically off each other ([Owen18, Materials and Methods]).
    pub sphere_bounces: bool,
    /// Fraction of moving objects removed and re-inserted elsewhere per step.
    pub remove_rate: f32,
    /// Fraction of moving objects teleported to a random place per step.
    pub teleport_rate: f32,
    /// Random seed: the same seed gives the same motion for every algorithm.
    pub seed: u64,
    /// Unmeasured steps before the measured ones.
    pub warmup: usize,
    /// Measured steps (with `phases`: the sum of the phases' steps, set by validation).
    pub steps: usize,
    /// A moving object resting on the ground under gravity whose speed falls below this
    /// (units/s) goes to sleep: it stops, and its box is no longer updated, as in a physics
    /// engine; a phase change wakes it (0: objects never sleep).
    pub sleep_speed: f32,
    /// Segments of the measured steps that change the settings as the scene runs; the
    /// warm-up runs with the settings above, and each phase starts from where the previous
    /// one left.
    pub phases: Vec<Phase>,
}

/// A segment of a scene that changes some settings for a number of steps.
///
/// Unset fields keep their value from the previous phase (or the scene). Velocities are
/// re-drawn at the start of every phase, which wakes sleeping objects.
///
/// ```
/// let text = "objects = 100\n[[phases]]\nname = \"calm\"\nsteps = 10\nmean_speed = 1.0\n\
///             [[phases]]\nsteps = 5\nobjects = 200\n";
/// let scene = broadphase_sim::Scene::from_toml_str(text, "inline").unwrap();
/// assert_eq!(scene.steps, 15);
/// assert_eq!(scene.phases[1].objects, Some(200));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Phase {
    /// A name for the reports (default: `phase N`, 1-based).
    pub name: Option<String>,
    /// Steps in this phase (at least 1).
    pub steps: usize,
    /// Mean speed during the phase.
    pub mean_speed: Option<f32>,
    /// Gravity during the phase (0 turns it off; the ground exists when any phase has gravity).
    pub gravity: Option<f32>,
    /// Fraction of the objects that are stationary (`ProxyKind::Static`) during the phase.
    pub stationary_fraction: Option<f32>,
    /// Churn: fraction of moving objects removed and re-inserted per step.
    pub remove_rate: Option<f32>,
    /// Fraction of moving objects teleported per step.
    pub teleport_rate: Option<f32>,
    /// Velocity re-draw interval during the phase.
    pub redraw_interval: Option<u32>,
    /// The object count reached at the end of the phase, by spawning or despawning an even
    /// share every step (default: unchanged).
    pub objects: Option<usize>,
    /// At the start of the phase every moving object flies straight away from the world's
    /// centre at the phase's speed: an explosion.
    pub explode: bool,
}

impl Phase {
    /// The phase's name, or `phase N` for the `index`-th (0-based).
    pub fn display_name(&self, index: usize) -> String {
        self.name
            .clone()
            .unwrap_or_else(|| format!("phase {}", index + 1))
    }
}

impl Default for Scene {
    fn default() -> Self {
        Self {
            objects: 1000,
            density: 0.05,
            world_size: None,
            size_distribution: SizeDistribution::Beta,
            size_min: 0.5,
            size_max: 3.0,
            size_alpha: 100.0,
            size_beta: 100.0,
            size_mean: None,
            size_std: None,
            shapes: "all".to_string(),
            mean_speed: 10.0,
            speed_distribution: SpeedDistribution::Uniform,
            redraw_interval: 10,
            time_step: 1.0 / 60.0,
            stationary_fraction: 0.0,
            gravity: 0.0,
            terrain_boxes: 0,
            sphere_bounces: false,
            remove_rate: 0.0,
            teleport_rate: 0.0,
            seed: 1,
            warmup: 20,
            steps: 100,
            sleep_speed: 0.0,
            phases: Vec::new(),
        }
    }
}

/// Most objects a scene may hold (moving plus terrain): beyond it, a typo is likelier than
/// an intent, and memory would run out before the first step.
pub const MAX_OBJECTS: usize = 10_000_000;

/// Most measured steps of a phased scene.
pub const MAX_STEPS: usize = 100_000_000;

/// Largest scene file read: a scene is a few dozen lines, and a bigger file is a mistake that
/// would otherwise be read whole into memory.
pub const MAX_SCENE_BYTES: u64 = 1 << 20;

/// The shapes a scene can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShapeKind {
    /// A ball.
    Sphere,
    /// A cuboid, randomly rotated.
    Box,
    /// A capsule, randomly rotated.
    Capsule,
    /// A cylinder along y.
    Cylinder,
    /// A cone along y.
    Cone,
}

impl ShapeKind {
    /// Every shape, in the order of [Zych16, ch. 4.2].
    pub const ALL: [ShapeKind; 5] = [
        ShapeKind::Box,
        ShapeKind::Sphere,
        ShapeKind::Cylinder,
        ShapeKind::Cone,
        ShapeKind::Capsule,
    ];

    /// The names of [`ShapeKind::ALL`], comma-separated.
    pub fn names() -> String {
        ShapeKind::ALL.map(ShapeKind::name).join(", ")
    }

    /// The name used in scene files.
    pub fn name(self) -> &'static str {
        match self {
            ShapeKind::Sphere => "sphere",
            ShapeKind::Box => "box",
            ShapeKind::Capsule => "capsule",
            ShapeKind::Cylinder => "cylinder",
            ShapeKind::Cone => "cone",
        }
    }
}

impl Scene {
    /// Parses and validates a TOML scene. `source` names the file in errors.
    pub fn from_toml_str(text: &str, source: &str) -> Result<Self, SceneError> {
        // As TOML first: deserializing straight into the scene lets through what TOML itself
        // rejects, such as an integer beyond 64 bits read into a float field (found by fuzzing:
        // the builder, which keeps the table, refused the same text).
        toml::from_str::<toml::Table>(text).map_err(|e| toml_error(&e, source, text))?;
        let mut scene: Scene = toml::from_str(text).map_err(|e| toml_error(&e, source, text))?;
        scene
            .validate()
            .map_err(|e| e.located(source, Some(text)))?;
        scene.steps = scene.measured_steps();
        Ok(scene)
    }

    /// The side of the world cube: `world_size`, or the side that holds the most objects
    /// the scene ever has at `density`.
    pub fn world_side(&self) -> f32 {
        match self.world_size {
            Some(w) => w,
            None => (self.max_objects() as f64 / self.density).cbrt() as f32,
        }
    }

    /// The most objects the scene holds at any step.
    pub fn max_objects(&self) -> usize {
        self.phases
            .iter()
            .filter_map(|p| p.objects)
            .fold(self.objects, usize::max)
    }

    /// Measured steps: the phases' total, or `steps` without phases.
    pub fn measured_steps(&self) -> usize {
        if self.phases.is_empty() {
            self.steps
        } else {
            self.phases.iter().map(|p| p.steps).sum()
        }
    }

    /// Whether gravity is on at any time (the ground box exists then).
    pub fn has_gravity(&self) -> bool {
        self.gravity > 0.0
            || self
                .phases
                .iter()
                .any(|p| p.gravity.is_some_and(|g| g > 0.0))
    }

    /// The phase of measured step `step` (0-based) and the phase's first step, or `None`
    /// without phases.
    pub fn phase_at(&self, step: usize) -> Option<(usize, usize)> {
        let mut start = 0;
        for (i, phase) in self.phases.iter().enumerate() {
            if step < start + phase.steps {
                return Some((i, start));
            }
            start += phase.steps;
        }
        None
    }

    /// The shapes of the `shapes` field.
    pub fn shape_kinds(&self) -> Result<Vec<ShapeKind>, SceneError> {
        if self.shapes.trim() == "all" {
            return Ok(ShapeKind::ALL.to_vec());
        }
        let mut kinds = Vec::new();
        for name in self
            .shapes
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            let kind = ShapeKind::ALL
                .into_iter()
                .find(|k| k.name() == name)
                .ok_or_else(|| {
                    SceneError::field(
                        "shapes",
                        format!(
                            "unknown shape '{name}' (known: {}, all)",
                            ShapeKind::names()
                        ),
                    )
                })?;
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
        if kinds.is_empty() {
            return Err(SceneError::field("shapes", "lists no shape"));
        }
        Ok(kinds)
    }

    /// The scene as TOML (every field), for the record of a run.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }
}
