//! Tree quality on the bench scene: runs `dynamic-tree` and `bvh` (every build strategy) for
//! a number of steps and prints height, internal surface area, memory and step counts.
//!
//! `cargo run --release -p broadphase-cli --example tree_quality -- [objects] [steps] [margin]`

use std::time::Instant;

use broadphase::tree::{BvhBuild, DescendRule, DynamicTreeOptions, TraversalStack};
use broadphase::{
    BroadPhase, BvhBroadPhase, CollisionFilter, DynamicTreeBroadPhase, PairEvents, ProxyId,
    ProxyKind,
};
use broadphase_sim::{BouncingBoxes, BouncingBoxesConfig};

fn scene(objects: usize) -> BouncingBoxes {
    BouncingBoxes::new(&BouncingBoxesConfig {
        objects,
        ..Default::default()
    })
    .expect("valid scene")
}

fn run(
    bp: &mut dyn BroadPhase,
    objects: usize,
    steps: usize,
    mut after: impl FnMut(&dyn BroadPhase),
) -> f64 {
    let mut scene = scene(objects);
    let ids: Vec<ProxyId> = scene
        .aabbs()
        .iter()
        .map(|b| {
            bp.insert(*b, ProxyKind::Dynamic, CollisionFilter::ALL)
                .unwrap()
        })
        .collect();
    let mut events = PairEvents::new();
    bp.update(&mut events);
    let mut times = Vec::with_capacity(steps);
    for _ in 0..steps {
        scene.step();
        let start = Instant::now();
        for (id, b) in ids.iter().zip(scene.aabbs()) {
            bp.set_aabb(*id, *b).unwrap();
        }
        bp.update(&mut events);
        times.push(start.elapsed().as_secs_f64() * 1e3);
        after(bp);
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let objects: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let steps: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let margin: f32 = args
        .get(3)
        .and_then(|s| s.parse().ok())
        .unwrap_or(DynamicTreeOptions::default().margin);
    println!("{objects} objects, {steps} steps of the default bench scene; median ms/step over the steps");
    println!(
        "{:<28} {:>7} {:>16} {:>10} {:>12} {:>10}",
        "structure", "height", "internal area", "ms/step", "tree B/proxy", "rebuilds"
    );

    let mut options = DynamicTreeOptions::default();
    options.margin = margin;
    let mut tree = DynamicTreeBroadPhase::with_options(&options).unwrap();
    let ms = run(&mut tree, objects, steps, |_| {});
    println!(
        "{:<28} {:>7} {:>16.4e} {:>10.3} {:>12.1} {:>10}",
        format!("dynamic-tree (margin {margin})"),
        tree.dynamic_tree().height(),
        tree.dynamic_tree().internal_area(),
        ms,
        tree.tree_used_bytes() as f64 / objects as f64,
        "-"
    );
    println!(
        "  last step: {} moved, {} enlarged (re-inserted), {} candidate pairs, {} pairs",
        tree.last_step().moved,
        tree.last_step().enlarged,
        tree.last_step().candidates,
        tree.pair_count()
    );
    let mut trees = Vec::new();
    for build in BvhBuild::ALL {
        let mut bvh = BvhBroadPhase::new(build, DescendRule::Simultaneous);
        let ms = run(&mut bvh, objects, steps, |_| {});
        println!(
            "{:<28} {:>7} {:>16.4e} {:>10.3} {:>12.1} {:>10}",
            format!("bvh {build}"),
            bvh.bvh().height(),
            bvh.bvh().internal_area(),
            ms,
            (bvh.bvh().node_count() * 32) as f64 / objects as f64,
            bvh.rebuilds()
        );
        trees.push((build, bvh));
    }
    // Descend rules on the same hierarchies (as left after the run): the self-collision
    // traversal alone, the two rules alternating, median of 21 runs each.
    println!("\nself-collision traversal of each final hierarchy, median ms of 21 runs");
    println!(
        "{:<12} {:>14} {:>14} {:>8} {:>10}",
        "build", "simultaneous", "larger-volume", "ratio", "pairs"
    );
    let mut stack = TraversalStack::new();
    for (build, bp) in &trees {
        let mut times = [Vec::new(), Vec::new()];
        let mut pairs = 0;
        for _ in 0..21 {
            for (k, rule) in DescendRule::ALL.into_iter().enumerate() {
                let mut count = 0usize;
                let start = Instant::now();
                bp.bvh().self_pairs(rule, &mut stack, |_, _| count += 1);
                times[k].push(start.elapsed().as_secs_f64() * 1e3);
                pairs = count;
            }
        }
        for t in &mut times {
            t.sort_by(f64::total_cmp);
        }
        let (simultaneous, larger) = (times[0][10], times[1][10]);
        println!(
            "{:<12} {:>14.3} {:>14.3} {:>8.2} {:>10}",
            build.to_string(),
            simultaneous,
            larger,
            larger / simultaneous,
            pairs
        );
    }
}
