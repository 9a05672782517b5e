//! The event-by-event simulation and the choice of next-event finder.

use std::fmt;
use std::str::FromStr;

use crate::all_pairs::AllPairs;
use crate::calendar::Calendar;
use crate::error::CcdError;
use crate::event::{decode_tie, Event, EventKind, RANK_COLLISION, RANK_WALL};
use crate::response::{resolve_collision, resolve_wall};
use crate::swept_bvh::{SweptBvh, SweptBvhOptions};
use crate::vector::Vec3;
use crate::world::World;

/// Which next-event finder a [`Simulation`] uses. All produce the same event sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// Every pair at every event: O(n²) per event (the baseline of [Kaya16, Table 5.1]).
    AllPairs,
    /// [Kaya16, Algorithm 4]: BVH of swept AABBs with adaptive Δt.
    SweptBvh,
    /// Event calendar with neighbour cells: O(log n) per event.
    Calendar,
}

impl Method {
    /// All methods, baseline first.
    pub const ALL: [Method; 3] = [Method::AllPairs, Method::SweptBvh, Method::Calendar];

    /// The command-line name (`all-pairs`, `swept-bvh`, `calendar`).
    pub fn name(self) -> &'static str {
        match self {
            Method::AllPairs => "all-pairs",
            Method::SweptBvh => "swept-bvh",
            Method::Calendar => "calendar",
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Method {
    type Err = CcdError;
    fn from_str(s: &str) -> Result<Self, CcdError> {
        Method::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| CcdError::UnknownMethod(s.to_string()))
    }
}

/// Tuning options of the next-event finders.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FinderOptions {
    /// Constants of [`Method::SweptBvh`].
    pub swept_bvh: SweptBvhOptions,
    /// Whether [`Method::Calendar`] may use its AVX2 kernels where the CPU has them (default
    /// `true`). The scalar kernels give bit-identical results; `false` is for comparing them.
    pub simd: bool,
}

impl Default for FinderOptions {
    fn default() -> Self {
        FinderOptions {
            swept_bvh: SweptBvhOptions::default(),
            simd: true,
        }
    }
}

#[derive(Debug, Clone)]
enum Finder {
    AllPairs(AllPairs),
    SweptBvh(SweptBvh),
    Calendar(Box<Calendar>),
}

/// Builds the public event from a finder's `(time, tie key)`.
pub(crate) fn event_from_key(time: f64, key: u64) -> Event {
    let (rank, a, b) = decode_tie(key);
    let kind = match rank {
        RANK_COLLISION => EventKind::Collision,
        RANK_WALL => EventKind::Wall,
        _ => unreachable!("finders only report collisions and wall hits"),
    };
    Event { time, kind, a, b }
}

/// An event-driven simulation: bodies fly straight between events, which are found exactly
/// and applied one at a time in the order `(time, Event::tie_key)`.
///
/// ```
/// use broadphase_ccd::{Body, EventKind, MassModel, Method, Simulation, World};
/// let bodies = [
///     Body::new([2.0, 5.0, 0.0], [1.0, 0.0, 0.0], 1.0, MassModel::Equal, 2),
///     Body::new([8.0, 5.0, 0.0], [-1.0, 0.0, 0.0], 1.0, MassModel::Equal, 2),
/// ];
/// let world = World::new(2, [10.0, 10.0, 0.0], &bodies).unwrap();
/// let mut sim = Simulation::new(world, Method::Calendar, &Default::default()).unwrap();
/// let event = sim.next_event().unwrap();
/// assert_eq!((event.kind, event.a, event.b, event.time), (EventKind::Collision, 0, 1, 2.0));
/// assert_eq!(sim.world().velocity(0), [-1.0, 0.0, 0.0]);
/// assert_eq!(sim.position_at(0, 3.0), [3.0, 5.0, 0.0]);
/// ```
#[derive(Debug, Clone)]
pub struct Simulation {
    world: World,
    method: Method,
    finder: Finder,
    now: f64,
    collisions: u64,
    wall_hits: u64,
}

impl Simulation {
    /// A simulation of `world` from time 0 using `method`.
    pub fn new(world: World, method: Method, options: &FinderOptions) -> Result<Self, CcdError> {
        options.swept_bvh.validate()?;
        let finder = match method {
            Method::AllPairs => Finder::AllPairs(AllPairs::new()),
            Method::SweptBvh => Finder::SweptBvh(SweptBvh::new(&world, options.swept_bvh)),
            Method::Calendar => {
                Finder::Calendar(Box::new(Calendar::new(&world, 0.0, options.simd)))
            }
        };
        Ok(Simulation {
            world,
            method,
            finder,
            now: 0.0,
            collisions: 0,
            wall_hits: 0,
        })
    }

    /// The method in use.
    pub fn method(&self) -> Method {
        self.method
    }

    /// Current simulated time (time of the last event, or the last `advance_to` target).
    pub fn now(&self) -> f64 {
        self.now
    }

    /// The bodies (motion states are lazily stored; use [`Simulation::position_at`]).
    pub fn world(&self) -> &World {
        &self.world
    }

    /// Collisions applied so far.
    pub fn collisions(&self) -> u64 {
        self.collisions
    }

    /// Wall hits applied so far.
    pub fn wall_hits(&self) -> u64 {
        self.wall_hits
    }

    /// Centre of body `i` at time `t`, for any `t` from its last event up to the next event.
    pub fn position_at(&self, i: usize, t: f64) -> Vec3 {
        self.world.position_at(i, t)
    }

    /// The next event, without applying it (`None` if nothing will ever happen).
    pub fn peek_event(&mut self) -> Option<Event> {
        match &mut self.finder {
            Finder::AllPairs(f) => f.peek(&self.world),
            Finder::SweptBvh(f) => f.peek(&self.world, self.now),
            Finder::Calendar(f) => f.peek(&self.world),
        }
    }

    /// Finds the next event, applies its response and moves `now` to its time.
    pub fn next_event(&mut self) -> Option<Event> {
        let event = self.peek_event()?;
        self.apply(&event);
        Some(event)
    }

    /// The next event if it happens no later than `t`: its response is applied and `now`
    /// moves to its time, as with [`Simulation::next_event`]; else `None`, and nothing
    /// changes. One search for the event, where [`Simulation::peek_event`] followed by
    /// [`Simulation::next_event`] makes two.
    ///
    /// ```
    /// use broadphase_ccd::{Body, MassModel, Method, Simulation, World};
    /// let bodies = [Body::new([1.0, 1.0, 0.0], [1.0, 0.0, 0.0], 0.5, MassModel::Equal, 2)];
    /// let world = World::new(2, [10.0, 2.0, 0.0], &bodies).unwrap();
    /// let mut sim = Simulation::new(world, Method::Calendar, &Default::default()).unwrap();
    /// // The wall at x = 10 is hit at t = 8.5.
    /// assert!(sim.next_event_until(8.0).is_none());
    /// assert_eq!(sim.next_event_until(9.0).unwrap().time, 8.5);
    /// ```
    pub fn next_event_until(&mut self, t: f64) -> Option<Event> {
        let event = self.peek_event().filter(|e| e.time <= t)?;
        self.apply(&event);
        Some(event)
    }

    fn apply(&mut self, event: &Event) {
        let (a, b) = (event.a as usize, event.b);
        match event.kind {
            EventKind::Collision => {
                resolve_collision(&mut self.world, a, b as usize, event.time);
                self.collisions += 1;
            }
            EventKind::Wall => {
                resolve_wall(&mut self.world, a, b, event.time);
                self.wall_hits += 1;
            }
        }
        self.now = self.now.max(event.time);
        match &mut self.finder {
            Finder::AllPairs(f) => f.after_event(),
            Finder::SweptBvh(f) => f.after_event(),
            Finder::Calendar(f) => f.after_event(&self.world, event),
        }
    }

    /// Applies every event with time `<= t` in order, calling `on_event` after each, then sets
    /// `now = t`. Returns the number of events applied.
    pub fn advance_to(
        &mut self,
        t: f64,
        mut on_event: impl FnMut(&Event),
    ) -> Result<u64, CcdError> {
        if !t.is_finite() || t < self.now {
            return Err(CcdError::BadTime(t));
        }
        let mut count = 0;
        while let Some(event) = self.next_event_until(t) {
            on_event(&event);
            count += 1;
        }
        self.now = t;
        Ok(count)
    }

    /// Method-specific statistics as `(name, value)` pairs: the swept BVH's current Δt, the
    /// calendar's cell counts, cell crossings and stale predictions.
    pub fn statistics(&self) -> Vec<(&'static str, f64)> {
        match &self.finder {
            Finder::AllPairs(_) => Vec::new(),
            Finder::SweptBvh(f) => vec![("time_step", f.time_step())],
            Finder::Calendar(f) => {
                let cells = f.cells();
                let (crossings, stale) = f.internal_events();
                vec![
                    ("cells", cells.iter().map(|&c| f64::from(c)).product()),
                    ("cell_crossings", crossings as f64),
                    ("stale_predictions", stale as f64),
                ]
            }
        }
    }
}
