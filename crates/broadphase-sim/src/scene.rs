//! Scene descriptions: the fields, their TOML form, overrides and validation.

use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// How object extents are drawn between `size_min` and `size_max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SizeDistribution {
    /// `Beta(size_alpha, size_beta)` scaled to `[size_min, size_max]` ([Zych16, ch. 4]).
    Beta,
    /// Normal with `size_mean` and `size_std`, clamped.
    Normal,
    /// Normal mirrored about its mean: most sizes near the ends ([Owen18, experiments]).
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
    /// Uniform in `[0, 2 * mean_speed]` ([Zych16, ch. 4]: uniform with the given average).
    Uniform,
    /// Exactly `mean_speed` ([Owen18, experiments]).
    Fixed,
}

/// A scene: the objects, their sizes, shapes and motion, and the measurement lengths.
///
/// Every field has a default (the standard configuration of [Zych16, ch. 4], at speeds stated in
/// units per second); a TOML file or command-line flags set the ones that differ.
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
    /// Velocities are re-drawn every this many steps (0: never; [Zych16, ch. 4]: 10).
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
    /// Spheres bounce elastically off each other ([Owen18, experiments]).
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
    /// Every shape, in the order of [Zych16, ch. 4].
    pub const ALL: [ShapeKind; 5] = [
        ShapeKind::Box,
        ShapeKind::Sphere,
        ShapeKind::Cylinder,
        ShapeKind::Cone,
        ShapeKind::Capsule,
    ];

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

/// A scene file or override that cannot be used: which field, where, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct SceneError {
    /// The file (or `--flag` source) the error comes from.
    pub source: Option<String>,
    /// The 1-based line in that file, when known.
    pub line: Option<usize>,
    /// The field at fault, when known.
    pub field: Option<String>,
    /// What is wrong, on one line.
    pub message: String,
}

impl SceneError {
    /// An error about `field`.
    pub fn field(field: &str, message: impl Into<String>) -> Self {
        Self {
            source: None,
            line: None,
            field: Some(field.to_string()),
            message: message.into(),
        }
    }

    fn located(mut self, source: &str, text: Option<&str>) -> Self {
        self.source = Some(source.to_string());
        if self.line.is_none() {
            if let (Some(text), Some(field)) = (text, &self.field) {
                self.line = line_of_key(text, field);
            }
        }
        self
    }
}

impl fmt::Display for SceneError {
    /// One line: control characters from the file (a `\r` inside a quoted value) are
    /// written escaped.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(source) = &self.source {
            write!(f, "{}", OneLine(source))?;
            if let Some(line) = self.line {
                write!(f, ":{line}")?;
            }
            write!(f, ": ")?;
        }
        if let Some(field) = &self.field {
            write!(f, "field `{}`: ", OneLine(field))?;
        }
        write!(f, "{}", OneLine(&self.message))
    }
}

/// Text with its control characters escaped (`\r`, `\u{1b}`), so it prints on one line.
struct OneLine<'a>(&'a str);

impl fmt::Display for OneLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.0.chars() {
            if c.is_control() {
                write!(f, "{}", c.escape_default())?;
            } else {
                write!(f, "{c}")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for SceneError {}

/// The 1-based line where `key = …` is written, if it is; `phases[i].key` is looked up
/// after the `i`-th `[[phases]]` header.
fn line_of_key(text: &str, key: &str) -> Option<usize> {
    let (skip_headers, key) = match key
        .strip_prefix("phases[")
        .and_then(|rest| rest.split_once("]."))
    {
        Some((index, key)) => (index.parse::<usize>().ok()? + 1, key),
        None => (0, key),
    };
    let mut headers = 0;
    text.lines()
        .position(|line| {
            let line = line.trim_start();
            if line.starts_with("[[phases]]") {
                headers += 1;
                return false;
            }
            headers == skip_headers
                && line
                    .strip_prefix(key)
                    .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map(|i| i + 1)
}

fn line_of_offset(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Turns a toml error into a one-line error with the line number and, when the error is
/// about one `key = value` line, the key.
fn toml_error(e: &toml::de::Error, source: &str, text: &str) -> SceneError {
    let message = e.message().trim().replace('\n', " ");
    let line = e.span().map(|span| line_of_offset(text, span.start));
    let unknown = message
        .split('`')
        .nth(1)
        .filter(|_| message.starts_with("unknown field"))
        .map(str::to_string);
    let written = line
        .and_then(|l| text.lines().nth(l - 1))
        .and_then(|l| l.split_once('='))
        .map(|(key, _)| key.trim().to_string())
        .filter(|key| {
            !key.is_empty()
                && key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        });
    SceneError {
        source: Some(source.to_string()),
        line,
        field: unknown.or(written),
        message,
    }
}

/// Parses a command-line value as TOML (number, boolean), else as a string.
fn parse_value(value: &str) -> toml::Value {
    let value = value.trim();
    match toml::from_str::<toml::Table>(&format!("v = {value}")) {
        Ok(mut table) => table
            .remove("v")
            .unwrap_or(toml::Value::String(value.into())),
        Err(_) => toml::Value::String(value.to_string()),
    }
}

/// A scene being assembled from a file and overrides; [`SceneBuilder::build`] validates it.
#[derive(Debug, Clone, Default)]
pub struct SceneBuilder {
    table: toml::Table,
    source: Option<String>,
    text: Option<String>,
    /// Fields set by [`SceneBuilder::set`]: their errors are not the file's.
    overridden: Vec<String>,
}

impl SceneBuilder {
    /// Starts from the defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts from a TOML text; checks names and types at once so that errors carry the
    /// file's line numbers (values are checked by [`SceneBuilder::build`], after overrides).
    pub fn from_toml_str(text: &str, source: &str) -> Result<Self, SceneError> {
        toml::from_str::<Scene>(text).map_err(|e| toml_error(&e, source, text))?;
        let table =
            toml::from_str::<toml::Table>(text).map_err(|e| toml_error(&e, source, text))?;
        Ok(Self {
            table,
            source: Some(source.to_string()),
            text: Some(text.to_string()),
            overridden: Vec::new(),
        })
    }

    /// Starts from a TOML file of at most [`MAX_SCENE_BYTES`].
    pub fn from_file(path: &Path) -> Result<Self, SceneError> {
        let source = path.display().to_string();
        let error = |message: String| SceneError {
            source: Some(source.clone()),
            line: None,
            field: None,
            message,
        };
        let size = std::fs::metadata(path)
            .map_err(|e| error(format!("cannot read: {e}")))?
            .len();
        if size > MAX_SCENE_BYTES {
            return Err(error(format!(
                "file too large for a scene ({size} bytes, at most {MAX_SCENE_BYTES})"
            )));
        }
        let text = std::fs::read_to_string(path).map_err(|e| error(format!("cannot read: {e}")))?;
        Self::from_toml_str(&text, &source)
    }

    /// Sets `field` to `value` (a TOML literal or a bare string), replacing the file's value.
    ///
    /// `size_alpha_beta` sets both beta parameters (the size-uniformity sweep of [Zych16, ch. 4]).
    pub fn set(&mut self, field: &str, value: &str) -> Result<&mut Self, SceneError> {
        let field = field.trim().replace('-', "_");
        if field == "size_alpha_beta" {
            self.set("size_alpha", value)?;
            return self.set("size_beta", value);
        }
        let mut value = parse_value(value);
        // Integers are fine where floats are expected.
        if let toml::Value::Integer(i) = value {
            if FLOAT_FIELDS.contains(&field.as_str()) {
                value = toml::Value::Float(i as f64);
            }
        }
        if let toml::Value::Float(x) = value {
            if INTEGER_FIELDS.contains(&field.as_str()) && x.fract() == 0.0 && x.abs() < 9e15 {
                value = toml::Value::Integer(x as i64);
            }
        }
        let mut probe = toml::Table::new();
        probe.insert(field.clone(), value.clone());
        toml::Value::Table(probe)
            .try_into::<Scene>()
            .map_err(|e| SceneError::field(&field, e.message().trim().replace('\n', " ")))?;
        if !self.overridden.contains(&field) {
            self.overridden.push(field.clone());
        }
        self.table.insert(field, value);
        Ok(self)
    }

    /// The validated scene.
    pub fn build(&self) -> Result<Scene, SceneError> {
        let source = self.source.as_deref().unwrap_or("scene");
        let mut scene: Scene =
            toml::Value::Table(self.table.clone())
                .try_into()
                .map_err(|e: toml::de::Error| {
                    SceneError::field("?", e.message().trim().replace('\n', " "))
                        .located(source, None)
                })?;
        scene.validate().map_err(|e| {
            let from_override = e
                .field
                .as_ref()
                .is_some_and(|f| self.overridden.contains(f));
            if from_override {
                e
            } else {
                e.located(source, self.text.as_deref())
            }
        })?;
        scene.steps = scene.measured_steps();
        Ok(scene)
    }
}

const FLOAT_FIELDS: &[&str] = &[
    "density",
    "world_size",
    "size_min",
    "size_max",
    "size_alpha",
    "size_beta",
    "size_mean",
    "size_std",
    "mean_speed",
    "time_step",
    "stationary_fraction",
    "gravity",
    "remove_rate",
    "teleport_rate",
    "sleep_speed",
];

const INTEGER_FIELDS: &[&str] = &[
    "objects",
    "redraw_interval",
    "terrain_boxes",
    "seed",
    "warmup",
    "steps",
];

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

    /// Checks every field; the first problem found is returned.
    pub fn validate(&self) -> Result<(), SceneError> {
        let err = |field: &str, message: String| Err(SceneError::field(field, message));
        if self.objects == 0 || self.objects > MAX_OBJECTS {
            return err(
                "objects",
                format!("must be between 1 and {MAX_OBJECTS} (got {})", self.objects),
            );
        }
        if self.terrain_boxes > MAX_OBJECTS {
            return err(
                "terrain_boxes",
                format!("must be at most {MAX_OBJECTS} (got {})", self.terrain_boxes),
            );
        }
        let positive = |field: &str, x: f64| -> Result<(), SceneError> {
            if x.is_finite() && x > 0.0 {
                Ok(())
            } else {
                err(field, format!("must be a finite positive number (got {x})"))
            }
        };
        let non_negative = |field: &str, x: f64| -> Result<(), SceneError> {
            if x.is_finite() && x >= 0.0 {
                Ok(())
            } else {
                err(
                    field,
                    format!("must be a finite non-negative number (got {x})"),
                )
            }
        };
        let fraction = |field: &str, x: f32| -> Result<(), SceneError> {
            if (0.0..=1.0).contains(&x) {
                Ok(())
            } else {
                err(field, format!("must be between 0 and 1 (got {x})"))
            }
        };
        positive("density", self.density)?;
        if let Some(w) = self.world_size {
            positive("world_size", f64::from(w))?;
        }
        positive("size_min", f64::from(self.size_min))?;
        positive("size_max", f64::from(self.size_max))?;
        if self.size_max < self.size_min {
            return err(
                "size_max",
                format!(
                    "must be at least size_min ({} < {})",
                    self.size_max, self.size_min
                ),
            );
        }
        positive("size_alpha", self.size_alpha)?;
        positive("size_beta", self.size_beta)?;
        if let Some(m) = self.size_mean {
            positive("size_mean", f64::from(m))?;
            if !(self.size_min..=self.size_max).contains(&m) {
                return err(
                    "size_mean",
                    format!("must lie in [size_min, size_max] (got {m})"),
                );
            }
        }
        if let Some(s) = self.size_std {
            positive("size_std", f64::from(s))?;
        }
        self.shape_kinds()?;
        non_negative("mean_speed", f64::from(self.mean_speed))?;
        positive("time_step", f64::from(self.time_step))?;
        if self.time_step > 1.0 {
            return err(
                "time_step",
                format!("must be at most 1 s (got {})", self.time_step),
            );
        }
        fraction("stationary_fraction", self.stationary_fraction)?;
        non_negative("gravity", f64::from(self.gravity))?;
        fraction("remove_rate", self.remove_rate)?;
        fraction("teleport_rate", self.teleport_rate)?;
        if self.steps == 0 {
            return err("steps", "must be at least 1".to_string());
        }
        non_negative("sleep_speed", f64::from(self.sleep_speed))?;
        let mut total_steps = 0usize;
        let mut counts_change = false;
        for (i, phase) in self.phases.iter().enumerate() {
            let field = |name: &str| format!("phases[{i}].{name}");
            let in_phase = |e: SceneError| SceneError {
                field: e.field.map(|f| field(&f)),
                ..e
            };
            if phase.steps == 0 {
                return err(&field("steps"), "must be at least 1".to_string());
            }
            total_steps = match total_steps.checked_add(phase.steps) {
                Some(t) if t <= MAX_STEPS => t,
                _ => {
                    return err(
                        &field("steps"),
                        format!("the phases' steps must add up to at most {MAX_STEPS}"),
                    )
                }
            };
            if let Some(x) = phase.mean_speed {
                non_negative("mean_speed", f64::from(x)).map_err(in_phase)?;
            }
            if let Some(x) = phase.gravity {
                non_negative("gravity", f64::from(x)).map_err(in_phase)?;
            }
            for (name, x) in [
                ("stationary_fraction", phase.stationary_fraction),
                ("remove_rate", phase.remove_rate),
                ("teleport_rate", phase.teleport_rate),
            ] {
                if let Some(x) = x {
                    fraction(name, x).map_err(in_phase)?;
                }
            }
            if let Some(n) = phase.objects {
                if n == 0 || n > MAX_OBJECTS {
                    return err(
                        &field("objects"),
                        format!("must be between 1 and {MAX_OBJECTS} (got {n})"),
                    );
                }
                counts_change |= n != self.objects;
            }
        }
        if counts_change && self.sphere_bounces {
            return err(
                "sphere_bounces",
                "cannot be combined with phases that change the object count".to_string(),
            );
        }
        if self.max_objects().saturating_add(self.terrain_boxes) > MAX_OBJECTS {
            return err(
                "terrain_boxes",
                format!("objects plus terrain boxes must be at most {MAX_OBJECTS}"),
            );
        }
        // TOML integers are i64: a larger value could not be written back by `to_toml`.
        for (field, value) in [
            ("seed", self.seed),
            ("warmup", self.warmup as u64),
            ("steps", self.steps as u64),
        ] {
            if value > i64::MAX as u64 {
                return err(field, format!("must be at most {} (got {value})", i64::MAX));
            }
        }
        let side = self.world_side();
        if !(side.is_finite() && side < 1e7) {
            return err(
                if self.world_size.is_some() {
                    "world_size"
                } else {
                    "density"
                },
                format!("gives a world side of {side}, beyond what f32 positions resolve"),
            );
        }
        if side <= 1.01 * self.size_max {
            return err(
                if self.world_size.is_some() {
                    "world_size"
                } else {
                    "density"
                },
                format!(
                    "gives a world side of {side}, too small for objects up to {}",
                    self.size_max
                ),
            );
        }
        Ok(())
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
                            "unknown shape '{name}' (known: sphere, box, capsule, cylinder, cone, all)"
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Scene, SceneError> {
        Scene::from_toml_str(text, "test.toml")
    }

    #[test]
    fn defaults_are_valid_and_fields_parse() {
        assert_eq!(parse("").unwrap(), Scene::default());
        let s = parse(
            "objects = 10\nworld_size = 50.0\nsize_distribution = \"inverse-normal\"\nshapes = \"sphere, box\"\nsphere_bounces = true\n",
        )
        .unwrap();
        assert_eq!(s.objects, 10);
        assert_eq!(s.world_side(), 50.0);
        assert_eq!(s.size_distribution, SizeDistribution::InverseNormal);
        assert_eq!(
            s.shape_kinds().unwrap(),
            vec![ShapeKind::Sphere, ShapeKind::Box]
        );
    }

    #[test]
    fn unknown_field_names_the_field_and_line() {
        let e = parse("objects = 10\n\ndensty = 0.1\n").unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
        assert_eq!(e.field.as_deref(), Some("densty"));
        let text = e.to_string();
        assert!(text.starts_with("test.toml:3: "), "{text}");
        assert!(text.contains("densty"), "{text}");
        assert!(!text.contains('\n'), "{text}");
    }

    #[test]
    fn wrong_types_are_reported_with_line() {
        let e = parse("seed = 1\nobjects = \"many\"\n").unwrap_err();
        assert_eq!(e.line, Some(2), "{e}");
        assert_eq!(e.field.as_deref(), Some("objects"), "{e}");
        assert!(e.to_string().contains("field `objects`"), "{e}");
        let e = parse("sphere_bounces = 3\n").unwrap_err();
        assert_eq!(e.line, Some(1), "{e}");
        let e = parse("size_distribution = \"gaussian\"\n").unwrap_err();
        assert_eq!(e.line, Some(1), "{e}");
        assert!(parse("objects = -5\n").is_err());
    }

    #[test]
    fn invalid_values_name_field_and_line() {
        let e = parse("objects = 10\ndensity = nan\n").unwrap_err();
        assert_eq!(
            (e.field.as_deref(), e.line),
            (Some("density"), Some(2)),
            "{e}"
        );
        let e = parse("objects = 0\n").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("objects"));
        let e = parse("objects = 100000000000\n").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("objects"));
        let e = parse("size_min = 2.0\nsize_max = 1.0\n").unwrap_err();
        assert_eq!((e.field.as_deref(), e.line), (Some("size_max"), Some(2)));
        let e = parse("mean_speed = inf\n").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("mean_speed"));
        let e = parse("stationary_fraction = 1.5\n").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("stationary_fraction"));
        let e = parse("shapes = \"sphere,blob\"\n").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("shapes"));
        // Found by fuzzing: a control character inside a quoted value must not break the line.
        let e = parse("shapes = \"sph\\re\"\n").unwrap_err();
        let text = e.to_string();
        assert!(!text.contains('\r') && !text.contains('\n'), "{text:?}");
        assert!(text.contains("sph\\re"), "{text:?}");
        let e = parse("world_size = 1.0\n").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("world_size"));
        let e = parse("density = 1e-30\n").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("density"));
        assert!(parse("objects = 10\nobjects = 11\n").is_err());
        // Found by the `scene` fuzz target: accepted here but not by `SceneBuilder` (TOML
        // tables hold i64), and `to_toml` wrote an empty record.
        let e = parse("objects = 10\nseed = 18446744073709551615\n").unwrap_err();
        assert_eq!((e.field.as_deref(), e.line), (Some("seed"), Some(2)), "{e}");
        assert!(SceneBuilder::from_toml_str("seed = 18446744073709551615\n", "f.toml").is_err());
        let e = parse("steps = 9223372036854775808\n").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("steps"), "{e}");
        let s = parse("seed = 9223372036854775807\n").unwrap();
        assert_eq!(parse(&s.to_toml()).unwrap(), s);
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        // toml stops at its own recursion limit; this keeps a dependency update honest.
        let deep = format!("a = {}1{}\n", "[".repeat(100_000), "]".repeat(100_000));
        let e = parse(&deep).unwrap_err();
        assert!(e.message.contains("recursion"), "{e}");
        assert!(SceneBuilder::from_toml_str(&deep, "f.toml").is_err());
        let deep = format!("a = {}1{}\n", "{b = ".repeat(100_000), "}".repeat(100_000));
        assert!(parse(&deep).is_err());
    }

    #[test]
    fn oversized_files_are_rejected_before_reading() {
        let path = std::env::temp_dir().join(format!("bp-scene-big-{}.toml", std::process::id()));
        let mut text = "# padding\n".repeat(120_000);
        text.push_str("objects = 10\n");
        std::fs::write(&path, &text).unwrap();
        let e = SceneBuilder::from_file(&path).unwrap_err();
        assert!(e.to_string().contains("file too large"), "{e}");
        std::fs::write(&path, "objects = 10\n").unwrap();
        assert_eq!(
            SceneBuilder::from_file(&path)
                .unwrap()
                .build()
                .unwrap()
                .objects,
            10
        );
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn integers_beyond_64_bits_are_rejected_by_both_routes() {
        let text = "size_beta = 17777777777777777770\n";
        let direct = Scene::from_toml_str(text, "t.toml").unwrap_err();
        let built = SceneBuilder::from_toml_str(text, "t.toml").unwrap_err();
        assert_eq!(direct.to_string(), built.to_string());
        assert!(direct.to_string().starts_with("t.toml:1:"), "{direct}");
    }

    #[test]
    fn overrides_replace_file_values_and_are_checked() {
        let mut b =
            SceneBuilder::from_toml_str("objects = 10\nmean_speed = 3.0\n", "f.toml").unwrap();
        b.set("objects", "20").unwrap();
        b.set("mean-speed", "7").unwrap();
        b.set("shapes", "sphere").unwrap();
        b.set("size_alpha_beta", "0.5").unwrap();
        let s = b.build().unwrap();
        assert_eq!(s.objects, 20);
        assert_eq!(s.mean_speed, 7.0);
        assert_eq!(s.shapes, "sphere");
        assert_eq!((s.size_alpha, s.size_beta), (0.5, 0.5));
        assert_eq!(
            b.set("nope", "1").unwrap_err().field.as_deref(),
            Some("nope")
        );
        assert!(b.set("objects", "lots").is_err());
        b.set("density", "nan").unwrap();
        let e = b.build().unwrap_err();
        assert_eq!(e.field.as_deref(), Some("density"));
        // A flag fixes an invalid file value; the file's own errors keep their line.
        let mut b = SceneBuilder::from_toml_str("objects = 10\ndensity = nan\n", "f.toml").unwrap();
        assert_eq!(b.build().unwrap_err().line, Some(2));
        b.set("density", "0.1").unwrap();
        assert_eq!(b.build().unwrap().density, 0.1);
        // A deeply nested flag value is a string (a type error).
        let deep = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(
            b.set("objects", &deep).unwrap_err().field.as_deref(),
            Some("objects")
        );
    }

    #[test]
    fn phases_parse_sum_their_steps_and_report_errors_in_place() {
        let text =
            "objects = 100\nsteps = 7\n[[phases]]\nname = \"calm\"\nsteps = 10\nmean_speed = 1\n\
                    [[phases]]\nsteps = 5\nobjects = 300\nexplode = true\n";
        let s = parse(text).unwrap();
        assert_eq!(s.steps, 15);
        assert_eq!(s.phases[0].mean_speed, Some(1.0));
        assert_eq!(s.phases[1].display_name(1), "phase 2");
        assert_eq!(s.max_objects(), 300);
        assert_eq!(s.phase_at(9), Some((0, 0)));
        assert_eq!(s.phase_at(10), Some((1, 10)));
        assert_eq!(s.phase_at(15), None);
        // The world is sized for the most objects the scene holds.
        assert_eq!(s.world_side(), (300.0f64 / s.density).cbrt() as f32);
        let e = parse("[[phases]]\nsteps = 5\n[[phases]]\nsteps = 0\n").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("phases[1].steps"), "{e}");
        assert_eq!(e.line, Some(4), "{e}");
        let e = parse("[[phases]]\nsteps = 5\nstationary_fraction = 2.0\n").unwrap_err();
        assert_eq!(
            (e.field.as_deref(), e.line),
            (Some("phases[0].stationary_fraction"), Some(3)),
            "{e}"
        );
        let e = parse("[[phases]]\nsteps = 5\nobjects = 100000000000\n").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("phases[0].objects"), "{e}");
        let e = parse("[[phases]]\nsteps = 5\nspeed = 1.0\n").unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
        let e =
            parse("sphere_bounces = true\n[[phases]]\nsteps = 5\nobjects = 2000\n").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("sphere_bounces"), "{e}");
        assert!(parse("[[phases]]\nsteps = 5\ngravity = nan\n").is_err());
    }
}
