//! What a verification run is asked to do and what it found.

use std::collections::BTreeSet;

use super::Scenario;

/// What to run.
#[derive(Debug, Clone)]
pub struct VerifyConfig {
    /// Target number of live proxies.
    pub objects: usize,
    /// Number of updates.
    pub steps: usize,
    /// Random seed.
    pub seed: u64,
    /// One scenario, or `None` to cycle through [`Scenario::ALL`] (with a `clear` between).
    pub scenario: Option<Scenario>,
}

impl Default for VerifyConfig {
    fn default() -> Self {
        Self {
            objects: 200,
            steps: 600,
            seed: 1,
            scenario: None,
        }
    }
}

/// The outcome of a run.
#[derive(Debug, Clone, Default)]
pub struct VerifyReport {
    /// Algorithms compared.
    pub algorithms: usize,
    /// Updates made.
    pub steps: usize,
    /// Individual comparisons made (pair sets, events, queries, error results).
    pub checks: u64,
    /// Comparisons that failed.
    pub mismatches: u64,
    /// The first failure, described.
    pub first_mismatch: Option<String>,
    /// Updates that failed on the pair limit (each checked: over the limit, no pairs and no
    /// events left, every pair begun again at the next success).
    pub refused: u64,
}

/// A pair-list difference, described: counts, up to five extra and five missing pairs, and
/// the duplicates.
pub(super) fn describe_difference(got: &[(u32, u32)], expected: &[(u32, u32)]) -> String {
    let got_set: BTreeSet<_> = got.iter().collect();
    let expected_set: BTreeSet<_> = expected.iter().collect();
    let extra: Vec<_> = got_set.difference(&expected_set).take(5).collect();
    let missing: Vec<_> = expected_set.difference(&got_set).take(5).collect();
    let duplicates = got.len() - got_set.len();
    format!(
        "{} reported, {} expected; extra (handles) {extra:?}, missing {missing:?}, duplicates {duplicates}",
        got.len(),
        expected.len()
    )
}
