//! Events of the simulation and the deterministic order among simultaneous events.

use std::cmp::Ordering;
use std::fmt;

/// What happens at an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// Two objects touch: `a < b` are object indices.
    Collision,
    /// Object `a` hits wall `b`: `b = 2 * axis + side` with side 0 the lower and 1 the upper wall.
    Wall,
}

impl EventKind {
    /// The lowercase name used in the CSV event log.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Collision => "collision",
            EventKind::Wall => "wall",
        }
    }
}

/// One event: at `time`, objects `a` and `b` collide, or object `a` hits wall `b`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Event {
    /// Absolute simulated time of the event.
    pub time: f64,
    /// Collision or wall hit.
    pub kind: EventKind,
    /// The first object (the smaller index for collisions).
    pub a: u32,
    /// The second object (collisions) or the wall index `2 * axis + side` (wall hits).
    pub b: u32,
}

/// Ranks of the event kinds in the tie rule; cell crossings (internal to the calendar) come first
/// so that grid membership is up to date before any real event at the same instant.
pub(crate) const RANK_CROSSING: u64 = 0;
pub(crate) const RANK_COLLISION: u64 = 1;
pub(crate) const RANK_WALL: u64 = 2;

/// Packs `(rank, a, b)` into one integer whose order is the tie rule among events at equal times.
#[inline]
pub(crate) fn tie_key(rank: u64, a: u32, b: u32) -> u64 {
    (rank << 62) | (u64::from(a) << 31) | u64::from(b)
}

#[inline]
pub(crate) fn decode_tie(key: u64) -> (u64, u32, u32) {
    (
        key >> 62,
        ((key >> 31) & 0x7fff_ffff) as u32,
        (key & 0x7fff_ffff) as u32,
    )
}

/// `true` when `(time_a, key_a)` comes strictly before `(time_b, key_b)`.
#[inline]
pub(crate) fn earlier(time_a: f64, key_a: u64, time_b: f64, key_b: u64) -> bool {
    // Non-short-circuit operators: no branch on the (unpredictable) comparisons.
    (time_a < time_b) | ((time_a == time_b) & (key_a < key_b))
}

impl Event {
    /// The tie rule among events at the same time: collisions before wall hits, then by `a`,
    /// then by `b`. Every method orders events by `(time, tie_key)`.
    pub fn tie_key(&self) -> u64 {
        let rank = match self.kind {
            EventKind::Collision => RANK_COLLISION,
            EventKind::Wall => RANK_WALL,
        };
        tie_key(rank, self.a, self.b)
    }

    /// Total order of events: by time, then by the tie rule.
    pub fn order(&self, other: &Event) -> Ordering {
        self.time
            .total_cmp(&other.time)
            .then(self.tie_key().cmp(&other.tie_key()))
    }

    /// Same kind and objects, and times equal within relative tolerance `rel_tol`.
    pub fn matches(&self, other: &Event, rel_tol: f64) -> bool {
        let scale = self.time.abs().max(other.time.abs()).max(1.0);
        self.kind == other.kind
            && self.a == other.a
            && self.b == other.b
            && (self.time - other.time).abs() <= rel_tol * scale
    }

    /// The CSV header of the event log.
    pub const CSV_HEADER: &'static str = "time,kind,a,b";

    /// One CSV row `time,kind,a,b` (time printed with full round-trip precision).
    pub fn csv_row(&self) -> String {
        format!("{:?},{},{},{}", self.time, self.kind.name(), self.a, self.b)
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            EventKind::Collision => {
                write!(
                    f,
                    "collision of {} and {} at t = {:?}",
                    self.a, self.b, self.time
                )
            }
            EventKind::Wall => write!(
                f,
                "object {} hits wall {} ({} {}) at t = {:?}",
                self.a,
                self.b,
                ["x", "y", "z"][(self.b / 2) as usize % 3],
                if self.b.is_multiple_of(2) {
                    "min"
                } else {
                    "max"
                },
                self.time
            ),
        }
    }
}
