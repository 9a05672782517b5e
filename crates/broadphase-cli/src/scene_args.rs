//! Scene flags shared by `bench` and `sweep`: a TOML file, then flags overriding its fields.

use std::path::PathBuf;

use broadphase_sim::SceneBuilder;
use clap::Args;

/// A scene: `--scene FILE` plus any field as a flag (flags win over the file).
#[derive(Debug, Args, Default, Clone)]
pub struct SceneArgs {
    /// Scene description (TOML); see the README for the fields.
    #[arg(long)]
    pub scene: Option<PathBuf>,
    /// Objects per unit volume (sets the world cube's side).
    #[arg(long)]
    pub density: Option<String>,
    /// Side of the world cube (overrides density).
    #[arg(long)]
    pub world_size: Option<String>,
    /// beta, normal, inverse-normal, uniform or fixed.
    #[arg(long)]
    pub size_distribution: Option<String>,
    /// Smallest object extent.
    #[arg(long)]
    pub size_min: Option<String>,
    /// Largest object extent.
    #[arg(long)]
    pub size_max: Option<String>,
    /// α of the beta size distribution.
    #[arg(long)]
    pub size_alpha: Option<String>,
    /// β of the beta size distribution.
    #[arg(long)]
    pub size_beta: Option<String>,
    /// Mean size of the normal distributions (and the fixed size).
    #[arg(long)]
    pub size_mean: Option<String>,
    /// Standard deviation of the normal size distributions.
    #[arg(long)]
    pub size_std: Option<String>,
    /// Comma-separated shapes: sphere, box, capsule, cylinder, cone, or all.
    #[arg(long)]
    pub shapes: Option<String>,
    /// Mean speed, units per second.
    #[arg(long)]
    pub mean_speed: Option<String>,
    /// uniform (0 to 2 × mean) or fixed.
    #[arg(long)]
    pub speed_distribution: Option<String>,
    /// Re-draw velocities every N steps (0: never).
    #[arg(long)]
    pub redraw_interval: Option<String>,
    /// Seconds per step.
    #[arg(long)]
    pub time_step: Option<String>,
    /// Fraction of objects that never move (static proxies).
    #[arg(long)]
    pub stationary_fraction: Option<String>,
    /// Gravity (units/s²); adds a static ground.
    #[arg(long)]
    pub gravity: Option<String>,
    /// Number of static terrain boxes.
    #[arg(long)]
    pub terrain_boxes: Option<String>,
    /// Elastic sphere–sphere bounces (true/false).
    #[arg(long)]
    pub sphere_bounces: Option<String>,
    /// Fraction of moving objects removed and re-inserted per step.
    #[arg(long)]
    pub remove_rate: Option<String>,
    /// Fraction of moving objects teleported per step.
    #[arg(long)]
    pub teleport_rate: Option<String>,
    /// Speed below which an object resting on the ground falls asleep (0: never).
    #[arg(long)]
    pub sleep_speed: Option<String>,
    /// Random seed.
    #[arg(long)]
    pub seed: Option<String>,
    /// Unmeasured steps before the measured ones.
    #[arg(long)]
    pub warmup: Option<String>,
    /// Measured steps.
    #[arg(long)]
    pub steps: Option<String>,
}

impl SceneArgs {
    /// The file's scene (or the defaults) with the flags applied; `defaults` are applied
    /// first when there is no file (the command's own interactive defaults).
    pub fn builder(&self, defaults: &[(&str, &str)]) -> anyhow::Result<SceneBuilder> {
        let mut builder = match &self.scene {
            Some(path) => SceneBuilder::from_file(path)?,
            None => {
                let mut b = SceneBuilder::new();
                for (field, value) in defaults {
                    b.set(field, value)?;
                }
                b
            }
        };
        for (field, value) in self.overrides() {
            builder
                .set(field, value)
                .map_err(|e| anyhow::anyhow!("--{}: {e}", field.replace('_', "-")))?;
        }
        Ok(builder)
    }

    fn overrides(&self) -> Vec<(&'static str, &str)> {
        let fields: [(&'static str, &Option<String>); 24] = [
            ("density", &self.density),
            ("world_size", &self.world_size),
            ("size_distribution", &self.size_distribution),
            ("size_min", &self.size_min),
            ("size_max", &self.size_max),
            ("size_alpha", &self.size_alpha),
            ("size_beta", &self.size_beta),
            ("size_mean", &self.size_mean),
            ("size_std", &self.size_std),
            ("shapes", &self.shapes),
            ("mean_speed", &self.mean_speed),
            ("speed_distribution", &self.speed_distribution),
            ("redraw_interval", &self.redraw_interval),
            ("time_step", &self.time_step),
            ("stationary_fraction", &self.stationary_fraction),
            ("gravity", &self.gravity),
            ("terrain_boxes", &self.terrain_boxes),
            ("sphere_bounces", &self.sphere_bounces),
            ("remove_rate", &self.remove_rate),
            ("teleport_rate", &self.teleport_rate),
            ("sleep_speed", &self.sleep_speed),
            ("seed", &self.seed),
            ("warmup", &self.warmup),
            ("steps", &self.steps),
        ];
        fields
            .into_iter()
            .filter_map(|(name, value)| value.as_deref().map(|v| (name, v)))
            .collect()
    }
}
