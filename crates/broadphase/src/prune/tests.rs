//! Box pruning against brute force, kernels and thread counts against each other.

use super::*;
use crate::backend::sortable_key;
use crate::test_support::boxed;
use crate::util::SplitMix64;
use crate::Vec3;

fn random_boxes(n: usize, side: f32, max_half: f32, seed: u64) -> Vec<Aabb> {
    let mut rng = SplitMix64::new(seed);
    (0..n)
        .map(|_| {
            let c = Vec3::new(
                rng.range(0.0, side),
                rng.range(0.0, side),
                rng.range(0.0, side),
            );
            let h = Vec3::new(
                rng.range(0.0, max_half),
                rng.range(0.0, max_half),
                rng.range(0.0, max_half),
            );
            Aabb::from_center_half_extents(c, h).unwrap()
        })
        .collect()
}

/// Integer-lattice boxes: many exact touches and duplicates.
fn lattice_boxes(n: usize, cells: u64, max_size: u64, seed: u64) -> Vec<Aabb> {
    let mut rng = SplitMix64::new(seed);
    (0..n)
        .map(|_| {
            let min = [0; 3].map(|_: i32| (rng.next_u64() % cells) as f32);
            let size = [0; 3].map(|_: i32| (rng.next_u64() % (max_size + 1)) as f32);
            boxed(min, [min[0] + size[0], min[1] + size[1], min[2] + size[2]])
        })
        .collect()
}

fn brute_complete(boxes: &[Aabb]) -> Vec<(u32, u32)> {
    let mut pairs = Vec::new();
    for i in 0..boxes.len() {
        for j in i + 1..boxes.len() {
            if boxes[i].overlaps(&boxes[j]) {
                pairs.push((i as u32, j as u32));
            }
        }
    }
    pairs
}

fn brute_bipartite(a: &[Aabb], b: &[Aabb]) -> Vec<(u32, u32)> {
    let mut pairs = Vec::new();
    for (i, x) in a.iter().enumerate() {
        for (j, y) in b.iter().enumerate() {
            if x.overlaps(y) {
                pairs.push((i as u32, j as u32));
            }
        }
    }
    pairs
}

fn all_options() -> Vec<PruneOptions> {
    let mut all = Vec::new();
    for bucketing in [false, true] {
        // AVX-512 (when the CPU has it), AVX2, scalar.
        for (force_scalar, avx512) in [(false, true), (false, false), (true, false)] {
            for threads in 1..=4 {
                all.push(PruneOptions {
                    threads,
                    force_scalar,
                    avx512,
                    bucketing,
                    // Calls run in sequence on one scratch: the coherent path sees the same
                    // boxes again.
                    coherent: threads % 2 == 0,
                    // Three threads (not coherent) take both orders.
                    bucket_first: threads != 3 || force_scalar,
                    // A limit never reached takes the blocked sweep: the same output.
                    max_pairs: (threads == 1 && !force_scalar).then_some(usize::MAX - 1),
                });
            }
        }
    }
    all
}

/// Every option value gives the brute-force pair set; for a given bucketing setting, every
/// kernel and thread count gives the very same sequence.
fn check_complete(boxes: &[Aabb]) -> usize {
    let mut expected = brute_complete(boxes);
    expected.sort_unstable();
    let mut scratch = PruneScratch::new();
    let mut reference: [Option<Vec<(u32, u32)>>; 2] = [None, None];
    for options in all_options() {
        let mut pairs = vec![(7, 7)]; // must be cleared
        complete_pairs_with(boxes, &options, &mut scratch, &mut pairs).unwrap();
        scratch.arrays.validate();
        match &reference[options.bucketing as usize] {
            Some(first) => assert_eq!(&pairs, first, "{options:?}"),
            None => reference[options.bucketing as usize] = Some(pairs.clone()),
        }
        assert!(pairs.iter().all(|&(i, j)| i < j));
        pairs.sort_unstable();
        assert_eq!(pairs, expected, "{options:?}, {} boxes", boxes.len());
    }
    // A limit at the pair count passes; one below fails and leaves nothing, on one thread
    // and on several.
    for threads in [1, 3] {
        let mut options = PruneOptions {
            threads,
            max_pairs: Some(expected.len()),
            ..PruneOptions::default()
        };
        let mut pairs = Vec::new();
        complete_pairs_with(boxes, &options, &mut scratch, &mut pairs).unwrap();
        assert_eq!(pairs.len(), expected.len());
        if let Some(below) = expected.len().checked_sub(1) {
            options.max_pairs = Some(below);
            let result = complete_pairs_with(boxes, &options, &mut scratch, &mut pairs);
            assert_eq!(result, Err(crate::Error::PairLimit { limit: below }));
            assert!(pairs.is_empty());
        }
    }
    expected.len()
}

/// `run` (a pruning call on fixed input) against the brute-force pairs `expected`, with
/// every option: the same set every time, the very same sequence for a given bucketing.
fn check_against(
    mut expected: Vec<(u32, u32)>,
    run: impl Fn(&PruneOptions, &mut PruneScratch, &mut Vec<(u32, u32)>),
) -> usize {
    expected.sort_unstable();
    let mut scratch = PruneScratch::new();
    let mut reference: [Option<Vec<(u32, u32)>>; 2] = [None, None];
    for options in all_options() {
        let mut pairs = Vec::new();
        run(&options, &mut scratch, &mut pairs);
        scratch.arrays.validate();
        match &reference[options.bucketing as usize] {
            Some(first) => assert_eq!(&pairs, first, "{options:?}"),
            None => reference[options.bucketing as usize] = Some(pairs.clone()),
        }
        pairs.sort_unstable();
        assert_eq!(pairs, expected, "{options:?}");
    }
    expected.len()
}

fn check_bipartite(a: &[Aabb], b: &[Aabb]) -> usize {
    check_against(brute_bipartite(a, b), |options, scratch, pairs| {
        bipartite_pairs_with(a, b, options, scratch, pairs).unwrap()
    })
}

#[test]
fn tiny_inputs_and_sizes_around_the_simd_width() {
    assert_eq!(check_complete(&[]), 0);
    assert_eq!(check_complete(&[boxed([0.0; 3], [1.0; 3])]), 0);
    assert_eq!(
        check_complete(&[boxed([0.0; 3], [1.0; 3]), boxed([1.0; 3], [2.0; 3])]),
        1
    );
    assert_eq!(
        check_complete(&[boxed([0.0; 3], [1.0; 3]), boxed([1.5; 3], [2.0; 3])]),
        0
    );
    for n in 3..=34 {
        check_complete(&lattice_boxes(n, 4, 2, n as u64));
        check_complete(&random_boxes(n, 10.0, 3.0, n as u64));
    }
}

#[test]
fn all_equal_boxes() {
    for n in [8, 9, 300] {
        let boxes = vec![boxed([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]); n];
        assert_eq!(check_complete(&boxes), n * (n - 1) / 2);
    }
}

#[test]
fn all_touching_boxes() {
    // A 7 x 7 x 7 lattice of unit cubes touching their 26 neighbours by faces, edges, corners.
    let mut boxes = Vec::new();
    for x in 0..7 {
        for y in 0..7 {
            for z in 0..7 {
                let min = [x as f32, y as f32, z as f32];
                boxes.push(boxed(min, min.map(|v| v + 1.0)));
            }
        }
    }
    // Pairs of lattice cells at Chebyshev distance 1: ((3*7-2)^3 - 7^3) / 2.
    assert_eq!(check_complete(&boxes), (19usize.pow(3) - 343) / 2);
}

#[test]
fn zero_size_boxes_and_points() {
    check_complete(&lattice_boxes(600, 12, 0, 3));
    let mixed: Vec<Aabb> = lattice_boxes(500, 30, 0, 4)
        .into_iter()
        .chain(lattice_boxes(500, 30, 3, 5))
        .collect();
    check_complete(&mixed);
    // Zero extent on one axis only (flat layers).
    let flat: Vec<Aabb> = random_boxes(700, 100.0, 6.0, 6)
        .iter()
        .map(|b| boxed([b.min().x, 5.0, b.min().z], [b.max().x, 5.0, b.max().z]))
        .collect();
    check_complete(&flat);
}

#[test]
fn huge_coordinates() {
    let mut boxes = random_boxes(400, 1e30, 1e28, 8);
    boxes.push(boxed([-1e30; 3], [1e30; 3]));
    boxes.push(boxed([-f32::MAX; 3], [f32::MAX; 3]));
    boxes.push(boxed([f32::MAX; 3], [f32::MAX; 3]));
    boxes.push(boxed([-f32::MAX; 3], [-f32::MAX; 3]));
    boxes.push(boxed([-0.0; 3], [0.0; 3]));
    boxes.push(boxed([0.0; 3], [-0.0; 3]));
    boxes.extend(
        random_boxes(300, 10.0, 2.0, 9)
            .iter()
            .map(|b| boxed((b.min() - 1e30).into(), b.max().into())),
    );
    check_complete(&boxes);
    let extreme: Vec<Aabb> = (0..300)
        .map(|i| {
            let s = if i % 2 == 0 { -1.0 } else { 1.0 };
            let v = s * f32::MAX / (1 + i % 5) as f32;
            boxed([v.min(0.0), v, v.min(-v)], [v.max(0.0), v, v.max(-v)])
        })
        .collect();
    check_complete(&extreme);
    // Sub-normal spreads: the grid's inverse cell size would overflow f32.
    let tiny: Vec<Aabb> = (0..400u32)
        .map(|i| {
            let v = f32::from_bits(i % 37);
            let w = f32::from_bits(i % 23);
            boxed([0.0, v, w], [1.0, v, w])
        })
        .collect();
    check_complete(&tiny);
}

#[test]
fn random_scenes_dense_sparse_and_clustered() {
    // Dense enough for the grid: the `cube` setting at a small scale.
    let cube = random_boxes(3000, 4096.0, 127.0, 10);
    check_complete(&cube);
    let sparse = random_boxes(3000, 20000.0, 127.0, 11);
    check_complete(&sparse);
    // Clumps plus a few giant boxes that touch every grid cell.
    let mut clustered: Vec<Aabb> = (0..4)
        .flat_map(|k| {
            random_boxes(500, 60.0, 4.0, 20 + k)
                .into_iter()
                .map(move |b| {
                    boxed(
                        (b.min() + 500.0 * k as f32).into(),
                        (b.max() + 500.0 * k as f32).into(),
                    )
                })
        })
        .collect();
    clustered.extend((0..20).map(|k| {
        boxed(
            [k as f32 * 100.0, -10.0, -10.0],
            [k as f32 * 100.0 + 5.0, 3000.0, 3000.0],
        )
    }));
    check_complete(&clustered);
}

#[test]
fn grid_is_used_and_coarsened_when_boxes_are_large() {
    let mut scratch = PruneScratch::new();
    let mut pairs = Vec::new();
    let cube = random_boxes(3000, 4096.0, 127.0, 12);
    complete_pairs_with(&cube, &PruneOptions::default(), &mut scratch, &mut pairs).unwrap();
    assert!(scratch.last_cell_count() > 4);
    // Half the boxes span the whole scene: copies would explode, so the grid coarsens or goes.
    let mut big = cube.clone();
    big.extend((0..3000).map(|_| boxed([0.0; 3], [4096.0; 3])));
    complete_pairs_with(&big, &PruneOptions::default(), &mut scratch, &mut pairs).unwrap();
    assert!(scratch.arrays.swept <= 3 * big.len() + scratch.last_cell_count() * PADDING);
    check_complete(&big[2500..3500]);
}

/// [`pairs_except_within_b`] against brute force: the pairs within `a` and across.
fn check_except_within_b(a: &[Aabb], b: &[Aabb]) -> usize {
    let shift = a.len() as u32;
    let mut expected = brute_complete(a);
    expected.extend(
        brute_bipartite(a, b)
            .into_iter()
            .map(|(i, j)| (i, j + shift)),
    );
    check_against(expected, |options, scratch, pairs| {
        pairs_except_within_b(a, b, options, scratch, pairs).unwrap()
    })
}

#[test]
fn pairs_except_within_b_against_brute_force() {
    assert_eq!(check_except_within_b(&[], &[]), 0);
    let one = [boxed([0.0; 3], [1.0; 3])];
    assert_eq!(check_except_within_b(&one, &[]), 0);
    assert_eq!(check_except_within_b(&[], &one), 0);
    assert_eq!(check_except_within_b(&one, &one), 1);
    let two = [boxed([0.0; 3], [1.0; 3]), boxed([1.0; 3], [2.0; 3])];
    // Both pairs within `a`'s copy and across, none within `b`.
    assert_eq!(check_except_within_b(&two, &two), 1 + 4);
    assert_eq!(check_except_within_b(&one, &two), 2); // closed boxes: touching counts
    for n in [1, 7, 8, 9, 17] {
        check_except_within_b(&lattice_boxes(n, 5, 2, 40), &lattice_boxes(n + 3, 5, 2, 41));
    }
    check_except_within_b(
        &random_boxes(1500, 4096.0, 127.0, 42),
        &random_boxes(900, 4096.0, 127.0, 43),
    );
    // A dense `b`, so that the skip has many overlapping pairs within it to leave out.
    let dense_b = lattice_boxes(400, 10, 1, 45);
    assert!(brute_complete(&dense_b).len() > 100);
    check_except_within_b(&lattice_boxes(300, 10, 1, 44), &dense_b);
}

#[test]
fn bipartite_against_brute_force() {
    assert_eq!(check_bipartite(&[], &[]), 0);
    let one = [boxed([0.0; 3], [1.0; 3])];
    assert_eq!(check_bipartite(&one, &[]), 0);
    assert_eq!(check_bipartite(&[], &one), 0);
    assert_eq!(check_bipartite(&one, &one), 1);
    for n in [1, 7, 8, 9, 17] {
        check_bipartite(&lattice_boxes(n, 5, 2, 30), &lattice_boxes(n + 3, 5, 2, 31));
    }
    check_bipartite(
        &random_boxes(1500, 4096.0, 127.0, 32),
        &random_boxes(900, 4096.0, 127.0, 33),
    );
    check_bipartite(
        &lattice_boxes(400, 10, 1, 34),
        &lattice_boxes(400, 10, 0, 35),
    );
    let same = random_boxes(500, 1000.0, 60.0, 36);
    // A set against itself: every box meets itself, plus every overlap in both orders.
    let within = brute_complete(&same).len();
    assert_eq!(check_bipartite(&same, &same), same.len() + 2 * within);
}

#[test]
fn deterministic_across_calls_and_scratch_reuse() {
    let boxes = random_boxes(2500, 4096.0, 127.0, 40);
    let mut first = Vec::new();
    complete_pairs(&boxes, &mut first).unwrap();
    let mut scratch = PruneScratch::new();
    let mut again = Vec::new();
    // A bigger, then a smaller, then the same input through one scratch.
    complete_pairs_with(
        &random_boxes(5000, 100.0, 3.0, 41),
        &PruneOptions::default(),
        &mut scratch,
        &mut again,
    )
    .unwrap();
    complete_pairs_with(
        &boxes[..10],
        &PruneOptions::default(),
        &mut scratch,
        &mut again,
    )
    .unwrap();
    complete_pairs_with(&boxes, &PruneOptions::default(), &mut scratch, &mut again).unwrap();
    assert_eq!(first, again);
}

/// The coherent sort (previous order finished by insertion sort) gives the same pairs in the
/// same order as the radix sort, over calls where the boxes drift, jump (the fallback), change
/// count, and tie on min x.
#[test]
fn coherent_sort_gives_the_same_output_as_the_radix_sort() {
    let mut rng = SplitMix64::new(77);
    let mut boxes = random_boxes(3000, 400.0, 6.0, 76);
    // Ties on min x, broken by index in both paths.
    for b in boxes.iter_mut().step_by(7) {
        let (min, max) = (b.min(), b.max());
        *b = boxed(
            [100.0, min.y, min.z],
            [100.0 + (max.x - min.x), max.y, max.z],
        );
    }
    let coherent = PruneOptions {
        coherent: true,
        ..PruneOptions::default()
    };
    let mut scratch = (PruneScratch::new(), PruneScratch::new());
    let (mut expected, mut pairs) = (Vec::new(), Vec::new());
    for call in 0..60 {
        // Drift by a fraction of a box; every 10th call a jump across the scene.
        let step = if call % 10 == 9 { 300.0 } else { 0.5 };
        for b in boxes.iter_mut() {
            let d = Vec3::new(
                rng.range(-step, step),
                rng.range(-step, step),
                rng.range(-step, step),
            );
            *b = boxed((b.min() + d).into(), (b.max() + d).into());
        }
        let count = if call % 20 == 15 { 2000 } else { boxes.len() };
        let input = &boxes[..count];
        complete_pairs_with(
            input,
            &PruneOptions::default(),
            &mut scratch.0,
            &mut expected,
        )
        .unwrap();
        complete_pairs_with(input, &coherent, &mut scratch.1, &mut pairs).unwrap();
        assert_eq!(pairs, expected, "call {call}");
        // The coherent path's order is the radix sort's: by key, ties by index.
        let mut sorted: Vec<u64> = input
            .iter()
            .enumerate()
            .map(|(i, b)| ((sortable_key(b.min().x) as u64) << 32) | i as u64)
            .collect();
        sorted.sort_unstable();
        assert_eq!(scratch.1.keys, sorted, "call {call}");
    }
    assert!(!expected.is_empty());
    // Drifting calls took the coherent path (at least calls 1 to 8); jumps fell back.
    assert!(
        (8..50).contains(&scratch.1.coherent_sorts),
        "{}",
        scratch.1.coherent_sorts
    );
}

#[test]
fn thread_counts_out_of_range_are_typed_errors() {
    for threads in [0, 1025, usize::MAX] {
        let options = PruneOptions {
            threads,
            ..PruneOptions::default()
        };
        let mut pairs = vec![(1, 2)];
        let result = complete_pairs_with(&[], &options, &mut PruneScratch::new(), &mut pairs);
        assert_eq!(
            result,
            Err(Error::InvalidOption("threads must be between 1 and 1024"))
        );
        assert!(pairs.is_empty());
        assert!(
            bipartite_pairs_with(&[], &[], &options, &mut PruneScratch::new(), &mut pairs).is_err()
        );
    }
}

/// The bucket-first order writes exactly the arrays of the sort-first order (radix sort, then
/// the scatter into the grid), on one thread or several, from one source or two, with boxes
/// copied into several cells and over many input chunks (64 boxes each in tests).
#[test]
fn bucket_first_writes_the_sort_first_arrays() {
    fn same(x: &SweepArrays, y: &SweepArrays) -> bool {
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        [
            (&x.min_x, &y.min_x),
            (&x.max_x, &y.max_x),
            (&x.min_y, &y.min_y),
            (&x.max_y, &y.max_y),
            (&x.min_z, &y.min_z),
            (&x.max_z, &y.max_z),
        ]
        .iter()
        .all(|(a, b)| bits(a) == bits(b))
            && x.code == y.code
            && x.index == y.index
            && (x.swept, x.cells) == (y.swept, y.cells)
    }
    let scenes = [
        random_boxes(3000, 4096.0, 127.0, 40),
        random_boxes(5000, 20000.0, 127.0, 41),
        random_boxes(1000, 300.0, 40.0, 42),
    ];
    for (scene, boxes) in scenes.iter().enumerate() {
        for split in [boxes.len(), boxes.len() / 3] {
            let (a, b) = boxes.split_at(split);
            let sources = [(a, 1 << 2), (b, 1 << 3)];
            let mut sorted = PruneScratch::new();
            sort::sort_by_min_x(&mut sorted, sources, false);
            gather::gather(&mut sorted, sources, true);
            sorted.arrays.validate();
            assert!(sorted.arrays.cells > 4, "scene {scene}: no grid");
            for threads in 1..=3 {
                let mut bucketed = PruneScratch::new();
                for _ in 0..2 {
                    // The second call reuses the buffers.
                    assert!(bucket_first::bucket_then_sort(
                        &mut bucketed,
                        sources,
                        threads
                    ));
                    bucketed.arrays.validate();
                    assert!(
                        same(&bucketed.arrays, &sorted.arrays),
                        "scene {scene} split {split} threads {threads}"
                    );
                }
            }
        }
    }
}
