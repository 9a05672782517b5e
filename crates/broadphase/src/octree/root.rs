//! The root cube of both octrees: where it is fitted, and when it is fitted again.

use glam::Vec3;

use crate::backend::ProxyTable;
use crate::octree::nodes::OctreeNodes;
use crate::Aabb;

/// Outside boxes tolerated beyond those left out at the last fit before the root is re-fitted,
/// on top of a quarter of the live boxes (see [`OctreeNodes::root_outgrown`]).
const REFIT_SLACK: usize = 16;

/// Updates between two checks of [`OctreeNodes::root_oversized`].
const ROOT_CHECK_INTERVAL: u32 = 64;

impl OctreeNodes {
    /// Fits a root cube around the bulk of the live boxes: the 5th to 95th percentile of their
    /// centres on each axis, grown by the typical box edge ([`ProxyTable::typical_edge`]) and
    /// then by half, so that far or huge outliers stay in the outside list instead of
    /// stretching every cell.
    pub(crate) fn fit_root(&mut self, proxies: &ProxyTable) -> Aabb {
        let margin = proxies.typical_edge(&mut self.coordinates).unwrap_or(0.0);
        let mut lo = [0f64; 3];
        let mut hi = [0f64; 3];
        for axis in 0..3 {
            self.coordinates.clear();
            self.coordinates
                .extend(proxies.live_slots().map(|i| proxies.aabb(i).center()[axis]));
            if self.coordinates.is_empty() {
                continue;
            }
            let last = self.coordinates.len() - 1;
            lo[axis] = *self
                .coordinates
                .select_nth_unstable_by(last / 20, f32::total_cmp)
                .1 as f64;
            hi[axis] = *self
                .coordinates
                .select_nth_unstable_by(last - last / 20, f32::total_cmp)
                .1 as f64;
        }
        let side = (0..3).map(|a| hi[a] - lo[a]).fold(0f64, f64::max) + 2.0 * margin;
        let half = if side > 0.0 { side * 0.75 } else { 1.0 };
        let limit = f32::MAX as f64;
        let corner = |sign: f64| {
            Vec3::from_array(
                [0, 1, 2]
                    .map(|a| ((lo[a] + hi[a]) * 0.5 + sign * half).clamp(-limit, limit) as f32),
            )
        };
        Aabb::new_unchecked(corner(-1.0), corner(1.0))
    }

    /// The refit rule: whether the scene has outgrown the root, that is, whether the outside
    /// list grew by more than [`REFIT_SLACK`] plus a quarter of the `live` boxes since the root
    /// was last fitted; the caller then fits a new root and re-inserts every box.
    ///
    /// Why: every outside box is tested against every stored box, so each box that drifts out
    /// of the root makes every later update O(n) dearer, and boxes leave only when the scene
    /// moves or spreads beyond the cube. Counting from the length right after the fit leaves
    /// alone the far outliers that [`OctreeNodes::fit_root`] keeps outside on purpose. A quarter
    /// of the boxes must leave between two refits, so the rebuild, O(n × depth), is paid at most
    /// once per n/4 departures; the slack keeps small scenes from re-fitting over a few boxes.
    /// A scene that shrinks inside the root is [`OctreeNodes::root_oversized`]'s case.
    pub(crate) fn root_outgrown(&self, live: usize) -> bool {
        self.outside.len() > self.outside_after_fit + REFIT_SLACK + live / 4
    }

    /// The other refit rule, checked every [`ROOT_CHECK_INTERVAL`] updates: whether a root
    /// fitted now would have a side under a quarter of the current one (the scene shrank, or
    /// the outliers that set the root have left), so that the boxes do not sit ever deeper
    /// in a root made for a world that is gone. O(n) per check, O(n / interval) per update.
    pub(crate) fn root_oversized(&mut self, proxies: &ProxyTable) -> bool {
        self.updates_since_check += 1;
        if self.updates_since_check < ROOT_CHECK_INTERVAL || !self.has_root {
            return false;
        }
        self.updates_since_check = 0;
        let side = |b: &Aabb| b.extents().max_element();
        let fitted = self.fit_root(proxies);
        side(&fitted) < 0.25 * side(&self.bounds[0])
    }
}
