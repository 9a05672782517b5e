//! The BVH as a data structure: every build valid, self pairs, refits, box queries and ray
//! casts against brute force, degenerate inputs, and the option spellings.

mod common;

use std::collections::BTreeSet;
use std::ops::ControlFlow;

use broadphase::tree::{Bvh, BvhBuild, DescendRule, RayVisit, TraversalStack};
use broadphase::verify::SplitMix64;
use broadphase::{Aabb, Vec3};
use common::{brute_hits, brute_pairs, cube, random_box, test_rays};

fn bvh_input(rng: &mut SplitMix64, n: usize) -> (Vec<u32>, Vec<Aabb>) {
    let items: Vec<u32> = (0..n as u32).map(|i| i * 3 + 1).collect();
    let boxes: Vec<Aabb> = (0..n).map(|_| random_box(rng, 40.0)).collect();
    (items, boxes)
}

#[test]
fn bvh_builds_are_valid_and_self_pairs_match_brute_force() {
    let mut rng = SplitMix64::new(21);
    let mut stack = TraversalStack::new();
    for n in [1, 2, 3, 7, 64, 500] {
        let (items, boxes) = bvh_input(&mut rng, n);
        let tagged: Vec<(u32, Aabb)> = items.iter().copied().zip(boxes.iter().copied()).collect();
        let expected = brute_pairs(&tagged, &tagged, true);
        for build in BvhBuild::ALL {
            let mut bvh = Bvh::new();
            bvh.build(build, &items, &boxes).unwrap();
            bvh.validate()
                .unwrap_or_else(|e| panic!("{build}, {n}: {e}"));
            assert_eq!(bvh.len(), n);
            assert_eq!(bvh.node_count(), 2 * n - 1);
            if build == BvhBuild::Median {
                assert_eq!(
                    bvh.height(),
                    (n as f64).log2().ceil() as usize,
                    "median is balanced"
                );
            }
            assert!(bvh.height() <= n, "{build}: height {}", bvh.height());
            for rule in DescendRule::ALL {
                let mut found = BTreeSet::new();
                bvh.self_pairs(rule, &mut stack, |a, b| {
                    assert!(
                        found.insert((a.min(b), a.max(b))),
                        "{build} {rule}: duplicate"
                    )
                });
                assert_eq!(found, expected, "{build} {rule}, {n} boxes");
            }
        }
    }
}

#[test]
fn bvh_degenerate_inputs() {
    // Identical boxes, points on a plane, and far-apart huge boxes: every builder must finish
    // with a valid tree and the exact pairs.
    let mut rng = SplitMix64::new(4);
    let identical = vec![cube(Vec3::ZERO, 1.0); 300];
    let plane: Vec<Aabb> = (0..300)
        .map(|_| {
            Aabb::from_point(Vec3::new(rng.below(10) as f32, 0.0, rng.below(10) as f32)).unwrap()
        })
        .collect();
    let far: Vec<Aabb> = (0..100)
        .map(|i| {
            let c = Vec3::splat(if i % 2 == 0 { 1e30 } else { -1e30 }) * (i % 5) as f32;
            Aabb::new(
                (c - Vec3::splat(3e38)).max(Vec3::splat(-f32::MAX)),
                (c + Vec3::splat(1e29)).min(Vec3::splat(f32::MAX)),
            )
            .unwrap()
        })
        .collect();
    for boxes in [&identical, &plane, &far] {
        let items: Vec<u32> = (0..boxes.len() as u32).collect();
        let tagged: Vec<(u32, Aabb)> = items.iter().copied().zip(boxes.iter().copied()).collect();
        let expected = brute_pairs(&tagged, &tagged, true);
        for build in BvhBuild::ALL {
            let mut bvh = Bvh::new();
            bvh.build(build, &items, boxes).unwrap();
            bvh.validate().unwrap();
            let mut found = BTreeSet::new();
            bvh.self_pairs(
                DescendRule::LargerVolume,
                &mut TraversalStack::new(),
                |a, b| {
                    found.insert((a.min(b), a.max(b)));
                },
            );
            assert_eq!(found, expected, "{build}");
        }
    }
    // Identical boxes pair off in one round of bottom-up clustering: a balanced tree.
    let items: Vec<u32> = (0..256).collect();
    let mut bvh = Bvh::new();
    bvh.build(BvhBuild::BottomUp, &items, &identical[..256])
        .unwrap();
    assert_eq!(bvh.height(), 8);
}

#[test]
fn bvh_refit_queries_and_raycasts() {
    let mut rng = SplitMix64::new(9);
    let (items, mut boxes) = bvh_input(&mut rng, 300);
    for build in BvhBuild::ALL {
        let mut bvh = Bvh::new();
        bvh.build(build, &items, &boxes).unwrap();
        // Move everything, refit, and check structure and queries against the new boxes.
        for b in &mut boxes {
            let d = Vec3::new(
                rng.range(-4.0, 4.0),
                rng.range(-4.0, 4.0),
                rng.range(-4.0, 4.0),
            );
            *b = Aabb::new(b.min() + d, b.max() + d).unwrap();
        }
        let by_item = |item: u32| boxes[((item - 1) / 3) as usize];
        let area = bvh.refit(by_item);
        bvh.validate().unwrap();
        assert!((area - bvh.internal_area()).abs() <= 1e-9 * area.max(1.0));
        let tagged: Vec<(u32, Aabb)> = items.iter().copied().zip(boxes.iter().copied()).collect();
        let mut stack = TraversalStack::new();
        for _ in 0..50 {
            let query = random_box(&mut rng, 40.0);
            let mut found = BTreeSet::new();
            let _ = bvh.query(&query, &mut stack, |item| {
                found.insert(item);
                ControlFlow::Continue(())
            });
            let expected: BTreeSet<u32> = tagged
                .iter()
                .filter(|p| p.1.overlaps(&query))
                .map(|p| p.0)
                .collect();
            assert_eq!(found, expected);
        }
        for ray in test_rays(&mut rng, 40.0) {
            let expected = brute_hits(&tagged, &ray);
            let mut got = Vec::new();
            let _ = bvh.raycast(&ray, &mut stack, |item, current| {
                got.push((current.hit_distance(&by_item(item)).unwrap(), item));
                RayVisit::Continue
            });
            got.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
            assert_eq!(got, expected);
        }
    }
}

#[test]
fn option_spellings_round_trip() {
    for build in BvhBuild::ALL {
        assert_eq!(build.to_string().parse::<BvhBuild>().unwrap(), build);
    }
    for rule in DescendRule::ALL {
        assert_eq!(rule.to_string().parse::<DescendRule>().unwrap(), rule);
    }
    assert_eq!("bottom-up".parse::<BvhBuild>().unwrap(), BvhBuild::BottomUp);
    assert_eq!(
        "larger-volume".parse::<DescendRule>().unwrap(),
        DescendRule::LargerVolume
    );
    assert!("Median".parse::<BvhBuild>().is_err());
    assert!("larger".parse::<DescendRule>().is_err());
}
