//! [`Scene::validate`]: one check per section of the scene file, in the order of the file.

use super::{Phase, Scene, SceneError, MAX_OBJECTS, MAX_STEPS};

type Checked = Result<(), SceneError>;

fn fail(field: &str, message: String) -> Checked {
    Err(SceneError::field(field, message))
}

/// `x` is finite and above zero.
fn positive(field: &str, x: f64) -> Checked {
    if x.is_finite() && x > 0.0 {
        Ok(())
    } else {
        fail(field, format!("must be a finite positive number (got {x})"))
    }
}

/// `x` is finite and zero or more.
fn non_negative(field: &str, x: f64) -> Checked {
    if x.is_finite() && x >= 0.0 {
        Ok(())
    } else {
        fail(
            field,
            format!("must be a finite non-negative number (got {x})"),
        )
    }
}

/// `x` lies in `[0, 1]`.
fn fraction(field: &str, x: f32) -> Checked {
    if (0.0..=1.0).contains(&x) {
        Ok(())
    } else {
        fail(field, format!("must be between 0 and 1 (got {x})"))
    }
}

/// An object count of a scene or phase: at least one, at most [`MAX_OBJECTS`].
fn object_count(field: &str, n: usize) -> Checked {
    if n == 0 || n > MAX_OBJECTS {
        fail(
            field,
            format!("must be between 1 and {MAX_OBJECTS} (got {n})"),
        )
    } else {
        Ok(())
    }
}

/// An error of phase `index`'s field, named `phases[index].field`.
fn in_phase(index: usize) -> impl Fn(SceneError) -> SceneError {
    move |e| SceneError {
        field: e.field.map(|f| format!("phases[{index}].{f}")),
        ..e
    }
}

impl Scene {
    /// Checks every field; the first problem found is returned.
    pub fn validate(&self) -> Result<(), SceneError> {
        self.check_counts()?;
        self.check_world()?;
        self.check_sizes()?;
        self.shape_kinds()?;
        self.check_motion()?;
        self.check_steps()?;
        self.check_phases()?;
        self.check_totals()?;
        self.check_world_side()
    }

    /// `objects` and `terrain_boxes`.
    fn check_counts(&self) -> Checked {
        object_count("objects", self.objects)?;
        if self.terrain_boxes > MAX_OBJECTS {
            return fail(
                "terrain_boxes",
                format!("must be at most {MAX_OBJECTS} (got {})", self.terrain_boxes),
            );
        }
        Ok(())
    }

    /// `density` and `world_size` (the side they give is checked last, by
    /// [`Scene::check_world_side`], once the phases' object counts are known).
    fn check_world(&self) -> Checked {
        positive("density", self.density)?;
        if let Some(w) = self.world_size {
            positive("world_size", f64::from(w))?;
        }
        Ok(())
    }

    /// The `size_*` fields.
    fn check_sizes(&self) -> Checked {
        positive("size_min", f64::from(self.size_min))?;
        positive("size_max", f64::from(self.size_max))?;
        if self.size_max < self.size_min {
            return fail(
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
                return fail(
                    "size_mean",
                    format!("must lie in [size_min, size_max] (got {m})"),
                );
            }
        }
        if let Some(s) = self.size_std {
            positive("size_std", f64::from(s))?;
        }
        Ok(())
    }

    /// Speeds, the time step, gravity, the stationary fraction and churn.
    fn check_motion(&self) -> Checked {
        non_negative("mean_speed", f64::from(self.mean_speed))?;
        positive("time_step", f64::from(self.time_step))?;
        if self.time_step > 1.0 {
            return fail(
                "time_step",
                format!("must be at most 1 s (got {})", self.time_step),
            );
        }
        fraction("stationary_fraction", self.stationary_fraction)?;
        non_negative("gravity", f64::from(self.gravity))?;
        fraction("remove_rate", self.remove_rate)?;
        fraction("teleport_rate", self.teleport_rate)
    }

    /// `steps` and `sleep_speed`.
    fn check_steps(&self) -> Checked {
        if self.steps == 0 {
            return fail("steps", "must be at least 1".to_string());
        }
        non_negative("sleep_speed", f64::from(self.sleep_speed))
    }

    /// Every `[[phases]]` table, their total steps, and what phases exclude.
    fn check_phases(&self) -> Checked {
        let mut total_steps = 0usize;
        for (index, phase) in self.phases.iter().enumerate() {
            check_phase(phase).map_err(in_phase(index))?;
            total_steps = match total_steps.checked_add(phase.steps) {
                Some(t) if t <= MAX_STEPS => t,
                _ => {
                    return fail(
                        &format!("phases[{index}].steps"),
                        format!("the phases' steps must add up to at most {MAX_STEPS}"),
                    )
                }
            };
        }
        let counts_change = self
            .phases
            .iter()
            .any(|p| p.objects.is_some_and(|n| n != self.objects));
        if counts_change && self.sphere_bounces {
            return fail(
                "sphere_bounces",
                "cannot be combined with phases that change the object count".to_string(),
            );
        }
        Ok(())
    }

    /// Limits over several fields: objects plus terrain, and integers TOML can write back.
    fn check_totals(&self) -> Checked {
        if self.max_objects().saturating_add(self.terrain_boxes) > MAX_OBJECTS {
            return fail(
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
                return fail(field, format!("must be at most {} (got {value})", i64::MAX));
            }
        }
        Ok(())
    }

    /// The world's side, from `world_size` or `density`: resolvable by `f32` positions and
    /// larger than the largest object.
    fn check_world_side(&self) -> Checked {
        let side = self.world_side();
        let field = if self.world_size.is_some() {
            "world_size"
        } else {
            "density"
        };
        if !(side.is_finite() && side < 1e7) {
            return fail(
                field,
                format!("gives a world side of {side}, beyond what f32 positions resolve"),
            );
        }
        if side <= 1.01 * self.size_max {
            return fail(
                field,
                format!(
                    "gives a world side of {side}, too small for objects up to {}",
                    self.size_max
                ),
            );
        }
        Ok(())
    }
}

/// One phase's own fields (errors name the field without the `phases[i].` prefix).
fn check_phase(phase: &Phase) -> Checked {
    if phase.steps == 0 {
        return fail("steps", "must be at least 1".to_string());
    }
    if let Some(x) = phase.mean_speed {
        non_negative("mean_speed", f64::from(x))?;
    }
    if let Some(x) = phase.gravity {
        non_negative("gravity", f64::from(x))?;
    }
    for (name, x) in [
        ("stationary_fraction", phase.stationary_fraction),
        ("remove_rate", phase.remove_rate),
        ("teleport_rate", phase.teleport_rate),
    ] {
        if let Some(x) = x {
            fraction(name, x)?;
        }
    }
    if let Some(n) = phase.objects {
        object_count("objects", n)?;
    }
    Ok(())
}
