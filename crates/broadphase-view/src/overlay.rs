//! The algorithm's own structure as boxes to draw with lines.
//!
//! Trees and octrees are read with their read-only walks (`for_each_node`). The grids'
//! cells in use, the masking slabs and the sweep's endpoint intervals follow from what the
//! library exposes (the cell size, the bins per axis, the sweep axis) and the proxies'
//! boxes, by the same rules the algorithms apply, so no internal state is read.

use broadphase::tree::TreeLeaves;
use broadphase::{Aabb, BroadPhase};
use rustc_hash::FxHashSet;

use crate::algorithm::Running;

/// Deepest tree level a page may ask for.
pub const MAX_DEPTH: u32 = 24;

/// Most overlay boxes in a frame: past this the overlay is cut (the frame says so), since
/// lines beyond it hide the scene rather than explain it.
pub const MAX_OVERLAY_BOXES: usize = 60_000;

/// What an overlay's boxes are, and what their tags mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u32)]
pub enum OverlayKind {
    /// Nothing drawn.
    #[default]
    None = 0,
    /// Uniform grid cells in use (tag 0).
    GridCells = 1,
    /// Hierarchical grid cells in use, tag = the level's rank among the occupied levels.
    HGridCells = 2,
    /// Octree or loose-octree nodes, tag = depth.
    OctreeNodes = 3,
    /// BVH or dynamic-tree nodes, tag = depth (the static tree's at depth + 128).
    TreeNodes = 4,
    /// Endpoint intervals on a sorted axis, flat boxes on the world's floor, tag = axis.
    SortedAxis = 5,
    /// Masking slabs, one flat box per slab boundary, tag = axis.
    MaskingBins = 6,
}

impl OverlayKind {
    /// The kind numbered `value` in a frame.
    pub fn from_u32(value: u32) -> Option<Self> {
        Some(match value {
            0 => Self::None,
            1 => Self::GridCells,
            2 => Self::HGridCells,
            3 => Self::OctreeNodes,
            4 => Self::TreeNodes,
            5 => Self::SortedAxis,
            6 => Self::MaskingBins,
            _ => return None,
        })
    }
}

/// An overlay: boxes with one tag each. Kept by the session and refilled every frame.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overlay {
    /// What the boxes are.
    pub kind: OverlayKind,
    /// Min x, y, z, max x, y, z.
    pub boxes: Vec<[f32; 6]>,
    /// One per box; see [`OverlayKind`].
    pub tags: Vec<u8>,
    /// Cut at [`MAX_OVERLAY_BOXES`].
    pub truncated: bool,
}

impl Overlay {
    /// Empties it, keeping its memory.
    pub fn clear(&mut self) {
        self.kind = OverlayKind::None;
        self.boxes.clear();
        self.tags.clear();
        self.truncated = false;
    }

    /// Adds a box; `false` once full.
    fn push(&mut self, aabb: [f32; 6], tag: u8) -> bool {
        if self.boxes.len() >= MAX_OVERLAY_BOXES {
            self.truncated = true;
            return false;
        }
        self.boxes.push(aabb);
        self.tags.push(tag);
        true
    }
}

fn corners(aabb: &Aabb) -> [f32; 6] {
    let (min, max) = (aabb.min(), aabb.max());
    [min.x, min.y, min.z, max.x, max.y, max.z]
}

/// Scratch of the structure walks, kept by the session so that frames do not allocate.
#[derive(Debug, Default)]
pub struct Scratch {
    cells: FxHashSet<(i32, [i64; 3])>,
    centers: Vec<f32>,
}

/// Fills `out` with the structure of `running`, trees down to `depth`.
pub fn structure(running: &Running, depth: u32, scratch: &mut Scratch, out: &mut Overlay) {
    out.clear();
    match running {
        Running::Grid(grid) => {
            out.kind = OverlayKind::GridCells;
            if let Some(size) = grid.cell_size() {
                let proxies = grid.proxies();
                let boxes = proxies.live_slots().map(|s| proxies.aabb(s));
                cells_in_use(boxes.map(|b| (0, b, size)), scratch, out);
            }
        }
        Running::HGrid(hgrid) => {
            out.kind = OverlayKind::HGridCells;
            let proxies = hgrid.proxies();
            let levels = hgrid.occupied_levels();
            let boxes = proxies.live_slots().filter_map(|s| {
                let level = hgrid.level(proxies.id(s))?;
                let rank = levels.iter().position(|&l| l == level).unwrap_or(0);
                Some((rank as i32, proxies.aabb(s), 2f32.powi(level)))
            });
            cells_in_use(boxes, scratch, out);
        }
        Running::Octree(tree) => {
            out.kind = OverlayKind::OctreeNodes;
            tree.for_each_node(|d, aabb, _| out.push(corners(aabb), d as u8) && d < depth);
        }
        Running::LooseOctree(tree) => {
            out.kind = OverlayKind::OctreeNodes;
            tree.for_each_node(|d, aabb, _| out.push(corners(aabb), d as u8) && d < depth);
        }
        Running::Bvh(bp) => {
            out.kind = OverlayKind::TreeNodes;
            bp.bvh()
                .for_each_node(|d, aabb, _| out.push(corners(aabb), d as u8) && d < depth);
        }
        Running::DynamicTree(bp) => {
            out.kind = OverlayKind::TreeNodes;
            let leaves: &TreeLeaves = bp.leaves();
            for (tree, offset) in [(bp.dynamic_tree(), 0u8), (bp.static_tree(), 128)] {
                tree.for_each_node(leaves, |d, aabb, _| {
                    out.push(corners(aabb), (d.min(127) as u8) | offset) && d < depth
                });
            }
        }
        Running::SortAndSweep(bp) => sorted_axes(bp, &[bp.sweep_axis()], out),
        Running::Sap(bp) => sorted_axes(bp, &[0, 1, 2], out),
        Running::Masking(bp) => masking_bins(bp, bp.bins(), scratch, out),
        Running::Adaptive(_) | Running::Other(_) => {}
    }
}

/// The cells of edge `size` (on `level`) that the boxes cover: `floor(v / size)` on each
/// axis, as the grids place boxes.
fn cells_in_use<'a>(
    boxes: impl Iterator<Item = (i32, &'a Aabb, f32)>,
    scratch: &mut Scratch,
    out: &mut Overlay,
) {
    scratch.cells.clear();
    // A box over more cells than this is in the grid's oversized list, not in cells.
    const MAX_CELLS_PER_BOX: i64 = 64;
    for (level, aabb, size) in boxes {
        let inv = 1.0 / f64::from(size);
        let cell = |v: f32| (f64::from(v) * inv).floor() as i64;
        let (min, max) = (aabb.min(), aabb.max());
        let lo = [cell(min.x), cell(min.y), cell(min.z)];
        let hi = [cell(max.x), cell(max.y), cell(max.z)];
        if (0..3).map(|k| hi[k] - lo[k] + 1).product::<i64>() > MAX_CELLS_PER_BOX {
            continue;
        }
        for x in lo[0]..=hi[0] {
            for y in lo[1]..=hi[1] {
                for z in lo[2]..=hi[2] {
                    if scratch.cells.insert((level, [x, y, z])) {
                        let s = f64::from(size);
                        let at = |c: i64| (c as f64 * s) as f32;
                        let aabb = [at(x), at(y), at(z), at(x + 1), at(y + 1), at(z + 1)];
                        if !out.push(aabb, level.clamp(0, 255) as u8) {
                            return;
                        }
                    }
                }
            }
        }
    }
}

/// Each box's endpoint interval on each sorted axis, drawn on the floor of the scene's
/// bounds (as a shadow of the box) so that the overlapping intervals line up.
fn sorted_axes(bp: &dyn BroadPhase, axes: &[usize], out: &mut Overlay) {
    out.kind = OverlayKind::SortedAxis;
    let proxies = bp.proxies();
    let Some(floor) = proxies
        .live_slots()
        .map(|s| proxies.aabb(s).min().y)
        .reduce(f32::min)
    else {
        return;
    };
    for slot in proxies.live_slots() {
        let b = corners(proxies.aabb(slot));
        for &axis in axes {
            let mut line = [b[0], floor, b[2], b[0], floor, b[2]];
            line[axis] = b[axis];
            line[axis + 3] = b[axis + 3];
            if axis == 1 {
                // The y intervals stand on the floor at the box's x, z.
                line[1] = b[1];
                line[4] = b[4];
            }
            if !out.push(line, axis as u8) {
                return;
            }
        }
    }
}

/// The masking slabs' boundaries: `bins` slabs per axis between the 5th and the 95th
/// percentile of the box centres, the rule the algorithm chose them by.
fn masking_bins(bp: &dyn BroadPhase, bins: [usize; 3], scratch: &mut Scratch, out: &mut Overlay) {
    out.kind = OverlayKind::MaskingBins;
    let proxies = bp.proxies();
    let mut span = [[0f32; 2]; 3];
    for (axis, range) in span.iter_mut().enumerate() {
        scratch.centers.clear();
        let centers = proxies.live_slots().map(|s| proxies.aabb(s).center()[axis]);
        scratch.centers.extend(centers);
        if scratch.centers.is_empty() {
            return;
        }
        let last = scratch.centers.len() - 1;
        let lo = *scratch
            .centers
            .select_nth_unstable_by(last / 20, f32::total_cmp)
            .1;
        let hi = *scratch
            .centers
            .select_nth_unstable_by(last - last / 20, f32::total_cmp)
            .1;
        *range = [lo, hi];
    }
    for axis in 0..3 {
        let [lo, hi] = span[axis];
        for k in 0..=bins[axis] {
            let v = lo + (hi - lo) * k as f32 / bins[axis].max(1) as f32;
            let mut plane = [
                span[0][0], span[1][0], span[2][0], span[0][1], span[1][1], span[2][1],
            ];
            plane[axis] = v;
            plane[axis + 3] = v;
            if !out.push(plane, axis as u8) {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::Session;
    use broadphase_sim::Scene;

    #[test]
    fn every_family_with_a_structure_draws_it() {
        for name in [
            "grid",
            "hgrid",
            "octree",
            "loose-octree",
            "bvh",
            "dynamic-tree",
            "sap",
            "sort-and-sweep",
            "masking",
        ] {
            let scene = Scene {
                objects: 200,
                ..Scene::default()
            };
            let mut session = Session::new(scene, name).unwrap();
            session.step().unwrap();
            let (mut scratch, mut overlay) = (Scratch::default(), Overlay::default());
            structure(session.running(), 3, &mut scratch, &mut overlay);
            assert_ne!(overlay.kind, OverlayKind::None, "{name}");
            assert!(!overlay.boxes.is_empty(), "{name}");
            assert_eq!(overlay.boxes.len(), overlay.tags.len());
            if matches!(
                overlay.kind,
                OverlayKind::TreeNodes | OverlayKind::OctreeNodes
            ) {
                assert!(overlay.tags.iter().all(|&t| t & 127 <= 3), "{name}");
            }
        }
    }
}
