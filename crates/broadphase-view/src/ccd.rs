//! The continuous-time page's simulation: `broadphase-ccd` advanced by the page's clock
//! times its time scale, with the latest events and the method's structure in each frame.

use std::collections::VecDeque;
use std::str::FromStr;
use std::time::{Duration, Instant};

use broadphase_ccd::{generate_scene, Event, EventKind, Method, SceneConfig, Simulation};
use bytes::BytesMut;

use crate::frame::{self, CcdHeader, FrameEvent};
use crate::MAX_BODIES;

/// Most events a frame carries (the latest ones): the page flashes them, and more than a
/// few hundred flashes at once read as noise.
pub const MAX_FRAME_EVENTS: usize = 256;

/// Most bodies of the `all-pairs` method, which looks at every pair at every event: above
/// this one frame's events would take seconds.
pub const MAX_ALL_PAIRS_BODIES: usize = 4000;

/// Longest wall time one advance may take: past it the advance stops short (the frame
/// says so) and the page stays responsive, running behind its time scale.
const ADVANCE_BUDGET: Duration = Duration::from_millis(60);

/// What the page chose.
#[derive(Debug, Clone, PartialEq)]
pub struct CcdOptions {
    /// `all-pairs`, `swept-bvh` or `calendar`.
    pub method: String,
    /// Bodies.
    pub objects: usize,
    /// 2 or 3.
    pub dim: usize,
    /// The scene's seed; a restart keeps it.
    pub seed: u64,
}

impl Default for CcdOptions {
    fn default() -> Self {
        Self {
            method: "calendar".into(),
            objects: 1000,
            dim: 2,
            seed: 1,
        }
    }
}

/// What the frames draw besides the bodies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CcdOverlay {
    None,
    Swept,
    Cells,
}

/// A running simulation and the scratch of its frames.
pub struct CcdSession {
    options: CcdOptions,
    sim: Simulation,
    overlay: CcdOverlay,
    /// The latest events, oldest first.
    recent: VecDeque<Event>,
    events_in_advance: u32,
    compute_ms: f32,
    behind: bool,
    bodies: Vec<[f32; 4]>,
    events: Vec<FrameEvent>,
    swept: Vec<[f32; 6]>,
}

impl CcdSession {
    /// Generates the scene and starts the simulation; a one-line error for bad options.
    pub fn new(options: CcdOptions) -> Result<Self, String> {
        let method = Method::from_str(&options.method).map_err(|e| e.to_string())?;
        if options.objects == 0 || options.objects > MAX_BODIES {
            return Err(format!(
                "objects must be in 1..={MAX_BODIES}, not {}",
                options.objects
            ));
        }
        if method == Method::AllPairs && options.objects > MAX_ALL_PAIRS_BODIES {
            return Err(format!(
                "all-pairs is limited to {MAX_ALL_PAIRS_BODIES} bodies; choose another method"
            ));
        }
        if options.dim != 2 && options.dim != 3 {
            return Err(format!("dim must be 2 or 3, not {}", options.dim));
        }
        let config = SceneConfig::new(options.objects, options.dim, options.seed);
        let world = generate_scene(&config).map_err(|e| e.to_string())?;
        let sim = Simulation::new(world, method, &Default::default()).map_err(|e| e.to_string())?;
        Ok(Self {
            options,
            sim,
            overlay: CcdOverlay::None,
            recent: VecDeque::with_capacity(MAX_FRAME_EVENTS),
            events_in_advance: 0,
            compute_ms: 0.0,
            behind: false,
            bodies: Vec::new(),
            events: Vec::new(),
            swept: Vec::new(),
        })
    }

    /// The text sent when the simulation (re)starts.
    pub fn hello(&self) -> String {
        let methods: Vec<&str> = Method::ALL.iter().map(|m| m.name()).collect();
        serde_json::json!({
            "type": "hello",
            "methods": methods,
            "method": self.options.method,
            "objects": self.options.objects,
            "dim": self.options.dim,
            "max_objects": MAX_BODIES,
        })
        .to_string()
    }

    /// Chooses the overlay: `none`, `swept` or `cells`.
    pub fn set_overlay(&mut self, name: &str) -> Result<(), String> {
        self.overlay = match name {
            "none" => CcdOverlay::None,
            "swept" => CcdOverlay::Swept,
            "cells" => CcdOverlay::Cells,
            other => return Err(format!("unknown overlay '{other}' (none, swept, cells)")),
        };
        Ok(())
    }

    /// Simulated time now.
    pub fn now(&self) -> f64 {
        self.sim.now()
    }

    /// Collisions so far.
    pub fn collisions(&self) -> u64 {
        self.sim.collisions()
    }

    /// Applies the events of the next `dt` simulated seconds, or as many as fit in the wall
    /// budget.
    pub fn advance(&mut self, dt: f64) {
        let start = Instant::now();
        let target = self.sim.now() + dt;
        self.events_in_advance = 0;
        self.behind = false;
        while let Some(event) = self.sim.next_event_until(target) {
            if self.recent.len() == MAX_FRAME_EVENTS {
                self.recent.pop_front();
            }
            self.recent.push_back(event);
            self.events_in_advance += 1;
            // Reading the clock costs more than an event of a small scene: every 64th.
            if self.events_in_advance.is_multiple_of(64) && start.elapsed() > ADVANCE_BUDGET {
                self.behind = true;
                break;
            }
        }
        if !self.behind {
            // No event is left before the target: this only moves the clock.
            let _ = self.sim.advance_to(target, |_| {});
        }
        self.compute_ms = (start.elapsed().as_secs_f64() * 1e3) as f32;
    }

    /// The frame of the current state ([`crate::frame`]), written into `out` (cleared).
    pub fn frame(&mut self, out: &mut BytesMut) {
        let now = self.sim.now();
        let world = self.sim.world();
        self.bodies.clear();
        self.bodies.extend((0..world.len()).map(|i| {
            let p = world.position_at(i, now);
            [
                p[0] as f32,
                p[1] as f32,
                p[2] as f32,
                world.radius(i) as f32,
            ]
        }));
        // Only the events of this advance flash; older ones have already been shown.
        self.events.clear();
        let fresh = self.recent.len().min(self.events_in_advance as usize);
        self.events
            .extend(
                self.recent
                    .iter()
                    .skip(self.recent.len() - fresh)
                    .map(|e| FrameEvent {
                        time: e.time,
                        kind: match e.kind {
                            EventKind::Collision => 0,
                            EventKind::Wall => 1,
                        },
                        a: e.a,
                        b: e.b,
                    }),
            );
        let stats = self.sim.statistics();
        let stat = |name: &str| stats.iter().find(|(n, _)| *n == name).map(|&(_, v)| v);
        let time_step = stat("time_step").unwrap_or(0.0);
        self.swept.clear();
        if self.overlay == CcdOverlay::Swept && time_step > 0.0 {
            // The boxes the swept BVH holds: each body over [now, now + Δt] on its course.
            self.swept.extend((0..world.len()).map(|i| {
                let (p, v, r) = (
                    world.position_at(i, now),
                    world.velocity(i),
                    world.radius(i),
                );
                let q: [f64; 3] = std::array::from_fn(|k| p[k] + v[k] * time_step);
                let lo = |k: usize| (p[k].min(q[k]) - r) as f32;
                let hi = |k: usize| (p[k].max(q[k]) + r) as f32;
                [lo(0), lo(1), lo(2), hi(0), hi(1), hi(2)]
            }));
        }
        let cells = match (self.overlay, stat("cells")) {
            (CcdOverlay::Cells, Some(total)) => per_axis_cells(total, world.dim()),
            _ => [0; 3],
        };
        let size = world.size();
        let header = CcdHeader {
            dim: world.dim() as u32,
            time: now,
            collisions: self.sim.collisions(),
            wall_hits: self.sim.wall_hits(),
            size: [size[0] as f32, size[1] as f32, size[2] as f32],
            compute_ms: self.compute_ms,
            events: self.events_in_advance,
            cells,
            time_step: time_step as f32,
            behind: self.behind,
        };
        frame::encode_ccd(out, &header, &self.bodies, &self.events, &self.swept);
    }
}

/// The calendar's cells per axis from their total, for the generated scenes' square or
/// cubic boxes (equal counts on every axis); zeros when the total is not such a power.
fn per_axis_cells(total: f64, dim: usize) -> [u32; 3] {
    let side = total.powf(1.0 / dim as f64).round();
    if side < 1.0 || side.powi(dim as i32) != total {
        return [0; 3];
    }
    let side = side as u32;
    if dim == 2 {
        [side, side, 0]
    } else {
        [side; 3]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advancing_moves_time_and_counts_events() {
        for method in ["calendar", "swept-bvh", "all-pairs"] {
            let options = CcdOptions {
                method: method.into(),
                objects: 200,
                ..CcdOptions::default()
            };
            let mut session = CcdSession::new(options).unwrap();
            session.set_overlay("swept").unwrap();
            // An advance may stop short of its target (a slow, unoptimised build): the next
            // ones catch up.
            for _ in 0..1000 {
                if session.now() == 0.5 {
                    break;
                }
                session.advance(0.5 - session.now());
            }
            assert_eq!(session.now(), 0.5, "{method}");
            assert!(session.collisions() > 0, "{method}");
            let mut out = BytesMut::new();
            session.frame(&mut out);
            assert_eq!(&out[..4], b"BPV1");
            assert!(out.len() >= frame::CCD_HEADER_BYTES + 200 * 16);
        }
    }

    #[test]
    fn bad_options_are_refused() {
        let bad = |o: CcdOptions| CcdSession::new(o).is_err();
        assert!(bad(CcdOptions {
            method: "teleport".into(),
            ..Default::default()
        }));
        assert!(bad(CcdOptions {
            objects: 0,
            ..Default::default()
        }));
        assert!(bad(CcdOptions {
            dim: 4,
            ..Default::default()
        }));
        assert_eq!(per_axis_cells(64.0, 3), [4, 4, 4]);
        assert_eq!(per_axis_cells(10.0, 2), [0; 3]);
    }
}
