//! Sweep and prune: boxes sorted along an axis, pairs found among boxes whose intervals on
//! that axis overlap. [`SweepAndPrune`] keeps the sorted endpoint lists between updates and
//! repairs them by insertion sort; [`SortAndSweep`] sorts again every update.

mod sap;
mod sort_and_sweep;

pub use sap::SweepAndPrune;
pub use sort_and_sweep::SortAndSweep;
