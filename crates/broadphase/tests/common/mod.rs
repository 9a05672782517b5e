//! Helpers shared by the integration tests: box builders, brute-force answers, and the
//! verifier run on every scenario.
// Each test binary compiles this module and uses only some of it.
#![allow(dead_code)]

use std::collections::BTreeSet;

use broadphase::verify::{Scenario, SplitMix64, Verifier, VerifyConfig};
use broadphase::{Aabb, BroadPhase, Ray, Vec3};

/// The cube with low corner `min` and edge `size`.
pub fn cube(min: Vec3, size: f32) -> Aabb {
    Aabb::new(min, min + Vec3::splat(size)).unwrap()
}

/// A box centred uniformly in `[0, world)³` with half-extents uniform in `[0, 2)`.
pub fn random_box(rng: &mut SplitMix64, world: f32) -> Aabb {
    let c = Vec3::new(
        rng.range(0.0, world),
        rng.range(0.0, world),
        rng.range(0.0, world),
    );
    let h = Vec3::new(
        rng.range(0.0, 2.0),
        rng.range(0.0, 2.0),
        rng.range(0.0, 2.0),
    );
    Aabb::new(c - h, c + h).unwrap()
}

/// The overlapping pairs of `boxes` with `others` (`same`: the two lists are one, each pair
/// once), as `(smaller id, larger id)`.
pub fn brute_pairs(
    boxes: &[(u32, Aabb)],
    others: &[(u32, Aabb)],
    same: bool,
) -> BTreeSet<(u32, u32)> {
    let mut pairs = BTreeSet::new();
    for (k, &(i, a)) in boxes.iter().enumerate() {
        let rest = if same { &others[k + 1..] } else { others };
        for &(j, b) in rest {
            if a.overlaps(&b) {
                pairs.insert((i.min(j), i.max(j)));
            }
        }
    }
    pairs
}

/// The boxes `ray` hits as `(distance, id)`, nearest first, ties by id.
pub fn brute_hits(boxes: &[(u32, Aabb)], ray: &Ray) -> Vec<(f32, u32)> {
    let mut hits: Vec<(f32, u32)> = boxes
        .iter()
        .filter_map(|&(i, b)| ray.hit_distance(&b).map(|d| (d, i)))
        .collect();
    hits.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
    hits
}

/// 200 rays through a world of side `world`: along axes, diagonal, zero-direction, random,
/// some of infinite length.
pub fn test_rays(rng: &mut SplitMix64, world: f32) -> Vec<Ray> {
    let mut rays = Vec::new();
    for _ in 0..200 {
        let origin = Vec3::new(
            rng.range(-5.0, world),
            rng.range(-5.0, world),
            rng.range(-5.0, world),
        );
        let direction = match rng.below(5) {
            0 => Vec3::X,
            1 => -Vec3::Y,
            2 => Vec3::ZERO,
            3 => Vec3::new(1.0, 1.0, 0.0),
            _ => Vec3::new(
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
            ),
        };
        let length = if rng.chance(0.2) {
            f32::INFINITY
        } else {
            rng.range(0.0, world)
        };
        rays.push(Ray::new(origin, direction, length).unwrap());
    }
    rays
}

/// Runs the algorithms `make` builds (afresh for each scenario) through the verifier on every
/// scenario with `objects` proxies, `steps` updates and `seed`, and panics on the first
/// scenario where nothing was checked or an algorithm differed from the exact model.
pub fn assert_exact_on_every_scenario(
    make: &dyn Fn() -> Vec<Box<dyn BroadPhase>>,
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
        let report = Verifier::new(make()).run(&config);
        assert!(report.checks > 0, "{scenario}: nothing was checked");
        assert_eq!(
            report.mismatches, 0,
            "{scenario}, {objects} objects: {:?}",
            report.first_mismatch
        );
    }
}
