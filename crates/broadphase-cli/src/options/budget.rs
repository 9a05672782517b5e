//! The memory a run may take, and the checks that refuse a run before it allocates more.
//!
//! Counts and sizes that pass validation can still ask for more memory than the machine has
//! (four billion boxes, a hundred million steps of samples, a scene whose boxes all overlap).
//! An allocation that fails aborts the process, so every command estimates what its inputs
//! will take and compares it with the memory available now (`MemAvailable`, and the address
//! space limit `ulimit -v` when lower) before it starts; what cannot be known in advance,
//! the pairs, is bounded by a pair limit derived from the same figure, which the broad
//! phases enforce with a typed error.

use std::fs;

/// Bytes the pair set, the step's changes, the events and the workbench's own list of
/// pairs take per pair, with the slack of growing arrays: see the library's guide,
/// "Memory and the pair limit".
pub const BYTES_PER_PAIR: u64 = 128;

/// What a run may allocate.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    bytes: u64,
}

impl Budget {
    /// Most of the memory available now: three quarters, so that the rest of the machine
    /// keeps running. When the figure cannot be read, 8 GiB.
    pub fn available() -> Self {
        let meminfo = fs::read_to_string("/proc/meminfo").ok();
        let available = meminfo
            .as_deref()
            .and_then(|text| field_kib(text, "MemAvailable:"))
            .map(|kib| kib.saturating_mul(1024));
        let limits = fs::read_to_string("/proc/self/limits").ok();
        let address_space = limits.as_deref().and_then(address_space_limit);
        let bytes = match (available, address_space) {
            (Some(a), Some(l)) => a.min(l),
            (Some(a), None) => a,
            (None, Some(l)) => l,
            (None, None) => 8 << 30,
        };
        Self {
            bytes: bytes / 4 * 3,
        }
    }

    /// Fails with a one-line message when `needed` bytes (an estimate of `what`) exceed the
    /// budget.
    pub fn check(&self, what: &str, needed: u128) -> anyhow::Result<()> {
        if needed > self.bytes as u128 {
            anyhow::bail!(
                "{what} would need about {} of memory, more than the {} this machine can give \
                 now; ask for less",
                human(needed),
                human(self.bytes as u128)
            );
        }
        Ok(())
    }

    /// The pair limit that keeps the pairs within the budget, beside `reserved` bytes.
    pub fn pair_limit(&self, reserved: u128) -> usize {
        let left = (self.bytes as u128).saturating_sub(reserved);
        (left / BYTES_PER_PAIR as u128).min(usize::MAX as u128) as usize
    }

    /// The budget as an error message's words.
    pub fn describe(&self) -> String {
        human(self.bytes as u128)
    }
}

/// A `/proc/meminfo` line's value in KiB.
fn field_kib(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|line| line.starts_with(name))?;
    line[name.len()..].split_whitespace().next()?.parse().ok()
}

/// The soft address-space limit of `/proc/self/limits`, in bytes (`None` when unlimited).
fn address_space_limit(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("Max address space"))?;
    line["Max address space".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Bytes in the largest binary unit that keeps the number above 1.
fn human(bytes: u128) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < units.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", units[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_proc_files() {
        let meminfo = "MemTotal:       24000000 kB\nMemAvailable:   20000000 kB\n";
        assert_eq!(field_kib(meminfo, "MemAvailable:"), Some(20_000_000));
        let limits = "Limit Soft Limit Hard Limit Units\n\
                      Max address space         4096000000           unlimited            bytes\n";
        assert_eq!(address_space_limit(limits), Some(4_096_000_000));
        let unlimited =
            "Max address space         unlimited            unlimited            bytes\n";
        assert_eq!(address_space_limit(unlimited), None);
    }

    #[test]
    fn refuses_beyond_the_budget_and_derives_a_pair_limit() {
        let budget = Budget { bytes: 1 << 30 };
        assert!(budget.check("this", 1 << 29).is_ok());
        let message = budget
            .check("four billion boxes", 96 << 30)
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("96.0 GiB") && message.contains("1.0 GiB"),
            "{message}"
        );
        assert_eq!(budget.pair_limit(0), (1 << 30) / BYTES_PER_PAIR as usize);
        assert_eq!(budget.pair_limit(u128::MAX), 0);
    }
}
