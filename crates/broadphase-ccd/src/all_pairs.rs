//! The baseline next-event finder: every pair and every wall at every event, O(n²) per event.

use crate::event::{earlier, Event};
use crate::simulation::event_from_key;
use crate::time_of_impact::{collision_key, pair_event_time_before, wall_event};
use crate::world::World;

/// Finds the next event by testing all `n (n - 1) / 2` pairs and all `n` bodies against the
/// walls (the "all pairs check" of [Kaya16]). O(n²) time per event, O(1) extra memory.
#[derive(Debug, Clone, Default)]
pub(crate) struct AllPairs {
    cached: Option<Event>,
}

impl AllPairs {
    pub(crate) fn new() -> Self {
        AllPairs::default()
    }

    pub(crate) fn peek(&mut self, world: &World) -> Option<Event> {
        if self.cached.is_none() {
            self.cached = Self::search(world);
        }
        self.cached
    }

    pub(crate) fn after_event(&mut self) {
        self.cached = None;
    }

    fn search(world: &World) -> Option<Event> {
        let n = world.len();
        let mut best_time = f64::INFINITY;
        let mut best_key = u64::MAX;
        for a in 0..n {
            if let Some((t, key)) = wall_event(world, a) {
                if earlier(t, key, best_time, best_key) {
                    (best_time, best_key) = (t, key);
                }
            }
            for b in a + 1..n {
                if let Some(t) = pair_event_time_before(world, a, b, best_time) {
                    let key = collision_key(a, b);
                    if earlier(t, key, best_time, best_key) {
                        (best_time, best_key) = (t, key);
                    }
                }
            }
        }
        (best_time < f64::INFINITY).then(|| event_from_key(best_time, best_key))
    }
}
