//! The library's error type.

use crate::ProxyId;

/// Why an operation on a broad phase or a geometric value was refused.
///
/// Every fallible call leaves the structure unchanged and usable when it returns an error,
/// except [`BroadPhase::try_update`](crate::BroadPhase::try_update), whose failure
/// [`Error::PairLimit`] describes.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// A coordinate was NaN or infinite.
    #[error("box coordinate on axis {axis} is not finite")]
    NonFiniteCoordinate {
        /// The axis (0 = x, 1 = y, 2 = z).
        axis: usize,
    },
    /// `min > max` on some axis.
    #[error("box min {min} exceeds max {max} on axis {axis}")]
    InvertedBox {
        /// The axis (0 = x, 1 = y, 2 = z).
        axis: usize,
        /// The offending minimum.
        min: f32,
        /// The offending maximum.
        max: f32,
    },
    /// The id names no live proxy of this structure: its slot was never handed out, is free,
    /// or holds a proxy of another generation (the id's proxy was removed, and the slot
    /// perhaps reused).
    ///
    /// Ids carry no mark of the structure that issued them (two structures given the same
    /// calls hand out the same ids, which the differential tests rely on), so an id of
    /// another structure is detected only when it names no live proxy here; one that
    /// happens to match a live slot and generation of this structure is taken for that
    /// proxy.
    #[error("proxy id {0} is stale or unknown")]
    StaleProxy(ProxyId),
    /// A ray with a NaN or infinite origin or direction, or a negative or NaN length.
    #[error("invalid ray: {0}")]
    InvalidRay(&'static str),
    /// More proxies than a `u32` index can address.
    #[error("proxy capacity exhausted")]
    CapacityExhausted,
    /// An update found more pairs than the broad phase's pair limit (see
    /// [`BroadPhase::set_pair_limit`](crate::BroadPhase::set_pair_limit)), or than a
    /// [`PairSet`](crate::backend::PairSet) can index. The update reported no events and
    /// the broad phase holds no pairs until an update succeeds, which reports every pair as
    /// begun.
    #[error("more than {limit} overlapping pairs (the pair limit)")]
    PairLimit {
        /// The limit that was reached.
        limit: usize,
    },
    /// An option value outside its valid range.
    #[error("invalid option: {0}")]
    InvalidOption(&'static str),
    /// No algorithm has this name.
    #[error("unknown algorithm '{name}' (known: {known})")]
    UnknownAlgorithm {
        /// The name asked for.
        name: String,
        /// The known names, comma-separated.
        known: String,
    },
}

/// `Result` with the library's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
