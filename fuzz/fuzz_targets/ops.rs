//! Operation sequences decoded from the fuzzer's bytes, applied to every registered algorithm
//! and to the exact model of `broadphase::verify`; any difference in pairs, events, queries or
//! ray casts, any wrong error, and any panic is a crash.
#![no_main]

use arbitrary::Arbitrary;
use broadphase::adaptive::SwitchPolicy;
use broadphase::verify::Verifier;
use broadphase::{
    create, Aabb, AlgorithmOptions, CollisionFilter, ProxyKind, Ray, Vec3, ALGORITHMS,
};
use libfuzzer_sys::fuzz_target;

/// A coordinate drawn from the values that break broad phases.
#[derive(Arbitrary, Debug, Clone, Copy)]
enum Coord {
    Small(i8),
    Quarter(i16),
    Huge(bool),
    Max(bool),
    Subnormal(u8),
    Raw(f32),
}

impl Coord {
    fn value(self) -> f32 {
        match self {
            Coord::Small(v) => v as f32,
            Coord::Quarter(v) => v as f32 * 0.25,
            Coord::Huge(negative) => {
                if negative {
                    -1e30
                } else {
                    1e30
                }
            }
            Coord::Max(negative) => {
                if negative {
                    -f32::MAX
                } else {
                    f32::MAX
                }
            }
            Coord::Subnormal(v) => f32::from_bits(v as u32) * if v % 2 == 0 { 1.0 } else { -1.0 },
            Coord::Raw(v) => v,
        }
    }
}

#[derive(Arbitrary, Debug, Clone, Copy)]
struct BoxSpec {
    min: [Coord; 3],
    size: [Coord; 3],
}

impl BoxSpec {
    /// The box, or `None` when the coordinates are not a valid box (then `Aabb::new` must
    /// have returned a typed error, which is checked).
    fn aabb(&self) -> Option<Aabb> {
        let min = Vec3::from_array(self.min.map(Coord::value));
        let size = Vec3::from_array(self.size.map(|c| c.value().abs()));
        let result = Aabb::new(min, min + size);
        let valid = min.is_finite() && (min + size).is_finite();
        assert_eq!(
            result.is_ok(),
            valid,
            "Aabb::new accepted or refused wrongly: {min:?} {size:?}"
        );
        result.ok()
    }
}

#[derive(Arbitrary, Debug)]
enum Op {
    Insert {
        spec: BoxSpec,
        is_static: bool,
        group: u8,
        mask: u8,
    },
    Move {
        which: u16,
        spec: BoxSpec,
    },
    Translate {
        which: u16,
        delta: [i8; 3],
    },
    Resize {
        which: u16,
        shrink: bool,
    },
    /// Moves a box onto another's position: exact duplicates and touching faces.
    CopyOf {
        which: u16,
        other: u16,
        shift_axis: u8,
    },
    /// Removes a live proxy; with `report` false without events for its pairs.
    Remove {
        which: u16,
        report: bool,
    },
    /// A new filter for a live proxy: its pairs are re-evaluated at the next update.
    SetFilter {
        which: u16,
        group: u8,
        mask: u8,
    },
    /// A new kind for a live proxy.
    SetKind {
        which: u16,
        is_static: bool,
    },
    /// Asks for a live proxy's pairs to be reported as begun again.
    ReportAgain {
        which: u16,
    },
    /// Sets every algorithm's fat margin (`margin` / 8; 0 stores exact boxes).
    FatMargin {
        margin: u8,
    },
    /// Translates `count` live boxes from `first` on (wrapping, repeats allowed) in one batch.
    Batch {
        first: u16,
        count: u8,
        delta: [i8; 3],
    },
    Stale {
        which: u16,
    },
    Update,
    /// Sets every algorithm's pair limit (`None`: no limit); updates over it must fail,
    /// leave nothing, and recover.
    PairLimit {
        limit: Option<u8>,
    },
    Query {
        spec: BoxSpec,
        origin: [Coord; 3],
        direction: [i8; 3],
        length: u8,
    },
}

fn kind_of(is_static: bool) -> ProxyKind {
    if is_static {
        ProxyKind::Static
    } else {
        ProxyKind::Dynamic
    }
}

/// Group and mask from the fuzzer's bytes, with a shared bit so that most proxies collide.
fn filter_of(group: u8, mask: u8) -> CollisionFilter {
    CollisionFilter::new(group as u32 | 1 << 8, mask as u32 | 1 << 8)
}

#[derive(Arbitrary, Debug)]
struct Input {
    switch_every: u8,
    ops: Vec<Op>,
}

fuzz_target!(|input: Input| {
    let mut options = AlgorithmOptions::default();
    options.adaptive.policy = SwitchPolicy::RoundRobin;
    options.adaptive.min_trial_interval = 1 + input.switch_every as u64 % 4;
    options.adaptive.max_trial_interval = options.adaptive.min_trial_interval;
    let algorithms = ALGORITHMS
        .iter()
        .map(|name| create(name, &options).expect("registered"))
        .collect();
    let mut verifier = Verifier::new(algorithms);
    let mut live: Vec<u32> = Vec::new();
    let mut removed: Vec<u32> = Vec::new();
    let mut boxes: Vec<Aabb> = Vec::new();
    for op in input.ops.iter().take(400) {
        let pick = |which: u16, list: &[u32]| list.get(which as usize % list.len().max(1)).copied();
        match *op {
            Op::Insert {
                spec,
                is_static,
                group,
                mask,
            } => {
                if let Some(aabb) = spec.aabb() {
                    let handle = verifier.insert(aabb, kind_of(is_static), filter_of(group, mask));
                    live.push(handle);
                    boxes.resize(handle as usize + 1, aabb);
                    boxes[handle as usize] = aabb;
                }
            }
            Op::Move { which, spec } => {
                if let (Some(h), Some(aabb)) = (pick(which, &live), spec.aabb()) {
                    verifier.set_aabb(h, aabb);
                    boxes[h as usize] = aabb;
                }
            }
            Op::Translate { which, delta } => {
                if let Some(h) = pick(which, &live) {
                    let b = boxes[h as usize];
                    let d = Vec3::from_array(delta.map(|v| v as f32 * 0.5));
                    if let Ok(aabb) = Aabb::new(b.min() + d, b.max() + d) {
                        verifier.set_aabb(h, aabb);
                        boxes[h as usize] = aabb;
                    }
                }
            }
            Op::Resize { which, shrink } => {
                if let Some(h) = pick(which, &live) {
                    let b = boxes[h as usize];
                    let half = b.extents() * if shrink { 0.25 } else { 1.0 };
                    if let Ok(aabb) = Aabb::new(b.center() - half, b.center() + half) {
                        verifier.set_aabb(h, aabb);
                        boxes[h as usize] = aabb;
                    }
                }
            }
            Op::CopyOf {
                which,
                other,
                shift_axis,
            } => {
                if let (Some(h), Some(o)) = (pick(which, &live), pick(other, &live)) {
                    let b = boxes[o as usize];
                    // Same box, or moved by its own extent along one axis: faces touch.
                    let axis = shift_axis as usize % 4;
                    let mut shift = Vec3::ZERO;
                    if axis < 3 {
                        shift[axis] = b.extents()[axis];
                    }
                    if let Ok(aabb) = Aabb::new(b.min() + shift, b.max() + shift) {
                        verifier.set_aabb(h, aabb);
                        boxes[h as usize] = aabb;
                    }
                }
            }
            Op::Batch {
                first,
                count,
                delta,
            } => {
                let mut batch = Vec::new();
                let d = Vec3::from_array(delta.map(|v| v as f32 * 0.25));
                for k in 0..count as usize % 16 {
                    if let Some(h) = pick(first.wrapping_add(k as u16 * 3), &live) {
                        let b = boxes[h as usize];
                        if let Ok(aabb) = Aabb::new(b.min() + d, b.max() + d) {
                            batch.push((h, aabb));
                            boxes[h as usize] = aabb;
                        }
                    }
                }
                verifier.set_aabbs(&batch);
            }
            Op::Remove { which, report } => {
                if !live.is_empty() {
                    let h = live.swap_remove(which as usize % live.len());
                    verifier.remove(h, report);
                    removed.push(h);
                }
            }
            Op::SetFilter { which, group, mask } => {
                if let Some(h) = pick(which, &live) {
                    verifier.set_filter(h, filter_of(group, mask));
                }
            }
            Op::SetKind { which, is_static } => {
                if let Some(h) = pick(which, &live) {
                    verifier.set_kind(h, kind_of(is_static));
                }
            }
            Op::ReportAgain { which } => {
                if let Some(h) = pick(which, &live) {
                    verifier.report_pairs_again(h);
                }
            }
            Op::FatMargin { margin } => verifier.set_fat_margin(f32::from(margin) / 8.0),
            Op::Stale { which } => {
                if let Some(h) = pick(which, &removed) {
                    verifier.use_stale(h, boxes[h as usize]);
                }
            }
            Op::PairLimit { limit } => verifier.set_pair_limit(limit.map(usize::from)),
            Op::Update => verifier.update(),
            Op::Query {
                spec,
                origin,
                direction,
                length,
            } => {
                verifier.update();
                let origin = Vec3::from_array(origin.map(Coord::value));
                let direction = Vec3::from_array(direction.map(|v| v as f32));
                let ray = Ray::new(origin, direction, length as f32);
                assert_eq!(
                    ray.is_ok(),
                    origin.is_finite(),
                    "Ray::new accepted or refused wrongly"
                );
                if let (Some(query), Ok(ray)) = (spec.aabb(), ray) {
                    verifier.check_queries(&query, &ray, CollisionFilter::ALL);
                }
            }
        }
    }
    verifier.update();
    let report = verifier.report();
    assert_eq!(report.mismatches, 0, "{:?}", report.first_mismatch);
});
