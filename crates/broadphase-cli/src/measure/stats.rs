//! Summary statistics of per-step measurements.

/// Median, 95th percentile, maximum, minimum and mean of a sample.
#[derive(Debug, Clone, Copy, Default)]
pub struct Summary {
    pub median: f64,
    pub min: f64,
    pub p95: f64,
    pub max: f64,
    pub mean: f64,
}

/// Summarises `values` (sorted in place). Zeros for an empty sample.
pub fn summarize(values: &mut [f64]) -> Summary {
    if values.is_empty() {
        return Summary::default();
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    let median = if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    };
    let p95 = values[((n as f64 * 0.95).ceil() as usize).clamp(1, n) - 1];
    Summary {
        median,
        min: values[0],
        p95,
        max: values[n - 1],
        mean: values.iter().sum::<f64>() / n as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_percentile_max() {
        let mut v: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        let s = summarize(&mut v);
        assert_eq!(s.median, 50.5);
        assert_eq!(s.p95, 95.0);
        assert_eq!(s.max, 100.0);
        assert_eq!(s.mean, 50.5);
        let mut odd = vec![3.0, 1.0, 2.0];
        assert_eq!(summarize(&mut odd).median, 2.0);
        assert_eq!(summarize(&mut []).max, 0.0);
    }
}
