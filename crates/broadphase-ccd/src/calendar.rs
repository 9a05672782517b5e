//! Event calendar with neighbour cells: the event-driven molecular dynamics next-event finder.
//!
//! Every body holds exactly one predicted event — the earliest of its wall hit, its next cell
//! crossing and its collisions with bodies in the adjacent cells — in a calendar queue
//! ([`EventQueue`]: time buckets, O(1) expected per update and per pop).
//! Predictions are invalidated lazily: each body has an event counter, incremented whenever
//! its motion changes, and a predicted collision remembers its partner's counter. When the
//! earliest event is stale it is re-predicted; when it is a cell crossing the body moves to
//! the adjacent cell and only the layer of cells that came into reach is tested (its earlier
//! non-crossing prediction is kept); otherwise it is the next real event. After an event only
//! the one or two bodies involved are re-predicted against their neighbours.
//!
//! Why the queue never misses an event: a body's key is only written by its own predictions,
//! made after its last motion change and at each of its cell changes, and is a lower bound
//! on the body's valid events with every body that was its neighbour at one of those
//! predictions since its last motion change (events whose partner changed since are stale but
//! still early, so they are popped and re-predicted, never hiding a later one). For a pair
//! that can collide, whichever of the two changed (motion or cell) last saw the other as a
//! neighbour (contact needs adjacent cells, cells being wider than any diameter), so the
//! pair's collision is bounded by one of the two keys. Cell crossings rank before real events
//! at the same instant, so the grid is current when a real event is reported.
//!
//! Cost per event: O(1) expected queue updates plus O(neighbours) time-of-impact tests;
//! memory O(n). With many bodies the loop waits on cache misses (each event touches bodies at
//! a random place), so each pop also starts loading what the probable next event will read
//! (see [`Calendar::look_ahead`]).

use crate::cell_grid::{CellGrid, GATHER_SLACK};
use crate::earliest_collision::{CollisionSearch, Earliest, FILTER_SLACK};
use crate::event::{
    decode_tie, earlier, tie_key, Event, EventKind, RANK_COLLISION, RANK_CROSSING, RANK_WALL,
};
use crate::event_queue::{entry_bytes, EventQueue};
use crate::linked_lists::NONE;
use crate::simd::{prefetch, select_f64};
use crate::time_of_impact::wall_event;
use crate::world::World;
use std::hint::select_unpredictable;

/// A body's prediction state.
#[derive(Debug, Clone, Copy)]
struct BodyState {
    /// Its earliest predicted event other than a cell crossing (wall hit or collision), kept
    /// so that a cell crossing only has to test the layer of cells it brings into reach
    /// instead of all neighbours.
    rest_time: f64,
    /// The tie key of that event.
    rest_key: u64,
    /// For a predicted collision in `rest_*`, the partner's counter at prediction time.
    rest_partner_counter: u32,
    /// The partner's counter for the event in the queue (a collision, or a crossing).
    partner_counter: u32,
}

// A body's state and queue entry share one cache line.
const _: () = assert!(entry_bytes::<BodyState>() == 64);

impl Default for BodyState {
    fn default() -> Self {
        BodyState {
            rest_time: f64::INFINITY,
            rest_key: u64::MAX,
            rest_partner_counter: 0,
            partner_counter: 0,
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Calendar {
    grid: CellGrid,
    /// The queue, with each body's prediction state beside its queue entry (one cache line
    /// per body for both).
    queue: EventQueue<BodyState>,
    /// Per body: incremented at each of its events (its motion changed). Apart from the
    /// prediction state because it is read for every partner a prediction keeps: four bytes
    /// per body stay in cache where the 64-byte queue entries would not.
    counters: Vec<u32>,
    /// Cell crossings processed (internal events), for statistics.
    crossings: u64,
    /// Stale predictions discarded.
    stale: u64,
    /// The latest motion-state time of any body (the latest event time): a body whose state
    /// is at this time needs no advancing in the collision search.
    latest: f64,
    /// Scratch: the neighbours of the body being predicted, in its first entries; longer than
    /// the number of bodies by the slack the gather and the filter write past them.
    neighbours: Vec<u32>,
    /// The kernel (AVX2 where the CPU has it) and scratch space of the collision search.
    search: CollisionSearch,
    /// Whether the event loop runs compiled for AVX2, with the grid's gather and the
    /// collision kernel inlined into it: in 2D, where the CPU has AVX2 and the caller allows
    /// it. In 3D the loop keeps them as calls: inlined there, it ran fewer instructions but
    /// took longer, while 2D gained (docs/performance-notes.md, "CCD calendar: inlining").
    avx2: bool,
}

impl Calendar {
    /// The calendar of `world` at time `now`; `simd` allows the AVX2 kernels where the CPU
    /// has them (the scalar ones give bit-identical results).
    pub(crate) fn new(world: &World, now: f64, simd: bool) -> Self {
        let n = world.len();
        let mut calendar = Calendar {
            grid: CellGrid::new(world, now, simd),
            queue: EventQueue::new(n),
            counters: vec![0; n],
            crossings: 0,
            stale: 0,
            latest: world.motion.iter().fold(now, |t, m| t.max(m.time)),
            neighbours: vec![0; n + GATHER_SLACK.max(FILTER_SLACK)],
            search: CollisionSearch::new(n, simd),
            avx2: simd && crate::simd::avx2_available() && world.dim == 2,
        };
        for i in 0..n {
            calendar.predict::<false>(world, i);
        }
        calendar
    }

    /// Number of cells along each axis.
    pub(crate) fn cells(&self) -> [u32; 3] {
        self.grid.cells
    }

    /// `(cell crossings, stale predictions)` processed so far.
    pub(crate) fn internal_events(&self) -> (u64, u64) {
        (self.crossings, self.stale)
    }

    /// Recomputes body `i`'s earliest event and stores it in the queue.
    /// `AVX2`: see [`Calendar::predict_among_neighbours`].
    #[inline(always)]
    fn predict<const AVX2: bool>(&mut self, world: &World, i: usize) {
        self.prefetch_records(i);
        let (time, key) = wall_event(world, i).unwrap_or((f64::INFINITY, u64::MAX));
        self.predict_among_neighbours::<AVX2>(world, i, None, Earliest::new(time, key), 0);
    }

    /// Moves body `i` one cell along `axis` at its crossing event and re-predicts it: its
    /// earlier non-crossing prediction still bounds its events with the old neighbours (a
    /// stale one is caught when popped), so only the layer of cells now in reach is tested.
    #[inline(always)]
    fn cross<const AVX2: bool>(&mut self, world: &World, i: usize, axis: usize, up: bool) {
        self.prefetch_records(i);
        self.grid.step(i, axis, up);
        let state = *self.queue.payload(i);
        let rest = Earliest::new(state.rest_time, state.rest_key);
        self.predict_among_neighbours::<AVX2>(
            world,
            i,
            Some((axis, up)),
            rest,
            state.rest_partner_counter,
        );
    }

    /// Starts loading body `i`'s queue entry (with its prediction state), which its
    /// prediction ends by writing, so that its cache miss overlaps with the neighbour search.
    #[inline(always)]
    fn prefetch_records(&self, i: usize) {
        self.queue.prefetch(i);
        prefetch(&self.grid.place[i]);
    }

    /// Stores as body `i`'s non-crossing event the earlier of `rest` (a collision with
    /// partner counter `rest_partner_counter`, or a wall hit) and its earliest collision with
    /// its neighbours, then schedules `i`: all neighbours, or with `Some((axis, up))` those of
    /// the cell layer its step along `axis` brought into reach.
    ///
    /// With `AVX2` (from [`Calendar::peek_avx2`] and [`Calendar::after_event_avx2`], compiled
    /// for AVX2), the AVX2 gather and kernel are inlined rather than called.
    #[inline(always)]
    fn predict_among_neighbours<const AVX2: bool>(
        &mut self,
        world: &World,
        i: usize,
        entering: Option<(usize, bool)>,
        rest: Earliest,
        rest_partner_counter: u32,
    ) {
        let found = self.grid.gather::<AVX2>(i, entering, &mut self.neighbours);
        let best =
            self.search
                .earliest::<AVX2>(world, i, self.latest, &mut self.neighbours, found, rest);
        let state = self.queue.payload_mut(i);
        (state.rest_time, state.rest_key) = (best.time, best.key);
        state.rest_partner_counter = if best.partner == NONE {
            rest_partner_counter
        } else {
            self.counters[best.partner as usize]
        };
        self.schedule(world, i);
    }

    /// Puts the earlier of body `i`'s stored non-crossing event and its next cell crossing
    /// into the queue.
    #[inline(always)]
    fn schedule(&mut self, world: &World, i: usize) {
        // Compiled per dimension: a loop of constant length over constant indices.
        if world.dim == 2 {
            self.schedule_in::<2>(world, i);
        } else {
            self.schedule_in::<3>(world, i);
        }
    }

    /// [`Calendar::schedule`] in `D` dimensions.
    #[inline(always)]
    fn schedule_in<const D: usize>(&mut self, world: &World, i: usize) {
        let state = *self.queue.payload(i);
        let (mut best_time, mut best_key) = (state.rest_time, state.rest_key);
        let m = &world.motion[i];
        let coord = self.grid.place[i].coord;
        // Without branches: the sign of a velocity component is a coin flip.
        for axis in 0..D {
            let (v, c) = (m.velocity[axis], coord[axis]);
            let up = v > 0.0;
            let crosses = (up & (c + 1 < self.grid.cells[axis])) | ((v < 0.0) & (c > 0));
            let boundary = f64::from(c + u32::from(up)) * self.grid.width[axis];
            // Meaningless (even NaN) where it does not cross, and then not taken.
            let time = m.time + (boundary - m.position[axis]) / v;
            let key = tie_key(RANK_CROSSING, i as u32, 2 * axis as u32 + u32::from(up));
            let better = crosses & earlier(time, key, best_time, best_key);
            best_time = select_f64(better, time, best_time);
            best_key = select_unpredictable(better, key, best_key);
        }
        self.queue.payload_mut(i).partner_counter = state.rest_partner_counter;
        self.queue.set(i, best_time, best_key);
    }

    /// The next real event, processing cell crossings and discarding stale predictions on the
    /// way; the event stays first in the queue until [`Calendar::after_event`].
    pub(crate) fn peek(&mut self, world: &World) -> Option<Event> {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: `avx2` is only set where the CPU has AVX2 and POPCNT.
            return unsafe { self.peek_avx2(world) };
        }
        self.peek_inlined::<false>(world)
    }

    /// [`Calendar::peek`] compiled for AVX2, with the gather and the kernel inlined, so that
    /// the event loop does not pay their prologues, epilogues and argument passing per call.
    ///
    /// # Safety
    /// The CPU must have AVX2 and POPCNT.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,popcnt")]
    unsafe fn peek_avx2(&mut self, world: &World) -> Option<Event> {
        self.peek_inlined::<true>(world)
    }

    /// [`Calendar::peek`]'s loop. `AVX2`: see [`Calendar::predict_among_neighbours`].
    #[inline(always)]
    fn peek_inlined<const AVX2: bool>(&mut self, world: &World) -> Option<Event> {
        loop {
            let top = self.queue.top();
            if top.time == f64::INFINITY {
                return None;
            }
            let i = top.body as usize;
            self.look_ahead(world, top.body, top.next);
            let (rank, a, b) = decode_tie(top.key);
            match rank {
                RANK_CROSSING => {
                    self.crossings += 1;
                    self.cross::<AVX2>(world, i, (b / 2) as usize, b % 2 == 1);
                }
                RANK_COLLISION => {
                    let partner = if a as usize == i { b } else { a } as usize;
                    if self.counters[partner] != self.queue.payload(i).partner_counter {
                        self.stale += 1;
                        self.predict::<AVX2>(world, i);
                    } else {
                        self.prefetch_event_bodies(world, i, partner);
                        return Some(Event {
                            time: top.time,
                            kind: EventKind::Collision,
                            a,
                            b,
                        });
                    }
                }
                RANK_WALL => {
                    self.prefetch_event_bodies(world, i, i);
                    return Some(Event {
                        time: top.time,
                        kind: EventKind::Wall,
                        a,
                        b,
                    });
                }
                _ => unreachable!("tie keys carry ranks 0..=2 only"),
            }
        }
    }

    /// Starts loading the slots of the cells around body `i`, whose event is first in the
    /// queue (its cell coordinates were loaded one event ahead when it was the guess), and
    /// the queue entry, motion record and cell coordinates of `next`, the guess at the body
    /// whose event comes after (`NONE` for no guess): the chain of dependent loads of an
    /// event (entry and cell, then slots, then the neighbours' records) starts one event
    /// early.
    #[inline(always)]
    fn look_ahead(&self, world: &World, i: u32, next: u32) {
        self.grid.prefetch_block(i as usize);
        if next != NONE {
            self.prefetch_body(world, next as usize);
        }
    }

    /// Starts loading body `i`'s queue entry, motion record and cell coordinates.
    #[inline(always)]
    fn prefetch_body(&self, world: &World, i: usize) {
        self.queue.prefetch(i);
        prefetch(&world.motion[i]);
        prefetch(&self.grid.place[i]);
    }

    /// Starts loading what the event of bodies `a` and `b` (`a` twice for a wall hit) reads
    /// next: their motion records and masses, which the simulation reads and changes, and
    /// their cells, the first link of each prediction's chain of dependent loads (cell, then
    /// slots, then the neighbours' records).
    #[inline(always)]
    fn prefetch_event_bodies(&self, world: &World, a: usize, b: usize) {
        for body in [a, b] {
            prefetch(&world.motion[body]);
            prefetch(&world.mass[body]);
            prefetch(&self.grid.place[body]);
        }
        self.queue.prefetch(b);
    }

    /// Re-predicts the bodies of `event`, whose motion the simulation has just changed.
    pub(crate) fn after_event(&mut self, world: &World, event: &Event) {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: `avx2` is only set where the CPU has AVX2 and POPCNT.
            return unsafe { self.after_event_avx2(world, event) };
        }
        self.after_event_inlined::<false>(world, event)
    }

    /// [`Calendar::after_event`] compiled for AVX2 (see [`Calendar::peek_avx2`]).
    ///
    /// # Safety
    /// The CPU must have AVX2 and POPCNT.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,popcnt")]
    unsafe fn after_event_avx2(&mut self, world: &World, event: &Event) {
        self.after_event_inlined::<true>(world, event)
    }

    /// [`Calendar::after_event`]'s work. `AVX2`: see [`Calendar::predict_among_neighbours`].
    #[inline(always)]
    fn after_event_inlined<const AVX2: bool>(&mut self, world: &World, event: &Event) {
        self.latest = self.latest.max(event.time);
        let a = event.a as usize;
        self.counters[a] = self.counters[a].wrapping_add(1);
        if event.kind == EventKind::Collision {
            let b = event.b as usize;
            self.counters[b] = self.counters[b].wrapping_add(1);
            // `a` is predicted after `b`: start loading its records and cells now.
            self.prefetch_records(a);
            self.grid.prefetch_block(a);
            self.grid.prefetch_block(b);
            self.predict::<AVX2>(world, b);
        }
        self.predict::<AVX2>(world, a);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{generate_scene, SceneConfig};

    #[test]
    fn grid_cells_track_positions_and_queue_stays_ordered() {
        for dim in [2, 3] {
            let world = generate_scene(&SceneConfig::new(150, dim, 8)).unwrap();
            let mut sim =
                crate::Simulation::new(world.clone(), crate::Method::AllPairs, &Default::default())
                    .unwrap();
            let mut calendar = Calendar::new(&world, 0.0, true);
            for _ in 0..3000 {
                let found = calendar.peek(sim.world()).unwrap();
                let expected = sim.next_event().unwrap();
                assert!(found.matches(&expected, 0.0), "{found} vs {expected}");
                calendar.after_event(sim.world(), &found);
                assert!(calendar.queue.is_valid());
                // Each body's tracked cell contains its centre at the event time (up to the
                // rounding slack of the cell width).
                let grid = &calendar.grid;
                for i in 0..world.len() {
                    let p = sim.world().position_at(i, found.time);
                    for k in 0..dim {
                        let lo = f64::from(grid.place[i].coord[k]) * grid.width[k];
                        let slack = 1e-9 * grid.width[k];
                        let outer_lo = if grid.place[i].coord[k] == 0 {
                            f64::NEG_INFINITY
                        } else {
                            lo - slack
                        };
                        let outer_hi = if grid.place[i].coord[k] + 1 == grid.cells[k] {
                            f64::INFINITY
                        } else {
                            lo + grid.width[k] + slack
                        };
                        assert!(
                            outer_lo <= p[k] && p[k] <= outer_hi,
                            "body {i} axis {k}: {} not in cell {:?}",
                            p[k],
                            grid.place[i].coord
                        );
                    }
                }
            }
            assert!(
                calendar.internal_events().0 > 0,
                "no cell crossings exercised"
            );
        }
    }

    /// The calendar computes pair times in its own collision search; they must be
    /// bit-identical to `motion_pair_time_before` (what the other methods use), in 2D and 3D,
    /// through both of its loops (a predicted body at the latest time, right after its
    /// event, and an older one at crossings and stale re-predictions), at sparse and dense
    /// packings and with equal masses (more ties in speed).
    #[test]
    fn times_are_bit_identical_to_all_pairs() {
        for dim in [2, 3] {
            for (seed, fraction, equal) in [
                (1, None, false),
                (2, Some(0.2), true),
                (3, Some(0.05), false),
            ] {
                let mut config = SceneConfig::new(80, dim, seed);
                config.packing_fraction = fraction;
                if equal {
                    config.mass_model = crate::MassModel::Equal;
                }
                let world = generate_scene(&config).unwrap();
                let mut reference = crate::Simulation::new(
                    world.clone(),
                    crate::Method::AllPairs,
                    &Default::default(),
                )
                .unwrap();
                let mut calendar =
                    crate::Simulation::new(world, crate::Method::Calendar, &Default::default())
                        .unwrap();
                for k in 0..2000 {
                    let expected = reference.next_event().unwrap();
                    let found = calendar.next_event().unwrap();
                    assert_eq!(
                        (found.kind, found.a, found.b, found.time.to_bits()),
                        (
                            expected.kind,
                            expected.a,
                            expected.b,
                            expected.time.to_bits()
                        ),
                        "dim {dim} seed {seed} event {k}: {found} vs {expected}"
                    );
                }
            }
        }
    }
}
