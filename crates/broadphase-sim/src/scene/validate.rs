//! Validation of a scene: one step per part of the file, each returning the first problem it
//! finds with the field it concerns.

use super::{Scene, SceneError, MAX_OBJECTS, MAX_STEPS};

type Checked = Result<(), SceneError>;

fn err(field: &str, message: String) -> Checked {
    Err(SceneError::field(field, message))
}

fn positive(field: &str, x: f64) -> Checked {
    if x.is_finite() && x > 0.0 {
        Ok(())
    } else {
        err(field, format!("must be a finite positive number (got {x})"))
    }
}

fn non_negative(field: &str, x: f64) -> Checked {
    if x.is_finite() && x >= 0.0 {
        Ok(())
    } else {
        err(
            field,
            format!("must be a finite non-negative number (got {x})"),
        )
    }
}

fn fraction(field: &str, x: f32) -> Checked {
    if (0.0..=1.0).contains(&x) {
        Ok(())
    } else {
        err(field, format!("must be between 0 and 1 (got {x})"))
    }
}

fn object_count(field: &str, n: usize) -> Checked {
    if n == 0 || n > MAX_OBJECTS {
        return err(
            field,
            format!("must be between 1 and {MAX_OBJECTS} (got {n})"),
        );
    }
    Ok(())
}

impl Scene {
    /// Checks every field; the first problem found is returned.
    pub fn validate(&self) -> Result<(), SceneError> {
        self.validate_counts()?;
        self.validate_sizes()?;
        self.validate_motion()?;
        self.validate_phases()?;
        self.validate_world()
    }

    /// Object and terrain counts.
    fn validate_counts(&self) -> Checked {
        object_count("objects", self.objects)?;
        if self.terrain_boxes > MAX_OBJECTS {
            return err(
                "terrain_boxes",
                format!("must be at most {MAX_OBJECTS} (got {})", self.terrain_boxes),
            );
        }
        Ok(())
    }

    /// Density or world size, the size distribution and the shapes.
    fn validate_sizes(&self) -> Checked {
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
        self.shape_kinds().map(|_| ())
    }

    /// Speeds, the time step, rates of change and the step count.
    fn validate_motion(&self) -> Checked {
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
        non_negative("sleep_speed", f64::from(self.sleep_speed))
    }

    /// Each phase's fields (named `phases[i].field`) and the phases' total steps.
    fn validate_phases(&self) -> Checked {
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
                object_count("objects", n).map_err(in_phase)?;
                counts_change |= n != self.objects;
            }
        }
        if counts_change && self.sphere_bounces {
            return err(
                "sphere_bounces",
                "cannot be combined with phases that change the object count".to_string(),
            );
        }
        Ok(())
    }

    /// What the fields give together: the most objects, integers TOML can write back, and a
    /// world that f32 positions resolve and that holds the largest object.
    fn validate_world(&self) -> Checked {
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
        let side_field = if self.world_size.is_some() {
            "world_size"
        } else {
            "density"
        };
        if !(side.is_finite() && side < 1e7) {
            return err(
                side_field,
                format!("gives a world side of {side}, beyond what f32 positions resolve"),
            );
        }
        if side <= 1.01 * self.size_max {
            return err(
                side_field,
                format!(
                    "gives a world side of {side}, too small for objects up to {}",
                    self.size_max
                ),
            );
        }
        Ok(())
    }
}
