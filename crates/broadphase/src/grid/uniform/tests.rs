//! Tests of the parent module.

use super::*;
use crate::grid::stored::random_operations;
use crate::test_support::{boxed, brute_pair_count, moved_shares_match_brute_force, sorted_pairs};
use crate::{CollisionFilter, ProxyKind};

#[test]
fn boxes_on_cell_boundaries_pair_once() {
    let mut grid = UniformGrid::with_cell_size(1.0).unwrap();
    // Faces, edges and corners exactly on cell planes; each pair is stored in several shared
    // cells but must be reported exactly once.
    let a = grid
        .insert(
            boxed([0.0; 3], [1.0; 3]),
            ProxyKind::Dynamic,
            CollisionFilter::ALL,
        )
        .unwrap();
    let b = grid
        .insert(
            boxed([1.0, 0.0, 0.0], [2.0, 1.0, 1.0]),
            ProxyKind::Dynamic,
            CollisionFilter::ALL,
        )
        .unwrap();
    let c = grid
        .insert(
            boxed([1.0; 3], [2.0; 3]),
            ProxyKind::Dynamic,
            CollisionFilter::ALL,
        )
        .unwrap();
    let d = grid
        .insert(
            boxed([2.0; 3], [2.0; 3]),
            ProxyKind::Dynamic,
            CollisionFilter::ALL,
        )
        .unwrap();
    let mut events = PairEvents::new();
    grid.update(&mut events);
    assert_eq!(events.begun.len(), 4, "{events:?}");
    assert_eq!(sorted_pairs(&grid), vec![(0, 1), (0, 2), (1, 2), (2, 3)]);
    // Separating by the smallest step ends exactly the touching pairs.
    grid.set_aabb(d, boxed([2.000_001; 3], [2.5; 3])).unwrap();
    grid.update(&mut events);
    assert_eq!(events.ended.len(), 1);
    let mut found = Vec::new();
    grid.query_aabb(&boxed([1.0; 3], [1.0; 3]), CollisionFilter::ALL, &mut found);
    assert_eq!(found, vec![a, b, c]);
    let _ = d;
}

#[test]
fn oversized_boxes_go_to_the_list_and_stay_exact() {
    let mut grid = UniformGrid::with_cell_size(1.0).unwrap();
    grid.set_max_cells_per_box(8).unwrap();
    let big = grid
        .insert(
            boxed([-10.0; 3], [10.0; 3]),
            ProxyKind::Dynamic,
            CollisionFilter::ALL,
        )
        .unwrap();
    let huge = grid
        .insert(
            boxed([-f32::MAX; 3], [f32::MAX; 3]),
            ProxyKind::Static,
            CollisionFilter::ALL,
        )
        .unwrap();
    let small = grid
        .insert(
            boxed([5.0; 3], [5.5; 3]),
            ProxyKind::Dynamic,
            CollisionFilter::ALL,
        )
        .unwrap();
    let mut events = PairEvents::new();
    grid.update(&mut events);
    assert_eq!(grid.oversized_count(), 2);
    assert_eq!(sorted_pairs(&grid), vec![(0, 1), (0, 2), (1, 2)]);
    // Shrinking the big box moves it from the list into cells.
    grid.set_aabb(big, boxed([-0.5; 3], [0.5; 3])).unwrap();
    grid.update(&mut events);
    assert_eq!(grid.oversized_count(), 1);
    assert_eq!(sorted_pairs(&grid), vec![(0, 1), (1, 2)]);
    let _ = (huge, small);
}

/// On an incremental update (one box of twelve moves), a box that leaves its cells for the
/// oversized list far from where it was ends its pairs there, and one that comes back from
/// the list into cells begins them again.
#[test]
fn boxes_to_and_from_the_oversized_list_end_and_begin_their_pairs() {
    for by_lookup in [false, true] {
        boxes_to_and_from_the_oversized_list(by_lookup);
    }
}

fn boxes_to_and_from_the_oversized_list(by_lookup: bool) {
    let mut grid = UniformGrid::with_cell_size(1.0).unwrap();
    grid.set_max_cells_per_box(8).unwrap();
    grid.by_lookup_only = by_lookup;
    let mut model = crate::BruteForce::new();
    let mut ids = Vec::new();
    for i in 0..12 {
        let x = i as f32 * 0.9;
        let b = boxed([x, 0.0, 0.0], [x + 1.0, 1.0, 1.0]);
        let id = grid
            .insert(b, ProxyKind::Dynamic, CollisionFilter::ALL)
            .unwrap();
        assert_eq!(
            model.insert(b, ProxyKind::Dynamic, CollisionFilter::ALL),
            Ok(id)
        );
        ids.push(id);
    }
    let (mut events, mut model_events) = (PairEvents::new(), PairEvents::new());
    grid.update(&mut events);
    model.update(&mut model_events);
    let full = grid.full_updates();
    let far_and_big = boxed([50.0; 3], [60.0; 3]);
    let back = boxed([0.2, 0.0, 0.0], [1.2, 1.0, 1.0]);
    for b in [far_and_big, back] {
        for bp in [&mut grid as &mut dyn BroadPhase, &mut model] {
            bp.set_aabb(ids[0], b).unwrap();
        }
        grid.update(&mut events);
        model.update(&mut model_events);
        assert_eq!(sorted_pairs(&grid), sorted_pairs(&model));
        let (mut ours, mut theirs) = (events.clone(), model_events.clone());
        for e in [&mut ours, &mut theirs] {
            e.begun.sort();
            e.ended.sort();
        }
        assert_eq!(ours, theirs);
    }
    assert_eq!(grid.full_updates(), full, "both updates incremental");
    assert_eq!(grid.change_updates, if by_lookup { 0 } else { 2 });
}

#[test]
fn far_coordinates_saturate_and_stay_exact() {
    let mut grid = UniformGrid::with_cell_size(0.001).unwrap();
    let ids: Vec<_> = [
        boxed([1e30; 3], [1e30; 3]),
        boxed([1e30, 1e30, 1e30], [2e30, 2e30, 2e30]),
        boxed([3e30; 3], [3e30; 3]),
        boxed([-f32::MAX; 3], [-1e30; 3]),
        boxed([-3e38, 0.0, 0.0], [-3e38, 1.0, 1.0]),
    ]
    .into_iter()
    .map(|b| {
        grid.insert(b, ProxyKind::Dynamic, CollisionFilter::ALL)
            .unwrap()
    })
    .collect();
    let mut events = PairEvents::new();
    grid.update(&mut events);
    // The saturated cells merge the far boxes into one cell; only the true overlap pairs.
    assert_eq!(sorted_pairs(&grid), vec![(0, 1)]);
    let _ = ids;
}

#[test]
fn moving_touches_only_entered_and_left_cells() {
    let mut grid = UniformGrid::with_cell_size(1.0).unwrap();
    let a = grid
        .insert(
            boxed([0.1; 3], [1.9; 3]),
            ProxyKind::Dynamic,
            CollisionFilter::ALL,
        )
        .unwrap();
    let mut events = PairEvents::new();
    grid.update(&mut events);
    assert_eq!(grid.occupied_cells(), 8);
    grid.set_aabb(a, boxed([1.1, 0.1, 0.1], [2.9, 1.9, 1.9]))
        .unwrap();
    grid.update(&mut events);
    assert_eq!(grid.occupied_cells(), 8);
    let cells: Vec<_> = [[0, 0, 0], [1, 0, 0], [2, 0, 0]]
        .iter()
        .map(|&c| grid.stored.cells.find(&UniformGrid::key(c)).is_some())
        .collect();
    assert_eq!(cells, vec![false, true, true]);
}

#[test]
fn wandering_objects_keep_memory_bounded() {
    let mut grid = UniformGrid::with_cell_size(1.0).unwrap();
    let ids: Vec<_> = (0..50)
        .map(|i| {
            let x = i as f32 * 0.7;
            grid.insert(
                boxed([x, 0.0, 0.0], [x + 0.5, 0.5, 0.5]),
                ProxyKind::Dynamic,
                CollisionFilter::ALL,
            )
            .unwrap()
        })
        .collect();
    let mut events = PairEvents::new();
    grid.update(&mut events);
    let mut peak = 0;
    for step in 1..2000 {
        for (i, &id) in ids.iter().enumerate() {
            // Falling forever, each at its own speed.
            let y = -(step as f32) * (1.0 + i as f32 * 0.1);
            let x = i as f32 * 0.7;
            grid.set_aabb(id, boxed([x, y, 0.0], [x + 0.5, y + 0.5, 0.5]))
                .unwrap();
        }
        grid.update(&mut events);
        peak = peak.max(grid.allocated_cells());
    }
    assert!(grid.occupied_cells() <= 50 * 8);
    assert!(peak <= 50 * 8 * 2, "cells allocated {peak}");
    let memory = grid.memory_bytes();
    for _ in 0..200 {
        for &id in &ids {
            let b = grid.aabb(id).unwrap();
            grid.set_aabb(
                id,
                boxed(
                    (b.min() - glam::Vec3::Y * 3.0).into(),
                    (b.max() - glam::Vec3::Y * 3.0).into(),
                ),
            )
            .unwrap();
        }
        grid.update(&mut events);
    }
    assert!(
        grid.memory_bytes() <= memory * 2,
        "memory grew from {memory} to {}",
        grid.memory_bytes()
    );
}

#[test]
fn automatic_and_retuned_cell_size() {
    let mut grid = UniformGrid::new();
    assert_eq!(grid.cell_size(), None);
    grid.insert(
        boxed([0.0; 3], [1.0, 2.0, 0.5]),
        ProxyKind::Dynamic,
        CollisionFilter::ALL,
    )
    .unwrap();
    grid.insert(
        boxed([0.0; 3], [4.0, 0.0, 0.0]),
        ProxyKind::Dynamic,
        CollisionFilter::ALL,
    )
    .unwrap();
    grid.insert(
        boxed([-f32::MAX; 3], [f32::MAX; 3]),
        ProxyKind::Dynamic,
        CollisionFilter::ALL,
    )
    .unwrap();
    let mut events = PairEvents::new();
    grid.update(&mut events);
    // Mean largest edge of the finite boxes is 3, so cells of 6.
    assert_eq!(grid.cell_size(), Some(6.0));
    assert_eq!(events.begun.len(), 3);
    assert!(UniformGrid::with_cell_size(0.0).is_err());
    assert!(UniformGrid::with_cell_size(f32::NAN).is_err());
    assert!(grid.set_max_cells_per_box(0).is_err());
    let pairs_before = sorted_pairs(&grid);
    grid.set_cell_size(0.25).unwrap();
    assert_eq!(grid.retune_cell_size(), 6.0);
    grid.update(&mut events);
    assert!(events.is_empty());
    assert_eq!(sorted_pairs(&grid), pairs_before);
}

#[test]
fn cells_match_boxes_under_random_operations() {
    let mut bp = UniformGrid::with_cell_size(1.5).unwrap();
    random_operations(&mut bp, UniformGrid::validate);
}

/// An automatic cell size follows the boxes: a huge box does not set it, and when every box
/// shrinks a hundredfold the size comes down within the check interval, pairs staying exact.
#[test]
fn an_automatic_cell_size_follows_the_boxes() {
    let mut grid = UniformGrid::new();
    let mut ids = Vec::new();
    for i in 0..300 {
        let x = (i % 20) as f32 * 10.0;
        let z = (i / 20) as f32 * 10.0;
        let id = grid
            .insert(
                boxed([x, 0.0, z], [x + 5.0, 5.0, z + 5.0]),
                ProxyKind::Dynamic,
                CollisionFilter::ALL,
            )
            .unwrap();
        ids.push(id);
    }
    grid.insert(
        boxed([-1e30; 3], [1e30; 3]),
        ProxyKind::Dynamic,
        CollisionFilter::ALL,
    )
    .unwrap();
    let mut events = PairEvents::new();
    grid.update(&mut events);
    let size = grid.cell_size().unwrap();
    assert!((5.0..=100.0).contains(&size), "cell size {size}");
    for (i, &id) in ids.iter().enumerate() {
        let x = (i % 20) as f32 * 0.1;
        let z = (i / 20) as f32 * 0.1;
        grid.set_aabb(id, boxed([x, 0.0, z], [x + 0.05, 0.05, z + 0.05]))
            .unwrap();
    }
    for _ in 0..RETUNE_INTERVAL {
        grid.update(&mut events);
    }
    let size = grid.cell_size().unwrap();
    assert!(size < 1.0, "cell size {size} after the boxes shrank");
    assert_eq!(grid.pair_count(), brute_pair_count(&grid));

    // A size the caller gave stays.
    grid.set_cell_size(50.0).unwrap();
    for _ in 0..RETUNE_INTERVAL {
        grid.update(&mut events);
    }
    assert_eq!(grid.cell_size(), Some(50.0));
}

/// Both updates, the one that looks up the moved boxes' cells and the one that pairs every
/// cell, and the switches between them, against brute force; with few cells allowed per box,
/// the long boxes go to the oversized list and are paired there.
#[test]
fn few_and_many_moved_boxes_match_the_model() {
    // Mostly static too: the full update splits each cell's slots by kind.
    // Both incremental updates: by change (the driver's scenes have more pairs than moved
    // boxes) and, forced, by lookup.
    for (max_cells, mostly_static, by_lookup) in [
        (64, false, false),
        (4, false, false),
        (64, true, false),
        (4, true, false),
        (64, false, true),
        (4, true, true),
    ] {
        let mut grid = UniformGrid::with_options(&GridOptions {
            cell_size: Some(1.0),
            max_cells_per_box: max_cells,
        })
        .unwrap();
        grid.by_lookup_only = by_lookup;
        moved_shares_match_brute_force(&mut grid, 12, 300, mostly_static);
        assert!(grid.full_updates() > 100, "{}", grid.full_updates());
        assert!(grid.full_updates() < 350, "{}", grid.full_updates());
        if by_lookup {
            assert_eq!(grid.change_updates, 0);
        } else {
            assert!(grid.change_updates > 200, "{}", grid.change_updates);
        }
        if max_cells == 4 {
            assert!(grid.oversized_count() > 0);
        }
    }
}
