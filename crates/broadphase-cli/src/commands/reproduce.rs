//! `broadphase reproduce`: the source documents' experiments as presets of `sweep`, each with
//! the source's claim written beside what was measured.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use broadphase_sim::SceneBuilder;
use clap::Args;

use super::sweep::{report, run_sweep, SweepSpec};
use crate::options::algorithms::parse_list;

/// Options of `broadphase reproduce`.
#[derive(Debug, Args)]
pub struct ReproduceArgs {
    /// The experiment (see --list).
    name: Option<String>,
    /// Lists the experiments, one line each.
    #[arg(long)]
    list: bool,
    /// Output directory (created if needed); required except with --list.
    #[arg(long)]
    out: Option<PathBuf>,
    /// The source's full object counts / values instead of the 2-core-friendly ones.
    #[arg(long)]
    full: bool,
    /// Comma-separated algorithms (default: the preset's, usually all).
    #[arg(long)]
    algorithms: Option<String>,
    /// Unmeasured steps per run (default: 200, as in [Zych16, ch. 4.1]).
    #[arg(long)]
    warmup: Option<usize>,
    /// Measured steps per run (default: 400, as in [Zych16, ch. 4.1]).
    #[arg(long)]
    steps: Option<usize>,
    /// Options of the continuous-time tables (`ccd-table-5.1`, `ccd-table-5.2`).
    #[command(flatten)]
    ccd: super::ccd::CcdReproduceArgs,
}

/// One experiment of a source document.
#[derive(Debug)]
pub struct Preset {
    /// Its name on the command line.
    pub name: &'static str,
    /// Source and figures.
    pub source: &'static str,
    /// What the source claims, to compare with the measurement.
    pub claim: &'static str,
    /// Scene fields set for this experiment (on top of the defaults).
    pub settings: &'static [(&'static str, &'static str)],
    /// The field varied.
    pub param: &'static str,
    /// Values sized to finish in minutes on 2 cores.
    pub values: &'static [&'static str],
    /// The source's values (`--full`).
    pub full_values: &'static [&'static str],
    /// Algorithms compared (`None`: all).
    pub algorithms: Option<&'static [&'static str]>,
    /// Object counts the source fitted its exponents over.
    pub fit_range: Option<(f64, f64)>,
}

/// The standard configuration of [Zych16, ch. 4.1]: 1000 objects, Beta(100, 100) sizes, the
/// five shapes, density 0.05, velocities re-drawn every 10th step, 200 + 400 steps. Its
/// "40 units per step" is read as 40 units per second (see README).
const ZYCH16_STANDARD: &[(&str, &str)] = &[
    ("objects", "1000"),
    ("density", "0.05"),
    ("size_distribution", "beta"),
    ("size_alpha", "100"),
    ("size_beta", "100"),
    ("shapes", "all"),
    ("mean_speed", "40"),
    ("speed_distribution", "uniform"),
    ("redraw_interval", "10"),
];

/// The scenes of [Owen18, Materials and Methods]: spheres of radius 0.5 bouncing elastically
/// at a constant speed in a cube.
const OWEN18_SPHERES: &[(&str, &str)] = &[
    ("shapes", "sphere"),
    ("size_distribution", "fixed"),
    ("size_min", "1"),
    ("size_max", "1"),
    ("speed_distribution", "fixed"),
    ("redraw_interval", "0"),
    ("sphere_bounces", "true"),
];

/// Every experiment, in the order `--list` shows them.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "thesis-objects",
        source: "[Zych16, ch. 4.2, Figs. 4.3–4.7]",
        claim: "Brute force is quadratic in the number of objects and bound by the broad phase. SAP and BVH are between quasi-linear and linear, bound by the narrow phase and AABB updates; SAP is faster up to about 5000 objects, the BVH beyond (Fig. 4.7). The octree is far behind SAP and BVH but well ahead of brute force. Possible collisions grow linearly.",
        settings: &[],
        param: "objects",
        values: &["250", "500", "1000", "2000", "4000"],
        full_values: &["500", "1000", "2000", "5000", "10000", "20000"],
        algorithms: None,
        fit_range: None,
    },
    Preset {
        name: "thesis-size-uniformity",
        source: "[Zych16, ch. 4.2, Figs. 4.10–4.15]",
        claim: "Size uniformity (Beta(a, a), small a = extreme sizes) does not affect brute force, BVH or SAP; extreme sizes make thin rotated objects with loose AABBs, so more possible collisions and a slower narrow phase; the octree suffers from them.",
        settings: &[],
        param: "size_alpha_beta",
        values: &["0.1", "0.5", "1", "2", "10", "100"],
        full_values: &["0.1", "0.25", "0.5", "1", "2", "5", "10", "100"],
        algorithms: None,
        fit_range: None,
    },
    Preset {
        name: "thesis-stationary",
        source: "[Zych16, ch. 4.2, Figs. 4.16–4.19]",
        claim: "More stationary objects make every algorithm faster, roughly linearly with a mild slope; possible and actual collisions fall, and so do set_aabbs_ms and narrow_ms.",
        settings: &[],
        param: "stationary_fraction",
        values: &["0", "0.2", "0.4", "0.6", "0.8", "0.95"],
        full_values: &["0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "0.95"],
        algorithms: None,
        fit_range: None,
    },
    Preset {
        name: "thesis-velocity",
        source: "[Zych16, ch. 4.2, Figs. 4.20–4.23]",
        claim: "Faster objects mean more possible and actual collisions and more set_aabbs_ms work; the effect is strong at first and weakens at high speeds. SAP is the most sensitive to the loss of coherence.",
        settings: &[],
        param: "mean_speed",
        values: &["0", "10", "40", "160", "640", "2400"],
        full_values: &["0", "5", "10", "20", "40", "80", "160", "320", "640", "1280", "2400"],
        algorithms: None,
        fit_range: None,
    },
    Preset {
        name: "thesis-density",
        source: "[Zych16, ch. 4.2, Figs. 4.24–4.27]",
        claim: "Denser worlds: possible collisions grow much faster than actual ones (loose AABBs), the narrow phase grows steeply and linearly; SAP's update cost grows with density; the octree's is invariant.",
        settings: &[],
        param: "density",
        values: &["0.01", "0.025", "0.05", "0.1", "0.2"],
        full_values: &["0.005", "0.01", "0.025", "0.05", "0.1", "0.2", "0.4"],
        algorithms: None,
        fit_range: None,
    },
    Preset {
        name: "thesis-shapes",
        source: "[Zych16, ch. 4.2, Figs. 4.28–4.33]",
        claim: "The shape does not change broad-phase times; it changes the narrow phase (spheres cheapest) and the collision counts: actual collisions order box > cylinder > cone > sphere > capsule.",
        settings: &[],
        param: "shapes",
        values: &["box", "sphere", "cylinder", "cone", "capsule"],
        full_values: &["box", "sphere", "cylinder", "cone", "capsule"],
        algorithms: None,
        fit_range: None,
    },
    Preset {
        name: "report-objects",
        source: "[Owen18, Results, Fig. 1]",
        claim: "In a sparse 1024³ world (radius 0.5, 0.173 m/s), brute force is by far the slowest (600 ms at 1000 objects); the octree is best at large counts; SAP grows faster than the octree; spatial masking (a grid) grows faster still.",
        settings: &[("world_size", "1024"), ("mean_speed", "0.173")],
        param: "objects",
        values: &["1", "250", "500", "1000", "2000", "3000"],
        full_values: &["1", "250", "500", "1000", "1500", "2000", "2500", "3000"],
        algorithms: None,
        fit_range: None,
    },
    Preset {
        name: "report-speed",
        source: "[Owen18, Results, Fig. 2]",
        claim: "339 spheres (radius 0.5) in a 64³ cube, 0 to 415.9 m/s: the octree is the most affected by speed, SAP more resilient, spatial masking (grid) not affected.",
        settings: &[("objects", "339"), ("world_size", "64")],
        param: "mean_speed",
        values: &["0", "26", "52", "104", "208", "415.9"],
        full_values: &["0", "13", "26", "52", "104", "208", "312", "415.9"],
        algorithms: None,
        fit_range: None,
    },
    Preset {
        name: "report-world-size",
        source: "[Owen18, Results, Fig. 3]",
        claim: "1000 spheres at 43.3 m/s: a larger world helps the octree and SAP, the opposite of a higher speed; spatial masking is unaffected.",
        settings: &[("objects", "1000"), ("mean_speed", "43.3")],
        param: "world_size",
        values: &["32", "64", "128", "256", "512", "1024", "2048"],
        full_values: &["32", "64", "128", "256", "512", "1024", "2048"],
        algorithms: None,
        fit_range: None,
    },
    Preset {
        name: "report-size-variance",
        source: "[Owen18, Results, Fig. 4]",
        claim: "Normal, inverse-normal and uniform radii (0.001 to 80) against a no-variance control: little difference; size variance is not a critical factor for any algorithm.",
        settings: &[
            ("objects", "500"),
            ("size_min", "0.002"),
            ("size_max", "160"),
            ("world_size", "11024"),
            ("mean_speed", "430"),
        ],
        param: "size_distribution",
        values: &["normal", "inverse-normal", "uniform", "fixed"],
        full_values: &["normal", "inverse-normal", "uniform", "fixed"],
        algorithms: None,
        fit_range: None,
    },
    Preset {
        name: "report-extreme",
        source: "[Owen18, Results, Fig. 5]",
        claim: "2000 spheres of radius 10 in a 32768³ cube, 0.1 to 119110.8 m/s: the octree wins at low speeds, SAP from about 3100 m/s, spatial masking from about 74000 m/s.",
        settings: &[
            ("objects", "2000"),
            ("size_min", "20"),
            ("size_max", "20"),
            ("world_size", "32768"),
        ],
        param: "mean_speed",
        values: &["0.1", "100", "1000", "3100", "10000", "74000", "119110.8"],
        full_values: &["0.1", "10", "100", "1000", "3100", "10000", "30000", "74000", "119110.8"],
        algorithms: None,
        fit_range: None,
    },
    Preset {
        name: "blog-naive-vs-sap",
        source: "[SapBlog, naive vs SAP measurement]",
        claim: "For 50-250 objects the naive broad phase's time grows with exponent about 1.8, sweep and prune's about 1.0-1.2 (growing past 300); naive is faster below about 15 objects; optimized SAP is more than ten times faster over a wide range.",
        settings: &[
            ("shapes", "sphere"),
            ("density", "0.05"),
            ("mean_speed", "40"),
            ("sphere_bounces", "true"),
        ],
        param: "objects",
        values: &["5", "10", "15", "25", "50", "100", "150", "200", "250", "300", "400"],
        full_values: &["5", "10", "15", "25", "50", "100", "150", "200", "250", "300", "400", "600", "1000"],
        algorithms: Some(&["brute-force", "sap"]),
        fit_range: Some((50.0, 250.0)),
    },
];

/// One continuous-time experiment: runs of `broadphase-ccd`, not a sweep of the workbench.
#[derive(Debug)]
pub struct CcdPreset {
    /// Its name on the command line (one of [`super::ccd::CCD_REPRODUCTIONS`]).
    pub name: &'static str,
    /// Source and table.
    pub source: &'static str,
    /// What the source's table shows, to compare with the measurement.
    pub claim: &'static str,
    /// What a run does, for `--list`.
    pub what: &'static str,
}

/// The continuous-time experiments, after the sweeps in `--list`.
pub const CCD_PRESETS: &[CcdPreset] = &[
    CcdPreset {
        name: "ccd-table-5.1",
        source: "[Kaya16, Table 5.1]",
        claim: "Running time by number of bodies and method: the all-pairs search grows with the square of N, the spatial methods close to linearly, so they pull ahead as N grows.",
        what: "event-driven runs of each method, N doubling",
    },
    CcdPreset {
        name: "ccd-table-5.2",
        source: "[Kaya16, Table 5.2]",
        claim: "Discrete time steps against the exact event-driven simulation: a discrete step misses collisions and lets bodies overlap, more so as the step grows; the exact simulation misses none.",
        what: "discrete time steps beside the exact run",
    },
];

/// Every experiment's name, in the order `--list` shows them.
pub fn names() -> Vec<&'static str> {
    PRESETS
        .iter()
        .map(|p| p.name)
        .chain(CCD_PRESETS.iter().map(|p| p.name))
        .collect()
}

/// The error for an experiment that does not exist: it lists every one, as `--list` does.
fn unknown(name: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "unknown experiment '{name}' (known: {}; see --list)",
        names().join(", ")
    )
}

/// The preset called `name`.
pub fn find(name: &str) -> anyhow::Result<&'static Preset> {
    PRESETS
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| unknown(name))
}

/// The seed a sweep preset's runs use: the one its scene gets with these arguments.
fn sweep_seed(preset: &Preset, args: &ReproduceArgs) -> anyhow::Result<u64> {
    let spec = spec(preset, args)?;
    let mut b = spec.base.clone();
    b.set(&spec.param, &spec.values[0])?;
    Ok(b.build()?.seed)
}

/// The source's claim as the first lines of the output, beside the measurement that follows.
fn print_claim(source: &str, claim: &str) -> anyhow::Result<()> {
    crate::console::out!("source's claim {source}: {claim}\n")?;
    Ok(())
}

/// The sweep of a preset: its scene, values and algorithms, with the command's overrides.
pub fn spec(preset: &Preset, args: &ReproduceArgs) -> anyhow::Result<SweepSpec> {
    let mut base = SceneBuilder::new();
    let steps = args.steps.unwrap_or(400).to_string();
    let warmup = args.warmup.unwrap_or(200).to_string();
    let family = if preset.name.starts_with("thesis-") {
        ZYCH16_STANDARD
    } else if preset.name.starts_with("report-") {
        OWEN18_SPHERES
    } else {
        &[]
    };
    for (field, value) in family
        .iter()
        .chain(preset.settings)
        .chain(&[("warmup", warmup.as_str()), ("steps", steps.as_str())])
    {
        base.set(field, value)?;
    }
    let algorithms = match (&args.algorithms, preset.algorithms) {
        (Some(_), _) | (None, None) => parse_list(&args.algorithms)?,
        (None, Some(list)) => list.iter().map(|s| s.to_string()).collect(),
    };
    let values = if args.full {
        preset.full_values
    } else {
        preset.values
    };
    Ok(SweepSpec {
        title: format!("{} ({})", preset.name, preset.source),
        base,
        param: preset.param.to_string(),
        values: values.iter().map(|s| s.to_string()).collect(),
        algorithms,
        fit_range: preset.fit_range,
    })
}

pub fn run(args: &ReproduceArgs) -> anyhow::Result<ExitCode> {
    if args.list {
        for p in PRESETS {
            crate::console::out!(
                "{:<24} {} — sweep of {} over {}; seed {}",
                p.name,
                p.source,
                p.param,
                p.values.join(", "),
                sweep_seed(p, args)?
            )?;
        }
        for p in CCD_PRESETS {
            crate::console::out!(
                "{:<24} {} — {}; seed {}",
                p.name,
                p.source,
                p.what,
                args.ccd.seed
            )?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let Some(name) = &args.name else {
        anyhow::bail!("reproduce needs an experiment name (see --list)");
    };
    let out = args
        .out
        .as_ref()
        .ok_or_else(|| anyhow::anyhow!("reproduce needs --out DIR"));
    if let Some(preset) = CCD_PRESETS.iter().find(|p| p.name == name) {
        let out = out?;
        print_claim(preset.source, preset.claim)?;
        let preamble = format!("## Source's claim {}\n\n{}\n", preset.source, preset.claim);
        return super::ccd::run_reproduce_ccd(
            name,
            Some(out),
            &args.ccd,
            &preamble,
            &mut std::io::stdout().lock(),
        );
    }
    let preset = find(name)?;
    let out = out?;
    let spec = spec(preset, args)?;
    let mut preamble = String::new();
    let _ = writeln!(
        preamble,
        "## Source's claim {}\n\n{}\n\nAlgorithm names here: `brute-force` is the naive \
         approach, `sap` incremental sweep and prune, `sort-and-sweep` the full-sort variant, \
         `parry-bvh` and `rapier` dynamic BVHs (the counterpart of btDbvt in [Zych16, ch. 4.1]); grids and \
         trees appear under their own names when registered. Sizes here are {} (`--full` for the \
         source's).\n",
        preset.source,
        preset.claim,
        if args.full {
            "the source's"
        } else {
            "reduced to finish in minutes on 2 cores"
        }
    );
    print_claim(preset.source, preset.claim)?;
    let outcome = run_sweep(&spec, out, &preamble)?;
    report(&outcome, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> ReproduceArgs {
        use clap::Parser;
        #[derive(Parser)]
        struct Wrapper {
            #[command(flatten)]
            args: ReproduceArgs,
        }
        Wrapper::parse_from(["reproduce", "--list"]).args
    }

    #[test]
    fn every_preset_builds_valid_scenes_at_every_value() {
        for full in [false, true] {
            for preset in PRESETS {
                let spec = spec(preset, &ReproduceArgs { full, ..args() }).unwrap();
                for value in &spec.values {
                    let mut b = spec.base.clone();
                    b.set(&spec.param, value).unwrap();
                    let scene = b
                        .build()
                        .unwrap_or_else(|e| panic!("{}={value}: {e}", preset.name));
                    assert_eq!((scene.warmup, scene.steps), (200, 400));
                }
            }
        }
    }

    #[test]
    fn names_are_unique_and_ccd_is_reserved() {
        for (i, p) in PRESETS.iter().enumerate() {
            assert!(PRESETS[i + 1..].iter().all(|q| q.name != p.name));
            assert!(find(p.name).is_ok());
        }
        assert_eq!(PRESETS.len(), 12);
        assert!(find("thesis-nope").is_err());
        let ccd: Vec<&str> = CCD_PRESETS.iter().map(|p| p.name).collect();
        assert_eq!(ccd, super::super::ccd::CCD_REPRODUCTIONS);
        assert_eq!(names().len(), PRESETS.len() + CCD_PRESETS.len());
    }
}
