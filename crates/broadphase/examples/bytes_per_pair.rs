//! What pairs cost: `n` identical boxes (every pair overlaps, n(n-1)/2 pairs), one update per
//! algorithm, then the structure's `memory_bytes()` and the events' capacity per pair.
//!
//! `cargo run --release -p broadphase --example bytes_per_pair -- 3000`

use broadphase::{create, Aabb, AlgorithmOptions, CollisionFilter, Pair, PairEvents, ProxyKind};

fn main() -> Result<(), broadphase::Error> {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(3000)
        .max(2);
    let pairs = (n * (n - 1) / 2) as f64;
    for name in broadphase::ALGORITHMS {
        let mut bp = create(name, &AlgorithmOptions::default())?;
        for _ in 0..n {
            bp.insert(
                Aabb::from_arrays([0.0; 3], [1.0; 3])?,
                ProxyKind::Dynamic,
                CollisionFilter::ALL,
            )?;
        }
        let mut events = PairEvents::new();
        bp.try_update(&mut events)?;
        let event_bytes =
            (events.begun.capacity() + events.ended.capacity()) * std::mem::size_of::<Pair>();
        println!(
            "{name:15} {:6.1} bytes per pair held, {:5.1} of events ({} pairs)",
            bp.memory_bytes() as f64 / pairs,
            event_bytes as f64 / pairs,
            bp.pair_count()
        );
    }
    Ok(())
}
