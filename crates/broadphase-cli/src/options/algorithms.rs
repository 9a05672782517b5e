//! The workbench's algorithm list: the library's registry plus the peer libraries.

use broadphase::{AlgorithmOptions, BroadPhase};

/// Every algorithm name the workbench accepts: the library's [`broadphase::ALGORITHMS`]
/// then the peers ([`broadphase_peers::PEERS`]).
pub fn all_names() -> Vec<&'static str> {
    broadphase::ALGORITHMS
        .iter()
        .chain(broadphase_peers::PEERS)
        .copied()
        .collect()
}

/// Builds the algorithm called `name` (one of [`all_names`]).
pub fn create(name: &str, options: &AlgorithmOptions) -> anyhow::Result<Box<dyn BroadPhase>> {
    if broadphase_peers::PEERS.contains(&name) {
        Ok(broadphase_peers::create(name)?)
    } else if broadphase::ALGORITHMS.contains(&name) {
        Ok(broadphase::create(name, options)?)
    } else {
        anyhow::bail!(
            "unknown algorithm '{name}' (known: {})",
            all_names().join(", ")
        )
    }
}

/// Splits a comma-separated algorithm list and checks every name; none given means all.
pub fn parse_list(list: &Option<String>) -> anyhow::Result<Vec<String>> {
    let known = all_names();
    let names: Vec<String> = match list {
        None => known.iter().map(|s| s.to_string()).collect(),
        Some(list) => list
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
    };
    if names.is_empty() {
        anyhow::bail!("--algorithms lists no algorithm");
    }
    for name in &names {
        if !known.contains(&name.as_str()) {
            anyhow::bail!("unknown algorithm '{name}' (known: {})", known.join(", "));
        }
    }
    // A name given twice is run once, where it first appears.
    let mut unique: Vec<String> = Vec::with_capacity(names.len());
    for name in names {
        if !unique.contains(&name) {
            unique.push(name);
        }
    }
    Ok(unique)
}
