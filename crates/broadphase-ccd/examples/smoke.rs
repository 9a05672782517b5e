use broadphase_ccd::*;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).map(|s| s.parse().unwrap()).unwrap_or(200);
    let dim: usize = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(2);
    let secs: f64 = args.get(3).map(|s| s.parse().unwrap()).unwrap_or(1.0);
    let check = args.get(4).map(|s| s == "check").unwrap_or(false);
    for m in Method::ALL {
        if let Some(only) = args.get(5) {
            if !only.split(',').any(|o| o == m.name()) {
                continue;
            }
        }
        let cfg = RunConfig {
            scene: SceneConfig::new(n, dim, 1),
            seconds: secs,
            method: m,
            check,
            ..RunConfig::default()
        };
        match run(&cfg, &mut |_| {}) {
            Ok(r) => println!(
                "{m}: coll {} wall {} time {:?} ev/s {:.0} coll/s {:.0}",
                r.collisions,
                r.wall_hits,
                r.wall_time,
                r.events_per_second(),
                r.collisions_per_second()
            ),
            Err(e) => println!("{m}: ERROR {e}"),
        }
    }
}

#[allow(dead_code)]
fn stats_only() {}
