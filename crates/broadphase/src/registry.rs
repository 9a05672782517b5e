//! Algorithms by name, for programs that choose one at run time.

use crate::{
    Adaptive, AdaptiveOptions, BroadPhase, BruteForce, BvhBroadPhase, BvhBuild, DescendRule,
    DynamicTreeBroadPhase, Error, HierarchicalGrid, LooseOctree, Octree, Result, SortAndSweep,
    SpatialMasking, SweepAndPrune, UniformGrid,
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

/// Options of the algorithms that have any; each algorithm reads the ones it knows.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct AlgorithmOptions {
    /// Settings of `adaptive`.
    pub adaptive: AdaptiveOptions,
    /// `grid`: cell edge length; `None` (default) chooses twice the mean largest box edge at
    /// the first update with proxies.
    pub grid_cell_size: Option<f32>,
    /// `grid`: most cells one box may cover before it goes to the oversized list; `None`
    /// (default) means [`crate::DEFAULT_MAX_CELLS_PER_BOX`] (64).
    pub grid_max_cells_per_box: Option<usize>,
    /// `hgrid`: levels with at most this many boxes (or 1/64 of all) are sparse, searched
    /// together in one coarse grid (0: always hash each level); `None` (default) means
    /// [`crate::HGRID_DEFAULT_SCAN_LIMIT`] (32).
    pub hgrid_scan_limit: Option<usize>,
    /// `octree`: depth limit (root = 0, at most 30); `None` (default) means
    /// [`crate::OCTREE_DEFAULT_MAX_DEPTH`] (8).
    pub octree_max_depth: Option<u32>,
    /// `octree`: a leaf splits when its list grows beyond this (at least 1); `None` (default)
    /// means [`crate::OCTREE_DEFAULT_SPLIT_THRESHOLD`] (16).
    pub octree_split_threshold: Option<usize>,
    /// `loose-octree`: depth limit (root = 0, at most 30); `None` (default) means
    /// [`crate::LOOSE_OCTREE_DEFAULT_MAX_DEPTH`] (10).
    pub loose_octree_max_depth: Option<u32>,
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
        "grid" => {
            let mut grid = match options.grid_cell_size {
                Some(size) => UniformGrid::with_cell_size(size)?,
                None => UniformGrid::new(),
            };
            grid.set_max_cells_per_box(
                options
                    .grid_max_cells_per_box
                    .unwrap_or(crate::DEFAULT_MAX_CELLS_PER_BOX),
            )?;
            Box::new(grid)
        }
        "hgrid" => {
            let mut hgrid = HierarchicalGrid::new();
            hgrid.set_scan_limit(
                options
                    .hgrid_scan_limit
                    .unwrap_or(crate::HGRID_DEFAULT_SCAN_LIMIT),
            );
            Box::new(hgrid)
        }
        "octree" => Box::new(Octree::with_limits(
            options
                .octree_max_depth
                .unwrap_or(crate::OCTREE_DEFAULT_MAX_DEPTH),
            options
                .octree_split_threshold
                .unwrap_or(crate::OCTREE_DEFAULT_SPLIT_THRESHOLD),
        )?),
        "loose-octree" => Box::new(LooseOctree::with_max_depth(
            options
                .loose_octree_max_depth
                .unwrap_or(crate::LOOSE_OCTREE_DEFAULT_MAX_DEPTH),
        )?),
        "masking" => Box::new(SpatialMasking::new()),
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
