//! Durations given on the command line, in seconds.

use std::time::Duration;

/// Longest duration a flag takes: a year. Longer is a typo or an attack, and would overflow
/// the clock arithmetic of deadlines.
pub const MAX_SECONDS: f64 = 365.0 * 24.0 * 3600.0;

/// `seconds` (the value of `flag`) as a duration: finite, positive and at most
/// [`MAX_SECONDS`], or a one-line error naming the flag.
pub fn seconds(flag: &str, seconds: f64) -> anyhow::Result<Duration> {
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= MAX_SECONDS) {
        anyhow::bail!(
            "{flag} must be a positive number of seconds, at most {MAX_SECONDS} (a year); got {}",
            short(seconds)
        );
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// A number as a person reads it in a message: plain when of moderate magnitude, in
/// scientific notation otherwise (1e300 is not printed with 300 digits).
pub fn short(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude == 0.0 || (1e-4..1e9).contains(&magnitude) || !value.is_finite() {
        format!("{value}")
    } else {
        format!("{value:e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_positive_finite_seconds_up_to_a_year() {
        assert_eq!(seconds("--s", 1.5).unwrap(), Duration::from_millis(1500));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e300, MAX_SECONDS * 2.0] {
            let message = seconds("--s", bad).unwrap_err().to_string();
            assert!(message.starts_with("--s must be"), "{message}");
        }
    }
}
