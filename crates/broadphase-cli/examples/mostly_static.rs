//! Cost per step when most proxies are static: the bench scene with only a fraction of the
//! boxes moving (the rest inserted as static and never touched).
//!
//! `cargo run --release -p broadphase-cli --example mostly_static -- [objects] [steps] [algorithms]`

use std::time::Instant;

use broadphase::{create, CollisionFilter, PairEvents, ProxyId, ProxyKind};
use broadphase_sim::{BouncingBoxes, BouncingBoxesConfig};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let objects: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let steps: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(50);
    let algorithms = args.get(3).map_or("dynamic-tree,sap,bvh", String::as_str);
    println!(
        "{objects} objects of the bench scene, every k-th one dynamic and moving, the rest static;"
    );
    println!("median ms/step (set_aabb + update) over {steps} steps after 10 warm-up steps");
    println!(
        "{:<14} {:>9} {:>10} {:>12} {:>10}",
        "algorithm", "moving", "ms/step", "µs/mover", "pairs"
    );
    for name in algorithms.split(',') {
        for every in [1000, 100, 10] {
            let mut bp = create(name, &Default::default()).expect("known algorithm");
            let mut scene = BouncingBoxes::new(&BouncingBoxesConfig {
                objects,
                ..Default::default()
            })
            .unwrap();
            let mut movers: Vec<(usize, ProxyId)> = Vec::new();
            for (i, aabb) in scene.aabbs().iter().enumerate() {
                let kind = if i % every == 0 {
                    ProxyKind::Dynamic
                } else {
                    ProxyKind::Static
                };
                let id = bp.insert(*aabb, kind, CollisionFilter::ALL).unwrap();
                if kind == ProxyKind::Dynamic {
                    movers.push((i, id));
                }
            }
            let mut events = PairEvents::new();
            bp.update(&mut events);
            let mut times = Vec::new();
            for step in 0..steps + 10 {
                scene.step();
                let start = Instant::now();
                for &(i, id) in &movers {
                    bp.set_aabb(id, scene.aabbs()[i]).unwrap();
                }
                bp.update(&mut events);
                if step >= 10 {
                    times.push(start.elapsed().as_secs_f64() * 1e3);
                }
            }
            times.sort_by(f64::total_cmp);
            let median = times[times.len() / 2];
            println!(
                "{:<14} {:>9} {:>10.3} {:>12.3} {:>10}",
                name,
                movers.len(),
                median,
                median * 1e3 / movers.len() as f64,
                bp.pair_count()
            );
        }
    }
}
