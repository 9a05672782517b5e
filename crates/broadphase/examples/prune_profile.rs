//! Times `complete_pairs_with` alone (no peers) on the `cube` or `sparse` workload of
//! `broadphase prune`, for profiling and callgrind: median and min over the repeats, after
//! one untimed call.
//!
//! `cargo run --release -p broadphase --example prune_profile -- [boxes] [repeat] [threads] [sparse]`
//! (`NO_BUCKET_FIRST=1` turns `PruneOptions::bucket_first` off).
use broadphase::prune::{complete_pairs_with, PruneOptions, PruneScratch};
use broadphase::verify::SplitMix64;
use broadphase::Aabb;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(10000);
    let repeat: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(20);
    let threads: usize = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(1);
    let sparse = args.get(4).is_some_and(|a| a == "sparse");
    let mut rng = SplitMix64::new(1);
    let side = if sparse {
        (254.0 * (n as f64 / 2.0).cbrt()).max(254.0) as f32
    } else {
        4096.0
    };
    let boxes: Vec<Aabb> = (0..n)
        .map(|_| {
            let c = [0; 3].map(|_| rng.range(0.0, side));
            let h = [0; 3].map(|_| rng.range(0.0, 127.0));
            Aabb::from_arrays(
                [c[0] - h[0], c[1] - h[1], c[2] - h[2]],
                [c[0] + h[0], c[1] + h[1], c[2] + h[2]],
            )
            .unwrap()
        })
        .collect();
    let mut options = PruneOptions::default();
    options.threads = threads;
    options.bucket_first = std::env::var_os("NO_BUCKET_FIRST").is_none();
    let mut scratch = PruneScratch::new();
    let mut pairs = Vec::new();
    // One untimed call first, as `broadphase prune` does: the buffers grow there.
    complete_pairs_with(&boxes, &options, &mut scratch, &mut pairs).unwrap();
    let mut times = Vec::new();
    for _ in 0..repeat.max(1) {
        let t = std::time::Instant::now();
        complete_pairs_with(&boxes, &options, &mut scratch, &mut pairs).unwrap();
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "n {n} pairs {} median {:.3} ms min {:.3} ms cells {}",
        pairs.len(),
        times[times.len() / 2],
        times[0],
        scratch.last_cell_count()
    );
}
