//! The workbench's algorithm list: the library's registry plus the peer libraries.

use broadphase::{AlgorithmOptions, BroadPhase};

/// The peers the workbench can build: [`broadphase_peers::PEERS`], then (feature `physx`)
/// [`broadphase_peers::PHYSX_PEERS`].
pub fn peer_names() -> Vec<&'static str> {
    let peers = broadphase_peers::PEERS.iter();
    #[cfg(feature = "physx")]
    let peers = peers.chain(broadphase_peers::PHYSX_PEERS);
    peers.copied().collect()
}

/// Every algorithm name the workbench accepts: the library's [`broadphase::ALGORITHMS`]
/// then the peers ([`peer_names`]).
pub fn all_names() -> Vec<&'static str> {
    broadphase::ALGORITHMS
        .iter()
        .copied()
        .chain(peer_names())
        .collect()
}

/// Builds the algorithm called `name` (one of [`all_names`]).
pub fn create(name: &str, options: &AlgorithmOptions) -> anyhow::Result<Box<dyn BroadPhase>> {
    #[cfg(feature = "physx")]
    if let Some(physx) = broadphase_peers::create_physx(name) {
        return Ok(physx?);
    }
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
