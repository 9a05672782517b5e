//! Warmed-up box pruning allocates nothing: counted by a global allocator, per thread.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use broadphase::prune::{bipartite_pairs_with, complete_pairs_with, PruneOptions, PruneScratch};
use broadphase::{Aabb, Vec3};

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; the counter is a plain thread-local cell.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|count| count.set(count.get() + 1));
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

fn boxes(n: usize, seed: u64) -> Vec<Aabb> {
    let mut rng = broadphase::verify::SplitMix64::new(seed);
    (0..n)
        .map(|_| {
            let c = Vec3::new(
                rng.range(0.0, 4096.0),
                rng.range(0.0, 4096.0),
                rng.range(0.0, 4096.0),
            );
            let h = Vec3::new(
                rng.range(0.0, 127.0),
                rng.range(0.0, 127.0),
                rng.range(0.0, 127.0),
            );
            Aabb::from_center_half_extents(c, h).unwrap()
        })
        .collect()
}

#[test]
fn warmed_up_calls_do_not_allocate() {
    let (a, b) = (boxes(5000, 1), boxes(3000, 2));
    let small = boxes(100, 3);
    for bucketing in [true, false] {
        for force_scalar in [false, true] {
            let mut options = PruneOptions::default();
            options.bucketing = bucketing;
            options.force_scalar = force_scalar;
            let mut scratch = PruneScratch::new();
            let mut pairs = Vec::new();
            // Warm up on the largest inputs.
            complete_pairs_with(&a, &options, &mut scratch, &mut pairs).unwrap();
            bipartite_pairs_with(&a, &b, &options, &mut scratch, &mut pairs).unwrap();
            let warmed = pairs.len();
            assert!(warmed > 0);
            let before = allocations();
            for input in [&a, &small, &b] {
                complete_pairs_with(input, &options, &mut scratch, &mut pairs).unwrap();
            }
            bipartite_pairs_with(&a, &b, &options, &mut scratch, &mut pairs).unwrap();
            assert_eq!(pairs.len(), warmed);
            assert_eq!(allocations(), before, "{options:?}");
        }
    }
}
