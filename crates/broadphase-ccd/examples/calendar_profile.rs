//! Profiles the `calendar` finder on the benchmark scene: events by kind (collisions, wall
//! hits, cell crossings, stale predictions) and wall time.
//!
//! `cargo run --release -p broadphase-ccd --example calendar_profile -- [objects] [seconds] [dim] [method] [scalar]`

use std::time::Instant;

use broadphase_ccd::{generate_scene, FinderOptions, Method, SceneConfig, Simulation};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let objects: usize = args.get(1).map_or(32_768, |s| s.parse().expect("objects"));
    let seconds: f64 = args.get(2).map_or(1.0, |s| s.parse().expect("seconds"));
    let dim: usize = args.get(3).map_or(3, |s| s.parse().expect("dim"));
    let method: Method = args
        .get(4)
        .map_or(Method::Calendar, |s| s.parse().expect("method"));
    let options = FinderOptions {
        simd: args.get(5).is_none_or(|a| a != "scalar"),
        ..FinderOptions::default()
    };
    let world = generate_scene(&SceneConfig::new(objects, dim, 1)).expect("scene");
    let mut sim = Simulation::new(world, method, &options).expect("simulation");
    let start = Instant::now();
    let events = sim.advance_to(seconds, |_| {}).expect("advance");
    let wall = start.elapsed().as_secs_f64();
    println!(
        "objects {objects} dim {dim} seconds {seconds}: events {events}, collisions {}, wall hits {}, wall {wall:.3} s, {:.3} M collisions/s",
        sim.collisions(),
        sim.wall_hits(),
        sim.collisions() as f64 / wall / 1e6
    );
    for (name, value) in sim.statistics() {
        println!("  {name}: {value}");
    }
}
