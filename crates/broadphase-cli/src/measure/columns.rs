//! A measured run as a row of a report: `bench` and `sweep` write the same columns, in the
//! same order, from this one list.

use super::{Measurement, PhaseMeasurement};
use crate::export::quantity::{
    ACTUAL_PAIRS, ALGORITHM, BYTES_PER_PROXY, NARROW_MS, OBJECTS, OBJECTS_AT_END, PHASE,
    POSSIBLE_PAIRS, QUERY_MS, SET_AABBS_MS, STEPS, STOPPED_AT_STEP, TOTAL_MS, UPDATE_MS,
    VS_FASTEST,
};
use crate::export::{Children, Field, Statistic, Value};

/// A run that stopped at its first measured step has no times: they are missing, and it is
/// never the fastest.
pub fn unmeasured(m: &Measurement) -> bool {
    m.stopped.is_some_and(|(step, _)| step == 0)
}

/// The run the others are compared with: the smallest `total_ms_median`, and that run's
/// fastest step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fastest {
    /// Its `total_ms_median`.
    pub median: f64,
    /// Its `total_ms_min`.
    pub min: f64,
}

/// The measured run with the smallest `total_ms_median` (infinite times without one).
pub fn fastest_total<'a>(runs: impl IntoIterator<Item = &'a Measurement>) -> Fastest {
    runs.into_iter()
        .filter(|m| !unmeasured(m))
        .min_by(|a, b| a.total.median.total_cmp(&b.total.median))
        .map_or(
            Fastest {
                median: f64::INFINITY,
                min: f64::INFINITY,
            },
            |m| Fastest {
                median: m.total.median,
                min: m.total.min,
            },
        )
}

/// A value of a run, given the fastest run it is compared with.
type Getter = fn(&Measurement, Fastest) -> Value;

/// A time of the run, missing when it measured nothing.
fn time(m: &Measurement, ms: f64) -> Value {
    if unmeasured(m) {
        Value::Missing
    } else {
        Value::Float(ms)
    }
}

/// A value the narrow phase gives, missing when it did not run.
fn narrow_only(m: &Measurement, value: Value) -> Value {
    if m.narrow_phase {
        value
    } else {
        Value::Missing
    }
}

/// The columns of a run, in order, with how each is read from the measurement.
fn columns(with_queries: bool) -> Vec<(Field, Getter)> {
    let mut columns: Vec<(Field, Getter)> = vec![
        (ALGORITHM.plain().into(), |m, _| Value::text(&m.algorithm)),
        (OBJECTS.plain().into(), |m, _| Value::int(m.objects)),
        (Field::from(STEPS.plain()).for_programs(), |m, _| {
            Value::int(m.steps)
        }),
        (SET_AABBS_MS.median().into(), |m, _| {
            time(m, m.set_aabbs.median)
        }),
        (UPDATE_MS.median().into(), |m, _| time(m, m.update.median)),
        (NARROW_MS.median().into(), |m, _| {
            narrow_only(m, time(m, m.narrow.median))
        }),
        (TOTAL_MS.median().into(), |m, _| time(m, m.total.median)),
        (Field::from(TOTAL_MS.mean()).for_programs(), |m, _| {
            time(m, m.total.mean)
        }),
        (TOTAL_MS.with(Statistic::P95).into(), |m, _| {
            time(m, m.total.p95)
        }),
        (TOTAL_MS.with(Statistic::Max).into(), |m, _| {
            time(m, m.total.max)
        }),
        (
            Field::from(TOTAL_MS.with(Statistic::Sum)).for_programs(),
            |m, _| time(m, m.total_ms_sum()),
        ),
        (VS_FASTEST.plain().into(), |m, fastest| {
            time(m, m.total.median / fastest.median.max(1e-9))
        }),
        // The same ratio of the fastest steps: far from `vs_fastest`, the machine was busy.
        (VS_FASTEST.with(Statistic::Min).into(), |m, fastest| {
            time(m, m.total.min / fastest.min.max(1e-9))
        }),
        (POSSIBLE_PAIRS.mean().into(), |m, _| {
            time(m, m.possible_pairs_mean)
        }),
        (ACTUAL_PAIRS.mean().into(), |m, _| {
            narrow_only(m, time(m, m.actual_pairs_mean))
        }),
        (BYTES_PER_PROXY.plain().into(), |m, _| {
            Value::Float(m.bytes_per_proxy)
        }),
    ];
    if with_queries {
        columns.push((QUERY_MS.median().into(), |m, _| {
            Value::float_or_missing(m.queries.filter(|_| !unmeasured(m)).map(|q| q.median))
        }));
    }
    columns.push((
        Field::from(STOPPED_AT_STEP.plain()).for_programs(),
        |m, _| Value::int_or_missing(m.stopped.map(|(step, _)| step)),
    ));
    columns
}

/// The fields of a run's row; `with_queries` adds `query_ms_median`.
pub fn run_fields(with_queries: bool) -> Vec<Field> {
    columns(with_queries).into_iter().map(|(f, _)| f).collect()
}

/// The values of `m`'s row, against the fastest of the runs compared.
pub fn run_values(m: &Measurement, fastest: Fastest, with_queries: bool) -> Vec<Value> {
    columns(with_queries)
        .into_iter()
        .map(|(_, get)| get(m, fastest))
        .collect()
}

/// The rows below a run's: its phases (`algorithm` and `objects` identify the run).
pub fn phase_children() -> Children {
    Children {
        name: "phases",
        fields: vec![
            PHASE.plain().into(),
            STEPS.plain().into(),
            TOTAL_MS.with(Statistic::Sum).into(),
            TOTAL_MS.median().into(),
            TOTAL_MS.with(Statistic::P95).into(),
            OBJECTS_AT_END.plain().into(),
        ],
        parent_keys: 2,
    }
}

/// The values of a phase's row.
pub fn phase_values(p: &PhaseMeasurement) -> Vec<Value> {
    vec![
        Value::text(&p.name),
        Value::int(p.steps),
        Value::Float(p.total_ms),
        Value::Float(p.total.median),
        Value::Float(p.total.p95),
        Value::int(p.objects_at_end),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_stopped_at_its_first_step_is_never_the_fastest_and_has_no_times() {
        let run = |total: f64, stopped: Option<usize>| {
            let mut m = Measurement {
                objects: 100,
                ..Default::default()
            };
            m.total.median = total;
            m.stopped = stopped.map(|s| (s, 1e3));
            m
        };
        let runs = [run(0.0, Some(0)), run(5.0, Some(3)), run(7.0, None)];
        assert_eq!(fastest_total(&runs).median, 5.0);
        let fastest = Fastest {
            median: 5.0,
            min: 5.0,
        };
        assert!(unmeasured(&runs[0]) && !unmeasured(&runs[1]));
        let fields = run_fields(false);
        let values = run_values(&runs[0], fastest, false);
        assert_eq!(fields.len(), values.len());
        let total = fields
            .iter()
            .position(|f| f.key() == "total_ms_median")
            .unwrap();
        assert_eq!(values[total], Value::Missing);
        let ratio = run_values(&runs[2], fastest, false)
            [fields.iter().position(|f| f.key() == "vs_fastest").unwrap()]
        .clone();
        assert_eq!(ratio, Value::Float(1.4));
        assert_eq!(run_fields(true).len(), fields.len() + 1);
        assert_eq!(
            phase_children().fields.len(),
            phase_values(&Default::default()).len()
        );
    }
}
