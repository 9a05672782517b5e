//! The dynamic AABB tree as a data structure: structure after every mutation, height bounds,
//! bulk builds, misuse, and every traversal against brute force.

mod common;

use std::collections::BTreeSet;
use std::ops::ControlFlow;

use broadphase::tree::{DynamicTree, RayVisit, TraversalStack, TreeLeaves};
use broadphase::verify::SplitMix64;
use broadphase::{Aabb, Vec3};
use common::{brute_hits, brute_pairs, cube, random_box, test_rays};

/// `2·log2(n) + 2`: twice the height of a balanced tree, plus a small constant.
fn height_bound(n: usize) -> usize {
    (2.0 * (n as f64).log2()).ceil() as usize + 2
}

fn tree_with(boxes: &[Aabb]) -> (DynamicTree, TreeLeaves) {
    let mut tree = DynamicTree::new();
    let mut leaves = TreeLeaves::new();
    for (i, b) in boxes.iter().enumerate() {
        tree.insert(&mut leaves, i as u32, *b).unwrap();
    }
    (tree, leaves)
}

fn query_set(tree: &DynamicTree, leaves: &TreeLeaves, query: &Aabb) -> BTreeSet<u32> {
    let mut found = BTreeSet::new();
    let _ = tree.query(leaves, query, &mut TraversalStack::new(), |leaf| {
        assert!(found.insert(leaf), "leaf {leaf} reported twice");
        ControlFlow::Continue(())
    });
    found
}

#[test]
fn dynamic_tree_height_for_rows_grids_and_after_moves() {
    // A row along x, inserted in order: plain surface-area insertion makes a list.
    let row: Vec<Aabb> = (0..2000)
        .map(|i| cube(Vec3::new(i as f32 * 1.5, 0.0, 0.0), 1.0))
        .collect();
    let (tree, leaves) = tree_with(&row);
    tree.validate(&leaves).unwrap();
    assert!(
        tree.height() <= height_bound(row.len()),
        "row: height {}",
        tree.height()
    );

    // Touching boxes in a row, and a 2D and a 3D grid in scan order.
    let touching: Vec<Aabb> = (0..1000)
        .map(|i| cube(Vec3::new(i as f32, 0.0, 0.0), 1.0))
        .collect();
    let grid2: Vec<Aabb> = (0..64 * 64)
        .map(|i| {
            cube(
                Vec3::new((i % 64) as f32 * 2.0, (i / 64) as f32 * 2.0, 0.0),
                1.0,
            )
        })
        .collect();
    let grid3: Vec<Aabb> = (0..16 * 16 * 16)
        .map(|i| {
            cube(
                Vec3::new((i % 16) as f32, ((i / 16) % 16) as f32, (i / 256) as f32) * 2.0,
                1.0,
            )
        })
        .collect();
    for (name, boxes) in [
        ("touching row", &touching),
        ("2D grid", &grid2),
        ("3D grid", &grid3),
    ] {
        let (tree, leaves) = tree_with(boxes);
        tree.validate(&leaves).unwrap();
        assert_eq!(tree.len(), boxes.len());
        assert!(
            tree.height() <= height_bound(boxes.len()),
            "{name}: height {}",
            tree.height()
        );
    }

    // Many random moves (remove and re-insert), as a broad phase does.
    let mut rng = SplitMix64::new(3);
    let boxes: Vec<Aabb> = (0..1000).map(|_| random_box(&mut rng, 100.0)).collect();
    let (mut tree, mut leaves) = tree_with(&boxes);
    let mut current = boxes;
    for _ in 0..20_000 {
        let i = rng.below(current.len());
        let d = Vec3::new(
            rng.range(-3.0, 3.0),
            rng.range(-3.0, 3.0),
            rng.range(-3.0, 3.0),
        );
        current[i] = Aabb::new(current[i].min() + d, current[i].max() + d).unwrap();
        tree.move_leaf(&mut leaves, i as u32, current[i]).unwrap();
    }
    tree.validate(&leaves).unwrap();
    assert!(
        tree.height() <= height_bound(current.len()),
        "after moves: height {}",
        tree.height()
    );
}

#[test]
fn dynamic_tree_random_mutations_validate_and_match_brute_force() {
    let mut rng = SplitMix64::new(11);
    let mut tree = DynamicTree::new();
    let mut leaves = TreeLeaves::new();
    let mut model: Vec<Option<Aabb>> = vec![None; 300];
    for step in 0..4000 {
        let id = rng.below(model.len());
        match (model[id], rng.below(3)) {
            (None, _) => {
                let b = random_box(&mut rng, 50.0);
                tree.insert(&mut leaves, id as u32, b).unwrap();
                model[id] = Some(b);
            }
            (Some(_), 0) => {
                tree.remove(&mut leaves, id as u32).unwrap();
                model[id] = None;
            }
            (Some(_), _) => {
                let b = random_box(&mut rng, 50.0);
                tree.move_leaf(&mut leaves, id as u32, b).unwrap();
                model[id] = Some(b);
            }
        }
        if let Err(e) = tree.validate(&leaves) {
            panic!("step {step}: {e}");
        }
        if step % 50 == 0 {
            let query = random_box(&mut rng, 50.0);
            let expected: BTreeSet<u32> = (0..model.len())
                .filter(|&i| model[i].is_some_and(|b| b.overlaps(&query)))
                .map(|i| i as u32)
                .collect();
            assert_eq!(query_set(&tree, &leaves, &query), expected, "step {step}");
            assert_eq!(tree.len(), model.iter().flatten().count());
        }
    }
    // Emptying the tree leaves only free nodes.
    for (id, slot) in model.iter().enumerate() {
        if slot.is_some() {
            tree.remove(&mut leaves, id as u32).unwrap();
            tree.validate(&leaves).unwrap();
        }
    }
    assert!(tree.is_empty());
    assert_eq!(tree.height(), 0);
}

#[test]
fn dynamic_tree_reinsertion_in_place_keeps_ancestors_enclosing() {
    // Removing and re-inserting a leaf with the same box reuses the freed parent node, whose
    // stale box then equals the new one: refitting must still reach the ancestors.
    let mut rng = SplitMix64::new(13);
    let boxes: Vec<Aabb> = (0..300).map(|_| random_box(&mut rng, 20.0)).collect();
    let (mut tree, mut leaves) = tree_with(&boxes);
    for round in 0..3 {
        for (i, b) in boxes.iter().enumerate() {
            tree.move_leaf(&mut leaves, i as u32, *b).unwrap();
            if let Err(e) = tree.validate(&leaves) {
                panic!("round {round}, leaf {i}: {e}");
            }
        }
    }
}

#[test]
fn dynamic_tree_rejects_misuse_without_damage() {
    let boxes: Vec<Aabb> = (0..10).map(|i| cube(Vec3::splat(i as f32), 1.0)).collect();
    let mut leaves = TreeLeaves::new();
    let mut a = DynamicTree::new();
    let mut b = DynamicTree::new();
    for (i, bx) in boxes.iter().enumerate() {
        let tree = if i % 2 == 0 { &mut a } else { &mut b };
        tree.insert(&mut leaves, i as u32, *bx).unwrap();
    }
    assert!(
        a.insert(&mut leaves, 2, boxes[2]).is_err(),
        "already in this tree"
    );
    assert!(
        a.insert(&mut leaves, 3, boxes[3]).is_err(),
        "already in the other tree"
    );
    assert!(a.remove(&mut leaves, 3).is_err(), "in the other tree");
    assert!(a.remove(&mut leaves, 99).is_err(), "in no tree");
    assert!(
        a.insert(&mut leaves, u32::MAX, boxes[0]).is_err(),
        "id too large"
    );
    a.validate(&leaves).unwrap();
    b.validate(&leaves).unwrap();
    assert_eq!((a.len(), b.len()), (5, 5));
    assert!(a.holds(&leaves, 4) && !a.holds(&leaves, 5) && b.holds(&leaves, 5));
}

#[test]
fn dynamic_tree_bulk_build_validates_matches_brute_force_and_keeps_mutating() {
    let mut rng = SplitMix64::new(17);
    for n in [1usize, 2, 3, 7, 64, 1000] {
        // Sparse ids, in no particular order, with clusters of equal centres.
        let items: Vec<(u32, Aabb)> = (0..n)
            .map(|i| {
                let b = if i % 5 == 0 {
                    cube(Vec3::splat(3.0), 1.0)
                } else {
                    random_box(&mut rng, 50.0)
                };
                ((i * 7919 % (10 * n + 7)) as u32, b)
            })
            .collect();
        let mut model: Vec<Option<Aabb>> = vec![None; 10 * n + 10];
        for &(id, b) in &items {
            model[id as usize] = Some(b);
        }
        let mut tree = DynamicTree::new();
        let mut leaves = TreeLeaves::new();
        tree.build(&mut leaves, &items).unwrap();
        tree.validate(&leaves).unwrap();
        assert_eq!(tree.len(), n);
        // Split by the 30-bit Morton codes, then equal codes in the middle.
        assert!(
            tree.height() <= 30 + (n as f64).log2().ceil() as usize,
            "n {n}"
        );
        for step in 0..300 {
            let query = random_box(&mut rng, 50.0);
            let expected: BTreeSet<u32> = (0..model.len())
                .filter(|&i| model[i].is_some_and(|b| b.overlaps(&query)))
                .map(|i| i as u32)
                .collect();
            assert_eq!(
                query_set(&tree, &leaves, &query),
                expected,
                "n {n}, step {step}"
            );
            // Then it is an ordinary tree: insert, move and remove keep it valid.
            let id = rng.below(model.len());
            let b = random_box(&mut rng, 50.0);
            match model[id] {
                None => tree.insert(&mut leaves, id as u32, b).unwrap(),
                Some(_) if step % 3 == 0 => {
                    tree.remove(&mut leaves, id as u32).unwrap();
                    model[id] = None;
                    continue;
                }
                Some(_) => tree.move_leaf(&mut leaves, id as u32, b).unwrap(),
            }
            model[id] = Some(b);
            tree.validate(&leaves).unwrap();
        }
    }
}

#[test]
fn dynamic_tree_bulk_build_rejects_misuse_without_damage() {
    let boxes: Vec<Aabb> = (0..10).map(|i| cube(Vec3::splat(i as f32), 1.0)).collect();
    let mut leaves = TreeLeaves::new();
    let mut full = DynamicTree::new();
    full.insert(&mut leaves, 0, boxes[0]).unwrap();
    let mut empty = DynamicTree::new();
    let items = |ids: &[u32]| -> Vec<(u32, Aabb)> {
        ids.iter().map(|&i| (i, boxes[i as usize % 10])).collect()
    };
    assert!(
        full.build(&mut leaves, &items(&[1, 2])).is_err(),
        "tree not empty"
    );
    assert!(
        empty.build(&mut leaves, &items(&[1, 0, 2])).is_err(),
        "leaf 0 is in a tree"
    );
    assert!(
        empty.build(&mut leaves, &items(&[1, 2, 1])).is_err(),
        "leaf listed twice"
    );
    assert!(
        empty.build(&mut leaves, &items(&[1, u32::MAX])).is_err(),
        "id too large"
    );
    // Nothing changed: leaves 1 and 2 are in no tree and can be built or inserted.
    assert!(empty.is_empty() && !leaves.contains(1) && !leaves.contains(2));
    full.validate(&leaves).unwrap();
    empty.build(&mut leaves, &items(&[1, 2, 3])).unwrap();
    empty.validate(&leaves).unwrap();
    assert_eq!((full.len(), empty.len()), (1, 3));
    empty.build(&mut leaves, &[]).unwrap_err();
    let mut other = DynamicTree::new();
    other.build(&mut leaves, &[]).unwrap();
    assert!(other.is_empty());
}

#[test]
fn dynamic_tree_pair_traversals_match_brute_force() {
    let mut rng = SplitMix64::new(5);
    let mut leaves = TreeLeaves::new();
    let mut a = DynamicTree::new();
    let mut b = DynamicTree::new();
    let mut in_a = Vec::new();
    let mut in_b = Vec::new();
    for i in 0..400u32 {
        let bx = random_box(&mut rng, 30.0);
        if rng.chance(0.7) {
            a.insert(&mut leaves, i, bx).unwrap();
            in_a.push((i, bx));
        } else {
            b.insert(&mut leaves, i, bx).unwrap();
            in_b.push((i, bx));
        }
    }
    let mut stack = TraversalStack::new();
    let mut found = BTreeSet::new();
    a.self_pairs(&leaves, &mut stack, |x, y| {
        assert!(found.insert((x.min(y), x.max(y))), "duplicate")
    });
    assert_eq!(found, brute_pairs(&in_a, &in_a, true));
    assert!(!found.is_empty());
    let mut across = BTreeSet::new();
    a.pairs_with(&b, &leaves, &mut stack, |x, y| {
        assert!(in_a.iter().any(|p| p.0 == x) && in_b.iter().any(|p| p.0 == y));
        assert!(across.insert((x.min(y), x.max(y))), "duplicate");
    });
    assert_eq!(across, brute_pairs(&in_a, &in_b, false));
}

#[test]
fn dynamic_tree_raycasts_match_brute_force_and_clip() {
    let mut rng = SplitMix64::new(8);
    // Integer lattice boxes: rays along axes run over faces, edges and corners.
    let boxes: Vec<(u32, Aabb)> = (0..500u32)
        .map(|i| {
            let c = Vec3::new(
                rng.below(12) as f32,
                rng.below(12) as f32,
                rng.below(12) as f32,
            );
            (
                i,
                Aabb::new(c, c + Vec3::splat(rng.below(3) as f32)).unwrap(),
            )
        })
        .collect();
    let mut leaves = TreeLeaves::new();
    let mut tree = DynamicTree::new();
    for &(i, b) in &boxes {
        tree.insert(&mut leaves, i, b).unwrap();
    }
    let mut stack = TraversalStack::new();
    for ray in test_rays(&mut rng, 12.0) {
        let expected = brute_hits(&boxes, &ray);
        let mut got = Vec::new();
        let _ = tree.raycast(&leaves, &ray, &mut stack, |leaf, current| {
            got.push((
                current
                    .hit_distance(leaves.fat_aabb(leaf).unwrap())
                    .unwrap(),
                leaf,
            ));
            RayVisit::Continue
        });
        got.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        assert_eq!(got, expected, "{ray:?}");
        // Closest hit by clipping.
        let mut best: Option<(f32, u32)> = None;
        let _ = tree.raycast(&leaves, &ray, &mut stack, |leaf, current| {
            if let Some(d) = current.hit_distance(leaves.fat_aabb(leaf).unwrap()) {
                if best.is_none_or(|b| (d, leaf) < b) {
                    best = Some((d, leaf));
                    return RayVisit::Clip(d);
                }
            }
            RayVisit::Continue
        });
        assert_eq!(best, expected.first().copied(), "{ray:?}");
    }
}
