//! The settings of [`Adaptive`](crate::Adaptive) and its switch log.

/// How a trial picks the next algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SwitchPolicy {
    /// Switch to the fastest candidate when it beats the active one by the margin.
    #[default]
    Measured,
    /// Switch to the next candidate at every trial, whatever the times, and ignore the trial
    /// budget: exercises the switching machinery (tests, `verify`), never fast.
    RoundRobin,
}

/// The algorithms `adaptive` chooses from by default, where registered: `octree` is left out
/// (its straddling boxes make it slower than `loose-octree` everywhere we measured).
pub const ADAPTIVE_DEFAULT_CANDIDATES: &[&str] = &[
    "brute-force",
    "sap",
    "sort-and-sweep",
    "grid",
    "hgrid",
    "loose-octree",
    "masking",
    "dynamic-tree",
    "bvh",
];

/// Settings of [`Adaptive`](crate::Adaptive).
#[derive(Debug, Clone, PartialEq)]
pub struct AdaptiveOptions {
    /// Algorithm names to choose from (registry names; `adaptive` itself is ignored). Empty:
    /// [`ADAPTIVE_DEFAULT_CANDIDATES`].
    pub candidates: Vec<String>,
    /// The algorithm to start with.
    pub initial: String,
    /// Fewest steps between two trials.
    pub min_trial_interval: u64,
    /// Most steps between two trials when nothing changes (the interval doubles after each
    /// trial that did not switch).
    pub max_trial_interval: u64,
    /// Switch only when the best candidate's trial time is below this fraction of the active
    /// algorithm's.
    pub switch_margin: f64,
    /// Trials may take at most this fraction of the time spent in steps. In a scene that
    /// changes steadily (a growing world) rounds use all of it, so it is a floor on the
    /// overhead there (default 0.05).
    pub trial_budget: f64,
    /// Candidates whose cost grows with n² (`brute-force`, `masking`) are tried only up to
    /// this many proxies.
    pub quadratic_limit: usize,
    /// How trials choose.
    pub policy: SwitchPolicy,
    /// Trials run on this many proxies, those nearest a typical proxy (a cube of the scene at
    /// its local density), and their times are scaled to the proxy count: a round costs
    /// little even with many proxies.
    pub trial_proxies: usize,
}

impl Default for AdaptiveOptions {
    fn default() -> Self {
        Self {
            candidates: Vec::new(),
            initial: "sort-and-sweep".to_string(),
            min_trial_interval: 8,
            max_trial_interval: 1024,
            switch_margin: 0.8,
            trial_budget: 0.05,
            quadratic_limit: 1500,
            policy: SwitchPolicy::Measured,
            trial_proxies: 512,
        }
    }
}

/// One change of algorithm.
#[derive(Debug, Clone, PartialEq)]
pub struct SwitchRecord {
    /// The update count when it happened.
    pub step: u64,
    /// The algorithm replaced.
    pub from: &'static str,
    /// The algorithm chosen.
    pub to: &'static str,
    /// Why: the trial times.
    pub reason: String,
}
