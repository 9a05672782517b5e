//! Trials: building a candidate on a sample of the boxes and timing it on the last step's
//! motion and churn, continued; and loading the winner of a round with every box.

use super::policy::traits;
use super::Adaptive;
use crate::registry::create_candidate;
use crate::{create, Aabb, AlgorithmOptions, BroadPhase, CollisionFilter, PairEvents, ProxyId};
use crate::{ProxyKind, Result};

/// An algorithm under trial, on a sample of the proxies, with the maps between its ids and
/// the adaptive broad phase's slots.
struct Inner {
    algorithm: Box<dyn BroadPhase>,
    /// Per outer slot: the inner id (meaningful for live outer slots).
    ids: Vec<ProxyId>,
    /// Per inner slot: the outer slot.
    outer: Vec<u32>,
}

impl Inner {
    fn insert(
        &mut self,
        outer_slot: usize,
        aabb: Aabb,
        kind: ProxyKind,
        filter: CollisionFilter,
    ) -> Result<()> {
        let id = self.algorithm.insert(aabb, kind, filter)?;
        if self.ids.len() <= outer_slot {
            self.ids
                .resize(outer_slot + 1, ProxyId::from_parts(u32::MAX, 0));
        }
        self.ids[outer_slot] = id;
        let inner_slot = id.index() as usize;
        if self.outer.len() <= inner_slot {
            self.outer.resize(inner_slot + 1, u32::MAX);
        }
        self.outer[inner_slot] = outer_slot as u32;
        Ok(())
    }
}

/// The proxies a round's trials run on.
pub(super) struct TrialSample {
    /// The sampled slots, ascending.
    pub(super) slots: Vec<u32>,
    /// Per slot: its position in `slots`, or [`OUTSIDE`]. Built once per round, so that a
    /// trial costs O(sample + moves), not O(proxies).
    pub(super) position: Vec<u32>,
}

/// [`TrialSample::position`] of a slot left out of the trials.
const OUTSIDE: u32 = u32::MAX;

impl TrialSample {
    pub(super) fn empty() -> Self {
        TrialSample {
            slots: Vec::new(),
            position: Vec::new(),
        }
    }

    /// The position of `slot` in the sample, if it is in it.
    #[inline]
    pub(super) fn position_of(&self, slot: usize) -> Option<usize> {
        match self.position.get(slot) {
            Some(&p) if p != OUTSIDE => Some(p as usize),
            _ => None,
        }
    }
}

/// The oldest "age", in steps of motion, given to a box when a trial is built.
const TRIAL_AGES: f32 = 16.0;

/// A number in [0, 1) that depends only on `x` (SplitMix64's finaliser).
fn spread(x: u64) -> f32 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 40) as f32 / (1u64 << 24) as f32
}

/// What a trial measured, in seconds scaled to every proxy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct TrialTime {
    /// The median step (or the one step or catch-up that showed the candidate hopeless).
    pub(super) step_seconds: f64,
    /// Building the candidate on every box.
    pub(super) build_seconds: f64,
}

impl Adaptive {
    /// Builds `name` on the current boxes, every proxy at once, numbered like the active
    /// algorithm's, and brings its pair set up to date: what a switch hands over. Its first
    /// events are dropped: the adaptive pair set already holds those pairs. `None` when
    /// `name` cannot be built with the same ids.
    pub(super) fn load(&self, name: &str) -> Option<Box<dyn BroadPhase>> {
        let mut algorithm = create_candidate(name, &AlgorithmOptions::default()).ok()?;
        let table = self.table();
        if !algorithm.mirror_ids(table) {
            return None;
        }
        for slot in table.live_slots() {
            let aabb = *table.aabb(slot);
            let id = algorithm
                .insert_keyed(aabb, table.kind(slot), table.filter(slot), table.key(slot))
                .ok()?;
            if id != table.id(slot) {
                return None; // mirror_ids broke its promise: keep the active algorithm
            }
        }
        // After the inserts: the boxes in the table are already fat.
        algorithm.set_fat_margin(self.fat_margin).ok()?;
        algorithm.set_pair_limit(self.pair_limit);
        algorithm.try_update(&mut PairEvents::new()).ok()?;
        Some(algorithm)
    }

    /// Times `name` on the current scene in steady state: builds it with every moved box
    /// set back along its last displacement by a spread of "ages" (0 to [`TRIAL_AGES`]
    /// steps, as if each had been moving that long since it was last reorganised: fat boxes
    /// then expire at their steady rate rather than all at once), moves every box to where
    /// it is now (untimed), then times five steps that continue the motion by the same
    /// displacement and insert again the proxies inserted during the last step (churn).
    /// Returns the median of the five, in seconds, scaled to every proxy.
    pub(super) fn trial(
        &self,
        name: &str,
        sample: &TrialSample,
        give_up: f64,
    ) -> Option<TrialTime> {
        let build_start = self.clock.seconds();
        let table = self.table();
        let mut inner = Inner {
            algorithm: create(name, &AlgorithmOptions::default()).ok()?,
            ids: Vec::new(),
            outer: Vec::new(),
        };
        // The sample holds fewer boxes than the scene, so the limit bounds its pairs too.
        inner.algorithm.set_pair_limit(self.pair_limit);
        // Per sampled proxy: its last displacement, and whether it was inserted last step.
        let m = sample.slots.len();
        let mut displacement: Vec<Option<crate::Vec3>> = vec![None; m];
        let mut is_new = vec![false; m];
        for &(slot, old) in &self.last_motion {
            let slot = slot as usize;
            if let Some(p) = sample.position_of(slot) {
                if table.is_live(slot) {
                    let new = table.aabb(slot);
                    displacement[p] = Some(new.center() - old.center());
                }
            }
        }
        let mut inserted = Vec::new();
        for &slot in &self.last_inserted {
            if let Some(p) = sample.position_of(slot as usize) {
                is_new[p] = true;
                inserted.push(slot as usize);
            }
        }
        // The sampled proxies that keep moving: slot and displacement.
        let moving: Vec<(usize, crate::Vec3)> = sample
            .slots
            .iter()
            .zip(&displacement)
            .zip(&is_new)
            .filter_map(|((&slot, d), &new)| match d {
                Some(d) if !new => Some((slot as usize, *d)),
                _ => None,
            })
            .collect();
        let at = |slot: usize, d: crate::Vec3, t: f32| -> Aabb {
            let now = *table.aabb(slot);
            Aabb::new(now.min() + d * t, now.max() + d * t).unwrap_or(now)
        };
        let mut sampled = 0usize;
        for (p, &slot) in sample.slots.iter().enumerate() {
            let slot = slot as usize;
            if !table.is_live(slot) {
                continue;
            }
            sampled += 1;
            if is_new[p] {
                continue;
            }
            let age = spread(slot as u64) * TRIAL_AGES;
            let aabb = match displacement[p] {
                Some(d) => at(slot, d, -age),
                None => *table.aabb(slot),
            };
            let (kind, filter) = (table.kind(slot), table.filter(slot));
            inner.insert(slot, aabb, kind, filter).ok()?;
        }
        let mut events = PairEvents::new();
        inner.algorithm.update(&mut events);
        // Proxies come and go during a round: scale by the count now.
        let scale = table.len() as f64 / sampled.max(1) as f64;
        let build = (self.clock.seconds() - build_start) * scale;
        // A region of m of the n boxes holds (m/n)^(2/3) as many box ends per unit of
        // length, and an endpoint sort's cost per move grows with the box ends it passes.
        let step_scale = if traits(name).sorts_endpoints {
            scale.powf(5.0 / 3.0)
        } else {
            scale
        };
        let catch_up_start = self.clock.seconds();
        for &(slot, d) in &moving {
            inner
                .algorithm
                .set_aabb(inner.ids[slot], at(slot, d, 0.0))
                .ok()?;
        }
        inner.algorithm.update(&mut events);
        // The catch-up carries the boxes over TRIAL_AGES / 2 steps of motion on average: an
        // algorithm for which it costs more than that many hopeless steps is hopeless.
        let catch_up = (self.clock.seconds() - catch_up_start) * step_scale;
        if catch_up > give_up * f64::from(TRIAL_AGES) / 2.0 {
            return Some(TrialTime {
                step_seconds: catch_up,
                build_seconds: build,
            });
        }
        let mut samples = [0.0f64; 5];
        for (k, sample) in samples.iter_mut().enumerate() {
            let start = self.clock.seconds();
            for &slot in &inserted {
                if k > 0 {
                    inner.algorithm.remove(inner.ids[slot]).ok()?;
                }
                let (aabb, kind, filter) =
                    (*table.aabb(slot), table.kind(slot), table.filter(slot));
                inner.insert(slot, aabb, kind, filter).ok()?;
            }
            for &(slot, d) in &moving {
                let target = at(slot, d, (k + 1) as f32);
                inner.algorithm.set_aabb(inner.ids[slot], target).ok()?;
            }
            inner.algorithm.update(&mut events);
            *sample = self.clock.seconds() - start;
            if k == 0 && *sample * step_scale > give_up {
                // Hopeless already: the rest of the samples would only confirm it.
                return Some(TrialTime {
                    step_seconds: *sample * step_scale,
                    build_seconds: build,
                });
            }
        }
        samples.sort_by(f64::total_cmp);
        Some(TrialTime {
            step_seconds: samples[2] * step_scale,
            build_seconds: build,
        })
    }

    /// The proxies of the next trials: all of them, or the `trial_proxies` whose centres are
    /// nearest (in the max norm) to the centre of a typical proxy: a cube of the scene where
    /// its proxies are, at their local density, whatever the scene's shape (a layer on the
    /// ground, a cluster). O(n), once per round; each trial then costs O(sample + moves).
    pub(super) fn trial_sample(&self) -> TrialSample {
        let table = self.table();
        let n = table.len();
        let wanted = self.options.trial_proxies.max(1);
        let live: Vec<usize> = table.live_slots().collect();
        let mut sample = TrialSample::empty();
        sample.position = vec![OUTSIDE; table.slot_count()];
        if n <= 2 * wanted {
            sample.slots.extend(live.iter().map(|&slot| slot as u32));
        } else {
            let seed = table.aabb(live[live.len() / 2]).center();
            let distance = |slot: usize| (table.aabb(slot).center() - seed).abs().max_element();
            let mut distances: Vec<f32> = live.iter().map(|&slot| distance(slot)).collect();
            let (_, &mut radius, _) = distances.select_nth_unstable_by(wanted - 1, f32::total_cmp);
            sample.slots.extend(
                live.iter()
                    .filter(|&&slot| distance(slot) <= radius)
                    .map(|&slot| slot as u32),
            );
        }
        for (p, &slot) in sample.slots.iter().enumerate() {
            sample.position[slot as usize] = p as u32;
        }
        sample
    }
}
