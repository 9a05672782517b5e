//! Tests of both octrees: the shared rules and invariants on each, and what sets them apart.

use glam::Vec3;

use crate::octree::nodes::{OctreeNodes, NO_NODE, OUTSIDE};
use crate::octree::{LooseOctree, LooseOctreeOptions, Octree, OctreeOptions};
use crate::test_support::{
    assert_matches_brute_force, boxed, brute_pair_count, insert_dynamic, wander,
};
use crate::util::SplitMix64;
use crate::{Aabb, BroadPhase, CollisionFilter, PairEvents};

/// Either octree, with its nodes open to the checks.
trait Inspect: BroadPhase {
    /// The node storage.
    fn nodes(&self) -> &OctreeNodes;
}

impl Inspect for Octree {
    fn nodes(&self) -> &OctreeNodes {
        &self.base.nodes
    }
}

impl Inspect for LooseOctree {
    fn nodes(&self) -> &OctreeNodes {
        &self.base.nodes
    }
}

/// A tight octree with these limits.
fn tight(max_depth: u32, split_threshold: usize) -> Octree {
    Octree::with_options(&OctreeOptions {
        max_depth,
        split_threshold,
    })
    .unwrap()
}

/// A loose octree with this depth limit.
fn loose(max_depth: u32) -> LooseOctree {
    LooseOctree::with_options(&LooseOctreeOptions { max_depth }).unwrap()
}

/// Checks every structural invariant of `tree` right after an update: subtree counts and child
/// masks, parent links, list positions, and every stored box inside its node's bounds. Panics
/// with a description of the first violation.
fn assert_valid(tree: &dyn Inspect) {
    let (nodes, proxies) = (tree.nodes(), tree.proxies());
    for (i, &slot) in nodes.outside.iter().enumerate() {
        assert_eq!(nodes.node_of[slot as usize], OUTSIDE, "outside slot {slot}");
        assert_eq!(nodes.position[slot as usize] as usize, i);
    }
    let mut stored = nodes.outside.len();
    if nodes.has_root {
        let mut stack = vec![0u32];
        while let Some(node) = stack.pop() {
            let n = node as usize;
            let mut count = nodes.items[n].len() as u32;
            for (i, &slot) in nodes.items[n].iter().enumerate() {
                let s = slot as usize;
                assert_eq!(
                    (nodes.node_of[s], nodes.position[s] as usize),
                    (node, i),
                    "slot {slot}"
                );
                assert!(proxies.is_live(s), "dead slot {slot} in node {node}");
                assert!(
                    nodes.bounds[n].contains(proxies.aabb(s)),
                    "slot {slot} outside node {node}"
                );
            }
            let first = nodes.first_child[n];
            if first != NO_NODE {
                for child in first..first + 8 {
                    let c = child as usize;
                    assert_eq!(nodes.parent[c], node);
                    assert_eq!(nodes.depth[c], nodes.depth[n] + 1);
                    assert!(
                        nodes.bounds[n].contains(&nodes.bounds[c]),
                        "child {child} not nested"
                    );
                    let bit = nodes.child_mask[n] >> (child - first) & 1 == 1;
                    assert_eq!(bit, nodes.subtree[c] > 0, "mask bit of child {child}");
                    count += nodes.subtree[c];
                    stack.push(child);
                }
            } else {
                assert_eq!(nodes.child_mask[n], 0);
            }
            assert_eq!(nodes.subtree[n], count, "subtree count of node {node}");
        }
        stored += nodes.subtree[0] as usize;
    }
    assert_eq!(stored, proxies.len(), "every live proxy is stored once");
}

/// Random inserts (a few large boxes among small ones), moves that drift away over time so
/// that the root is re-fitted now and then, and removals; the invariants hold after every
/// update.
fn random_operations_keep_invariants(tree: &mut dyn Inspect) {
    let mut rng = SplitMix64::new(11);
    let mut ids = Vec::new();
    let mut events = PairEvents::new();
    for step in 0..300 {
        for _ in 0..rng.below(6) {
            let c = Vec3::new(
                rng.range(0.0, 50.0),
                rng.range(0.0, 50.0),
                rng.range(0.0, 50.0),
            );
            let h = Vec3::splat(if rng.chance(0.05) {
                30.0
            } else {
                rng.range(0.0, 2.0)
            });
            ids.push(insert_dynamic(tree, Aabb::new(c - h, c + h).unwrap()));
        }
        for _ in 0..rng.below(ids.len() / 2 + 1) {
            let id = ids[rng.below(ids.len())];
            let b = tree.aabb(id).unwrap();
            let d = Vec3::new(
                rng.range(-1.0, 3.0),
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
            ) * (1.0 + step as f32 * 0.05);
            tree.set_aabb(id, Aabb::new(b.min() + d, b.max() + d).unwrap())
                .unwrap();
        }
        if ids.len() > 40 && rng.chance(0.5) {
            let id = ids.swap_remove(rng.below(ids.len()));
            tree.remove(id).unwrap();
        }
        tree.update(&mut events);
        assert_valid(tree);
    }
}

#[test]
fn invariants_hold_under_random_operations() {
    random_operations_keep_invariants(&mut tight(6, 3));
    random_operations_keep_invariants(&mut loose(8));
}

#[test]
fn pairs_and_events_match_brute_force() {
    // A small split threshold makes the tight octree split and collapse all the time.
    assert_matches_brute_force(&|| Box::new(tight(6, 2)), 300, 10, 5);
    assert_matches_brute_force(&|| Box::new(loose(6)), 300, 10, 5);
}

/// Boxes far outside the root pair with everything, and when every box moves far away the
/// refit rule brings them back into a new root, pairs staying exact.
fn outside_boxes_pair_and_trigger_a_refit(tree: &mut dyn Inspect) {
    let all = CollisionFilter::ALL;
    let ids: Vec<_> = (0..40)
        .map(|i| {
            let x = (i % 10) as f32;
            let z = (i / 10) as f32 * 3.0;
            insert_dynamic(tree, boxed([x, 0.0, z], [x + 0.5, 0.5, z + 0.5]))
        })
        .collect();
    let far = insert_dynamic(tree, boxed([1e30; 3], [1e30; 3]));
    let huge = insert_dynamic(tree, boxed([-f32::MAX; 3], [f32::MAX; 3]));
    let mut events = PairEvents::new();
    tree.update(&mut events);
    assert_eq!(tree.nodes().outside.len(), 2);
    assert_eq!(tree.pair_count(), 41);
    for (i, &id) in ids.iter().enumerate() {
        let x = 1e6 + i as f32 * 0.25;
        tree.set_aabb(id, boxed([x, 0.0, 0.0], [x + 0.5, 0.5, 0.5]))
            .unwrap();
    }
    tree.update(&mut events);
    assert!(tree.nodes().outside.len() <= 2, "root refitted");
    // Each box overlaps the next two (spacing 0.25, width 0.5), plus the huge box.
    assert_eq!(tree.pair_count(), 39 + 38 + 41);
    let mut found = Vec::new();
    tree.query_aabb(&boxed([1e30; 3], [1e30; 3]), all, &mut found);
    assert_eq!(found, vec![far, huge]);
}

#[test]
fn outside_boxes_pair_and_the_root_is_refitted() {
    outside_boxes_pair_and_trigger_a_refit(&mut tight(8, 2));
    outside_boxes_pair_and_trigger_a_refit(&mut loose(8));
}

/// Boxes that fall forever, each at its own speed, keep the memory bounded: the subtrees they
/// leave are freed and their blocks reused, so memory follows the boxes rather than every
/// place they visited, and removing them all leaves the root alone. `node_bound` is the most
/// nodes the tree may have allocated at the end.
fn wandering_keeps_memory_bounded(make: &dyn Fn() -> Box<dyn Inspect>, node_bound: usize) {
    let memory = |bp: &dyn BroadPhase| bp.memory_bytes();
    let short = wander(&mut *make(), 64, 300, memory);
    let mut tree = make();
    let long = wander(&mut *tree, 64, 1500, memory);
    assert!(
        long <= short + short / 4,
        "{short} bytes after 300 steps, {long} after 1500"
    );
    let allocated = tree.nodes().allocated_nodes();
    assert!(allocated <= node_bound, "nodes allocated {allocated}");
    let proxies = tree.proxies();
    let ids: Vec<_> = proxies.live_slots().map(|slot| proxies.id(slot)).collect();
    for id in ids {
        tree.remove(id).unwrap();
    }
    let mut events = PairEvents::new();
    tree.update(&mut events);
    assert_eq!(tree.nodes().node_count(), 1);
    assert_eq!(events.ended.len(), 0);
}

#[test]
fn wandering_objects_keep_memory_bounded() {
    // Internal nodes of the tight octree hold more than threshold / 2 boxes in their subtree
    // (else they collapse), so at most 64 / 3 per depth, each with 8 children; freed nodes are
    // reused first.
    wandering_keeps_memory_bounded(&|| Box::new(tight(8, 4)), 1 + 8 * 8 * 64 / 3);
    // Each box keeps at most one path of blocks of the loose octree alive.
    wandering_keeps_memory_bounded(&|| Box::new(loose(12)), 1 + 8 * 12 * 64);
}

#[test]
fn options_out_of_range_are_refused() {
    assert!(Octree::with_options(&OctreeOptions {
        max_depth: 31,
        split_threshold: 4
    })
    .is_err());
    assert!(Octree::with_options(&OctreeOptions {
        max_depth: 4,
        split_threshold: 0
    })
    .is_err());
    assert!(Octree::with_options(&OctreeOptions {
        max_depth: 0,
        split_threshold: 1
    })
    .is_ok());
    assert!(LooseOctree::with_options(&LooseOctreeOptions { max_depth: 31 }).is_err());
    assert!(LooseOctree::with_options(&LooseOctreeOptions { max_depth: 0 }).is_ok());
}

#[test]
fn boxes_touching_splitting_planes_stay_exact() {
    let mut tree = tight(6, 1);
    // A lattice of unit boxes touching face to face: many lie on splitting planes.
    for i in 0..6 {
        for j in 0..6 {
            let (x, y) = (i as f32, j as f32);
            insert_dynamic(&mut tree, boxed([x, y, 0.0], [x + 1.0, y + 1.0, 1.0]));
        }
    }
    let mut events = PairEvents::new();
    tree.update(&mut events);
    // 6×6 lattice: 2·6·5 face pairs and 2·5·5 diagonal (edge) pairs.
    assert_eq!(tree.pair_count(), 60 + 50);
    assert!(tree.node_count() > 1);
    let stats = tree.level_statistics();
    assert_eq!(
        stats.iter().map(|s| s.objects).sum::<usize>() + tree.outside_count(),
        36
    );
}

/// Equal small boxes at pseudo-random positions: some straddle splitting planes at every depth.
fn straddling_scene(bp: &mut dyn BroadPhase) {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32 * 60.0
    };
    for _ in 0..400 {
        let (x, y, z) = (next(), next(), next());
        insert_dynamic(bp, boxed([x, y, z], [x + 0.4, y + 0.4, z + 0.4]));
    }
    let mut events = PairEvents::new();
    bp.update(&mut events);
}

#[test]
fn loose_depth_follows_size_not_position() {
    let mut loose = LooseOctree::new();
    straddling_scene(&mut loose);
    let mut tight = tight(10, 1);
    straddling_scene(&mut tight);
    let pairs = |bp: &dyn BroadPhase| {
        let mut p: Vec<_> = bp.pair_set().iter().collect();
        p.sort_unstable();
        p
    };
    assert_eq!(pairs(&loose), pairs(&tight));
    // Same-size boxes all land on one depth of the loose octree.
    let loose_stats = loose.level_statistics();
    let loose_levels: Vec<_> = loose_stats.iter().filter(|s| s.objects > 0).collect();
    assert_eq!(loose_levels.len(), 1, "{loose_stats:?}");
    assert_eq!(loose_levels[0].objects + loose.outside_count(), 400);
    // The tight octree keeps straddling boxes near the root, on several depths.
    let tight_stats = tight.level_statistics();
    assert!(
        tight_stats.iter().filter(|s| s.objects > 0).count() > 3,
        "{tight_stats:?}"
    );
    assert!(tight_stats[0].objects > 0, "{tight_stats:?}");
}

/// A world that shrinks (its boxes gather in a corner a thousandth of its size) gets a root
/// its own size back within [`super::root`]'s check interval, pairs staying exact.
fn a_shrunk_world_gets_a_small_root(tree: &mut dyn Inspect) {
    let mut rng = SplitMix64::new(5);
    let mut ids = Vec::new();
    for _ in 0..200 {
        let p = Vec3::new(
            rng.range(0.0, 1e4),
            rng.range(0.0, 1e4),
            rng.range(0.0, 1e4),
        );
        ids.push(insert_dynamic(
            tree,
            Aabb::new(p, p + Vec3::splat(100.0)).unwrap(),
        ));
    }
    let mut events = PairEvents::new();
    tree.update(&mut events);
    let side = |tree: &dyn Inspect| tree.nodes().bounds[0].extents().max_element();
    assert!(side(tree) > 5e3);
    for &id in &ids {
        let p = Vec3::new(
            rng.range(0.0, 10.0),
            rng.range(0.0, 10.0),
            rng.range(0.0, 10.0),
        );
        tree.set_aabb(id, Aabb::new(p, p + Vec3::splat(0.1)).unwrap())
            .unwrap();
    }
    for _ in 0..70 {
        tree.update(&mut events);
    }
    assert!(
        side(tree) < 100.0,
        "root side {} after the shrink",
        side(tree)
    );
    assert_eq!(tree.pair_count(), brute_pair_count(tree));
}

#[test]
fn a_shrunk_world_gets_a_small_root_back() {
    a_shrunk_world_gets_a_small_root(&mut tight(8, 2));
    a_shrunk_world_gets_a_small_root(&mut loose(8));
}

/// A huge box among small ones does not set the root: it waits in the outside list.
#[test]
fn a_huge_box_does_not_stretch_the_root() {
    for tree in [&mut tight(8, 2) as &mut dyn Inspect, &mut loose(8)] {
        for i in 0..100 {
            let x = (i % 10) as f32;
            let z = (i / 10) as f32;
            insert_dynamic(tree, boxed([x, 0.0, z], [x + 0.5, 0.5, z + 0.5]));
        }
        insert_dynamic(tree, boxed([-1e30; 3], [1e30; 3]));
        tree.update(&mut PairEvents::new());
        let side = tree.nodes().bounds[0].extents().max_element();
        assert!(side < 100.0, "root side {side}");
        assert_eq!(tree.pair_count(), brute_pair_count(tree));
    }
}
