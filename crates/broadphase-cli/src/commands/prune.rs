//! `broadphase prune`: one-shot complete box pruning on a generated workload, timed beside
//! brute force and parry3d's one-shot BVH (build + self-traversal).

use crate::options::budget::{Budget, BYTES_PER_PAIR};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, ensure};
use broadphase::backend::{radix_sort_keys, sortable_key};
use broadphase::prune::{complete_pairs_with, PruneOptions, PruneScratch};
use broadphase::verify::SplitMix64;
use broadphase::{Aabb, Vec3};
use clap::{Args, ValueEnum};
use parry3d::partitioning::{Bvh, BvhBuildStrategy, BvhWorkspace};

use crate::export::quantity::{
    CPU, METHOD, NS_PER_BOX, OBJECTS, POSSIBLE_PAIRS, PRUNE_MS, REPEAT, RUNS, SEED, THREADS,
    VS_COMPLETE_PAIRS, WORKLOAD,
};
use crate::export::{emit, Format, Report, Statistic, Table, Value};
use crate::measure::noise::{self, Spread};
use crate::measure::stats::summarize;

/// Brute force runs only up to this many boxes (it is quadratic).
const BRUTE_FORCE_MAX_OBJECTS: usize = 20_000;

/// Bytes per box of a run: the box, the pruning scratch (sort keys, sweep columns, grid) and
/// the peers' trees.
const BYTES_PER_BOX: u128 = 400;
/// Brute force is timed at most this many times.
const BRUTE_FORCE_MAX_REPEAT: usize = 5;

/// A generated set of boxes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Workload {
    /// Centres uniform in a cube of side 4096, half extents uniform in [0, 127] per axis (the
    /// box-pruning benchmark of [Terdiman07, Box pruning revisited]; the density grows with N).
    Cube,
    /// Like `cube`, but the cube grows with N so that there is about one pair per box.
    Sparse,
    /// Seven dense clumps plus one flat layer of boxes crossing the whole scene.
    Clustered,
}

/// Options of `broadphase prune`.
#[derive(Debug, Args)]
pub struct PruneArgs {
    /// Number of boxes.
    #[arg(long, default_value_t = 10_000)]
    objects: usize,
    /// The generated boxes.
    #[arg(long, value_enum, default_value_t = Workload::Cube)]
    workload: Workload,
    /// Threads of `complete_pairs` (1 = the calling thread only).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Timed runs of each method, after one untimed warm-up run (brute force: at most 5;
    /// methods whose warm-up run takes more than 2 s: at most 3).
    #[arg(long, default_value_t = 20)]
    repeat: usize,
    /// Random seed of the workload.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Also time the technique ladder: std-sort AoS baseline, + radix sort, + SoA and
    /// sentinels, + AVX2, + AVX-512, + y/z grid, + bucketing before sorting each cell (from
    /// 20,000 boxes), + threads for every pass.
    #[arg(long)]
    techniques: bool,
    /// Output format (the columns are named in docs/outputs.md).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

impl Workload {
    /// Its name on the command line.
    fn name(self) -> &'static str {
        match self {
            Workload::Cube => "cube",
            Workload::Sparse => "sparse",
            Workload::Clustered => "clustered",
        }
    }
}

/// One timed method. Times in milliseconds per call.
#[derive(Debug, Clone)]
pub struct PruneRow {
    /// The method.
    pub method: String,
    /// Timed runs.
    pub runs: usize,
    /// `prune_ms_median`.
    pub median_ms: f64,
    /// `prune_ms_min`.
    pub min_ms: f64,
    /// `possible_pairs`: the overlapping pairs found.
    pub pairs: usize,
    /// `ns_per_box`.
    pub ns_per_box: f64,
}

/// The settings and the rows as a report: `vs_complete_pairs` against the first row.
fn report(args: &PruneArgs, objects: usize, rows: &[PruneRow]) -> Report {
    let fields = vec![
        METHOD.plain().into(),
        RUNS.plain().into(),
        PRUNE_MS.median().into(),
        PRUNE_MS.with(Statistic::Min).into(),
        POSSIBLE_PAIRS.plain().into(),
        NS_PER_BOX.plain().into(),
        VS_COMPLETE_PAIRS.plain().into(),
        VS_COMPLETE_PAIRS.with(Statistic::Min).into(),
    ];
    let mut table = Table::new("rows", fields);
    let base = rows.first().map_or(f64::NAN, |r| r.median_ms);
    // The same ratio of the fastest runs: far from the medians' ratio, the machine was busy.
    let base_min = rows.first().map_or(f64::NAN, |r| r.min_ms);
    for r in rows {
        table.push(vec![
            Value::text(&r.method),
            Value::int(r.runs),
            Value::Float(r.median_ms),
            Value::Float(r.min_ms),
            Value::int(r.pairs),
            Value::Float(r.ns_per_box),
            Value::Float(r.median_ms / base),
            Value::Float(r.min_ms / base_min),
        ]);
    }
    Report {
        meta: vec![
            (WORKLOAD.plain(), Value::text(args.workload.name())),
            (OBJECTS.plain(), Value::int(objects)),
            (THREADS.plain(), Value::int(args.threads)),
            (REPEAT.plain(), Value::int(args.repeat)),
            (SEED.plain(), Value::Int(args.seed)),
            (CPU.plain(), Value::text(crate::measure::cpu_model())),
        ],
        ..Report::of(table)
    }
}

/// Runs `broadphase prune`.
pub fn run(args: &PruneArgs) -> anyhow::Result<ExitCode> {
    ensure!(args.repeat >= 1, "--repeat must be at least 1");
    ensure!(args.threads >= 1, "--threads must be at least 1");
    ensure!(
        args.objects <= u32::MAX as usize,
        "--objects must fit in 32 bits"
    );
    let budget = Budget::available();
    let reserved = args.objects as u128 * BYTES_PER_BOX;
    budget.check(
        &format!("prune on {}", crate::console::count(args.objects, "box")),
        reserved,
    )?;
    let boxes = generate(args.workload, args.objects, args.seed);
    let n = boxes.len();

    let mut options = PruneOptions::default();
    options.threads = args.threads;
    // The pairs are listed up to three times (ours, sorted, each peer's), with growth slack.
    let max_pairs = budget.pair_limit(reserved) * BYTES_PER_PAIR as usize / 64;
    options.max_pairs = Some(max_pairs);
    let mut scratch = PruneScratch::new();
    let mut pairs = Vec::new();
    let ours = time(args.repeat, || {
        complete_pairs_with(&boxes, &options, &mut scratch, &mut pairs).map_err(|e| {
            anyhow::anyhow!(
                "{e}: the boxes overlap in more pairs than the memory this machine can give \
                 now ({}) holds; ask for fewer boxes",
                budget.describe()
            )
        })?;
        Ok(pairs.len())
    })?;
    let mut our_pairs = pairs.clone();
    our_pairs.sort_unstable();
    let name = format!(
        "complete_pairs ({})",
        crate::console::count(args.threads, "thread")
    );
    let mut rows = vec![row(name, &ours, n)];

    if n <= BRUTE_FORCE_MAX_OBJECTS {
        let mut brute = Vec::new();
        let timing = time(args.repeat.min(BRUTE_FORCE_MAX_REPEAT), || {
            brute_force(&boxes, &mut brute);
            Ok(brute.len())
        })?;
        if brute != our_pairs {
            bail!(
                "complete_pairs disagrees with brute force ({} vs {} pairs)",
                our_pairs.len(),
                brute.len()
            );
        }
        rows.push(row("brute force".into(), &timing, n));
    }

    let leaves: Vec<parry3d::bounding_volume::Aabb> = boxes
        .iter()
        .map(|b| parry3d::bounding_volume::Aabb::new(b.min(), b.max()))
        .collect();
    let mut workspace = BvhWorkspace::default();
    let mut parry_pairs: Vec<(u32, u32)> = Vec::new();
    let parry = time(args.repeat, || {
        parry_pairs.clear();
        let bvh = Bvh::from_leaves(BvhBuildStrategy::Binned, &leaves);
        bvh.traverse_bvtt_single_tree::<false>(&mut workspace, &mut |a, b| {
            parry_pairs.push((a, b))
        });
        Ok(parry_pairs.len())
    })?;
    rows.push(row("parry3d Bvh binned + bvtt".into(), &parry, n));

    if args.techniques {
        techniques(args, &boxes, &mut rows)?;
    }
    emit(
        &report(args, n, &rows),
        args.format,
        &mut std::io::stdout().lock(),
    )?;
    let spreads: Vec<_> = rows
        .iter()
        .map(|r| Spread {
            name: r.method.clone(),
            median: r.median_ms,
            min: r.min_ms,
            p95: f64::NAN,
            rounds: Vec::new(),
            samples: r.runs,
        })
        .collect();
    if let Some(noise) = noise::assess(&spreads) {
        crate::console::note!("{}", noise::warning(&noise, "--repeat", args.repeat));
    }
    Ok(ExitCode::SUCCESS)
}

/// The technique ladder, each row adding one technique to the previous one.
fn techniques(args: &PruneArgs, boxes: &[Aabb], rows: &mut Vec<PruneRow>) -> anyhow::Result<()> {
    let n = boxes.len();
    let mut baseline = Baseline::default();
    for (name, radix) in [
        ("baseline: std sort, AoS sweep", false),
        ("+ radix sort", true),
    ] {
        let timing = time(args.repeat, || Ok(baseline.run(boxes, radix)))?;
        rows.push(row(name.into(), &timing, n));
    }
    // Each rung adds one technique to the options of the rung before.
    let threads = args.threads.max(2);
    let ladder: [(&str, &AddTechnique<'_>); 6] = [
        ("+ SoA, sentinels, branchless (scalar)", &|_| {}),
        ("+ AVX2", &|options| options.force_scalar = false),
        ("+ AVX-512 (if the CPU has it)", &|options| {
            options.avx512 = true
        }),
        ("+ y/z grid", &|options| options.bucketing = true),
        ("+ bucket first, cells radix sorted", &|options| {
            options.bucket_first = true
        }),
        ("+ threads (every pass)", &|options| {
            options.threads = threads
        }),
    ];
    let mut options = PruneOptions::default();
    options.force_scalar = true;
    options.avx512 = false;
    options.bucketing = false;
    options.bucket_first = false;
    let mut scratch = PruneScratch::new();
    let mut pairs = Vec::new();
    for (name, add) in ladder {
        add(&mut options);
        let timing = time(args.repeat, || {
            complete_pairs_with(boxes, &options, &mut scratch, &mut pairs)?;
            Ok(pairs.len())
        })?;
        let name = if options.threads > 1 {
            format!("{name} ({})", options.threads)
        } else {
            name.to_string()
        };
        rows.push(row(name, &timing, n));
    }
    Ok(())
}

/// Timings in milliseconds and the pair count of the last run.
struct Timing {
    millis: Vec<f64>,
    pairs: usize,
}

/// One rung of the technique ladder: the change to the previous rung's options.
type AddTechnique<'a> = dyn Fn(&mut PruneOptions) + 'a;

/// Runs `f` once untimed, then `repeat` timed times, or at most [`SLOW_REPEAT`] when the
/// untimed run took more than [`SLOW_SECONDS`] (the ladder's first rungs are slow on large
/// inputs).
fn time(repeat: usize, f: impl FnMut() -> anyhow::Result<usize>) -> anyhow::Result<Timing> {
    time_capped(repeat, SLOW_SECONDS, f)
}

/// [`time`] with the slow threshold as a parameter.
fn time_capped(
    repeat: usize,
    slow_seconds: f64,
    mut f: impl FnMut() -> anyhow::Result<usize>,
) -> anyhow::Result<Timing> {
    let warm_up = Instant::now();
    let mut pairs = f()?;
    let repeat = if warm_up.elapsed().as_secs_f64() > slow_seconds {
        repeat.min(SLOW_REPEAT)
    } else {
        repeat
    };
    let mut millis = Vec::with_capacity(repeat);
    for _ in 0..repeat {
        let start = Instant::now();
        pairs = f()?;
        millis.push(start.elapsed().as_secs_f64() * 1e3);
    }
    Ok(Timing { millis, pairs })
}

/// A method whose untimed run takes longer than this many seconds is timed at most
/// [`SLOW_REPEAT`] times.
const SLOW_SECONDS: f64 = 2.0;
const SLOW_REPEAT: usize = 3;

fn row(method: String, timing: &Timing, n: usize) -> PruneRow {
    let mut millis = timing.millis.clone();
    let summary = summarize(&mut millis);
    PruneRow {
        method,
        runs: millis.len(),
        median_ms: summary.median,
        min_ms: millis.first().copied().unwrap_or(0.0),
        pairs: timing.pairs,
        ns_per_box: summary.median * 1e6 / n.max(1) as f64,
    }
}

/// Every overlapping pair `(i, j)`, `i < j`, by testing all of them, sorted.
fn brute_force(boxes: &[Aabb], out: &mut Vec<(u32, u32)>) {
    out.clear();
    for (i, a) in boxes.iter().enumerate() {
        for (j, b) in boxes.iter().enumerate().skip(i + 1) {
            if a.overlaps(b) {
                out.push((i as u32, j as u32));
            }
        }
    }
}

/// The textbook sort and sweep the technique ladder starts from: sort box indices by min x,
/// gather the boxes (array of structures), sweep with bounds-checked, short-circuit tests.
#[derive(Default)]
struct Baseline {
    order: Vec<u32>,
    keys: Vec<u64>,
    keys_tmp: Vec<u64>,
    sorted: Vec<Aabb>,
    pairs: Vec<(u32, u32)>,
}

impl Baseline {
    fn run(&mut self, boxes: &[Aabb], radix: bool) -> usize {
        self.order.clear();
        if radix {
            self.keys.clear();
            self.keys.extend(
                boxes
                    .iter()
                    .zip(0u64..)
                    .map(|(b, i)| ((sortable_key(b.min().x) as u64) << 32) | i),
            );
            radix_sort_keys(&mut self.keys, &mut self.keys_tmp);
            self.order.extend(self.keys.iter().map(|&k| k as u32));
        } else {
            self.order.extend(0..boxes.len() as u32);
            self.order.sort_unstable_by(|&a, &b| {
                boxes[a as usize]
                    .min()
                    .x
                    .total_cmp(&boxes[b as usize].min().x)
            });
        }
        self.sorted.clear();
        self.sorted
            .extend(self.order.iter().map(|&i| boxes[i as usize]));
        self.pairs.clear();
        for i in 0..self.sorted.len() {
            let a = self.sorted[i];
            for j in i + 1..self.sorted.len() {
                let b = &self.sorted[j];
                if b.min().x > a.max().x {
                    break;
                }
                if a.overlaps(b) {
                    let (p, q) = (self.order[i], self.order[j]);
                    self.pairs.push((p.min(q), p.max(q)));
                }
            }
        }
        self.pairs.len()
    }
}

/// Generates `n` boxes of `workload` from `seed`.
pub fn generate(workload: Workload, n: usize, seed: u64) -> Vec<Aabb> {
    let mut rng = SplitMix64::new(seed);
    let mut boxes = Vec::with_capacity(n);
    let mut push = |center: Vec3, half: Vec3| {
        // Finite, non-negative half extents: always a valid box.
        if let Ok(b) = Aabb::from_center_half_extents(center, half) {
            boxes.push(b);
        }
    };
    match workload {
        Workload::Cube | Workload::Sparse => {
            // Pairs ~ n^2 / 2 * (254 / side)^3 for half extents uniform in [0, 127]: one
            // pair per box at side = 254 * (n / 2)^(1/3).
            let side = match workload {
                Workload::Cube => 4096.0,
                _ => (254.0 * (n as f64 / 2.0).cbrt()).max(254.0) as f32,
            };
            for _ in 0..n {
                let center = Vec3::new(
                    rng.range(0.0, side),
                    rng.range(0.0, side),
                    rng.range(0.0, side),
                );
                let half = Vec3::new(
                    rng.range(0.0, 127.0),
                    rng.range(0.0, 127.0),
                    rng.range(0.0, 127.0),
                );
                push(center, half);
            }
        }
        Workload::Clustered => {
            // 80% in seven clumps (about 16 pairs per box), 20% in a flat layer over the
            // whole scene (y within [0, 2]), half extents up to 16.
            const CLUMPS: usize = 7;
            let layer = n / 5;
            let per_clump = (n - layer).div_ceil(CLUMPS).max(1) as f32;
            let clump_side = 10.0 * per_clump.cbrt();
            let scene = clump_side * 4.0;
            let centers: Vec<Vec3> = (0..CLUMPS)
                .map(|_| {
                    Vec3::new(
                        rng.range(0.0, scene),
                        rng.range(0.0, scene),
                        rng.range(0.0, scene),
                    )
                })
                .collect();
            for k in 0..n - layer {
                let offset = Vec3::new(
                    rng.range(-0.5, 0.5),
                    rng.range(-0.5, 0.5),
                    rng.range(-0.5, 0.5),
                ) * clump_side;
                let half = Vec3::new(
                    rng.range(0.0, 16.0),
                    rng.range(0.0, 16.0),
                    rng.range(0.0, 16.0),
                );
                push(centers[k % CLUMPS] + offset, half);
            }
            for _ in 0..layer {
                let center = Vec3::new(rng.range(0.0, scene), 1.0, rng.range(0.0, scene));
                let half = Vec3::new(
                    rng.range(0.0, 16.0),
                    rng.range(0.0, 1.0),
                    rng.range(0.0, 16.0),
                );
                push(center, half);
            }
        }
    }
    boxes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workloads_have_the_documented_size_and_density() {
        let cube = generate(Workload::Cube, 10_000, 1);
        assert_eq!(cube.len(), 10_000);
        let mut pairs = Vec::new();
        brute_force(&cube, &mut pairs);
        // The density of [Terdiman07, Box pruning revisited] (its text states the pair count).
        assert!((9_000..15_000).contains(&pairs.len()), "{}", pairs.len());
        let sparse = generate(Workload::Sparse, 5_000, 2);
        brute_force(&sparse, &mut pairs);
        assert!((2_500..7_500).contains(&pairs.len()), "{}", pairs.len());
        let clustered = generate(Workload::Clustered, 5_000, 3);
        assert_eq!(clustered.len(), 5_000);
        brute_force(&clustered, &mut pairs);
        assert!(pairs.len() > 5 * 5_000, "{}", pairs.len());
        assert_eq!(
            generate(Workload::Cube, 100, 9),
            generate(Workload::Cube, 100, 9)
        );
    }

    /// A method slower than the threshold in its untimed run is timed at most
    /// `SLOW_REPEAT` times; a fast one as often as asked.
    #[test]
    fn slow_methods_are_timed_fewer_times() {
        let slow = time_capped(10, 0.001, || {
            std::thread::sleep(std::time::Duration::from_millis(5));
            Ok(1)
        })
        .unwrap();
        assert_eq!(slow.millis.len(), SLOW_REPEAT);
        let fast = time_capped(10, 60.0, || Ok(1)).unwrap();
        assert_eq!(fast.millis.len(), 10);
    }

    #[test]
    fn baseline_and_kernel_agree() {
        for workload in [Workload::Cube, Workload::Sparse, Workload::Clustered] {
            let boxes = generate(workload, 3_000, 4);
            let mut expected = Vec::new();
            brute_force(&boxes, &mut expected);
            let mut baseline = Baseline::default();
            for radix in [false, true] {
                baseline.run(&boxes, radix);
                let mut got = baseline.pairs.clone();
                got.sort_unstable();
                assert_eq!(got, expected);
            }
        }
    }
}
