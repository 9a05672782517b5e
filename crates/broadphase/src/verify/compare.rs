//! The comparisons: after an update, each algorithm's pair set, events and proxy count
//! against the model; on request, its box queries and ray casts.

use super::model::key_of;
use super::report::describe_difference;
use super::Verifier;
use crate::{Aabb, CollisionFilter, Pair, ProxyId, Ray, RayHit};

impl Verifier {
    /// The sorted handle pairs of algorithm `k`'s `pairs`, and the first pair whose keys are
    /// not those its proxies were inserted with.
    fn handle_pairs(&self, k: usize, pairs: &[Pair]) -> (Vec<(u32, u32)>, Option<String>) {
        let slots = &self.handles_by_slot[k];
        let handle = |id: ProxyId| slots.get(id.index() as usize).copied().unwrap_or(u32::MAX);
        let mut wrong_key = None;
        let mut out: Vec<_> = pairs
            .iter()
            .map(|p| {
                let (ha, hb) = (handle(p.a), handle(p.b));
                if wrong_key.is_none() && (p.key_a, p.key_b) != (key_of(ha), key_of(hb)) {
                    wrong_key = Some(format!(
                        "pair ({ha}, {hb}) has keys ({}, {}), inserted with ({}, {})",
                        p.key_a,
                        p.key_b,
                        key_of(ha),
                        key_of(hb)
                    ));
                }
                (ha.min(hb), ha.max(hb))
            })
            .collect();
        out.sort_unstable();
        (out, wrong_key)
    }

    /// Updates every algorithm and compares pair sets and events with the exact model (on
    /// the updates selected by [`Verifier::set_check_every`]).
    pub fn update(&mut self) {
        if self.check_every > 1 && self.report.steps % self.check_every > 1 {
            for k in 0..self.algorithms.len() {
                self.lost[k] = self.algorithms[k].try_update(&mut self.events).is_err();
            }
            self.previous_valid = false;
            self.silent.clear();
            self.again.clear();
            self.report.steps += 1;
            return;
        }
        let expected = self.exact_pairs();
        let check_events = self.previous_valid;
        // Begun: the new pairs, and every pair of a proxy asked to report its pairs again.
        // Ended: the pairs gone, but for those of proxies removed without events.
        let again = std::mem::take(&mut self.again);
        let silent = std::mem::take(&mut self.silent);
        let expected_begun: Vec<_> = expected
            .iter()
            .filter(|&&(a, b)| {
                !self.previous.contains(&(a, b)) || again.contains(&a) || again.contains(&b)
            })
            .copied()
            .collect();
        let expected_ended: Vec<_> = self
            .previous
            .difference(&expected)
            .filter(|(a, b)| !silent.contains(a) && !silent.contains(b))
            .copied()
            .collect();
        let all_begun: Vec<_> = expected.iter().copied().collect();
        // With a limit: the pairs of the boxes alone (no filters, static pairs included),
        // which an algorithm may count against the limit before filtering.
        let box_pairs = self.pair_limit.map(|_| self.box_pair_count());
        let mut pairs = Vec::new();
        for k in 0..self.algorithms.len() {
            let mut events = std::mem::take(&mut self.events);
            let result = self.algorithms[k].try_update(&mut events);
            let name = self.algorithms[k].name();
            if let Some(limit) = self.pair_limit {
                let over = expected.len() > limit;
                self.check(!over || result.is_err(), || {
                    format!(
                        "{name}: {} pairs over the limit {limit}, update Ok",
                        expected.len()
                    )
                });
                // Leaf boxes enlarged by a margin (dynamic-tree, and adaptive when it runs
                // it) overlap in more pairs than the boxes, and count against the limit.
                let enlarged = matches!(name, "dynamic-tree" | "adaptive");
                let refused = result.is_err();
                self.check(!refused || enlarged || box_pairs > Some(limit), || {
                    format!("{name}: refused {box_pairs:?} box pairs under the limit {limit}")
                });
                if refused {
                    let empty = events.is_empty() && self.algorithms[k].pair_count() == 0;
                    self.check(empty, || {
                        format!("{name}: a refused update left pairs or events")
                    });
                    self.lost[k] = true;
                    self.report.refused += 1;
                    self.events = events;
                    continue;
                }
            }
            let (expected_begun, expected_ended) = if self.lost[k] {
                (&all_begun, &Vec::new())
            } else {
                (&expected_begun, &expected_ended)
            };
            let check_events = check_events || self.lost[k];
            self.lost[k] = false;
            let (begun, wrong_begun) = self.handle_pairs(k, &events.begun);
            let (ended, wrong_ended) = self.handle_pairs(k, &events.ended);
            self.events = events;
            for wrong in [wrong_begun, wrong_ended] {
                self.check(wrong.is_none(), || format!("{name}: event {wrong:?}"));
            }
            self.check(!check_events || &begun == expected_begun, || {
                format!(
                    "{name}: begun events differ: {}",
                    describe_difference(&begun, expected_begun)
                )
            });
            self.check(!check_events || &ended == expected_ended, || {
                format!(
                    "{name}: ended events differ: {}",
                    describe_difference(&ended, expected_ended)
                )
            });
            self.algorithms[k].pairs(&mut pairs);
            let (listed, wrong) = self.handle_pairs(k, &pairs);
            self.check(wrong.is_none(), || format!("{name}: listed {wrong:?}"));
            let expected_list: Vec<_> = expected.iter().copied().collect();
            self.check(listed == expected_list, || {
                format!(
                    "{name}: pair set differs: {}",
                    describe_difference(&listed, &expected_list)
                )
            });
            let count = self.algorithms[k].len();
            let live = self.live.len();
            self.check(count == live, || {
                format!("{name}: len() is {count}, expected {live}")
            });
        }
        self.previous = expected;
        self.previous_valid = true;
        self.report.steps += 1;
    }

    /// Pairs of live boxes that overlap, whatever their kinds and filters.
    fn box_pair_count(&self) -> usize {
        let boxes: Vec<Aabb> = self
            .live
            .iter()
            .map(|&h| self.model[h as usize].expect("live handle").aabb)
            .collect();
        let mut count = 0;
        for (i, a) in boxes.iter().enumerate() {
            count += boxes[i + 1..].iter().filter(|b| a.overlaps(b)).count();
        }
        count
    }

    /// Compares a box query and a ray cast of every algorithm with the model.
    pub fn check_queries(&mut self, query: &Aabb, ray: &Ray, filter: CollisionFilter) {
        let mut expected_boxes: Vec<u32> = Vec::new();
        let mut expected_hits: Vec<(f32, u32)> = Vec::new();
        for &h in &self.live {
            let p = self.model[h as usize].expect("live handle");
            if !p.filter.allows(filter) {
                continue;
            }
            if p.aabb.overlaps(query) {
                expected_boxes.push(h);
            }
            if let Some(d) = ray.hit_distance(&p.aabb) {
                expected_hits.push((d, h));
            }
        }
        expected_boxes.sort_unstable();
        expected_hits.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut ids = Vec::new();
        let mut hits: Vec<RayHit> = Vec::new();
        for k in 0..self.algorithms.len() {
            let name = self.algorithms[k].name();
            self.algorithms[k].query_aabb(query, filter, &mut ids);
            let mut got: Vec<u32> = ids
                .iter()
                .map(|id| self.handles_by_slot[k][id.index() as usize])
                .collect();
            got.sort_unstable();
            self.check(got == expected_boxes, || {
                format!("{name}: query_aabb {got:?} != {expected_boxes:?}")
            });
            self.algorithms[k].raycast(ray, filter, &mut hits);
            let mut got: Vec<(f32, u32)> = hits
                .iter()
                .map(|hit| {
                    (
                        hit.distance,
                        self.handles_by_slot[k][hit.id.index() as usize],
                    )
                })
                .collect();
            // Equal distances may come in slot order, which differs from handle order.
            got.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            self.check(got == expected_hits, || {
                format!("{name}: raycast {got:?} != {expected_hits:?}")
            });
            let closest = self.algorithms[k].raycast_closest(ray, filter);
            let expected_distance = expected_hits.first().map(|h| h.0);
            self.check(closest.map(|h| h.distance) == expected_distance, || {
                format!(
                    "{name}: raycast_closest {closest:?}, expected distance {expected_distance:?}"
                )
            });
        }
    }
}
