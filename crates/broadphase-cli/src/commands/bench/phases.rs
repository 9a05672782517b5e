//! A phased scene's runs side by side, for people: each phase's `total_ms_sum` and
//! `total_ms_p95` per algorithm, the objects at each phase's end, the fastest fixed algorithm
//! of each phase and `adaptive`'s ratio to it.

use crate::export::quantity::{
    ADAPTIVE_VS_FASTEST_FIXED, ALGORITHM, FASTEST_FIXED, OBJECTS_AT_END, TOTAL_MS,
};
use crate::export::{Audience, Field, Statistic, Table, Value};
use crate::measure::Measurement;

/// The runs of the first object count with phases, and how far each phase went.
struct Phases<'a> {
    runs: Vec<&'a Measurement>,
    /// Steps of each phase in the runs that went furthest (0: no run reached it).
    full: Vec<usize>,
    /// The run whose phases name the columns: the first complete one.
    labels: &'a Measurement,
}

impl<'a> Phases<'a> {
    fn new(runs: &'a [Measurement]) -> Option<Self> {
        let first = runs.iter().find(|r| !r.phases.is_empty())?;
        let runs: Vec<&Measurement> = runs.iter().filter(|r| r.objects == first.objects).collect();
        let full = (0..first.phases.len())
            .map(|k| runs.iter().map(|r| r.phases[k].steps).max().unwrap_or(0))
            .collect();
        let labels = runs
            .iter()
            .find(|r| r.stopped.is_none())
            .copied()
            .unwrap_or(first);
        Some(Self { runs, full, labels })
    }

    fn count(&self) -> usize {
        self.full.len()
    }

    /// Whether `run` measured phase `k` whole. A phase no run reached has no values; one a
    /// run stopped in is marked so.
    fn complete(&self, run: &Measurement, k: usize) -> bool {
        self.full[k] > 0 && run.phases[k].steps == self.full[k]
    }

    /// `algorithm`, then `total_ms_sum` and `total_ms_p95` under each phase and the whole
    /// scene.
    fn fields(&self) -> Vec<Field> {
        let sum = TOTAL_MS.with(Statistic::Sum);
        let p95 = TOTAL_MS.with(Statistic::P95);
        let groups = self
            .labels
            .phases
            .iter()
            .map(|p| format!("{} ({})", p.name, crate::console::count(p.steps, "step")))
            .chain(["whole scene".to_string()]);
        let mut fields: Vec<Field> = vec![ALGORITHM.plain().into()];
        for group in groups {
            fields.push(Field::from(sum).grouped(&group));
            fields.push(Field::from(p95).grouped(&group));
        }
        fields
    }

    /// A run's row.
    fn run_row(&self, run: &Measurement) -> Vec<Value> {
        let stopped = || [Value::text("stopped"), Value::Missing];
        let mut values = vec![Value::text(&run.algorithm)];
        for (k, phase) in run.phases.iter().enumerate() {
            values.extend(if self.complete(run, k) {
                [Value::Float(phase.total_ms), Value::Float(phase.total.p95)]
            } else if self.full[k] == 0 {
                [Value::Missing, Value::Missing]
            } else {
                stopped()
            });
        }
        values.extend(if run.stopped.is_none() {
            [
                Value::Float(run.total_ms_sum()),
                Value::Float(run.total.p95),
            ]
        } else {
            stopped()
        });
        values
    }

    /// The fastest algorithm other than `adaptive` in phase `k` (algorithms stopped during
    /// it were slower than the limit there: not the fastest).
    fn fastest_in(&self, k: usize) -> Option<&'a Measurement> {
        self.fixed()
            .filter(|r| self.complete(r, k))
            .min_by(|a, b| a.phases[k].total_ms.total_cmp(&b.phases[k].total_ms))
    }

    /// The fastest complete algorithm other than `adaptive` over the whole scene.
    fn fastest_overall(&self) -> Option<&'a Measurement> {
        self.fixed()
            .filter(|r| r.stopped.is_none())
            .min_by(|a, b| a.total_ms_sum().total_cmp(&b.total_ms_sum()))
    }

    fn fixed(&self) -> impl Iterator<Item = &'a Measurement> + '_ {
        self.runs
            .iter()
            .copied()
            .filter(|r| r.algorithm != "adaptive")
    }

    /// The rows after the runs: `objects_at_end`, and with `adaptive` and another algorithm,
    /// `fastest_fixed` and `adaptive_vs_fastest_fixed`. Each: the label, then one value per
    /// phase and one for the whole scene, under the `total_ms_sum` columns.
    fn summary_rows(&self) -> Vec<Vec<Value>> {
        let row = |label: &str, per_phase: Vec<Value>, whole: Value| {
            let mut values = vec![Value::text(label)];
            for v in per_phase.into_iter().chain([whole]) {
                values.extend([v, Value::Blank]);
            }
            values
        };
        let objects_at_end = self
            .labels
            .phases
            .iter()
            .zip(&self.full)
            .map(|(p, &steps)| Value::int_or_missing((steps > 0).then_some(p.objects_at_end)))
            .collect();
        let mut rows = vec![row(OBJECTS_AT_END.key, objects_at_end, Value::Blank)];
        let adaptive = self.runs.iter().find(|r| r.algorithm == "adaptive");
        let (Some(adaptive), Some(_)) = (adaptive, self.fixed().next()) else {
            return rows;
        };
        let name =
            |r: Option<&Measurement>| r.map_or(Value::Missing, |r| Value::text(&r.algorithm));
        let ratio = |a: f64, b: Option<f64>| Value::float_or_missing(b.map(|b| a / b.max(1e-9)));
        rows.push(row(
            FASTEST_FIXED.key,
            (0..self.count())
                .map(|k| name(self.fastest_in(k)))
                .collect(),
            name(self.fastest_overall()),
        ));
        let per_phase = (0..self.count())
            .map(|k| {
                let fastest = self.fastest_in(k).filter(|_| self.complete(adaptive, k));
                ratio(
                    adaptive.phases[k].total_ms,
                    fastest.map(|r| r.phases[k].total_ms),
                )
            })
            .collect();
        let whole = self
            .fastest_overall()
            .filter(|_| adaptive.stopped.is_none())
            .map(|r| r.total_ms_sum());
        rows.push(row(
            ADAPTIVE_VS_FASTEST_FIXED.key,
            per_phase,
            ratio(adaptive.total_ms_sum(), whole),
        ));
        rows
    }
}

/// The `per phase` table of a phased scene (`None` without phases); for people only (JSON
/// and CSV carry each run's phases under its row).
pub(super) fn side_by_side(runs: &[Measurement]) -> Option<Table> {
    let phases = Phases::new(runs)?;
    let mut table = Table::new("phases", phases.fields());
    table.audience = Audience::People;
    table.title = Some("per phase".to_string());
    for run in &phases.runs {
        table.push(phases.run_row(run));
    }
    for row in phases.summary_rows() {
        table.push(row);
    }
    Some(table)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::PhaseMeasurement;

    fn round(phase_sums: [f64; 2]) -> Measurement {
        let mut m = Measurement {
            algorithm: "a".into(),
            steps: 20,
            phases: phase_sums
                .iter()
                .enumerate()
                .map(|(k, &sum)| PhaseMeasurement {
                    name: format!("p{k}"),
                    steps: 10,
                    total_ms: sum,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        m.total.mean = phase_sums.iter().sum::<f64>() / 20.0;
        m
    }

    #[test]
    fn phases_side_by_side_compares_adaptive_with_the_fastest_fixed() {
        let mut adaptive = round([4.0, 4.0]);
        adaptive.algorithm = "adaptive".into();
        let mut slow = round([8.0, 1.0]);
        slow.algorithm = "slow".into();
        let mut fast = round([2.0, 2.0]);
        fast.algorithm = "fast".into();
        let table = side_by_side(&[adaptive, slow, fast]).unwrap();
        let last = table.rows.last().unwrap();
        assert_eq!(last.values[0], Value::text("adaptive_vs_fastest_fixed"));
        // Phase 1: 4 / 2; phase 2: 4 / 1; whole: 8 / 4.
        assert_eq!(last.values[1], Value::Float(2.0));
        assert_eq!(last.values[3], Value::Float(4.0));
        assert_eq!(last.values[5], Value::Float(2.0));
        let fastest = &table.rows[table.rows.len() - 2];
        assert_eq!(fastest.values[3], Value::text("slow"));
    }
}
