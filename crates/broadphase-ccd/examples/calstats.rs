use broadphase_ccd::*;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args[1].parse().unwrap();
    let dim: usize = args[2].parse().unwrap();
    let secs: f64 = args[3].parse().unwrap();
    let world = generate_scene(&SceneConfig::new(n, dim, 1)).unwrap();
    let mut sim = Simulation::new(world, Method::Calendar, &FinderOptions::default()).unwrap();
    let start = std::time::Instant::now();
    let events = sim.advance_to(secs, |_| {}).unwrap();
    let el = start.elapsed();
    println!(
        "events {events} collisions {} in {:?}: {:.0} coll/s; {:?}",
        sim.collisions(),
        el,
        sim.collisions() as f64 / el.as_secs_f64(),
        sim.statistics()
    );
}
