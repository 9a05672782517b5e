//! Typed errors of the continuous-time simulation.

use crate::event::Event;

/// Everything that can go wrong when building a world or a scene or running a simulation.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CcdError {
    /// A world or scene needs at least one object.
    #[error("the scene needs at least one object (got 0)")]
    NoObjects,
    /// More objects than the event encoding supports.
    #[error("too many objects: {0} (at most 2^31 - 1)")]
    TooManyObjects(usize),
    /// Only circles (2) and spheres (3) are supported.
    #[error("dimension must be 2 or 3, got {0}")]
    BadDimension(usize),
    /// A radius that is not finite and positive.
    #[error("object {index}: radius {radius} must be finite and positive")]
    BadRadius {
        /// Object index.
        index: usize,
        /// The offending radius.
        radius: f64,
    },
    /// A mass that is not finite and positive.
    #[error("object {index}: mass {mass} must be finite and positive")]
    BadMass {
        /// Object index.
        index: usize,
        /// The offending mass.
        mass: f64,
    },
    /// A position or velocity with a NaN or infinite component.
    #[error("object {index}: position and velocity must be finite")]
    NotFinite {
        /// Object index.
        index: usize,
    },
    /// The world box must have finite positive extents.
    #[error("world size must be finite and positive on every axis, got {0:?}")]
    BadWorldSize([f64; 3]),
    /// A world extent, radius, mass or non-zero velocity component whose magnitude lies
    /// outside `[MIN_MAGNITUDE, MAX_MAGNITUDE]` ([`crate::MIN_MAGNITUDE`],
    /// [`crate::MAX_MAGNITUDE`]): the squares and products in the time of impact would
    /// overflow or underflow f64 and collisions would be missed.
    #[error("{what} {} is outside [{min:e}, {max:e}] in magnitude (times of impact would overflow or underflow)", short(*value), min = crate::MIN_MAGNITUDE, max = crate::MAX_MAGNITUDE)]
    OutOfRange {
        /// What is out of range (`world extent`, `object 3: velocity component`, …).
        what: String,
        /// The offending value.
        value: f64,
    },
    /// An object that sticks out of the world box.
    #[error("object {index} (radius {radius}) does not fit inside the world box")]
    OutsideWorld {
        /// Object index.
        index: usize,
        /// Its radius.
        radius: f64,
    },
    /// Two objects that overlap in the initial state.
    #[error("objects {a} and {b} overlap in the initial state")]
    InitialOverlap {
        /// First object.
        a: usize,
        /// Second object.
        b: usize,
    },
    /// The scene generator cannot place the requested objects.
    #[error("{objects} objects do not fit: {reason}")]
    DoesNotFit {
        /// Requested object count.
        objects: usize,
        /// Why.
        reason: String,
    },
    /// A bad radius interval for scene generation.
    #[error("radius interval [{min}, {max}] must satisfy 0 < min <= max, both finite")]
    BadRadiusRange {
        /// Lower end.
        min: f64,
        /// Upper end.
        max: f64,
    },
    /// A packing (area or volume) fraction outside (0, 1).
    #[error("packing fraction must be in (0, 1), got {0}")]
    BadPackingFraction(f64),
    /// A simulated time that is negative, NaN or infinite, or lies in the past.
    #[error("time {0} must be finite and not before the current simulation time")]
    BadTime(f64),
    /// A method option outside its valid range.
    #[error("invalid option: {0}")]
    BadOption(String),
    /// An unknown method name.
    #[error("unknown method {0:?} (expected all-pairs, swept-bvh or calendar)")]
    UnknownMethod(String),
    /// `--check` found a difference between all-pairs and the checked method.
    #[error("check failed at event #{index}: all-pairs gives {expected}, {method} gives {found}")]
    CheckMismatch {
        /// Zero-based index of the first differing event.
        index: u64,
        /// Name of the checked method.
        method: &'static str,
        /// What all-pairs produced (`none` if no event).
        expected: EventText,
        /// What the checked method produced (`none` if no event).
        found: EventText,
    },
}

/// An optional event rendered for error messages.
#[derive(Debug, Clone, PartialEq)]
pub struct EventText(pub Option<Event>);

impl std::fmt::Display for EventText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Some(event) => write!(f, "{event}"),
            None => f.write_str("no event"),
        }
    }
}

/// A number as a person reads it: plain when of moderate magnitude, in scientific notation
/// otherwise (a value of 1e300 is not printed with 300 digits).
fn short(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude == 0.0 || (1e-4..1e9).contains(&magnitude) || !value.is_finite() {
        format!("{value}")
    } else {
        format!("{value:e}")
    }
}
