//! One benchmark run: generate a scene, simulate it, report counts and speed.

use std::time::{Duration, Instant};

use crate::error::{CcdError, EventText};
use crate::event::Event;
use crate::scene::{generate_scene, SceneConfig};
use crate::simulation::{FinderOptions, Method, Simulation};

/// What to run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunConfig {
    /// The generated scene.
    pub scene: SceneConfig,
    /// Simulated seconds (finite, >= 0).
    pub seconds: f64,
    /// Next-event finder.
    pub method: Method,
    /// Finder tuning.
    pub options: FinderOptions,
    /// Run `all-pairs` beside `method` and fail at the first differing event.
    pub check: bool,
    /// Stop (with `completed = false`) once the simulation has taken this much wall time.
    pub time_cap: Option<Duration>,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            scene: SceneConfig::default(),
            seconds: 5.0,
            method: Method::Calendar,
            options: FinderOptions::default(),
            check: false,
            time_cap: None,
        }
    }
}

/// Results of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunReport {
    /// Method used.
    pub method: Method,
    /// Number of bodies.
    pub objects: usize,
    /// 2 or 3.
    pub dim: usize,
    /// Simulated time reached (the requested time unless the time cap stopped the run).
    pub simulated_seconds: f64,
    /// `false` when the time cap stopped the run early.
    pub completed: bool,
    /// Whether `all-pairs` ran alongside (then the wall time includes it).
    pub checked: bool,
    /// Collisions applied.
    pub collisions: u64,
    /// Wall hits applied.
    pub wall_hits: u64,
    /// Wall-clock time of the simulation (scene generation excluded).
    pub wall_time: Duration,
}

impl RunReport {
    /// Events (collisions + wall hits) per wall-clock second.
    pub fn events_per_second(&self) -> f64 {
        (self.collisions + self.wall_hits) as f64 / self.wall_time.as_secs_f64().max(1e-12)
    }

    /// Collisions per wall-clock second.
    pub fn collisions_per_second(&self) -> f64 {
        self.collisions as f64 / self.wall_time.as_secs_f64().max(1e-12)
    }
}

/// How many events between wall-clock checks of the time cap.
const CAP_CHECK_INTERVAL: u64 = 256;

/// Generates the scene and simulates it for `config.seconds`, calling `on_event` for every
/// event in order (e.g. to write the CSV log).
///
/// With `config.check`, an `all-pairs` simulation runs in lock step and the first event that
/// differs (kind, objects, or time beyond relative 1e-9) is returned as
/// [`CcdError::CheckMismatch`].
///
/// ```
/// use broadphase_ccd::{run, Method, RunConfig, SceneConfig};
/// let config = RunConfig { scene: SceneConfig::new(50, 2, 3), seconds: 0.5, method: Method::SweptBvh, check: true, ..RunConfig::default() };
/// let report = run(&config, &mut |_| {}).unwrap();
/// assert!(report.collisions > 0 && report.completed);
/// ```
pub fn run(config: &RunConfig, on_event: &mut dyn FnMut(&Event)) -> Result<RunReport, CcdError> {
    if !(config.seconds.is_finite() && config.seconds >= 0.0) {
        return Err(CcdError::BadTime(config.seconds));
    }
    let world = generate_scene(&config.scene)?;
    let (objects, dim) = (world.len(), world.dim());
    let mut reference = if config.check {
        Some(Simulation::new(
            world.clone(),
            Method::AllPairs,
            &config.options,
        )?)
    } else {
        None
    };
    let mut sim = Simulation::new(world, config.method, &config.options)?;
    let start = Instant::now();
    let mut completed = true;
    let mut index = 0u64;
    loop {
        // Both events are applied before they are compared: the comparison does not depend
        // on the state that leaves.
        let event = sim.next_event_until(config.seconds);
        if let Some(reference) = reference.as_mut() {
            let expected = reference.next_event_until(config.seconds);
            let same = match (&expected, &event) {
                (Some(x), Some(y)) => x.matches(y, 1e-9),
                (None, None) => true,
                _ => false,
            };
            if !same {
                return Err(CcdError::CheckMismatch {
                    index,
                    method: config.method.name(),
                    expected: EventText(expected),
                    found: EventText(event),
                });
            }
        }
        let Some(event) = event else { break };
        on_event(&event);
        index += 1;
        if index.is_multiple_of(CAP_CHECK_INTERVAL) {
            if let Some(cap) = config.time_cap {
                if start.elapsed() > cap {
                    completed = false;
                    break;
                }
            }
        }
    }
    let wall_time = start.elapsed();
    let simulated_seconds = if completed { config.seconds } else { sim.now() };
    Ok(RunReport {
        method: config.method,
        objects,
        dim,
        simulated_seconds,
        completed,
        checked: config.check,
        collisions: sim.collisions(),
        wall_hits: sim.wall_hits(),
        wall_time,
    })
}
