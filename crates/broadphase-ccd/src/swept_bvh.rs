//! The next-event finder of [Kaya16, Algorithm 4]: a BVH of swept AABBs with an adaptive time step.
//!
//! Each body gets an AABB covering it from `now` to `now + Δt`. The hierarchy is built top-down
//! by median split (axis by level, `select_nth_unstable`, [Kaya16, ch. 4.5–4.6]) into an array in
//! pre-order (left child right after its parent), so a refit is one reverse sweep. A pair
//! traversal of the tree against itself runs the exact time of impact on overlapping leaf
//! pairs; walls are tested per leaf during the refit. If nothing happens before `now + Δt`,
//! `Δt` grows (×2) and the tree is refitted and traversed again; after an event is found `Δt`
//! shrinks (×½). Every event with time `<= now + Δt` has overlapping swept boxes (boxes are
//! padded against rounding), so the earliest one found is the earliest overall.
//!
//! Cost per event: O(n log n) build (every `rebuild_every` events, 1 as in [Kaya16]), O(n)
//! refit per Δt trial, and the traversal (near O(n) for small Δt, O(n²) in the worst case).
//! Memory O(n).

use crate::error::CcdError;
use crate::event::{earlier, Event};
use crate::simulation::event_from_key;
use crate::time_of_impact::{collision_key, pair_event_time_before, wall_event};
use crate::vector::{mul_add, Vec3};
use crate::world::World;

/// Constants of the adaptive time step and the rebuild policy of [`crate::Method::SweptBvh`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SweptBvhOptions {
    /// Δt of the first search, > 0.
    pub initial_time_step: f64,
    /// Factor applied to Δt while no event is found, > 1 (2 in [Kaya16, Algorithm 4]).
    pub grow: f64,
    /// Factor applied to Δt after an event is found, in (0, 1] (½ in [Kaya16, Algorithm 4]).
    pub shrink: f64,
    /// Rebuild the hierarchy every this many events and only refit in between (1 = every
    /// event, as in [Kaya16, Algorithm 4]).
    pub rebuild_every: u32,
}

impl Default for SweptBvhOptions {
    fn default() -> Self {
        SweptBvhOptions {
            initial_time_step: 1e-3,
            grow: 2.0,
            shrink: 0.5,
            rebuild_every: 1,
        }
    }
}

impl SweptBvhOptions {
    /// Checks the ranges documented on each field.
    pub fn validate(&self) -> Result<(), CcdError> {
        if !(self.initial_time_step.is_finite() && self.initial_time_step > 0.0) {
            return Err(CcdError::BadOption(format!(
                "initial time step {} must be finite and > 0",
                self.initial_time_step
            )));
        }
        if !(self.grow.is_finite() && self.grow > 1.0) {
            return Err(CcdError::BadOption(format!(
                "grow factor {} must be finite and > 1",
                self.grow
            )));
        }
        if !(self.shrink > 0.0 && self.shrink <= 1.0) {
            return Err(CcdError::BadOption(format!(
                "shrink factor {} must be in (0, 1]",
                self.shrink
            )));
        }
        if self.rebuild_every == 0 {
            return Err(CcdError::BadOption(
                "rebuild_every must be at least 1".into(),
            ));
        }
        Ok(())
    }
}

/// Marks a node as a leaf in `node_link`; the low bits hold the body index.
const LEAF: u32 = 1 << 31;

#[derive(Debug, Clone)]
pub(crate) struct SweptBvh {
    options: SweptBvhOptions,
    time_step: f64,
    /// Per node: `LEAF | body` for leaves, else the index of the right child (the left child
    /// is the next node).
    node_link: Vec<u32>,
    node_min: Vec<Vec3>,
    node_max: Vec<Vec3>,
    /// Scratch permutation of bodies for the median split.
    order: Vec<u32>,
    /// Growable traversal stack of node pairs (a pair `(x, x)` means "x against itself").
    stack: Vec<(u32, u32)>,
    events_since_build: u32,
    built: bool,
    cached: Option<Event>,
    best_time: f64,
    best_key: u64,
}

impl SweptBvh {
    pub(crate) fn new(world: &World, options: SweptBvhOptions) -> Self {
        let nodes = 2 * world.len() - 1;
        SweptBvh {
            options,
            time_step: options.initial_time_step,
            node_link: Vec::with_capacity(nodes),
            node_min: vec![[0.0; 3]; nodes],
            node_max: vec![[0.0; 3]; nodes],
            order: Vec::with_capacity(world.len()),
            stack: Vec::new(),
            events_since_build: 0,
            built: false,
            cached: None,
            best_time: f64::INFINITY,
            best_key: u64::MAX,
        }
    }

    /// The current adaptive time step Δt.
    pub(crate) fn time_step(&self) -> f64 {
        self.time_step
    }

    pub(crate) fn after_event(&mut self) {
        self.cached = None;
        self.events_since_build += 1;
    }

    pub(crate) fn peek(&mut self, world: &World, now: f64) -> Option<Event> {
        if self.cached.is_some() {
            return self.cached;
        }
        if !self.built || self.events_since_build >= self.options.rebuild_every {
            self.build(world, now);
        }
        loop {
            let horizon = now + self.time_step;
            self.best_time = f64::INFINITY;
            self.best_key = u64::MAX;
            let moving = self.refit(world, now, horizon);
            self.traverse(world, horizon);
            // An infinite horizon (Δt grown past f64) must not turn "no event" into one.
            if self.best_time <= horizon && self.best_time < f64::INFINITY {
                self.time_step = (self.time_step * self.options.shrink).max(f64::MIN_POSITIVE);
                self.cached = Some(event_from_key(self.best_time, self.best_key));
                return self.cached;
            }
            if !moving || !horizon.is_finite() {
                return None;
            }
            self.time_step *= self.options.grow;
        }
    }

    /// Top-down median split of the bodies' centres at `now` into the pre-order node array.
    fn build(&mut self, world: &World, now: f64) {
        self.order.clear();
        self.order.extend(0..world.len() as u32);
        self.node_link.clear();
        let mut order = std::mem::take(&mut self.order);
        self.build_range(world, now, &mut order, 0);
        self.order = order;
        self.built = true;
        self.events_since_build = 0;
    }

    fn build_range(&mut self, world: &World, now: f64, bodies: &mut [u32], level: usize) -> u32 {
        let node = self.node_link.len() as u32;
        if bodies.len() == 1 {
            self.node_link.push(LEAF | bodies[0]);
            return node;
        }
        self.node_link.push(0);
        let axis = level % world.dim;
        let mid = bodies.len() / 2;
        let centre = |i: u32| world.position_at(i as usize, now)[axis];
        bodies.select_nth_unstable_by(mid, |&a, &b| {
            centre(a).total_cmp(&centre(b)).then(a.cmp(&b))
        });
        let (left, right) = bodies.split_at_mut(mid);
        self.build_range(world, now, left, level + 1);
        let right_node = self.build_range(world, now, right, level + 1);
        self.node_link[node as usize] = right_node;
        node
    }

    /// Recomputes every box bottom-up for the interval `[now, horizon]` and collects wall hits
    /// up to `horizon`. Returns whether any body moves.
    fn refit(&mut self, world: &World, now: f64, horizon: f64) -> bool {
        let dt = horizon - now;
        let mut moving = false;
        for node in (0..self.node_link.len()).rev() {
            let link = self.node_link[node];
            if link & LEAF != 0 {
                let i = (link & !LEAF) as usize;
                let v = world.motion[i].velocity;
                moving |= v != [0.0; 3];
                let p0 = world.position_at(i, now);
                let p1 = mul_add(p0, dt, v);
                let r = world.motion[i].radius;
                let (mut lo, mut hi) = ([0.0; 3], [0.0; 3]);
                for k in 0..3 {
                    // Pad against rounding in the positions so that no contact up to the
                    // horizon can fall outside the boxes.
                    let pad = r + 1e-9 * (r + p0[k].abs() + (v[k] * dt).abs());
                    lo[k] = p0[k].min(p1[k]) - pad;
                    hi[k] = p0[k].max(p1[k]) + pad;
                }
                self.node_min[node] = lo;
                self.node_max[node] = hi;
                if let Some((t, key)) = wall_event(world, i) {
                    if t <= horizon && earlier(t, key, self.best_time, self.best_key) {
                        (self.best_time, self.best_key) = (t, key);
                    }
                }
            } else {
                let (l, r) = (node + 1, link as usize);
                let (lmin, lmax, rmin, rmax) = (
                    self.node_min[l],
                    self.node_max[l],
                    self.node_min[r],
                    self.node_max[r],
                );
                self.node_min[node] = [
                    lmin[0].min(rmin[0]),
                    lmin[1].min(rmin[1]),
                    lmin[2].min(rmin[2]),
                ];
                self.node_max[node] = [
                    lmax[0].max(rmax[0]),
                    lmax[1].max(rmax[1]),
                    lmax[2].max(rmax[2]),
                ];
            }
        }
        moving
    }

    #[inline]
    fn overlap(&self, x: usize, y: usize) -> bool {
        let (a0, a1, b0, b1) = (
            &self.node_min[x],
            &self.node_max[x],
            &self.node_min[y],
            &self.node_max[y],
        );
        a0[0] <= b1[0]
            && b0[0] <= a1[0]
            && a0[1] <= b1[1]
            && b0[1] <= a1[1]
            && a0[2] <= b1[2]
            && b0[2] <= a1[2]
    }

    /// Self-collision traversal of the tree (the "BVH collision check" of [Kaya16]), with the
    /// exact time of impact on overlapping leaf pairs.
    fn traverse(&mut self, world: &World, horizon: f64) {
        self.stack.clear();
        self.stack.push((0, 0));
        while let Some((x, y)) = self.stack.pop() {
            let (lx, ly) = (self.node_link[x as usize], self.node_link[y as usize]);
            if x == y {
                if lx & LEAF == 0 {
                    self.stack.push((x + 1, lx));
                    self.stack.push((x + 1, x + 1));
                    self.stack.push((lx, lx));
                }
                continue;
            }
            if !self.overlap(x as usize, y as usize) {
                continue;
            }
            match (lx & LEAF != 0, ly & LEAF != 0) {
                (true, true) => {
                    let (i, j) = ((lx & !LEAF) as usize, (ly & !LEAF) as usize);
                    let (a, b) = (i.min(j), i.max(j));
                    if let Some(t) =
                        pair_event_time_before(world, a, b, self.best_time.min(horizon))
                    {
                        let key = collision_key(a, b);
                        if t <= horizon && earlier(t, key, self.best_time, self.best_key) {
                            (self.best_time, self.best_key) = (t, key);
                        }
                    }
                }
                (true, false) => {
                    self.stack.push((x, y + 1));
                    self.stack.push((x, ly));
                }
                (false, true) => {
                    self.stack.push((x + 1, y));
                    self.stack.push((lx, y));
                }
                (false, false) => {
                    self.stack.push((x + 1, y + 1));
                    self.stack.push((x + 1, ly));
                    self.stack.push((lx, y + 1));
                    self.stack.push((lx, ly));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{generate_scene, SceneConfig};

    impl SweptBvh {
        /// Every body in exactly one leaf, every parent box containing its children, every
        /// leaf box containing its body's swept sphere over `[now, horizon]`.
        fn validate(&self, world: &World, now: f64, horizon: f64) {
            let mut seen = vec![false; world.len()];
            for node in 0..self.node_link.len() {
                let link = self.node_link[node];
                let (lo, hi) = (self.node_min[node], self.node_max[node]);
                if link & LEAF != 0 {
                    let i = (link & !LEAF) as usize;
                    assert!(
                        !std::mem::replace(&mut seen[i], true),
                        "body {i} in two leaves"
                    );
                    let r = world.motion[i].radius;
                    for t in [now, horizon] {
                        let p = world.position_at(i, t);
                        assert!(
                            (0..3).all(|k| lo[k] <= p[k] - r && p[k] + r <= hi[k]),
                            "leaf {node} misses body {i} at {t}"
                        );
                    }
                } else {
                    for child in [node + 1, link as usize] {
                        let (clo, chi) = (self.node_min[child], self.node_max[child]);
                        assert!(
                            (0..3).all(|k| lo[k] <= clo[k] && chi[k] <= hi[k]),
                            "node {node} does not contain {child}"
                        );
                    }
                }
            }
            assert!(seen.iter().all(|&s| s));
        }
    }

    #[test]
    fn hierarchy_stays_valid_across_events_and_rebuild_policies() {
        for (dim, rebuild_every) in [(2, 1), (3, 1), (2, 7), (3, 50)] {
            let world = generate_scene(&SceneConfig::new(77, dim, 4)).unwrap();
            let options = SweptBvhOptions {
                rebuild_every,
                ..SweptBvhOptions::default()
            };
            let mut bvh = SweptBvh::new(&world, options);
            let mut sim =
                crate::Simulation::new(world.clone(), crate::Method::AllPairs, &Default::default())
                    .unwrap();
            for _ in 0..300 {
                let now = sim.now();
                let found = bvh.peek(sim.world(), now).unwrap();
                bvh.validate(sim.world(), now, now + bvh.time_step() / options.shrink);
                let expected = sim.next_event().unwrap();
                assert!(found.matches(&expected, 0.0), "{found} vs {expected}");
                bvh.after_event();
            }
        }
    }
}
