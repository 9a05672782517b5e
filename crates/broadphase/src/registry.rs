//! Algorithms by name, for programs that choose one at run time.

use crate::{
    Adaptive, AdaptiveOptions, BroadPhase, BruteForce, Error, Result, SortAndSweep, SweepAndPrune,
};

/// The names [`create`] accepts, in the order the workbench lists them.
pub const ALGORITHMS: &[&str] = &["brute-force", "sap", "sort-and-sweep", "adaptive"];

/// Options of the algorithms that have any; each algorithm reads the ones it knows.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct AlgorithmOptions {
    /// Settings of `adaptive`.
    pub adaptive: AdaptiveOptions,
}

/// Builds the algorithm called `name` (one of [`ALGORITHMS`]).
///
/// ```
/// let bp = broadphase::create("sap", &Default::default()).unwrap();
/// assert_eq!(bp.name(), "sap");
/// assert!(broadphase::create("nope", &Default::default()).is_err());
/// ```
pub fn create(name: &str, options: &AlgorithmOptions) -> Result<Box<dyn BroadPhase>> {
    Ok(match name {
        "brute-force" => Box::new(BruteForce::new()),
        "sap" => Box::new(SweepAndPrune::new()),
        "sort-and-sweep" => Box::new(SortAndSweep::new()),
        "adaptive" => Box::new(Adaptive::new(options.adaptive.clone())?),
        _ => {
            return Err(Error::UnknownAlgorithm {
                name: name.to_string(),
                known: ALGORITHMS.join(", "),
            })
        }
    })
}
