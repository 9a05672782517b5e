//! The spatial-partitioning algorithms do not allocate in the steady state: after a warm-up of
//! a periodic motion (400 steps; lists of reused cells and nodes may still grow during the first
//! tens of steps), further `set_aabb` + `update` steps reuse every buffer.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use broadphase::{create, Aabb, BroadPhase, CollisionFilter, PairEvents, ProxyKind, Vec3};

/// Counts allocations made by threads that opted in, then defers to the system allocator.
struct CountingAllocator;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

fn note_allocation() {
    if COUNTING.with(Cell::get) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards its arguments unchanged to `System`, which upholds the
// `GlobalAlloc` contract; the counting touches only an atomic and a const thread-local.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` through `alloc` or `realloc` above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_allocation();
        // SAFETY: `ptr` came from `System`; the caller upholds the size contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

#[test]
fn steady_state_steps_do_not_allocate() {
    for name in ["grid", "hgrid", "octree", "loose-octree", "masking"] {
        let mut bp = create(name, &Default::default()).unwrap();
        let mut ids = Vec::new();
        let mut base = Vec::new();
        for i in 0..600 {
            let (x, y, z) = (
                (i % 10) as f32 * 1.7,
                ((i / 10) % 10) as f32 * 1.7,
                (i / 100) as f32 * 1.7,
            );
            let half = Vec3::splat(0.3 + (i % 7) as f32 * 0.2);
            let center = Vec3::new(x, y, z);
            base.push((center, half));
            let aabb = Aabb::new(center - half, center + half).unwrap();
            ids.push(
                bp.insert(aabb, ProxyKind::Dynamic, CollisionFilter::ALL)
                    .unwrap(),
            );
        }
        let mut events = PairEvents::new();
        // A periodic motion: every box steps back and forth across cell and node boundaries.
        let step = |bp: &mut Box<dyn BroadPhase>, events: &mut PairEvents, phase: usize| {
            for (i, (&id, &(center, half))) in ids.iter().zip(&base).enumerate() {
                let offset = Vec3::new(0.9, -0.6, 0.45) * [0.0, 1.0, 0.0, -1.0][(phase + i) % 4];
                bp.set_aabb(
                    id,
                    Aabb::new(center + offset - half, center + offset + half).unwrap(),
                )
                .unwrap();
            }
            bp.update(events);
        };
        for phase in 0..400 {
            step(&mut bp, &mut events, phase);
        }
        ALLOCATIONS.store(0, Ordering::Relaxed);
        COUNTING.with(|c| c.set(true));
        for phase in 400..440 {
            step(&mut bp, &mut events, phase);
        }
        COUNTING.with(|c| c.set(false));
        let allocations = ALLOCATIONS.load(Ordering::Relaxed);
        assert!(bp.pair_count() > 0, "{name}: the scene has pairs");
        assert_eq!(
            allocations, 0,
            "{name} allocated {allocations} times in 40 steady-state steps"
        );
    }
}
