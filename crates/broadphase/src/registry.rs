//! Algorithms by name, for programs that choose one at run time.

use crate::{
    Adaptive, AdaptiveOptions, BroadPhase, BruteForce, BvhBroadPhase, BvhBuild, DescendRule,
    DynamicTreeBroadPhase, Error, Result, SortAndSweep, SweepAndPrune,
};

/// The names [`create`] accepts, in the order the workbench lists them.
pub const ALGORITHMS: &[&str] = &[
    "brute-force",
    "sap",
    "sort-and-sweep",
    "adaptive",
    "dynamic-tree",
    "bvh",
];

/// Options of the algorithms that have any; each algorithm reads the ones it knows.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct AlgorithmOptions {
    /// Settings of `adaptive`.
    pub adaptive: AdaptiveOptions,
    /// `dynamic-tree`: enlargement of leaf boxes on every side, finite and non-negative;
    /// `None` means [`crate::DEFAULT_TREE_MARGIN`].
    pub tree_margin: Option<f32>,
    /// `bvh`: how the hierarchy is built.
    pub bvh_build: BvhBuild,
    /// `bvh`: the descend rule of the self-collision traversal.
    pub bvh_descend: DescendRule,
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
        "dynamic-tree" => Box::new(DynamicTreeBroadPhase::new(
            options.tree_margin.unwrap_or(crate::DEFAULT_TREE_MARGIN),
        )?),
        "bvh" => Box::new(BvhBroadPhase::new(options.bvh_build, options.bvh_descend)),
        _ => {
            return Err(Error::UnknownAlgorithm {
                name: name.to_string(),
                known: ALGORITHMS.join(", "),
            })
        }
    })
}
