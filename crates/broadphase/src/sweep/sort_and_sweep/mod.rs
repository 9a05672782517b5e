//! Sort and sweep: sweep and prune that sorts again at every update. An update in which many
//! boxes moved runs the one-shot box pruning kernel ([`crate::prune::complete_pairs_with`],
//! static boxes tagged so that it skips their pairs with each other) on all live boxes and
//! diffs the pairs with a moved box with the previous pair set (the pairs of two boxes that
//! did not move cannot have changed, so they are kept unsorted); one in which few moved
//! sweeps only those
//! against the boxes at rest (`resting`). A small scene of mostly static boxes keeps them
//! sorted between full updates (`small`).

mod resting;
mod small;

use crate::backend::ProxyStore;
use crate::prune::{pairs_except_within_b, PruneOptions, PruneScratch};
use crate::util::MoveBuffer;
use crate::{Aabb, BroadPhase, PairEvents};
use resting::{rotated, RestingSet};
use small::SmallPath;

/// Sort and sweep: every update sorts all boxes on the axis of largest variance of their
/// centres and sweeps them ([Ericson05, sec. 7.5], via [Zych16, ch. 2.3.1]).
///
/// When at most a quarter of the boxes moved (were given a box, inserted, or changed kind)
/// since the last update, only they are sorted and swept, against each other and against
/// the resting boxes, which stay sorted between updates; this is how PhysX's ABP treats its
/// sleeping objects. In a scene of at most 256 boxes of which at least half are static (a
/// game level), a full update keeps the static boxes sorted from one update to the next
/// and gathers, sorts and sweeps only the others, meeting the static ones in one walk of the
/// two sorted lists.
///
/// # When to use
/// Scenes with little temporal coherence (fast or teleporting proxies, many insertions and
/// removals per step), large scenes where most proxies move every step, and mostly static or
/// resting worlds where a few proxies move: the cost does not depend on how far boxes moved.
/// When every proxy moves a little every step, [`SweepAndPrune`] may do less work per update.
///
/// # Performance
/// When many boxes moved: O(n + k) per update for n boxes and k candidate pairs along the
/// sweep axis (within the kernel's y/z grid cells). When there is some coherence, the sort
/// starts from the previous update's order and finishes it by insertion sort (O(n +
/// inversions), falling back to a full sort when the boxes moved far or their count changed:
/// a comparison sort below 512 boxes, the radix sort above; see [`PruneOptions::coherent`]).
/// When m ≤ n / 4 moved: O(n + m log m + k' + c) for k' candidates of the moved boxes along
/// the sweep axis (each swept with the union of its old and new box) and c pairs that began
/// or ended, where the O(n) term is sequential passes (a walk of the resting cells the moved
/// boxes touch, a merge); only the c changes touch the pair set. In a small scene of s static
/// and m other boxes: O(m log m + s + k) (O(s log s) more when a static box changed). When
/// many moved, the kernel skips pairs of two static boxes (they are tagged); filters, and
/// when few moved the static-static exclusion, are applied to the pairs found. Memory O(n)
/// besides the pairs. A full update sorts only the pairs with a moved box (a radix sort of
/// their keys) before merging them with the previous set's sorted keys, where a pair of two
/// boxes that did not move is kept as it is: in a pile coming to rest, most pairs.
///
/// Worst case: O(n²) per update, when O(n²) pairs of boxes overlap on the sweep axis inside
/// the same grid cells but not on the others, for instance long boxes along every axis
/// crossing in one region (for the moved boxes, along the sweep axis alone).
///
/// # Examples
/// ```
/// use broadphase::{Aabb, BroadPhase, CollisionFilter, PairEvents, ProxyKind, SortAndSweep};
/// let mut bp = SortAndSweep::new();
/// for i in 0..4 {
///     let x = i as f32;
///     bp.insert(Aabb::from_arrays([x, 0.0, 0.0], [x + 1.0, 1.0, 1.0])?, ProxyKind::Dynamic, CollisionFilter::ALL)?;
/// }
/// let mut events = PairEvents::new();
/// bp.update(&mut events);
/// assert_eq!(events.begun.len(), 3); // each box touches the next
/// # Ok::<(), broadphase::Error>(())
/// ```
///
/// [`SweepAndPrune`]: crate::SweepAndPrune
#[derive(Debug, Clone, Default)]
pub struct SortAndSweep {
    store: ProxyStore,
    // Scratch reused across updates: live boxes with the sweep axis rotated to x (the static
    // ones last, from `first_static` on), their slots, the kernel's buffers and its pairs
    // (indices into `boxes`).
    boxes: Vec<Aabb>,
    slots: Vec<u32>,
    first_static: usize,
    prune: PruneScratch,
    candidates: Vec<(u32, u32)>,
    axis: usize,
    /// Updates since the axis was chosen, and the live count then.
    axis_age: u32,
    axis_count: usize,
    /// Updates that swept only the moved boxes.
    resting_updates: u64,
    /// Proxies moved, inserted or with a new kind since the last update.
    moved: MoveBuffer,
    /// The boxes at rest, for updates in which few moved.
    resting: RestingSet,
    /// The sorted static boxes of a small scene, for its full updates.
    small: SmallPath,
    /// Full updates that took the small scenes' path (for tests).
    small_updates: u64,
}

/// An update sweeps only the moved boxes when at most one in this many moved.
const RESTING_RATIO: usize = 4;

/// Updates between two choices of the sweep axis.
const AXIS_PERIOD: u32 = 16;

impl SortAndSweep {
    /// An empty sort-and-sweep broad phase.
    pub fn new() -> Self {
        Self::default()
    }

    /// The axis chosen by the last update (0 = x, 1 = y, 2 = z).
    pub fn sweep_axis(&self) -> usize {
        self.axis
    }

    /// Updates so far in which few enough boxes moved that only they were swept, against the
    /// boxes at rest (see the type's docs).
    pub fn resting_updates(&self) -> u64 {
        self.resting_updates
    }

    fn choose_axis(&self) -> usize {
        let mut sum = [0f64; 3];
        let mut sum_sq = [0f64; 3];
        let mut n = 0f64;
        for i in self.store.proxies.live_slots() {
            let c = self.store.proxies.aabb(i).center();
            for axis in 0..3 {
                let v = c[axis] as f64;
                sum[axis] += v;
                sum_sq[axis] += v * v;
            }
            n += 1.0;
        }
        if n == 0.0 {
            return 0;
        }
        let variance = |axis: usize| sum_sq[axis] / n - (sum[axis] / n).powi(2);
        let mut best = 0;
        for axis in 1..3 {
            if variance(axis) > variance(best) {
                best = axis;
            }
        }
        best
    }

    /// The move buffer is grown by the store on insert; nothing else is kept per slot.
    fn grow_slots(&mut self) {}
}

impl BroadPhase for SortAndSweep {
    fn name(&self) -> &'static str {
        "sort-and-sweep"
    }

    crate::backend::store_moved_edits!(store, moved);

    fn try_update(&mut self, events: &mut PairEvents) -> crate::Result<()> {
        // The spread of the centres changes slowly: re-measure it every AXIS_PERIOD updates,
        // or when the proxy count changed by a tenth (a pass over every box saved).
        let count = self.store.proxies.len();
        if self.axis_age == 0
            || self.axis_age >= AXIS_PERIOD
            || count.abs_diff(self.axis_count) * 10 > self.axis_count
        {
            self.axis = self.choose_axis();
            self.axis_age = 0;
            self.axis_count = count;
        }
        self.axis_age += 1;
        let axis = self.axis;
        // After a step that failed on the pair limit the set is empty: every pair is found
        // again by the full path.
        if !self.store.pairs.lost()
            && self.moved.len() * RESTING_RATIO <= count
            && self.store.proxies.slot_count() <= resting::MAX_SLOTS
        {
            // The grid of the resting boxes is chosen again with the axis, so that it follows
            // the scene's extent.
            let rebuild = self.axis_age == 1;
            self.resting
                .update(&mut self.store, &self.moved, axis, rebuild);
            self.resting_updates += 1;
            // The moves it consumes may include static ones.
            self.small.invalidate();
            self.moved.clear();
            return self.store.finish(events);
        }
        self.resting.invalidate();
        if count <= small::MAX_BOXES
            && self
                .small
                .pairs(&self.store, &self.moved, axis, &mut self.candidates)
        {
            self.small_updates += 1;
            self.moved.clear();
            if self.candidates.len() > self.store.pairs.limit() {
                self.store.pairs.refuse();
            }
            self.store.mark_allowed(&self.candidates, |slot| slot);
            return self.store.finish(events);
        }
        if count > small::MAX_BOXES {
            self.small.invalidate();
        }
        // The live boxes with the sweep axis rotated to x, the static ones last (the kernel
        // does not pair them with each other); one loop per axis.
        let (boxes, slots) = (&mut self.boxes, &mut self.slots);
        self.first_static = match axis {
            0 => self.store.gather_by_kind(|b| *b, boxes, slots),
            1 => self.store.gather_by_kind(|b| rotated(b, 1), boxes, slots),
            _ => self.store.gather_by_kind(|b| rotated(b, 2), boxes, slots),
        };
        // Coherent: the boxes are last update's, moved, so the sort starts from last order.
        // Live slots are far fewer than u32::MAX (the table hands out u32 indices), and the
        // options are valid, so the kernel fails only on the pair limit: the candidates are
        // the pairs before filters, a superset of the pairs, so no more may be kept.
        let options = PruneOptions {
            coherent: true,
            max_pairs: Some(self.store.pairs.limit()),
            ..PruneOptions::default()
        };
        let (moving, statics) = self.boxes.split_at(self.first_static);
        if pairs_except_within_b(
            moving,
            statics,
            &options,
            &mut self.prune,
            &mut self.candidates,
        )
        .is_err()
        {
            self.store.pairs.refuse();
        }

        // Only the pairs with a moved box can have changed (filter changes are the store's).
        let slots = &self.slots;
        self.store
            .mark_allowed_among(&self.candidates, |i| slots[i as usize], &self.moved);
        self.moved.clear();
        self.store.finish(events)
    }

    fn clear(&mut self) {
        self.store.clear();
        self.axis_age = 0;
        self.moved.clear();
        self.resting.invalidate();
        self.small.invalidate();
    }

    crate::backend::store_accessors!(store);

    fn memory_bytes(&self) -> usize {
        self.store.memory_bytes()
            + self.boxes.capacity() * std::mem::size_of::<Aabb>()
            + (self.slots.capacity() + self.candidates.capacity() * 2) * 4
            + self.prune.memory_bytes()
            + self.moved.memory_bytes()
            + self.resting.memory_bytes()
            + self.small.memory_bytes()
    }
}

crate::backend::impl_candidate!(SortAndSweep, store);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{
        assert_matches_brute_force, insert_dynamic, moved_shares_match_brute_force, sorted_events,
        sorted_pairs,
    };
    use crate::{ProxyKind, Vec3};

    /// Each step moves a share of the boxes from none to all, so that updates take both
    /// paths and switch between them, among insertions, removals (with and without events),
    /// kind and filter changes; pairs and events must equal brute force's after every step.
    #[test]
    fn few_moved_boxes_swept_against_the_resting_ones_match_the_model() {
        let mut ours = SortAndSweep::new();
        moved_shares_match_brute_force(&mut ours, 11, 300, false);
        // Both paths ran, many times each.
        assert!(ours.resting_updates() > 100, "{}", ours.resting_updates());
        assert!(ours.resting_updates() < 350, "{}", ours.resting_updates());
    }

    /// The same in a small scene, where the full updates keep the static boxes sorted between
    /// updates: boxes made static and dynamic again, static boxes moved, removed and
    /// re-inserted, also by updates that took the moved-against-resting path in between.
    #[test]
    fn small_scenes_keep_their_static_boxes_exactly() {
        for seed in [3, 21, 40] {
            let mut ours = SortAndSweep::new();
            moved_shares_match_brute_force(&mut ours, seed, 120, true);
            assert!(ours.resting_updates() > 50, "{}", ours.resting_updates());
            assert!(ours.small_updates > 25, "{}", ours.small_updates);
        }
        assert_matches_brute_force(&|| Box::new(SortAndSweep::new()), 150, 12, 5);
    }

    /// A static box moved by an update that took the moved-against-resting path is seen by
    /// the next full update, which moves no static box itself.
    #[test]
    fn a_static_box_moved_between_full_updates_is_seen() {
        let (mut ours, mut model) = (SortAndSweep::new(), crate::BruteForce::new());
        let mut ids = Vec::new();
        let cube = |x: f32, y: f32| Aabb::new(Vec3::new(x, y, 0.0), Vec3::new(x, y, 0.0) + 1.0);
        for i in 0..100 {
            let kind = if i < 70 {
                ProxyKind::Static
            } else {
                ProxyKind::Dynamic
            };
            let b = cube((i % 10) as f32 * 3.0, (i / 10) as f32 * 3.0).unwrap();
            let id = ours.insert(b, kind, crate::CollisionFilter::ALL).unwrap();
            assert_eq!(model.insert(b, kind, crate::CollisionFilter::ALL), Ok(id));
            ids.push(id);
        }
        let (mut events, mut model_events) = (PairEvents::new(), PairEvents::new());
        let mut step = |ours: &mut SortAndSweep, model: &mut crate::BruteForce| {
            ours.update(&mut events);
            model.update(&mut model_events);
            assert_eq!(sorted_pairs(ours), sorted_pairs(model));
        };
        step(&mut ours, &mut model);
        // The static box at (0, 0) onto the dynamic one at (0, 21): few moved.
        let onto = cube(0.5, 21.5).unwrap();
        for bp in [&mut ours as &mut dyn BroadPhase, &mut model] {
            bp.set_aabb(ids[0], onto).unwrap();
        }
        step(&mut ours, &mut model);
        let resting = ours.resting_updates();
        assert_eq!(resting, 1);
        // Every dynamic box nudged: a full update, on the small scenes' path.
        for (k, &id) in ids.iter().enumerate().skip(70) {
            let b = cube((k % 10) as f32 * 3.0 + 0.25, (k / 10) as f32 * 3.0).unwrap();
            for bp in [&mut ours as &mut dyn BroadPhase, &mut model] {
                bp.set_aabb(id, b).unwrap();
            }
        }
        let small = ours.small_updates;
        step(&mut ours, &mut model);
        assert_eq!(
            (ours.resting_updates(), ours.small_updates),
            (resting, small + 1)
        );
        assert!(sorted_pairs(&model).contains(&(0, 70)));
    }

    /// A resting pile: most boxes stay, a few jiggle by a fraction of their size (their
    /// entries are replaced in place), some jump (they leave and join lists), and now and
    /// then a crowd lands in one corner (a cell is rewritten, a list outgrows its room and
    /// every box is placed again), with inserts and removals; pairs must equal brute
    /// force's after every step, and every way of keeping the resting lists must have run.
    #[test]
    fn resting_lists_kept_in_place_match_the_model() {
        let (mut ours, mut model) = (SortAndSweep::new(), crate::BruteForce::new());
        let mut rng = crate::util::SplitMix64::new(17);
        let mut ids = Vec::new();
        let cube = |rng: &mut crate::util::SplitMix64, spread: f32| {
            let min = Vec3::new(
                rng.range(0.0, spread),
                rng.range(0.0, spread),
                rng.range(0.0, 4.0),
            );
            Aabb::new(min, min + rng.range(0.5, 1.5)).unwrap()
        };
        let (mut events, mut model_events) = (PairEvents::new(), PairEvents::new());
        let insert_both = |ours: &mut SortAndSweep, model: &mut crate::BruteForce, b: Aabb| {
            let id = insert_dynamic(ours, b);
            assert_eq!(
                model.insert(b, ProxyKind::Dynamic, crate::CollisionFilter::ALL),
                Ok(id)
            );
            id
        };
        for _ in 0..2000 {
            let b = cube(&mut rng, 40.0);
            ids.push(insert_both(&mut ours, &mut model, b));
        }
        let mut moves = Vec::new();
        for step in 0..150 {
            moves.clear();
            for _ in 0..40 {
                let id = ids[rng.below(ids.len())];
                let b = ours.aabb(id).unwrap();
                let d = Vec3::new(
                    rng.range(-0.1, 0.1),
                    rng.range(-0.1, 0.1),
                    rng.range(-0.1, 0.1),
                );
                moves.push((id, Aabb::new(b.min() + d, b.max() + d).unwrap()));
            }
            for _ in 0..5 {
                moves.push((ids[rng.below(ids.len())], cube(&mut rng, 40.0)));
            }
            if step % 25 == 10 {
                for _ in 0..200 {
                    moves.push((ids[rng.below(ids.len())], cube(&mut rng, 4.0)));
                }
            }
            for &(id, b) in &moves {
                ours.set_aabb(id, b).unwrap();
                model.set_aabb(id, b).unwrap();
            }
            if step % 3 == 0 {
                let id = ids.swap_remove(rng.below(ids.len()));
                ours.remove(id).unwrap();
                model.remove(id).unwrap();
                let b = cube(&mut rng, 40.0);
                ids.push(insert_both(&mut ours, &mut model, b));
            }
            ours.update(&mut events);
            model.update(&mut model_events);
            assert_eq!(sorted_pairs(&ours), sorted_pairs(&model), "step {step}");
            assert_eq!(
                sorted_events(&events),
                sorted_events(&model_events),
                "step {step}"
            );
        }
        let counts = ours.resting.upkeep_counts;
        assert!(ours.resting_updates() > 100, "{}", ours.resting_updates());
        assert!(counts.replaced > 1000, "{counts:?}");
        assert!(counts.shifted > 100, "{counts:?}");
        assert!(counts.rewritten > 0, "{counts:?}");
        assert!(counts.placed_again > 0, "{counts:?}");
    }

    /// Enough proxies for the kernel's y/z grid, on every scenario (statics, filters, removals).
    #[test]
    fn matches_the_model_with_the_grid_active() {
        assert_matches_brute_force(&|| Box::new(SortAndSweep::new()), 700, 12, 99);
        let mut bp = SortAndSweep::new();
        let mut events = PairEvents::new();
        for i in 0..600 {
            let min = Vec3::new(
                (i % 30) as f32 * 10.0,
                (i / 30) as f32 * 10.0,
                (i % 7) as f32 * 10.0,
            );
            insert_dynamic(&mut bp, Aabb::new(min, min + 12.0).unwrap());
        }
        bp.update(&mut events);
        assert!(bp.prune.last_cell_count() > 1, "the grid should be in use");
    }
}
