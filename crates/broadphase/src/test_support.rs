//! Helpers shared by the unit tests of every algorithm: box builders, the differential check
//! against brute force on every verification scenario, and a wandering-objects scene for
//! memory-bound tests.

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
