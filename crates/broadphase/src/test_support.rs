//! Helpers shared by the unit tests of every algorithm: box builders, the differential check
//! against brute force on every verification scenario, and a wandering-objects scene for
//! memory-bound tests.

use crate::util::SplitMix64;
use crate::verify::{Scenario, Verifier, VerifyConfig};
use crate::{Aabb, BroadPhase, BruteForce, CollisionFilter, PairEvents, ProxyId, ProxyKind};

/// The box from `min` to `max`; panics on an invalid box (tests only).
pub(crate) fn boxed(min: [f32; 3], max: [f32; 3]) -> Aabb {
    Aabb::from_arrays(min, max).unwrap()
}

/// The unit box at the origin.
pub(crate) fn unit_box() -> Aabb {
    boxed([0.0; 3], [1.0; 3])
}

/// The pair set as sorted slot pairs.
pub(crate) fn sorted_pairs(bp: &dyn BroadPhase) -> Vec<(u32, u32)> {
    let mut pairs: Vec<_> = bp.pair_set().iter().collect();
    pairs.sort_unstable();
    pairs
}

/// Inserts `aabb` as a dynamic proxy that collides with everything.
pub(crate) fn insert_dynamic(bp: &mut dyn BroadPhase, aabb: Aabb) -> ProxyId {
    bp.insert(aabb, ProxyKind::Dynamic, CollisionFilter::ALL)
        .unwrap()
}

/// Runs the algorithms `make` builds beside brute force on every verification scenario and
/// panics on the first step whose pairs or events differ.
pub(crate) fn assert_matches_brute_force(
    make: &dyn Fn() -> Box<dyn BroadPhase>,
    objects: usize,
    steps: usize,
    seed: u64,
) {
    for scenario in Scenario::ALL {
        let config = VerifyConfig {
            objects,
            steps,
            seed,
            scenario: Some(scenario),
        };
        let report = Verifier::new(vec![make(), Box::new(BruteForce::new())]).run(&config);
        assert!(report.checks > 0, "{scenario}: nothing was checked");
        assert_eq!(
            report.mismatches, 0,
            "{scenario}: {:?}",
            report.first_mismatch
        );
    }
}

/// Moves `count` small boxes, one per column, downwards forever, each at its own speed, for
/// `steps` updates, and returns the largest value `probe` gave after an update: the scene
/// for structures whose memory must follow the boxes rather than every place they visited.
pub(crate) fn wander(
    bp: &mut dyn BroadPhase,
    count: usize,
    steps: usize,
    mut probe: impl FnMut(&dyn BroadPhase) -> usize,
) -> usize {
    let column = |i: usize| ((i % 8) as f32, (i / 8) as f32);
    let ids: Vec<_> = (0..count)
        .map(|i| {
            let (x, z) = column(i);
            insert_dynamic(bp, boxed([x, 0.0, z], [x + 0.4, 0.4, z + 0.4]))
        })
        .collect();
    let mut events = PairEvents::new();
    bp.update(&mut events);
    let mut peak = probe(bp);
    for step in 1..steps {
        for (i, &id) in ids.iter().enumerate() {
            let (x, z) = column(i);
            let y = -(step as f32) * (1.0 + 0.05 * i as f32);
            bp.set_aabb(id, boxed([x, y, z], [x + 0.4, y + 0.4, z + 0.4]))
                .unwrap();
        }
        bp.update(&mut events);
        peak = peak.max(probe(bp));
    }
    peak
}

/// Pairs of live boxes of `bp` that overlap and may pair (filters, static pairs), counted
/// by brute force.
pub(crate) fn brute_pair_count(bp: &dyn BroadPhase) -> usize {
    let proxies = bp.proxies();
    let live: Vec<usize> = proxies.live_slots().collect();
    let mut count = 0;
    for (k, &a) in live.iter().enumerate() {
        for &b in &live[k + 1..] {
            if proxies.aabb(a).overlaps(proxies.aabb(b)) && proxies.can_pair(a, b) {
                count += 1;
            }
        }
    }
    count
}

/// Drives `ours` (empty) beside brute force through 400 steps over about `proxies` boxes
/// snapped to a lattice (touching faces and equal minima common, one box in twenty-five
/// long), each step moving a share of them from none to all, with insertions, removals with
/// and without events, and kind and filter changes, so that algorithms with a path for few
/// moved boxes and one for many take both and switch between them; panics on the first step
/// whose pairs or events differ. The boxes are dynamic at first, or with `mostly_static`
/// two in three static (level geometry), which the moves and kind changes then reach too.
pub(crate) fn moved_shares_match_brute_force(
    ours: &mut dyn BroadPhase,
    seed: u64,
    proxies: usize,
    mostly_static: bool,
) {
    let mut rng = SplitMix64::new(seed);
    let mut model = BruteForce::new();
    let (mut events, mut model_events) = (PairEvents::new(), PairEvents::new());
    let mut ids = Vec::new();
    let random_box = |rng: &mut SplitMix64| {
        // Snapped to a lattice so that touching faces and equal minima are common; one in
        // twenty-five is long (a ground, a wall), spanning many cells of a grid.
        let min = [0; 3].map(|_| (rng.below(24) as f32) * 0.5);
        let long = rng.chance(0.04);
        let size = [0; 3].map(|_| (rng.below(if long { 24 } else { 4 }) as f32) * 0.5);
        Aabb::from_arrays(min, [min[0] + size[0], min[1] + size[1], min[2] + size[2]]).unwrap()
    };
    for i in 0..proxies {
        let b = random_box(&mut rng);
        let kind = if mostly_static && i % 3 != 0 {
            ProxyKind::Static
        } else {
            ProxyKind::Dynamic
        };
        let id = ours.insert(b, kind, CollisionFilter::ALL).unwrap();
        assert_eq!(model.insert(b, kind, CollisionFilter::ALL).unwrap(), id);
        ids.push(id);
    }
    for step in 0..400 {
        let share = [0, 1, 3, 10, 40, 75, 150, 300][step % 8];
        for _ in 0..share.min(ids.len()) {
            let id = ids[rng.below(ids.len())];
            let b = random_box(&mut rng);
            ours.set_aabb(id, b).unwrap();
            model.set_aabb(id, b).unwrap();
        }
        if rng.chance(0.3) && !ids.is_empty() {
            let id = ids.swap_remove(rng.below(ids.len()));
            let report = rng.chance(0.5);
            ours.remove_with(id, report).unwrap();
            model.remove_with(id, report).unwrap();
        }
        if rng.chance(0.3) {
            let (b, kind) = (random_box(&mut rng), ProxyKind::Dynamic);
            let id = ours.insert(b, kind, CollisionFilter::ALL).unwrap();
            assert_eq!(model.insert(b, kind, CollisionFilter::ALL).unwrap(), id);
            ids.push(id);
        }
        if rng.chance(0.2) && !ids.is_empty() {
            let id = ids[rng.below(ids.len())];
            let kind = if rng.chance(0.5) {
                ProxyKind::Static
            } else {
                ProxyKind::Dynamic
            };
            ours.set_kind(id, kind).unwrap();
            model.set_kind(id, kind).unwrap();
        }
        if rng.chance(0.2) && !ids.is_empty() {
            let id = ids[rng.below(ids.len())];
            let filter = CollisionFilter::new(1 << rng.below(3), 1 << rng.below(3));
            ours.set_filter(id, filter).unwrap();
            model.set_filter(id, filter).unwrap();
        }
        ours.update(&mut events);
        model.update(&mut model_events);
        assert_eq!(
            sorted_events(&events),
            sorted_events(&model_events),
            "step {step}"
        );
        assert_eq!(sorted_pairs(ours), sorted_pairs(&model), "step {step}");
    }
}

/// Sorted copies of both event lists, to compare two algorithms' events as sets.
pub(crate) fn sorted_events(events: &PairEvents) -> (Vec<crate::Pair>, Vec<crate::Pair>) {
    let (mut begun, mut ended) = (events.begun.clone(), events.ended.clone());
    begun.sort_unstable();
    ended.sort_unstable();
    (begun, ended)
}
