//! The quantities, one constant each, and `QUANTITIES`, the list `docs/outputs.md` shows.

use super::{Kind, Quantity};

const fn quantity(
    key: &'static str,
    kind: Kind,
    unit: &'static str,
    description: &'static str,
) -> Quantity {
    Quantity {
        key,
        kind,
        unit,
        description,
        source_name: "",
    }
}

const fn measured(
    key: &'static str,
    kind: Kind,
    unit: &'static str,
    source_name: &'static str,
    description: &'static str,
) -> Quantity {
    Quantity {
        key,
        kind,
        unit,
        description,
        source_name,
    }
}

// What a row is about.

/// The algorithm.
pub const ALGORITHM: Quantity = quantity(
    "algorithm",
    Kind::Text,
    "",
    "the algorithm: a name of `broadphase::ALGORITHMS` or a peer (`parry-bvh`, `rapier`, and with feature `physx` `physx-sap`, `physx-mbp`, `physx-abp`, `physx-abp-parallel`)",
);
/// `recommend`'s configuration.
pub const CONFIGURATION: Quantity = quantity(
    "configuration",
    Kind::Text,
    "",
    "an algorithm and the options `recommend` set (`grid cell 2.5`)",
);
/// `prune`'s and `ccd`'s method.
pub const METHOD: Quantity = quantity(
    "method",
    Kind::Text,
    "",
    "`prune`: the pruning method timed; `ccd`: the next-event finder",
);
/// The swept scene field.
pub const PARAM: Quantity = quantity("param", Kind::Text, "", "the scene field a sweep varies");
/// Its value.
pub const VALUE: Quantity = quantity("value", Kind::Text, "", "the value of `param` in this row");
/// A phase of a phased scene.
pub const PHASE: Quantity = quantity(
    "phase",
    Kind::Text,
    "",
    "a phase of a phased scene (its name, or `phase N`)",
);
/// `prune`'s generated boxes.
pub const WORKLOAD: Quantity = quantity(
    "workload",
    Kind::Text,
    "",
    "`prune`: the generated boxes (`cube`, `sparse`, `clustered`)",
);
/// The processor.
pub const CPU: Quantity = quantity("cpu", Kind::Text, "", "the processor's model name");
/// Why a row has no full result.
pub const NOTE: Quantity = quantity(
    "note",
    Kind::Text,
    "",
    "why a row has no full result (stopped as too slow, or not tried)",
);
/// The fastest algorithm.
pub const FASTEST: Quantity = quantity(
    "fastest",
    Kind::Text,
    "",
    "the algorithm with the smallest total_ms_median at this value",
);
/// The second fastest.
pub const RUNNER_UP: Quantity = quantity(
    "runner_up",
    Kind::Text,
    "",
    "the algorithm with the second-smallest total_ms_median at this value",
);
/// The fastest algorithm other than `adaptive`.
pub const FASTEST_FIXED: Quantity = quantity(
    "fastest_fixed",
    Kind::Text,
    "",
    "the fastest algorithm other than `adaptive` (by total_ms_median; in a phase, by total_ms_sum)",
);

// Counts and settings.

/// Objects.
pub const OBJECTS: Quantity = quantity(
    "objects",
    Kind::Integer,
    "",
    "objects in the scene, moving and stationary (terrain and ground not counted); `prune`: boxes; `ccd`: circles or spheres",
);
/// Measured steps.
pub const STEPS: Quantity = quantity(
    "steps",
    Kind::Integer,
    "",
    "measured steps (in a phase's row: the phase's; `recommend`: the trial's)",
);
/// `recommend`'s rank.
pub const RANK: Quantity = quantity(
    "rank",
    Kind::Integer,
    "",
    "`recommend`: position by total_ms_median, the median over its rounds (fastest first)",
);
/// `prune`'s timed runs.
pub const RUNS: Quantity = quantity(
    "runs",
    Kind::Integer,
    "",
    "`prune`: timed runs of the method",
);
/// Where a run stopped.
pub const STOPPED_AT_STEP: Quantity = quantity(
    "stopped_at_step",
    Kind::Integer,
    "",
    "the measured step (0-based) at which the run stopped, the broad phase (sync and update) of three steps in a row taking longer than `--max-step-ms` (empty: it ran to the end)",
);
/// Objects at the end of a phase.
pub const OBJECTS_AT_END: Quantity = quantity(
    "objects_at_end",
    Kind::Integer,
    "",
    "objects in the world at the phase's last step, terrain and ground included",
);
/// Threads.
pub const THREADS: Quantity = quantity(
    "threads",
    Kind::Integer,
    "",
    "`prune`: threads of `complete_pairs`",
);
/// Timed runs asked for.
pub const REPEAT: Quantity = quantity(
    "repeat",
    Kind::Integer,
    "",
    "`prune`: timed runs asked for (`--repeat`)",
);
/// The random seed.
pub const SEED: Quantity = quantity("seed", Kind::Integer, "", "the random seed");
/// Dimensions.
pub const DIM: Quantity = quantity(
    "dim",
    Kind::Integer,
    "",
    "`ccd`: 2 (circles) or 3 (spheres)",
);

// The measured quantities of [Zych16, ch. 4.1], then the others.

/// Time handing the moved boxes over.
pub const SET_AABBS_MS: Quantity = measured(
    "set_aabbs_ms",
    Kind::Millis,
    "ms per step",
    "Update AABBs",
    "time handing the moved boxes to the algorithm (`set_aabbs`, and churn's removals and insertions)",
);
/// Broad-phase time.
pub const UPDATE_MS: Quantity = measured(
    "update_ms",
    Kind::Millis,
    "ms per step",
    "Broad Phase",
    "broad-phase time: `BroadPhase::update` (the structure's maintenance and the pair search)",
);
/// Narrow-phase time.
pub const NARROW_MS: Quantity = measured(
    "narrow_ms",
    Kind::Millis,
    "ms per step",
    "Narrow Phase",
    "narrow-phase time: parry3d's exact tests of the reported pairs whose objects moved (empty with `bench --no-narrow`)",
);
/// Total time.
pub const TOTAL_MS: Quantity = measured(
    "total_ms",
    Kind::Millis,
    "ms per step",
    "Collision Detection",
    "total time: set_aabbs_ms + update_ms + narrow_ms",
);
/// Possible collisions.
pub const POSSIBLE_PAIRS: Quantity = measured(
    "possible_pairs",
    Kind::Count,
    "pairs per step",
    "Possible Collisions",
    "possible collisions: the pairs the broad phase reports (`prune`: the overlapping box pairs)",
);
/// Actual collisions.
pub const ACTUAL_PAIRS: Quantity = measured(
    "actual_pairs",
    Kind::Count,
    "pairs per step",
    "Actual Collisions",
    "actual collisions: the reported pairs whose shapes intersect (empty with `bench --no-narrow`)",
);
/// The broad phase's whole cost.
pub const SET_AABBS_AND_UPDATE_MS: Quantity = quantity(
    "set_aabbs_and_update_ms",
    Kind::Millis,
    "ms per step",
    "set_aabbs_ms + update_ms: all the broad phase costs a step",
);
/// Queries and ray casts.
pub const QUERY_MS: Quantity = quantity(
    "query_ms",
    Kind::Millis,
    "ms per step",
    "`--queries Q`: Q random box queries and Q ray casts",
);
/// Memory.
pub const BYTES_PER_PROXY: Quantity = quantity(
    "bytes_per_proxy",
    Kind::Bytes,
    "bytes",
    "heap bytes of the structure per live proxy after the last step",
);
/// Against the fastest.
pub const VS_FASTEST: Quantity = quantity(
    "vs_fastest",
    Kind::Ratio,
    "×",
    "total_ms_median ÷ the smallest total_ms_median at the same objects (`bench`) or value (`sweep`; in its list of the fastest: the runner-up's)",
);
/// `adaptive` against the fastest fixed algorithm.
pub const ADAPTIVE_VS_FASTEST_FIXED: Quantity = quantity(
    "adaptive_vs_fastest_fixed",
    Kind::Ratio,
    "×",
    "`adaptive`'s time ÷ fastest_fixed's (total_ms_median; in a phase, total_ms_sum)",
);
/// One pruning call.
pub const PRUNE_MS: Quantity = quantity(
    "prune_ms",
    Kind::Millis,
    "ms per call",
    "`prune`: one call finding every overlapping pair of the boxes",
);
/// Per box.
pub const NS_PER_BOX: Quantity = quantity(
    "ns_per_box",
    Kind::Nanos,
    "ns per box",
    "`prune`: prune_ms_median per box",
);
/// Against `complete_pairs`.
pub const VS_COMPLETE_PAIRS: Quantity = quantity(
    "vs_complete_pairs",
    Kind::Ratio,
    "×",
    "`prune`: prune_ms_median ÷ `complete_pairs`' (above 1: `complete_pairs` is faster)",
);

// Continuous-time runs (`ccd`).

/// Simulated time.
pub const SIMULATED_SECONDS: Quantity = quantity(
    "simulated_seconds",
    Kind::Seconds,
    "s",
    "`ccd`: simulated time reached",
);
/// Whether the run reached its end.
pub const COMPLETED: Quantity = quantity(
    "completed",
    Kind::Flag,
    "",
    "`ccd`: the run reached `--seconds` (false: stopped by `--time-cap`)",
);
/// Whether all-pairs checked it.
pub const CHECKED: Quantity = quantity(
    "checked",
    Kind::Flag,
    "",
    "`ccd`: every event was checked against all-pairs (`--check`), and agreed",
);
/// Collision events.
pub const COLLISIONS: Quantity = quantity(
    "collisions",
    Kind::Integer,
    "events",
    "`ccd`: collisions between objects, each an event at its exact time",
);
/// Wall events.
pub const WALL_HITS: Quantity = quantity(
    "wall_hits",
    Kind::Integer,
    "events",
    "`ccd`: bounces off the walls",
);
/// Wall-clock time.
pub const WALL_SECONDS: Quantity = quantity(
    "wall_seconds",
    Kind::Seconds,
    "s",
    "`ccd`: wall-clock time of the run (with `--check`, the check's included)",
);
/// Event rate.
pub const EVENTS_PER_SECOND: Quantity = quantity(
    "events_per_second",
    Kind::Rate,
    "events/s",
    "`ccd`: (collisions + wall_hits) ÷ wall_seconds",
);
/// Collision rate.
pub const COLLISIONS_PER_SECOND: Quantity = quantity(
    "collisions_per_second",
    Kind::Rate,
    "collisions/s",
    "`ccd`: collisions ÷ wall_seconds",
);

/// Every quantity, in the order `docs/outputs.md` lists them.
#[cfg(test)]
pub const QUANTITIES: &[&Quantity] = &[
    &ALGORITHM,
    &CONFIGURATION,
    &METHOD,
    &PARAM,
    &VALUE,
    &PHASE,
    &WORKLOAD,
    &CPU,
    &NOTE,
    &FASTEST,
    &RUNNER_UP,
    &FASTEST_FIXED,
    &OBJECTS,
    &STEPS,
    &RANK,
    &RUNS,
    &STOPPED_AT_STEP,
    &OBJECTS_AT_END,
    &THREADS,
    &REPEAT,
    &SEED,
    &DIM,
    &SET_AABBS_MS,
    &UPDATE_MS,
    &NARROW_MS,
    &TOTAL_MS,
    &POSSIBLE_PAIRS,
    &ACTUAL_PAIRS,
    &SET_AABBS_AND_UPDATE_MS,
    &QUERY_MS,
    &BYTES_PER_PROXY,
    &VS_FASTEST,
    &ADAPTIVE_VS_FASTEST_FIXED,
    &PRUNE_MS,
    &NS_PER_BOX,
    &VS_COMPLETE_PAIRS,
    &SIMULATED_SECONDS,
    &COMPLETED,
    &CHECKED,
    &COLLISIONS,
    &WALL_HITS,
    &WALL_SECONDS,
    &EVENTS_PER_SECOND,
    &COLLISIONS_PER_SECOND,
];
