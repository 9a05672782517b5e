//! Cheap statistics of a step, compared between trials to notice that the scene changed.

/// Cheap statistics of the last step, compared between trials to notice a changed scene.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct SceneStats {
    pub(super) proxies: usize,
    pub(super) moved_fraction: f64,
    /// Mean displacement of moved boxes' centres over their mean edge length.
    pub(super) relative_speed: f64,
    /// Inserts plus removals over the proxy count.
    pub(super) churn: f64,
    /// Overlapping pairs per proxy (density).
    pub(super) pairs_per_proxy: f64,
}

impl SceneStats {
    /// True when a statistic changed by more than its threshold times `scale`: 1 for a
    /// changed scene, [`SHIFT`] for a shift of regime (see [`Adaptive::update`]).
    pub(super) fn differs_from(&self, other: &SceneStats, scale: f64) -> bool {
        let ratio = |a: f64, b: f64| (a.max(1e-9) / b.max(1e-9)).max(b.max(1e-9) / a.max(1e-9));
        ratio(self.proxies as f64, other.proxies as f64) > 1.0 + 0.5 * scale
            || (self.moved_fraction - other.moved_fraction).abs() > 0.25 * scale
            || (ratio(self.relative_speed, other.relative_speed) > 2.0 * scale
                && self.relative_speed.max(other.relative_speed) > 0.01)
            || (self.churn - other.churn).abs() > 0.02 * scale
            || (ratio(self.pairs_per_proxy, other.pairs_per_proxy) > 2.0 * scale
                && self.pairs_per_proxy.max(other.pairs_per_proxy) > 0.5)
    }
}

/// How much more than a change a shift of regime is (everything coming to rest, an
/// explosion, twice the proxies): it starts a round even when trials are over budget.
pub(super) const SHIFT: f64 = 2.0;
