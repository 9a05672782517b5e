//! `complete_pairs` and `bipartite_pairs` against brute force, on every kernel (scalar and
//! SIMD, with and without the y/z grid, 1 to 3 threads, radix or coherent sort, sorted or
//! bucketed first (every size takes both under `cfg(fuzzing)`)): the same
//! pairs, and the same order for every option, also after the boxes drift.
#![no_main]

use arbitrary::Arbitrary;
use broadphase::prune::{bipartite_pairs_with, complete_pairs_with, PruneOptions, PruneScratch};
use broadphase::{Aabb, Vec3};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Coord {
    Small(i8),
    Eighth(i16),
    Huge(bool),
    Max(bool),
    Raw(f32),
}

impl Coord {
    fn value(self) -> f32 {
        match self {
            Coord::Small(v) => v as f32,
            Coord::Eighth(v) => v as f32 * 0.125,
            Coord::Huge(negative) => {
                if negative {
                    -1e30
                } else {
                    1e30
                }
            }
            Coord::Max(negative) => {
                if negative {
                    -f32::MAX
                } else {
                    f32::MAX
                }
            }
            Coord::Raw(v) => v,
        }
    }
}

#[derive(Arbitrary, Debug)]
struct Input {
    boxes: Vec<([Coord; 3], [Coord; 3])>,
    split: u8,
    /// Repeat the input this many times (exact duplicates, dense scenes the grid engages on).
    copies: u8,
}

fn brute_force(a: &[Aabb], b: Option<&[Aabb]>) -> Vec<(u32, u32)> {
    let mut pairs = Vec::new();
    match b {
        None => {
            for i in 0..a.len() {
                for j in i + 1..a.len() {
                    if a[i].overlaps(&a[j]) {
                        pairs.push((i as u32, j as u32));
                    }
                }
            }
        }
        Some(b) => {
            for (i, x) in a.iter().enumerate() {
                for (j, y) in b.iter().enumerate() {
                    if x.overlaps(y) {
                        pairs.push((i as u32, j as u32));
                    }
                }
            }
        }
    }
    pairs.sort_unstable();
    pairs
}

fuzz_target!(|input: Input| {
    let mut boxes: Vec<Aabb> = input
        .boxes
        .iter()
        .take(300)
        .filter_map(|(min, size)| {
            let min = Vec3::from_array(min.map(Coord::value));
            let size = Vec3::from_array(size.map(|c| c.value().abs()));
            Aabb::new(min, min + size).ok()
        })
        .collect();
    let unique = boxes.len();
    for _ in 0..(input.copies % 4) {
        boxes.extend_from_within(..unique);
    }
    let split = if boxes.is_empty() {
        0
    } else {
        input.split as usize % (boxes.len() + 1)
    };
    let (left, right) = boxes.split_at(split);
    let expected_complete = brute_force(&boxes, None);
    let expected_bipartite = brute_force(left, Some(right));
    let mut scratch = PruneScratch::new();
    // The first result per grid setting: every kernel and thread count must repeat its order.
    let mut first: [Option<(Vec<(u32, u32)>, Vec<(u32, u32)>)>; 2] = [None, None];
    for threads in 1..=3 {
        // AVX-512 (when the CPU has it), AVX2, scalar.
        for (force_scalar, avx512) in [(false, true), (false, false), (true, false)] {
            for bucketing in [false, true] {
                let mut options = PruneOptions::default();
                options.threads = threads;
                options.force_scalar = force_scalar;
                options.avx512 = avx512;
                options.bucketing = bucketing;
                // The coherent sort starts from the previous call's order (same scratch).
                options.coherent = threads == 2;
                let mut complete = Vec::new();
                complete_pairs_with(&boxes, &options, &mut scratch, &mut complete)
                    .expect("valid options");
                let mut bipartite = Vec::new();
                bipartite_pairs_with(left, right, &options, &mut scratch, &mut bipartite)
                    .expect("valid options");
                let mut sorted = complete.clone();
                sorted.sort_unstable();
                assert_eq!(sorted, expected_complete, "complete_pairs {options:?}");
                let mut sorted = bipartite.clone();
                sorted.sort_unstable();
                assert_eq!(sorted, expected_bipartite, "bipartite_pairs {options:?}");
                match &first[bucketing as usize] {
                    None => first[bucketing as usize] = Some((complete, bipartite)),
                    Some((c, b)) => {
                        assert_eq!(&complete, c, "order differs: {options:?}");
                        assert_eq!(&bipartite, b, "order differs: {options:?}");
                    }
                }
            }
        }
    }
    // Drift every box a little along x: the coherent sort finishes the previous order and must
    // give exactly what a fresh radix sort gives.
    let moved: Vec<Aabb> = boxes
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let d = Vec3::new(((i * 7919 + split) % 5) as f32 * 0.25 - 0.5, 0.0, 0.0);
            Aabb::new(b.min() + d, b.max() + d).unwrap_or(*b)
        })
        .collect();
    let mut coherent = PruneOptions::default();
    coherent.coherent = true;
    let (mut expected, mut got) = (Vec::new(), Vec::new());
    complete_pairs_with(
        &moved,
        &PruneOptions::default(),
        &mut PruneScratch::new(),
        &mut expected,
    )
    .expect("valid options");
    complete_pairs_with(&moved, &coherent, &mut scratch, &mut got).expect("valid options");
    assert_eq!(got, expected, "coherent sort after a drift");
});
