//! Algorithms by name, for programs that choose one at run time.

use crate::adaptive::AdaptiveOptions;
use crate::grid::{GridOptions, HierarchicalGridOptions};
use crate::octree::{LooseOctreeOptions, OctreeOptions};
use crate::tree::{BvhOptions, DynamicTreeOptions};
use crate::{
    Adaptive, BroadPhase, BruteForce, BvhBroadPhase, Candidate, DynamicTreeBroadPhase, Error,
    HierarchicalGrid, LooseOctree, Octree, Result, SortAndSweep, SpatialMasking, SweepAndPrune,
    UniformGrid,
};

/// The names [`create`] accepts, in the order the workbench lists them.
pub const ALGORITHMS: &[&str] = &[
    "brute-force",
    "sap",
    "sort-and-sweep",
    "adaptive",
    "grid",
    "hgrid",
    "octree",
    "loose-octree",
    "masking",
    "dynamic-tree",
    "bvh",
];

/// Options of the algorithms that have any, one options type per algorithm; each algorithm
/// reads its own. [`create`] is the one place that turns them into a broad phase.
///
/// ```
/// use broadphase::{create, AlgorithmOptions};
/// let mut options = AlgorithmOptions::default();
/// options.grid.cell_size = Some(4.0);
/// let grid = create("grid", &options)?;
/// assert_eq!(grid.name(), "grid");
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct AlgorithmOptions {
    /// Settings of `adaptive`.
    pub adaptive: AdaptiveOptions,
    /// Settings of `grid`.
    pub grid: GridOptions,
    /// Settings of `hgrid`.
    pub hgrid: HierarchicalGridOptions,
    /// Settings of `octree`.
    pub octree: OctreeOptions,
    /// Settings of `loose-octree`.
    pub loose_octree: LooseOctreeOptions,
    /// Settings of `dynamic-tree`.
    pub dynamic_tree: DynamicTreeOptions,
    /// Settings of `bvh`.
    pub bvh: BvhOptions,
}

/// Builds the algorithm called `name` (one of [`ALGORITHMS`]), tuned by its options in
/// `options`; `UnknownAlgorithm` for another name, `InvalidOption` for options out of range.
///
/// ```
/// let bp = broadphase::create("sap", &Default::default()).unwrap();
/// assert_eq!(bp.name(), "sap");
/// assert!(broadphase::create("nope", &Default::default()).is_err());
/// ```
pub fn create(name: &str, options: &AlgorithmOptions) -> Result<Box<dyn BroadPhase>> {
    if name == "adaptive" {
        return Ok(Box::new(Adaptive::new(options.adaptive.clone())?));
    }
    Ok(create_candidate(name, options)?)
}

/// [`create`], as a broad phase that [`crate::Adaptive`] can switch to (any but `adaptive`).
pub(crate) fn create_candidate(
    name: &str,
    options: &AlgorithmOptions,
) -> Result<Box<dyn Candidate>> {
    Ok(match name {
        "brute-force" => Box::new(BruteForce::new()),
        "sap" => Box::new(SweepAndPrune::new()),
        "sort-and-sweep" => Box::new(SortAndSweep::new()),
        "grid" => Box::new(UniformGrid::with_options(&options.grid)?),
        "hgrid" => Box::new(HierarchicalGrid::with_options(&options.hgrid)),
        "octree" => Box::new(Octree::with_options(&options.octree)?),
        "loose-octree" => Box::new(LooseOctree::with_options(&options.loose_octree)?),
        "masking" => Box::new(SpatialMasking::new()),
        "dynamic-tree" => Box::new(DynamicTreeBroadPhase::with_options(&options.dynamic_tree)?),
        "bvh" => Box::new(BvhBroadPhase::with_options(&options.bvh)),
        _ => {
            return Err(Error::UnknownAlgorithm {
                name: name.to_string(),
                known: ALGORITHMS.join(", "),
            })
        }
    })
}
