//! Reproductions of [Kaya16, Table 5.1] (running time by N and method) and [Kaya16, Table 5.2]
//! (discrete time steps versus the exact simulation).

use std::fmt::Write as _;
use std::time::Duration;

use crate::discrete::{run_discrete, DiscreteReport};
use crate::error::CcdError;
use crate::run::{run, RunConfig, RunReport};
use crate::scene::{generate_scene, SceneConfig};
use crate::simulation::{FinderOptions, Method};

/// Parameters of the Table 5.1 reproduction.
#[derive(Debug, Clone, PartialEq)]
pub struct Table51Config {
    /// 2 as in [Kaya16, Table 5.1], or 3.
    pub dim: usize,
    /// Simulated seconds per run (5 in [Kaya16, Table 5.1]).
    pub seconds: f64,
    /// Scene seed (the same scene for every method at a given N).
    pub seed: u64,
    /// First N; N doubles up to `max_objects`.
    pub min_objects: usize,
    /// Largest N for `all-pairs` (2048 in [Kaya16, Table 5.1]).
    pub all_pairs_max_objects: usize,
    /// Largest N for the other methods.
    pub max_objects: usize,
    /// A method is dropped for larger N once one of its runs exceeds this wall time (the run
    /// is stopped there and reported as incomplete).
    pub time_cap: Duration,
    /// Methods to run.
    pub methods: Vec<Method>,
    /// Finder tuning.
    pub options: FinderOptions,
}

impl Default for Table51Config {
    fn default() -> Self {
        Table51Config {
            dim: 2,
            seconds: 5.0,
            seed: 1,
            min_objects: 8,
            all_pairs_max_objects: 2048,
            max_objects: 1 << 17,
            time_cap: Duration::from_secs(120),
            methods: Method::ALL.to_vec(),
            options: FinderOptions::default(),
        }
    }
}

/// The measured rows of Table 5.1 (one per N and method that ran).
#[derive(Debug, Clone, PartialEq)]
pub struct Table51 {
    /// The configuration used.
    pub config: Table51Config,
    /// One report per (N, method), in run order.
    pub rows: Vec<RunReport>,
}

/// Least-squares slope of `ln y` against `ln x`: the growth exponent of `y ~ x^k`.
pub fn fitted_exponent(points: &[(f64, f64)]) -> Option<f64> {
    let logs: Vec<(f64, f64)> = points
        .iter()
        .filter(|(x, y)| *x > 0.0 && *y > 0.0)
        .map(|(x, y)| (x.ln(), y.ln()))
        .collect();
    if logs.len() < 2 {
        return None;
    }
    let n = logs.len() as f64;
    let (mx, my) = (
        logs.iter().map(|p| p.0).sum::<f64>() / n,
        logs.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let sxx: f64 = logs.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = logs.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

impl Table51 {
    /// Growth exponent of the wall time of each method, fitted over its completed runs with
    /// N >= 64 (all completed runs if fewer than two qualify).
    pub fn exponents(&self) -> Vec<(Method, Option<f64>)> {
        self.config
            .methods
            .iter()
            .map(|&method| {
                let done: Vec<&RunReport> = self
                    .rows
                    .iter()
                    .filter(|r| r.method == method && r.completed)
                    .collect();
                let large: Vec<(f64, f64)> = done
                    .iter()
                    .filter(|r| r.objects >= 64)
                    .map(|r| (r.objects as f64, r.wall_time.as_secs_f64()))
                    .collect();
                let points = if large.len() >= 2 {
                    large
                } else {
                    done.iter()
                        .map(|r| (r.objects as f64, r.wall_time.as_secs_f64()))
                        .collect()
                };
                (method, fitted_exponent(&points))
            })
            .collect()
    }

    /// Growth exponent of the collision count with N.
    pub fn collision_exponent(&self) -> Option<f64> {
        let points: Vec<(f64, f64)> = self
            .rows
            .iter()
            .filter(|r| r.completed)
            .map(|r| (r.objects as f64, r.collisions as f64))
            .collect();
        fitted_exponent(&points)
    }

    /// The table as Markdown: one line per N with collisions and each method's seconds.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        let c = &self.config;
        let _ = writeln!(
            out,
            "Table 5.1 — {}D scene, {} simulated s, seed {}, time cap {:?}\n",
            c.dim, c.seconds, c.seed, c.time_cap
        );
        let _ = write!(out, "| objects | collisions | wall hits |");
        for m in &c.methods {
            let _ = write!(out, " {m} (s) |");
        }
        let _ = write!(out, "\n|---:|---:|---:|");
        for _ in &c.methods {
            let _ = write!(out, "---:|");
        }
        out.push('\n');
        let mut sizes: Vec<usize> = self.rows.iter().map(|r| r.objects).collect();
        sizes.dedup();
        for n in sizes {
            let at: Vec<&RunReport> = self.rows.iter().filter(|r| r.objects == n).collect();
            let complete = at.iter().find(|r| r.completed);
            let (collisions, walls) = complete.map_or(("-".to_string(), "-".to_string()), |r| {
                (r.collisions.to_string(), r.wall_hits.to_string())
            });
            let _ = write!(out, "| {n} | {collisions} | {walls} |");
            for m in &c.methods {
                match at.iter().find(|r| r.method == *m) {
                    Some(r) if r.completed => {
                        let _ = write!(out, " {:.6} |", r.wall_time.as_secs_f64());
                    }
                    Some(r) => {
                        let _ = write!(
                            out,
                            " > {:.0} (stopped at t = {:.3}) |",
                            r.wall_time.as_secs_f64(),
                            r.simulated_seconds
                        );
                    }
                    None => out.push_str(" - |"),
                }
            }
            out.push('\n');
        }
        out.push_str("\nFitted growth exponent of the running time (N >= 64, completed runs):");
        for (m, k) in self.exponents() {
            let _ = write!(out, " {m} {}", k.map_or("-".into(), |k| format!("{k:.2}")));
        }
        let _ = writeln!(
            out,
            "; of the collision count: {}",
            self.collision_exponent()
                .map_or("-".into(), |k| format!("{k:.2}"))
        );
        out
    }

    /// The rows as CSV.
    pub fn to_csv(&self) -> String {
        let mut out = String::from("objects,method,completed,simulated_seconds,collisions,wall_hits,wall_seconds,events_per_second\n");
        for r in &self.rows {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{:.9},{:.1}",
                r.objects,
                r.method,
                r.completed,
                r.simulated_seconds,
                r.collisions,
                r.wall_hits,
                r.wall_time.as_secs_f64(),
                r.events_per_second()
            );
        }
        out
    }
}

/// Runs Table 5.1: N = `min_objects`, doubling, up to `max_objects`; every method on the same
/// scene per N; `all-pairs` only up to `all_pairs_max_objects`; a method stops growing N once
/// a run hits the time cap. `progress` is called after each run.
pub fn reproduce_table_5_1(
    config: &Table51Config,
    progress: &mut dyn FnMut(&RunReport),
) -> Result<Table51, CcdError> {
    if config.min_objects == 0 || config.max_objects < config.min_objects {
        return Err(CcdError::BadOption(format!(
            "object range {}..={} is empty",
            config.min_objects, config.max_objects
        )));
    }
    let mut retired: Vec<Method> = Vec::new();
    let mut rows = Vec::new();
    let mut n = config.min_objects;
    while n <= config.max_objects {
        for &method in &config.methods {
            if retired.contains(&method)
                || (method == Method::AllPairs && n > config.all_pairs_max_objects)
            {
                continue;
            }
            let run_config = RunConfig {
                scene: SceneConfig::new(n, config.dim, config.seed),
                seconds: config.seconds,
                method,
                options: config.options,
                check: false,
                time_cap: Some(config.time_cap),
            };
            let report = run(&run_config, &mut |_| {})?;
            if !report.completed {
                retired.push(method);
            }
            progress(&report);
            rows.push(report);
        }
        if config.methods.iter().all(|m| {
            retired.contains(m) || (*m == Method::AllPairs && n * 2 > config.all_pairs_max_objects)
        }) {
            break;
        }
        n *= 2;
    }
    Ok(Table51 {
        config: config.clone(),
        rows,
    })
}

/// Parameters of the Table 5.2 reproduction.
#[derive(Debug, Clone, PartialEq)]
pub struct Table52Config {
    /// Number of bodies (1024 in [Kaya16, Table 5.2]).
    pub objects: usize,
    /// 2 as in [Kaya16, Table 5.2], or 3.
    pub dim: usize,
    /// Simulated seconds.
    pub seconds: f64,
    /// Scene seed.
    pub seed: u64,
    /// The discrete steps Δt to compare.
    pub time_steps: Vec<f64>,
    /// Method of the exact run.
    pub exact_method: Method,
}

impl Default for Table52Config {
    fn default() -> Self {
        Table52Config {
            objects: 1024,
            dim: 2,
            seconds: 5.0,
            seed: 1,
            time_steps: vec![0.001, 0.005, 0.01, 0.03, 0.1, 1.0],
            exact_method: Method::Calendar,
        }
    }
}

/// Results of Table 5.2.
#[derive(Debug, Clone, PartialEq)]
pub struct Table52 {
    /// The configuration used.
    pub config: Table52Config,
    /// The exact continuous-time run.
    pub exact: RunReport,
    /// One discrete run per Δt.
    pub discrete: Vec<DiscreteReport>,
}

impl Table52 {
    /// The table as Markdown.
    pub fn to_markdown(&self) -> String {
        let c = &self.config;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "Table 5.2 — {} objects, {}D, {} simulated s, seed {}\n",
            c.objects, c.dim, c.seconds, c.seed
        );
        out.push_str("| algorithm | running time (s) | collisions resolved | missed collisions | of which tunnelled |\n|---|---:|---:|---:|---:|\n");
        let _ = writeln!(
            out,
            "| continuous time ({}) | {:.6} | {} | 0 | 0 |",
            self.exact.method,
            self.exact.wall_time.as_secs_f64(),
            self.exact.collisions
        );
        for d in &self.discrete {
            let _ = writeln!(
                out,
                "| discrete time (dt = {}) | {:.6} | {} | {} | {} |",
                d.time_step,
                d.wall_time.as_secs_f64(),
                d.resolved_collisions,
                d.missed_collisions,
                d.tunnelled
            );
        }
        out.push_str("\nA miss: a pair apart at a step's start whose straight-line motion reached contact within the step but which was apart again at the step's end (tunnelled: the two centres passed each other within the step).\n");
        out
    }

    /// The rows as CSV.
    pub fn to_csv(&self) -> String {
        let mut out =
            String::from("algorithm,time_step,wall_seconds,collisions,missed,tunnelled\n");
        let _ = writeln!(
            out,
            "continuous,,{:.9},{},0,0",
            self.exact.wall_time.as_secs_f64(),
            self.exact.collisions
        );
        for d in &self.discrete {
            let _ = writeln!(
                out,
                "discrete,{},{:.9},{},{},{}",
                d.time_step,
                d.wall_time.as_secs_f64(),
                d.resolved_collisions,
                d.missed_collisions,
                d.tunnelled
            );
        }
        out
    }
}

/// Runs Table 5.2: the exact simulation and discrete stepping at each Δt on the same scene.
pub fn reproduce_table_5_2(
    config: &Table52Config,
    progress: &mut dyn FnMut(&str),
) -> Result<Table52, CcdError> {
    let scene = SceneConfig::new(config.objects, config.dim, config.seed);
    let run_config = RunConfig {
        scene,
        seconds: config.seconds,
        method: config.exact_method,
        ..RunConfig::default()
    };
    let exact = run(&run_config, &mut |_| {})?;
    progress(&format!(
        "exact ({}): {} collisions in {:.3} s",
        exact.method,
        exact.collisions,
        exact.wall_time.as_secs_f64()
    ));
    let world = generate_scene(&scene)?;
    let mut discrete = Vec::new();
    for &dt in &config.time_steps {
        let report = run_discrete(&world, dt, config.seconds)?;
        progress(&format!(
            "dt = {dt}: {:.3} s, {} resolved, {} missed",
            report.wall_time.as_secs_f64(),
            report.resolved_collisions,
            report.missed_collisions
        ));
        discrete.push(report);
    }
    Ok(Table52 {
        config: config.clone(),
        exact,
        discrete,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponent_of_power_law() {
        let points: Vec<(f64, f64)> = [8.0, 16.0, 32.0, 64.0]
            .iter()
            .map(|&x: &f64| (x, 3.0 * x.powf(1.5)))
            .collect();
        assert!((fitted_exponent(&points).unwrap() - 1.5).abs() < 1e-12);
        assert_eq!(fitted_exponent(&points[..1]), None);
    }

    #[test]
    fn small_tables_run() {
        let config = Table51Config {
            min_objects: 8,
            max_objects: 32,
            seconds: 0.2,
            ..Table51Config::default()
        };
        let table = reproduce_table_5_1(&config, &mut |_| {}).unwrap();
        assert_eq!(table.rows.len(), 9);
        for n in [8, 16, 32] {
            let counts: Vec<u64> = table
                .rows
                .iter()
                .filter(|r| r.objects == n)
                .map(|r| r.collisions)
                .collect();
            assert!(counts.windows(2).all(|w| w[0] == w[1]), "{counts:?}");
        }
        assert!(table.to_markdown().contains("| 32 |"));
        let config = Table52Config {
            objects: 64,
            seconds: 0.5,
            time_steps: vec![0.001, 0.1],
            ..Table52Config::default()
        };
        let table = reproduce_table_5_2(&config, &mut |_| {}).unwrap();
        assert!(table.discrete[1].missed_collisions >= table.discrete[0].missed_collisions);
        assert!(table.to_csv().lines().count() == 4);
    }
}
