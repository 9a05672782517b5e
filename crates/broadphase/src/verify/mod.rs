//! Differential testing: drives algorithms with the same random operations and compares them,
//! after every update, with an exact model computed by testing all pairs directly.
//!
//! Used by `broadphase verify`, the property tests and the fuzz targets.
//!
//! ```
//! use broadphase::verify::{Scenario, VerifyConfig, Verifier};
//! let algorithms = vec![broadphase::create("sap", &Default::default()).unwrap()];
//! let config = VerifyConfig { objects: 50, steps: 20, seed: 1, scenario: Some(Scenario::Mixed) };
//! let report = Verifier::new(algorithms).run(&config);
//! assert_eq!(report.mismatches, 0, "{:?}", report.first_mismatch);
//! ```

pub use crate::util::SplitMix64;
use std::collections::BTreeSet;
use std::fmt;

use glam::Vec3;

use crate::{
    Aabb, BroadPhase, CollisionFilter, Error, PairEvents, ProxyId, ProxyKind, Ray, RayHit,
};

/// The kind of boxes a verification run generates; each stresses a known weak spot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    /// Random sizes and positions snapped to a coarse lattice, so touching faces are common.
    Mixed,
    /// Every box identical: all pairs overlap.
    Identical,
    /// All boxes on one plane (the clustering case that hurts sweep and prune).
    Plane,
    /// A few boxes larger than the world among tiny and zero-size ones.
    HugeAndTiny,
    /// Coordinates around ±1e30 beside ordinary ones.
    Far,
    /// Unit boxes on an integer lattice: faces, edges and corners touch.
    Touching,
    /// Every box flies away from the origin forever, faster and faster: structures must not
    /// keep memory for the space left behind.
    Drift,
}

impl Scenario {
    /// Every scenario, in the order a full run cycles through them.
    pub const ALL: [Scenario; 7] = [
        Scenario::Mixed,
        Scenario::Identical,
        Scenario::Plane,
        Scenario::HugeAndTiny,
        Scenario::Far,
        Scenario::Touching,
        Scenario::Drift,
    ];

    fn random_box(self, rng: &mut SplitMix64) -> Aabb {
        let snap = |v: f32| (v * 4.0).round() / 4.0;
        let (min, max) = match self {
            Scenario::Mixed | Scenario::Drift => {
                let c = Vec3::new(
                    rng.range(0.0, 40.0),
                    rng.range(0.0, 40.0),
                    rng.range(0.0, 40.0),
                )
                .map(snap);
                let h = if rng.chance(0.1) {
                    Vec3::ZERO
                } else {
                    Vec3::new(
                        rng.range(0.0, 4.0),
                        rng.range(0.0, 4.0),
                        rng.range(0.0, 4.0),
                    )
                    .map(snap)
                };
                (c - h, c + h)
            }
            Scenario::Identical => (Vec3::splat(-1.0), Vec3::splat(1.0)),
            Scenario::Plane => {
                let c = Vec3::new(rng.range(0.0, 60.0), 0.0, rng.range(0.0, 60.0)).map(snap);
                let h = Vec3::new(rng.range(0.0, 2.0), 0.5, rng.range(0.0, 2.0)).map(snap);
                (c - Vec3::new(h.x, 0.0, h.z), c + Vec3::new(h.x, 1.0, h.z))
            }
            Scenario::HugeAndTiny => {
                let c = Vec3::new(
                    rng.range(0.0, 30.0),
                    rng.range(0.0, 30.0),
                    rng.range(0.0, 30.0),
                );
                let h = match rng.below(10) {
                    0 => Vec3::splat(1e4),
                    1..=3 => Vec3::ZERO,
                    _ => Vec3::splat(rng.range(0.0, 0.05)),
                };
                (c - h, c + h)
            }
            Scenario::Far => {
                let scale = if rng.chance(0.5) { 1e30 } else { 10.0 };
                let c = Vec3::new(
                    rng.range(-4.0, 4.0),
                    rng.range(-4.0, 4.0),
                    rng.range(-4.0, 4.0),
                )
                .map(|v| v.round() * scale);
                let h = Vec3::splat(rng.range(0.0, 1.0) * scale);
                let h = if rng.chance(0.1) {
                    Vec3::splat(3e38)
                } else {
                    h
                };
                let limit = Vec3::splat(f32::MAX);
                ((c - h).clamp(-limit, limit), (c + h).clamp(-limit, limit))
            }
            Scenario::Touching => {
                let c = Vec3::new(
                    rng.below(12) as f32,
                    rng.below(12) as f32,
                    rng.below(12) as f32,
                );
                let h = if rng.chance(0.2) {
                    Vec3::ZERO
                } else {
                    Vec3::splat(0.5)
                };
                (c - h, c + h)
            }
        };
        Aabb::new(min, max).expect("scenario boxes are valid")
    }

    /// A small move of `aabb`, a teleport, or a resize.
    fn moved_box(self, aabb: &Aabb, rng: &mut SplitMix64) -> Aabb {
        match rng.below(10) {
            0 => self.random_box(rng),
            1 => {
                // Grow or shrink about the centre, sometimes to a point.
                let c = aabb.center();
                let factor = [0.0, 0.5, 2.0][rng.below(3)];
                let h = (aabb.extents() * 0.5 * factor).min(Vec3::splat(1e38));
                Aabb::new(
                    (c - h).max(Vec3::splat(-f32::MAX)),
                    (c + h).min(Vec3::splat(f32::MAX)),
                )
                .unwrap_or(*aabb)
            }
            _ => {
                let step = match self {
                    Scenario::Far if aabb.min().abs().max_element() > 1e20 => 1e29,
                    Scenario::Touching => 1.0,
                    _ => 0.5,
                };
                let d = Vec3::new(
                    rng.below(5) as f32 - 2.0,
                    if self == Scenario::Plane {
                        0.0
                    } else {
                        rng.below(5) as f32 - 2.0
                    },
                    rng.below(5) as f32 - 2.0,
                ) * step;
                Aabb::new(aabb.min() + d, aabb.max() + d).unwrap_or(*aabb)
            }
        }
    }
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Scenario::Mixed => "mixed",
            Scenario::Identical => "identical",
            Scenario::Plane => "plane",
            Scenario::HugeAndTiny => "huge-and-tiny",
            Scenario::Far => "far",
            Scenario::Touching => "touching",
            Scenario::Drift => "drift",
        };
        f.write_str(name)
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct VerifyConfig {
    /// Target number of live proxies.
    pub objects: usize,
    /// Number of updates.
    pub steps: usize,
    /// Random seed.
    pub seed: u64,
    /// One scenario, or `None` to cycle through [`Scenario::ALL`] (with a `clear` between).
    pub scenario: Option<Scenario>,
}

impl Default for VerifyConfig {
    fn default() -> Self {
        Self {
            objects: 200,
            steps: 600,
            seed: 1,
            scenario: None,
        }
    }
}

/// The outcome of a run.
#[derive(Debug, Clone, Default)]
pub struct VerifyReport {
    /// Algorithms compared.
    pub algorithms: usize,
    /// Updates made.
    pub steps: usize,
    /// Individual comparisons made (pair sets, events, queries, error results).
    pub checks: u64,
    /// Comparisons that failed.
    pub mismatches: u64,
    /// The first failure, described.
    pub first_mismatch: Option<String>,
}

#[derive(Debug, Clone, Copy)]
struct ModelProxy {
    aabb: Aabb,
    kind: ProxyKind,
    filter: CollisionFilter,
}

/// Drives a set of algorithms and an exact model with the same operations.
pub struct Verifier {
    algorithms: Vec<Box<dyn BroadPhase>>,
    /// Per handle: the model proxy, `None` once removed.
    model: Vec<Option<ModelProxy>>,
    live: Vec<u32>,
    /// Per algorithm, per handle: the id it issued.
    ids: Vec<Vec<ProxyId>>,
    /// Per algorithm, per slot index: the handle that holds it.
    handles_by_slot: Vec<Vec<u32>>,
    /// The exact pair set after the previous update, as sorted handle pairs.
    previous: BTreeSet<(u32, u32)>,
    report: VerifyReport,
    events: PairEvents,
    /// Compare with the model on two consecutive updates out of this many.
    check_every: usize,
    /// Whether `previous` is the exact set after the last update (false after an
    /// unchecked update).
    previous_valid: bool,
}

impl Verifier {
    /// A verifier for these algorithms (at least one).
    pub fn new(algorithms: Vec<Box<dyn BroadPhase>>) -> Self {
        let n = algorithms.len();
        Self {
            algorithms,
            model: Vec::new(),
            live: Vec::new(),
            ids: vec![Vec::new(); n],
            handles_by_slot: vec![Vec::new(); n],
            previous: BTreeSet::new(),
            report: VerifyReport {
                algorithms: n,
                ..Default::default()
            },
            events: PairEvents::new(),
            check_every: 1,
            previous_valid: true,
        }
    }

    /// Checks only two consecutive updates out of every `every` (pair sets on both, events
    /// on the second), for long runs where the O(n²) model would dominate. 1 checks all.
    pub fn set_check_every(&mut self, every: usize) {
        self.check_every = every.max(1);
    }

    fn fail(&mut self, what: impl FnOnce() -> String) {
        self.report.mismatches += 1;
        if self.report.first_mismatch.is_none() {
            self.report.first_mismatch = Some(format!("step {}: {}", self.report.steps, what()));
        }
    }

    fn check(&mut self, ok: bool, what: impl FnOnce() -> String) {
        self.report.checks += 1;
        if !ok {
            self.fail(what);
        }
    }

    /// Inserts a proxy into every algorithm and the model; returns its handle.
    pub fn insert(&mut self, aabb: Aabb, kind: ProxyKind, filter: CollisionFilter) -> u32 {
        let handle = self.model.len() as u32;
        self.model.push(Some(ModelProxy { aabb, kind, filter }));
        self.live.push(handle);
        for k in 0..self.algorithms.len() {
            match self.algorithms[k].insert(aabb, kind, filter) {
                Ok(id) => {
                    self.ids[k].push(id);
                    let slots = &mut self.handles_by_slot[k];
                    let slot = id.index() as usize;
                    if slots.len() <= slot {
                        slots.resize(slot + 1, u32::MAX);
                    }
                    slots[slot] = handle;
                }
                Err(e) => {
                    self.ids[k].push(ProxyId::from_parts(u32::MAX, 0));
                    let name = self.algorithms[k].name();
                    self.fail(|| format!("{name}: insert failed: {e}"));
                }
            }
        }
        handle
    }

    /// Moves a live proxy in every algorithm and the model.
    pub fn set_aabb(&mut self, handle: u32, aabb: Aabb) {
        if let Some(proxy) = self.model[handle as usize].as_mut() {
            proxy.aabb = aabb;
        }
        for k in 0..self.algorithms.len() {
            let id = self.ids[k][handle as usize];
            let result = self.algorithms[k].set_aabb(id, aabb);
            let name = self.algorithms[k].name();
            self.check(result.is_ok(), || {
                format!("{name}: set_aabb({id}) failed: {result:?}")
            });
        }
    }

    /// Moves several live proxies in every algorithm (one [`BroadPhase::set_aabbs`] batch
    /// each) and the model.
    pub fn set_aabbs(&mut self, moves: &[(u32, Aabb)]) {
        for &(handle, aabb) in moves {
            if let Some(proxy) = self.model[handle as usize].as_mut() {
                proxy.aabb = aabb;
            }
        }
        for k in 0..self.algorithms.len() {
            let batch: Vec<(ProxyId, Aabb)> = moves
                .iter()
                .map(|&(handle, aabb)| (self.ids[k][handle as usize], aabb))
                .collect();
            let result = self.algorithms[k].set_aabbs(&batch);
            let name = self.algorithms[k].name();
            self.check(result.is_ok(), || {
                format!(
                    "{name}: set_aabbs of {} moves failed: {result:?}",
                    moves.len()
                )
            });
        }
    }

    /// Removes a live proxy from every algorithm and the model.
    pub fn remove(&mut self, handle: u32) {
        self.model[handle as usize] = None;
        self.live.retain(|&h| h != handle);
        for k in 0..self.algorithms.len() {
            let id = self.ids[k][handle as usize];
            let result = self.algorithms[k].remove(id);
            let name = self.algorithms[k].name();
            self.check(result.is_ok(), || {
                format!("{name}: remove({id}) failed: {result:?}")
            });
        }
    }

    /// Uses a removed handle's id: every algorithm must answer `StaleProxy` and stay intact.
    pub fn use_stale(&mut self, handle: u32, aabb: Aabb) {
        for k in 0..self.algorithms.len() {
            let id = self.ids[k][handle as usize];
            let moved = self.algorithms[k].set_aabb(id, aabb);
            let batch = self.algorithms[k].set_aabbs(&[(id, aabb)]);
            let removed = self.algorithms[k].remove(id);
            let name = self.algorithms[k].name();
            let stale = Err(Error::StaleProxy(id));
            self.check(moved == stale && batch == stale && removed == stale, || {
                format!("{name}: stale id {id} gave {moved:?}, {batch:?} and {removed:?}")
            });
        }
    }

    fn exact_pairs(&self) -> BTreeSet<(u32, u32)> {
        let mut pairs = BTreeSet::new();
        for (x, &a) in self.live.iter().enumerate() {
            let pa = self.model[a as usize].expect("live handle");
            for &b in &self.live[x + 1..] {
                let pb = self.model[b as usize].expect("live handle");
                let both_static = pa.kind == ProxyKind::Static && pb.kind == ProxyKind::Static;
                if !both_static && pa.filter.allows(pb.filter) && pa.aabb.overlaps(&pb.aabb) {
                    pairs.insert((a.min(b), a.max(b)));
                }
            }
        }
        pairs
    }

    fn handle_pair(&self, k: usize, a: ProxyId, b: ProxyId) -> (u32, u32) {
        let slots = &self.handles_by_slot[k];
        let ha = slots.get(a.index() as usize).copied().unwrap_or(u32::MAX);
        let hb = slots.get(b.index() as usize).copied().unwrap_or(u32::MAX);
        (ha.min(hb), ha.max(hb))
    }

    /// Updates every algorithm and compares pair sets and events with the exact model (on
    /// the updates selected by [`Verifier::set_check_every`]).
    pub fn update(&mut self) {
        if self.check_every > 1 && self.report.steps % self.check_every > 1 {
            for k in 0..self.algorithms.len() {
                self.algorithms[k].update(&mut self.events);
            }
            self.previous_valid = false;
            self.report.steps += 1;
            return;
        }
        let expected = self.exact_pairs();
        let check_events = self.previous_valid;
        let expected_begun: Vec<_> = expected.difference(&self.previous).copied().collect();
        let expected_ended: Vec<_> = self.previous.difference(&expected).copied().collect();
        let mut pairs = Vec::new();
        for k in 0..self.algorithms.len() {
            let mut events = std::mem::take(&mut self.events);
            self.algorithms[k].update(&mut events);
            let name = self.algorithms[k].name();
            let mut begun: Vec<_> = events
                .begun
                .iter()
                .map(|p| self.handle_pair(k, p.a, p.b))
                .collect();
            let mut ended: Vec<_> = events
                .ended
                .iter()
                .map(|p| self.handle_pair(k, p.a, p.b))
                .collect();
            begun.sort_unstable();
            ended.sort_unstable();
            self.events = events;
            self.check(!check_events || begun == expected_begun, || {
                format!(
                    "{name}: begun events differ: {}",
                    describe_difference(&begun, &expected_begun)
                )
            });
            self.check(!check_events || ended == expected_ended, || {
                format!(
                    "{name}: ended events differ: {}",
                    describe_difference(&ended, &expected_ended)
                )
            });
            self.algorithms[k].pairs(&mut pairs);
            let mut listed: Vec<_> = pairs
                .iter()
                .map(|p| self.handle_pair(k, p.a, p.b))
                .collect();
            listed.sort_unstable();
            let expected_list: Vec<_> = expected.iter().copied().collect();
            self.check(listed == expected_list, || {
                format!(
                    "{name}: pair set differs: {}",
                    describe_difference(&listed, &expected_list)
                )
            });
            let count = self.algorithms[k].len();
            let live = self.live.len();
            self.check(count == live, || {
                format!("{name}: len() is {count}, expected {live}")
            });
        }
        self.previous = expected;
        self.previous_valid = true;
        self.report.steps += 1;
    }

    /// Compares a box query and a ray cast of every algorithm with the model.
    pub fn check_queries(&mut self, query: &Aabb, ray: &Ray, filter: CollisionFilter) {
        let mut expected_boxes: Vec<u32> = Vec::new();
        let mut expected_hits: Vec<(f32, u32)> = Vec::new();
        for &h in &self.live {
            let p = self.model[h as usize].expect("live handle");
            if !p.filter.allows(filter) {
                continue;
            }
            if p.aabb.overlaps(query) {
                expected_boxes.push(h);
            }
            if let Some(d) = ray.hit_distance(&p.aabb) {
                expected_hits.push((d, h));
            }
        }
        expected_boxes.sort_unstable();
        expected_hits.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut ids = Vec::new();
        let mut hits: Vec<RayHit> = Vec::new();
        for k in 0..self.algorithms.len() {
            let name = self.algorithms[k].name();
            self.algorithms[k].query_aabb(query, filter, &mut ids);
            let mut got: Vec<u32> = ids
                .iter()
                .map(|id| self.handles_by_slot[k][id.index() as usize])
                .collect();
            got.sort_unstable();
            self.check(got == expected_boxes, || {
                format!("{name}: query_aabb {got:?} != {expected_boxes:?}")
            });
            self.algorithms[k].raycast(ray, filter, &mut hits);
            let mut got: Vec<(f32, u32)> = hits
                .iter()
                .map(|hit| {
                    (
                        hit.distance,
                        self.handles_by_slot[k][hit.id.index() as usize],
                    )
                })
                .collect();
            // Equal distances may come in slot order, which differs from handle order.
            got.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            self.check(got == expected_hits, || {
                format!("{name}: raycast {got:?} != {expected_hits:?}")
            });
            let closest = self.algorithms[k].raycast_closest(ray, filter);
            let expected_distance = expected_hits.first().map(|h| h.0);
            self.check(closest.map(|h| h.distance) == expected_distance, || {
                format!(
                    "{name}: raycast_closest {closest:?}, expected distance {expected_distance:?}"
                )
            });
        }
    }

    /// Clears every algorithm and the model.
    pub fn clear(&mut self) {
        for algorithm in &mut self.algorithms {
            algorithm.clear();
        }
        for ids in &mut self.ids {
            ids.clear();
        }
        for slots in &mut self.handles_by_slot {
            slots.clear();
        }
        self.model.clear();
        self.live.clear();
        self.previous.clear();
    }

    /// Runs random operations as configured and returns the report.
    pub fn run(&mut self, config: &VerifyConfig) -> VerifyReport {
        let mut rng = SplitMix64::new(config.seed);
        let scenarios: Vec<Scenario> = match config.scenario {
            Some(s) => vec![s],
            None => Scenario::ALL.to_vec(),
        };
        let per_scenario = config.steps.div_ceil(scenarios.len()).max(1);
        let mut done = 0;
        for (index, &scenario) in scenarios.iter().enumerate() {
            if index > 0 {
                self.clear();
            }
            let steps = per_scenario.min(config.steps - done);
            for _ in 0..steps {
                self.random_step(scenario, config.objects, &mut rng);
            }
            done += steps;
        }
        self.report.clone()
    }

    /// One step of random operations followed by an update and the checks.
    pub fn random_step(&mut self, scenario: Scenario, objects: usize, rng: &mut SplitMix64) {
        let objects = objects.max(1);
        // Grow towards the target count, then churn around it.
        let inserts = if self.live.len() < objects {
            (objects - self.live.len()).min(objects / 4 + 1)
        } else {
            rng.below(3)
        };
        for _ in 0..inserts {
            let aabb = scenario.random_box(rng);
            let kind = if rng.chance(0.2) {
                ProxyKind::Static
            } else {
                ProxyKind::Dynamic
            };
            let filter = match rng.below(8) {
                0 => CollisionFilter::new(1, 2),
                1 => CollisionFilter::new(2, 1),
                2 => CollisionFilter::new(4, 4),
                _ => CollisionFilter::ALL,
            };
            self.insert(aabb, kind, filter);
        }
        let removals = if self.live.len() > objects / 2 {
            rng.below(3)
        } else {
            0
        };
        for _ in 0..removals {
            if self.live.is_empty() {
                break;
            }
            let handle = self.live[rng.below(self.live.len())];
            self.remove(handle);
            if rng.chance(0.3) {
                let aabb = scenario.random_box(rng);
                self.use_stale(handle, aabb);
            }
        }
        if scenario == Scenario::Drift {
            // Each box keeps its own direction; speed grows with time, without bound.
            let speed = 0.5 * (1.0 + self.report.steps as f32 / 64.0);
            for k in 0..self.live.len() {
                let handle = self.live[k];
                let mut h = SplitMix64::new(handle as u64);
                let direction =
                    Vec3::new(h.range(-1.0, 1.0), h.range(-1.0, 1.0), h.range(-1.0, 1.0));
                let current = self.model[handle as usize].expect("live handle").aabb;
                let d = direction * speed;
                if let Ok(aabb) = Aabb::new(current.min() + d, current.max() + d) {
                    self.set_aabb(handle, aabb);
                }
            }
        }
        let moves = rng.below(self.live.len() / 3 + 2);
        // Half the steps move proxies one call each, half in one batch (a proxy may appear
        // twice in a batch: the later box wins).
        let batched = rng.chance(0.5);
        let mut batch = Vec::new();
        for _ in 0..moves {
            if self.live.is_empty() {
                break;
            }
            let handle = self.live[rng.below(self.live.len())];
            let current = match batch.iter().rev().find(|(h, _)| *h == handle) {
                Some(&(_, aabb)) => aabb,
                None => self.model[handle as usize].expect("live handle").aabb,
            };
            let aabb = scenario.moved_box(&current, rng);
            if batched {
                batch.push((handle, aabb));
            } else {
                self.set_aabb(handle, aabb);
            }
        }
        if !batch.is_empty() {
            self.set_aabbs(&batch);
        }
        self.update();
        if rng.chance(0.25) {
            let query = scenario.random_box(rng);
            let origin = scenario.random_box(rng).center();
            let direction = match rng.below(4) {
                0 => Vec3::X,
                1 => Vec3::new(0.0, -1.0, 0.0),
                2 => Vec3::ZERO,
                _ => Vec3::new(
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                ),
            };
            let length = if rng.chance(0.1) {
                f32::INFINITY
            } else {
                rng.range(0.0, 100.0)
            };
            let filter = if rng.chance(0.5) {
                CollisionFilter::ALL
            } else {
                CollisionFilter::new(1, 1)
            };
            let ray = Ray::new(origin, direction, length).expect("finite ray");
            self.check_queries(&query, &ray, filter);
        }
    }

    /// Number of live proxies.
    pub fn live_count(&self) -> usize {
        self.live.len()
    }

    /// The algorithms under test.
    pub fn algorithms(&self) -> &[Box<dyn BroadPhase>] {
        &self.algorithms
    }

    /// The report so far.
    pub fn report(&self) -> &VerifyReport {
        &self.report
    }
}

fn describe_difference(got: &[(u32, u32)], expected: &[(u32, u32)]) -> String {
    let got_set: BTreeSet<_> = got.iter().collect();
    let expected_set: BTreeSet<_> = expected.iter().collect();
    let extra: Vec<_> = got_set.difference(&expected_set).take(5).collect();
    let missing: Vec<_> = expected_set.difference(&got_set).take(5).collect();
    let duplicates = got.len() - got_set.len();
    format!(
        "{} reported, {} expected; extra (handles) {extra:?}, missing {missing:?}, duplicates {duplicates}",
        got.len(),
        expected.len()
    )
}
