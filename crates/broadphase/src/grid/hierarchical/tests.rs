//! Tests of the parent module.

use super::*;
use crate::grid::stored::random_operations;
use crate::test_support::{boxed, sorted_pairs};
use crate::{CollisionFilter, ProxyKind};

#[test]
fn a_range_widened_by_rounding_goes_to_the_oversized_list() {
    // max - min rounds to exactly 1 in f32, so the box is on the level of cell 1, yet it
    // spans cells -1..=1 on x and y: 9 cells where a box of its level touches at most 8
    // (found by fuzzing: it overflowed the per-box cell list).
    let mut grid = HierarchicalGrid::new();
    let mut add = |min: [f32; 3], max: [f32; 3]| {
        grid.insert(boxed(min, max), ProxyKind::Dynamic, CollisionFilter::ALL)
            .unwrap()
    };
    let wide = add([-1e-40, -1e-40, 0.0], [1.0, 1.0, 0.5]);
    let inside = add([0.9, 0.9, 0.1], [1.5, 1.5, 0.2]);
    let corner = add([-1.0, -1.0, 0.0], [-1e-40, -1e-40, 0.0]);
    let apart = add([-2.0, -2.0, 0.0], [-1e-39, -1e-39, 0.5]);
    let mut events = PairEvents::new();
    grid.update(&mut events);
    grid.validate();
    let slot = |id: ProxyId| id.index();
    let expected = |pairs: &[(ProxyId, ProxyId)]| -> Vec<(u32, u32)> {
        let mut v: Vec<_> = pairs
            .iter()
            .map(|&(a, b)| (slot(a).min(slot(b)), slot(a).max(slot(b))))
            .collect();
        v.sort_unstable();
        v
    };
    assert_eq!(
        sorted_pairs(&grid),
        expected(&[(wide, inside), (wide, corner), (corner, apart)])
    );
    // Moving between the cells of its level and the oversized list, both ways.
    grid.set_aabb(wide, boxed([0.25, 0.25, 0.0], [0.75, 0.75, 0.5]))
        .unwrap();
    grid.update(&mut events);
    grid.validate();
    assert_eq!(sorted_pairs(&grid), expected(&[(corner, apart)]));
    grid.set_aabb(wide, boxed([-1e-40, -1e-40, 0.0], [1.0, 1.0, 0.5]))
        .unwrap();
    grid.update(&mut events);
    grid.validate();
    assert_eq!(
        sorted_pairs(&grid),
        expected(&[(wide, inside), (wide, corner), (corner, apart)])
    );
}

#[test]
fn levels_follow_the_size_rule() {
    assert_eq!(level_of(1.0), Some(0));
    assert_eq!(level_of(0.75), Some(0));
    assert_eq!(level_of(0.5), Some(-1));
    assert_eq!(level_of(1.000_001), Some(1));
    assert_eq!(level_of(3.0), Some(2));
    assert_eq!(level_of(0.0), Some(HGRID_MIN_LEVEL));
    assert_eq!(level_of(1e-30), Some(HGRID_MIN_LEVEL));
    assert_eq!(level_of(1.7e38), Some(127));
    assert_eq!(level_of(3.0e38), None);
    assert_eq!(level_of(f32::INFINITY), None);
    for edge in [1e-5f32, 0.3, 1.0, 7.5, 1e4, 1e30] {
        let level = level_of(edge).unwrap();
        let cell = (level as f32).exp2();
        assert!(edge <= cell && edge > cell * 0.5, "{edge} at level {level}");
    }
}

#[test]
fn sizes_over_six_orders_pair_exactly() {
    let mut hgrid = HierarchicalGrid::new();
    let all = CollisionFilter::ALL;
    // Nested sizes sharing the corner at the origin, plus touching boxes on cell planes.
    for k in -3..4 {
        let s = 10f32.powi(k);
        hgrid
            .insert(boxed([0.0; 3], [s; 3]), ProxyKind::Dynamic, all)
            .unwrap();
    }
    hgrid
        .insert(
            boxed([-1.0, 0.0, 0.0], [0.0, 0.5, 0.5]),
            ProxyKind::Dynamic,
            all,
        )
        .unwrap();
    hgrid
        .insert(
            boxed([1000.0, 0.0, 0.0], [1000.0, 0.0, 0.0]),
            ProxyKind::Dynamic,
            all,
        )
        .unwrap();
    let mut events = PairEvents::new();
    hgrid.update(&mut events);
    // 7 nested boxes: 21 pairs; the left box touches all 7; the point touches the largest.
    assert_eq!(hgrid.pair_count(), 21 + 7 + 1);
    assert_eq!(events.begun.len(), 29);
    assert_eq!(hgrid.occupied_levels().len(), 8);
    let mut found = Vec::new();
    hgrid.query_aabb(&boxed([0.0; 3], [0.0; 3]), all, &mut found);
    assert_eq!(found.len(), 8);
}

#[test]
fn resizing_changes_level_and_far_boxes_saturate() {
    let mut hgrid = HierarchicalGrid::new();
    let all = CollisionFilter::ALL;
    let a = hgrid
        .insert(boxed([0.0; 3], [1.0; 3]), ProxyKind::Dynamic, all)
        .unwrap();
    let b = hgrid
        .insert(boxed([1e30; 3], [1e30; 3]), ProxyKind::Dynamic, all)
        .unwrap();
    let c = hgrid
        .insert(boxed([1e30; 3], [2e30; 3]), ProxyKind::Dynamic, all)
        .unwrap();
    let d = hgrid
        .insert(boxed([-f32::MAX; 3], [f32::MAX; 3]), ProxyKind::Static, all)
        .unwrap();
    let mut events = PairEvents::new();
    hgrid.update(&mut events);
    assert_eq!(hgrid.oversized_count(), 1);
    assert_eq!(sorted_pairs(&hgrid), vec![(0, 3), (1, 2), (1, 3), (2, 3)]);
    hgrid.set_aabb(a, boxed([0.0; 3], [1e29; 3])).unwrap();
    hgrid.update(&mut events);
    assert_eq!(hgrid.level_count(0), 0);
    assert_eq!(sorted_pairs(&hgrid), vec![(0, 3), (1, 2), (1, 3), (2, 3)]);
    hgrid.set_aabb(a, boxed([0.0; 3], [1e30; 3])).unwrap();
    hgrid.update(&mut events);
    assert_eq!(events.begun.len(), 2);
    let _ = (b, c, d);
}

#[test]
fn wandering_objects_keep_memory_bounded() {
    let mut hgrid = HierarchicalGrid::new();
    let ids: Vec<_> = (0..60)
        .map(|i| {
            let s = 0.1 * (1 + i % 7) as f32;
            hgrid
                .insert(
                    boxed([i as f32, 0.0, 0.0], [i as f32 + s, s, s]),
                    ProxyKind::Dynamic,
                    CollisionFilter::ALL,
                )
                .unwrap()
        })
        .collect();
    let mut events = PairEvents::new();
    hgrid.update(&mut events);
    let mut peak = 0;
    for step in 1..3000 {
        for (i, &id) in ids.iter().enumerate() {
            let s = 0.1 * (1 + i % 7) as f32;
            let y = -(step as f32) * (0.5 + i as f32 * 0.2);
            hgrid
                .set_aabb(id, boxed([i as f32, y, 0.0], [i as f32 + s, y + s, s]))
                .unwrap();
        }
        hgrid.update(&mut events);
        peak = peak.max(hgrid.allocated_cells());
    }
    assert!(hgrid.occupied_cells() <= 60 * 8);
    assert!(peak <= 60 * 8 * 2, "cells allocated {peak}");
}

#[test]
fn cells_match_boxes_under_random_operations() {
    let mut bp = HierarchicalGrid::new();
    random_operations(&mut bp, HierarchicalGrid::validate);
}

#[test]
fn hashed_scanned_and_sparse_grid_levels_match_the_model() {
    use crate::verify::{Scenario, Verifier, VerifyConfig};
    for scan_limit in [0, 4, 16, 1000] {
        for scenario in Scenario::ALL {
            let mut hgrid = HierarchicalGrid::new();
            hgrid.set_scan_limit(scan_limit);
            let config = VerifyConfig {
                objects: 150,
                steps: 80,
                seed: 3,
                scenario: Some(scenario),
            };
            let report = Verifier::new(vec![Box::new(hgrid)]).run(&config);
            assert_eq!(
                report.mismatches, 0,
                "{scenario}, limit {scan_limit}: {:?}",
                report.first_mismatch
            );
        }
    }
}

/// All pairs by brute force, as sorted slot pairs.
fn brute_pairs(bp: &HierarchicalGrid) -> Vec<(u32, u32)> {
    let proxies = bp.proxies();
    let live: Vec<usize> = proxies.live_slots().collect();
    let mut pairs = Vec::new();
    for (k, &a) in live.iter().enumerate() {
        for &b in &live[k + 1..] {
            if proxies.is_pair(a, b) {
                pairs.push((a.min(b) as u32, a.max(b) as u32));
            }
        }
    }
    pairs.sort_unstable();
    pairs
}

#[test]
fn levels_cross_the_sparse_thresholds_both_ways() {
    use crate::util::SplitMix64;
    let mut rng = SplitMix64::new(11);
    let mut hgrid = HierarchicalGrid::new();
    hgrid.set_scan_limit(8);
    // Levels by size alone, so that the counts per level below follow the schedule.
    hgrid.set_motion_factor(0.0);
    let all = CollisionFilter::ALL;
    let small = |c: glam::Vec3, e: f32| Aabb::new(c, c + glam::Vec3::splat(e)).unwrap();
    // 40 boxes of edge 0.2 (level -2) in a cube of side 4.
    let ids: Vec<_> = (0..40)
        .map(|_| {
            let c = glam::Vec3::new(rng.range(0.0, 4.0), rng.range(0.0, 4.0), 0.0);
            hgrid
                .insert(small(c, 0.2), ProxyKind::Dynamic, all)
                .unwrap()
        })
        .collect();
    let mut events = PairEvents::new();
    let mut seen = (false, false, false);
    // Grow k boxes to edge 1.5 (level 1), then shrink them back: level 1 goes scanned
    // (1..=4 boxes, the coarsest sparse level) → sparse grid (5..=8, the scan limit) →
    // dense (9..=12) and back; level 0 (edge 0.7, 3 boxes) is in the sparse grid below
    // level 1 or scanned; level -2 (edge 0.2) stays dense.
    let schedule: Vec<usize> = (0..=12).chain((0..12).rev()).collect();
    for (step, &k) in schedule.iter().enumerate() {
        for (i, &id) in ids.iter().enumerate() {
            let edge = if i < k {
                1.5
            } else if i >= 37 {
                0.7
            } else {
                0.2
            };
            let c = hgrid.aabb(id).unwrap().min()
                + glam::Vec3::new(rng.range(-0.3, 0.3), rng.range(-0.3, 0.3), 0.0);
            hgrid.set_aabb(id, small(c, edge)).unwrap();
        }
        hgrid.update(&mut events);
        hgrid.validate();
        assert_eq!(
            sorted_pairs(&hgrid),
            brute_pairs(&hgrid),
            "step {step}, k {k}"
        );
        let level_one = (
            hgrid.scanned_levels.contains(&1),
            hgrid.sparse_level == Some(1),
            hgrid.dense_levels.contains(&1),
        );
        assert_eq!(
            [level_one.0, level_one.1, level_one.2]
                .iter()
                .filter(|&&b| b)
                .count(),
            usize::from(k > 0),
            "level 1 in exactly one class at k {k}"
        );
        seen.0 |= level_one.0;
        seen.1 |= level_one.1;
        seen.2 |= level_one.2;
    }
    assert_eq!(seen, (true, true, true), "every path for level 1 was taken");
}

#[test]
fn fast_boxes_go_coarser_and_come_back_with_hysteresis() {
    use crate::util::SplitMix64;
    let mut rng = SplitMix64::new(17);
    let mut hgrid = HierarchicalGrid::new();
    hgrid.set_motion_factor(2.0);
    let all = CollisionFilter::ALL;
    let cube = |c: glam::Vec3, e: f32| Aabb::new(c, c + glam::Vec3::splat(e)).unwrap();
    // A crowd of boxes of edge 0.01 (size level -6, cell 1/64) in a cube of side 0.3: the
    // dynamic ones move at the speed of the schedule, the static ones never move.
    let mut boxes: Vec<(ProxyId, glam::Vec3, ProxyKind)> = (0..300)
        .map(|i| {
            let c = glam::Vec3::new(rng.unit(), rng.unit(), rng.unit()) * 0.3;
            let kind = if i % 3 == 0 {
                ProxyKind::Static
            } else {
                ProxyKind::Dynamic
            };
            (hgrid.insert(cube(c, 0.01), kind, all).unwrap(), c, kind)
        })
        .collect();
    let mut events = PairEvents::new();
    hgrid.update(&mut events);
    hgrid.validate();
    let probe = boxes[1].0;
    assert_eq!(hgrid.level(probe), Some(-6), "inserted: size rule");
    let mut pairs_seen = hgrid.pair_count();
    // Moves the dynamic boxes by `speed` (half of them each way along x) and checks the
    // structure and the pairs; returns the pair count.
    let run = |hgrid: &mut HierarchicalGrid,
               boxes: &mut [(ProxyId, glam::Vec3, ProxyKind)],
               events: &mut PairEvents,
               speed: f32| {
        for (k, (id, c, kind)) in boxes.iter_mut().enumerate() {
            if *kind == ProxyKind::Dynamic {
                let sign = if k % 2 == 0 { 1.0 } else { -1.0 };
                *c += glam::Vec3::new(speed * sign, 0.3 * speed, 0.0);
                hgrid.set_aabb(*id, cube(*c, 0.01)).unwrap();
            }
        }
        hgrid.update(events);
        hgrid.validate();
        assert_eq!(sorted_pairs(hgrid), brute_pairs(hgrid), "speed {speed}");
        hgrid.pair_count()
    };
    // (displacement per step, the probe's level after the step): 2 · 0.001 is below its
    // size; 2 · 0.01 = 0.02 needs level -5, only one above its size: ignored; 2 · 0.05 =
    // 0.1 needs cell 1/8 (level -3, size + 3); 2 · 0.02 = 0.04 needs -4, one finer: it
    // stays; 2 · 0.014 = 0.028 needs -5, two finer and only one above its size: back to
    // its size level; not moving at all returns it to its size level at once.
    let schedule = [
        (0.001, -6),
        (0.01, -6),
        (0.05, -3),
        (0.05, -3),
        (0.02, -3),
        (0.014, -6),
        (0.02, -4),
        (0.014, -4),
        (0.0, -6),
        (0.05, -3),
        (0.001, -6),
    ];
    for &(speed, level) in &schedule {
        pairs_seen += run(&mut hgrid, &mut boxes, &mut events, speed);
        assert_eq!(hgrid.level(probe), Some(level), "speed {speed}");
        // Statics never leave their size level, however the crowd moves around them.
        assert_eq!(hgrid.level(boxes[0].0), Some(-6));
    }
    assert!(
        pairs_seen >= 20,
        "the crowd must overlap ({pairs_seen} pairs)"
    );
    // A teleport goes up the capped 3 levels, not to a cell of its distance, and the next
    // ordinary move brings it back.
    let (id, c, _) = &mut boxes[1];
    *c += glam::Vec3::splat(1000.0);
    hgrid.set_aabb(*id, cube(*c, 0.01)).unwrap();
    hgrid.update(&mut events);
    hgrid.validate();
    assert_eq!(hgrid.level(probe), Some(-6 + HGRID_MOTION_LEVELS));
    *c += glam::Vec3::new(0.001, 0.0, 0.0);
    hgrid.set_aabb(*id, cube(*c, 0.01)).unwrap();
    hgrid.update(&mut events);
    hgrid.validate();
    assert_eq!(hgrid.level(probe), Some(-6));
    // A move across the whole float range (an infinite displacement) is capped as well.
    let point = |x: f32| Aabb::from_point(glam::Vec3::splat(x)).unwrap();
    let far = hgrid.insert(point(-3e38), ProxyKind::Dynamic, all).unwrap();
    let near = hgrid.insert(point(3e38), ProxyKind::Dynamic, all).unwrap();
    hgrid.update(&mut events);
    hgrid.set_aabb(far, point(3e38)).unwrap();
    hgrid.update(&mut events);
    hgrid.validate();
    assert_eq!(
        hgrid.level(far),
        Some(HGRID_MIN_LEVEL + HGRID_MOTION_LEVELS)
    );
    assert_eq!(hgrid.level(near), Some(HGRID_MIN_LEVEL));
    assert_eq!(sorted_pairs(&hgrid), brute_pairs(&hgrid));
    assert!(hgrid.pair_set().contains(far.index(), near.index()));
    // Factor 0: the size rule only.
    hgrid.set_motion_factor(0.0);
    run(&mut hgrid, &mut boxes, &mut events, 0.05);
    assert_eq!(hgrid.level(probe), Some(-6));
}
