//! Object-list lengths per depth of the octree and the loose octree on the same scene (compare
//! [Zych16, Fig. 4.9]: straddling objects pile up near the root of the plain octree).
//!
//! ```text
//! cargo run --release -p broadphase --example octree_levels -- [objects]
//! ```
//!
//! The scene (default 10000 objects): boxes with edges uniform in [0.5, 3] per axis at uniform
//! random positions in a cube of side `(objects · 40)^(1/3)`, like the bench's default scene.
//! After one update, prints for each depth the nodes, the occupied nodes, the objects, the mean
//! and the longest list, and the objects outside the root.

use broadphase::octree::LevelStatistics;
use broadphase::verify::SplitMix64;
use broadphase::{
    Aabb, BroadPhase, CollisionFilter, LooseOctree, Octree, PairEvents, ProxyKind, Vec3,
};

fn fill(bp: &mut dyn BroadPhase, objects: usize) {
    let mut rng = SplitMix64::new(3);
    let side = (objects as f32 * 40.0).cbrt();
    for _ in 0..objects {
        let center = Vec3::new(
            rng.range(0.0, side),
            rng.range(0.0, side),
            rng.range(0.0, side),
        );
        let half = Vec3::new(
            rng.range(0.25, 1.5),
            rng.range(0.25, 1.5),
            rng.range(0.25, 1.5),
        );
        let aabb = Aabb::new(center - half, center + half).expect("finite box");
        bp.insert(aabb, ProxyKind::Dynamic, CollisionFilter::ALL)
            .expect("insert");
    }
    bp.update(&mut PairEvents::new());
}

fn print(name: &str, levels: &[LevelStatistics], outside: usize, pairs: usize) {
    println!("{name}: {pairs} pairs, {outside} objects outside the root");
    println!(
        "{:>5} {:>8} {:>9} {:>8} {:>10} {:>8}",
        "depth", "nodes", "occupied", "objects", "mean list", "longest"
    );
    for level in levels {
        println!(
            "{:>5} {:>8} {:>9} {:>8} {:>10.2} {:>8}",
            level.depth,
            level.nodes,
            level.occupied_nodes,
            level.objects,
            level.mean_list_length(),
            level.longest_list
        );
    }
}

fn main() {
    let objects = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000);
    let mut octree = Octree::new();
    fill(&mut octree, objects);
    print(
        "octree",
        &octree.level_statistics(),
        octree.outside_count(),
        octree.pair_count(),
    );
    let mut loose = LooseOctree::new();
    fill(&mut loose, objects);
    print(
        "loose-octree",
        &loose.level_statistics(),
        loose.outside_count(),
        loose.pair_count(),
    );
}
