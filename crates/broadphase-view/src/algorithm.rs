//! The running broad phase, held as its concrete type.
//!
//! `broadphase::create` returns a `Box<dyn BroadPhase>`, through which the families'
//! structure (grid cells, tree nodes, octree nodes) cannot be read. The viewer builds the
//! same algorithms with the same options itself, so that [`crate::overlay`] can draw them.

use broadphase::{
    Adaptive, AlgorithmOptions, BroadPhase, BvhBroadPhase, DynamicTreeBroadPhase, HierarchicalGrid,
    LooseOctree, Octree, SortAndSweep, SpatialMasking, SweepAndPrune, UniformGrid,
};

/// Declares [`Running`] with one variant per family, and its `get`/`get_mut` over them:
/// the list of variants is written once.
macro_rules! running {
    ($($(#[doc = $doc:literal])* $variant:ident($ty:ty),)*) => {
        /// A broad phase by family.
        // One per stream, made once per restart: boxing the large variants would buy nothing.
        #[allow(clippy::large_enum_variant)]
        pub enum Running {
            $($(#[doc = $doc])* $variant($ty),)*
            /// Any other algorithm (`brute-force`), which has no structure to draw.
            Other(Box<dyn BroadPhase>),
        }

        impl Running {
            /// The broad phase.
            pub fn get(&self) -> &dyn BroadPhase {
                match self {
                    $(Self::$variant(bp) => bp,)*
                    Self::Other(bp) => bp.as_ref(),
                }
            }

            /// The broad phase, to change.
            pub fn get_mut(&mut self) -> &mut dyn BroadPhase {
                match self {
                    $(Self::$variant(bp) => bp,)*
                    Self::Other(bp) => bp.as_mut(),
                }
            }
        }
    };
}

running! {
    /// `sap`.
    Sap(SweepAndPrune),
    /// `sort-and-sweep`.
    SortAndSweep(SortAndSweep),
    /// `grid`.
    Grid(UniformGrid),
    /// `hgrid`.
    HGrid(HierarchicalGrid),
    /// `octree`.
    Octree(Octree),
    /// `loose-octree`.
    LooseOctree(LooseOctree),
    /// `masking`.
    Masking(SpatialMasking),
    /// `dynamic-tree`.
    DynamicTree(DynamicTreeBroadPhase),
    /// `bvh`.
    Bvh(BvhBroadPhase),
    /// `adaptive`.
    Adaptive(Adaptive),
}

impl Running {
    /// The algorithm called `name`, built as `broadphase::create` builds it; the library's
    /// error (with the list of known names) for another name.
    pub fn new(name: &str, options: &AlgorithmOptions) -> broadphase::Result<Self> {
        Ok(match name {
            "sap" => Self::Sap(SweepAndPrune::new()),
            "sort-and-sweep" => Self::SortAndSweep(SortAndSweep::new()),
            "grid" => Self::Grid(UniformGrid::with_options(&options.grid)?),
            "hgrid" => Self::HGrid(HierarchicalGrid::with_options(&options.hgrid)),
            "octree" => Self::Octree(Octree::with_options(&options.octree)?),
            "loose-octree" => Self::LooseOctree(LooseOctree::with_options(&options.loose_octree)?),
            "masking" => Self::Masking(SpatialMasking::new()),
            "dynamic-tree" => {
                Self::DynamicTree(DynamicTreeBroadPhase::with_options(&options.dynamic_tree)?)
            }
            "bvh" => Self::Bvh(BvhBroadPhase::with_options(&options.bvh)),
            "adaptive" => Self::Adaptive(Adaptive::new(options.adaptive.clone())?),
            other => Self::Other(broadphase::create(other, options)?),
        })
    }

    /// The algorithm doing the work: the one `adaptive` runs now, else the algorithm itself.
    pub fn active_name(&self) -> &'static str {
        match self {
            Self::Adaptive(bp) => bp.active_name(),
            other => other.get().name(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_builds_as_itself() {
        for &name in broadphase::ALGORITHMS {
            let running = Running::new(name, &AlgorithmOptions::default()).unwrap();
            assert_eq!(running.get().name(), name);
        }
        assert!(Running::new("nope", &AlgorithmOptions::default()).is_err());
    }
}
