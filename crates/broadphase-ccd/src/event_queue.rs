//! Calendar queue holding exactly one predicted event per body: O(1) expected time per
//! update and per pop, where a heap pays O(log n) (a quarter of the event loop at 32,768
//! bodies in 2D with a tuned 4-ary heap).
//!
//! Time from an origin is cut into buckets of equal width; a body's event sits in the
//! doubly linked list of its bucket (arrays, no allocation after construction), or in an
//! overflow list beyond the last bucket. The earliest event is found by scanning the lowest
//! non-empty bucket, which holds a couple of events when the width fits the event rate. When
//! every bucket is empty the queue is rebuilt from the overflow list, the buckets about two
//! updates wide at the rate seen since the last layout (at the first layout, from the median
//! distance of the events from the earliest), so that they last about twice as many updates
//! as there are bodies: rebuilds cost O(1) per update. When scans grow long (the event rate
//! rose), every body is filed again at the current rate, at most once per n scans.

use crate::event::earlier;
use crate::linked_lists::NONE;

/// Scans between two checks for crowded buckets (at least; n when larger).
const CHECK_EVERY: u64 = 1024;
/// Bodies per scan, on average, past which the buckets are laid out again.
const CROWDED: u64 = 8;
/// Buckets after the current one searched for a guess at the next event.
const LOOK_AHEAD_BUCKETS: usize = 4;

/// The earliest event: its time, tie key and body.
#[derive(Debug, Clone, Copy)]
pub(crate) struct QueueTop {
    pub(crate) time: f64,
    pub(crate) key: u64,
    pub(crate) body: u32,
    /// A guess at the body whose event comes after this one (`NONE` for no guess): the
    /// earliest other body of the bucket, else the first body of one of the next few
    /// buckets. Right for about four events in five (32,768 bodies in 2D), so that the owner
    /// can start loading that body's records one event ahead.
    pub(crate) next: u32,
}

/// A body's entry: its event, its place in its bucket's doubly linked list, and the owner's
/// per-body data `P`, in one record, so that filing, unfiling, scanning and the owner's
/// prediction touch one cache line per body (64 bytes with up to 32 bytes of `P`) instead of
/// one per field.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
struct Entry<P> {
    time: f64,
    key: u64,
    /// The body after and before it in its list, or `NONE`.
    next: u32,
    prev: u32,
    /// Its bucket (`buckets` is the overflow list).
    bucket: u32,
    payload: P,
}

/// The size of a body's entry with payload `P`, for owners that size their payload to a
/// cache line.
pub(crate) const fn entry_bytes<P>() -> usize {
    std::mem::size_of::<Entry<P>>()
}

/// A calendar queue over `(time, key)`, one entry per body, each with the owner's data `P`.
#[derive(Debug, Clone)]
pub(crate) struct EventQueue<P = ()> {
    /// Per body: its event, list links and payload.
    entries: Vec<Entry<P>>,
    /// Per bucket, then the overflow list: its first body.
    head: Vec<u32>,
    buckets: usize,
    origin: f64,
    /// Events at or after this time go to the overflow list.
    limit: f64,
    inverse_width: f64,
    /// Every bucket below this one is empty.
    current: usize,
    /// Updates since the last layout, to fit the next layout to the event rate.
    updates: u64,
    /// Scans of the current bucket since the last check, and the bodies they visited: when
    /// buckets grow crowded (the event rate rose), the buckets are laid out again.
    scans: u64,
    scanned: u64,
    /// Scratch for the first layout's median.
    offsets: Vec<f64>,
}

impl<P: Copy + Default> EventQueue<P> {
    /// A queue of `n` bodies, all with no predicted event (time +∞) and the default payload.
    pub(crate) fn new(n: usize) -> Self {
        let buckets = n.next_power_of_two().max(64);
        let mut queue = EventQueue {
            entries: vec![
                Entry {
                    time: f64::INFINITY,
                    key: u64::MAX,
                    next: NONE,
                    prev: NONE,
                    bucket: buckets as u32,
                    payload: P::default(),
                };
                n
            ],
            head: vec![NONE; buckets + 1],
            buckets,
            origin: 0.0,
            limit: f64::NEG_INFINITY,
            inverse_width: 0.0,
            current: buckets,
            updates: 0,
            scans: 0,
            scanned: 0,
            offsets: Vec::with_capacity(n),
        };
        // Everything starts in the overflow list; the first `top` lays out the buckets.
        for body in (0..n as u32).rev() {
            queue.link(body, buckets);
        }
        queue
    }

    /// The earliest event (time +∞ when there is none).
    #[inline(always)]
    pub(crate) fn top(&mut self) -> QueueTop {
        loop {
            while self.current < self.buckets && self.head[self.current] == NONE {
                self.current += 1;
            }
            if self.current == self.buckets && !self.rebuild() {
                return QueueTop {
                    time: f64::INFINITY,
                    key: u64::MAX,
                    body: 0,
                    next: NONE,
                };
            }
            if self.current < self.buckets {
                let (top, visited) = self.earliest_in(self.current);
                self.scans += 1;
                self.scanned += visited;
                if self.scans >= CHECK_EVERY.max(self.entries.len() as u64) {
                    let crowded = self.scanned > CROWDED * self.scans;
                    (self.scans, self.scanned) = (0, 0);
                    if crowded {
                        self.relayout();
                        continue;
                    }
                }
                return top;
            }
        }
    }

    /// Body's payload.
    #[inline(always)]
    pub(crate) fn payload(&self, body: usize) -> &P {
        &self.entries[body].payload
    }

    /// Body's payload, to change.
    #[inline(always)]
    pub(crate) fn payload_mut(&mut self, body: usize) -> &mut P {
        &mut self.entries[body].payload
    }

    /// Starts loading body's entry into the cache (see [`crate::simd::prefetch`]).
    #[inline(always)]
    pub(crate) fn prefetch(&self, body: usize) {
        crate::simd::prefetch(&self.entries[body]);
    }

    /// Sets body's event and files it in its bucket.
    #[inline(always)]
    pub(crate) fn set(&mut self, body: usize, time: f64, key: u64) {
        self.unlink(body as u32);
        self.updates += 1;
        self.entries[body].time = time;
        self.entries[body].key = key;
        let bucket = self.bucket_of(time);
        self.link(body as u32, bucket);
    }

    /// The bucket for an event at `time`: by time, but never below `current` (an event
    /// predicted for a time already passed, by rounding, is due now).
    #[inline(always)]
    fn bucket_of(&self, time: f64) -> usize {
        if time < self.limit {
            // Monotone in `time`: a later event never lands in an earlier bucket.
            let bucket = ((time - self.origin) * self.inverse_width) as usize;
            bucket.min(self.buckets - 1).max(self.current)
        } else {
            self.buckets
        }
    }

    /// The earliest event of a non-empty bucket, and the number of bodies in it.
    #[inline(always)]
    fn earliest_in(&self, bucket: usize) -> (QueueTop, u64) {
        // `a` comes before `b` (any body comes before `NONE`).
        let before = |a: u32, b: u32| {
            let (x, y) = (&self.entries[a as usize], self.entries.get(b as usize));
            y.is_none_or(|y| earlier(x.time, x.key, y.time, y.key))
        };
        let mut body = self.head[bucket];
        let (mut best, mut second) = (body, NONE);
        let mut visited = 1;
        body = self.entries[body as usize].next;
        while body != NONE {
            visited += 1;
            if before(body, best) {
                (best, second) = (body, best);
            } else if before(body, second) {
                second = body;
            }
            body = self.entries[body as usize].next;
        }
        if second == NONE {
            let ahead = (bucket + 1)..(bucket + 1 + LOOK_AHEAD_BUCKETS).min(self.buckets);
            second = self.head[ahead]
                .iter()
                .copied()
                .find(|&first| first != NONE)
                .unwrap_or(NONE);
        }
        let top = QueueTop {
            time: self.entries[best as usize].time,
            key: self.entries[best as usize].key,
            body: best,
            next: second,
        };
        (top, visited)
    }

    /// Moves every body into the overflow list and lays the buckets out again, fitted to the
    /// event rate since the last layout. O(n), at most once per n scans.
    fn relayout(&mut self) {
        // Refiled in body order, reading the entries in order (see `rebuild`).
        self.head.fill(NONE);
        for body in 0..self.entries.len() {
            self.link(body as u32, self.buckets);
        }
        self.current = self.buckets;
    }

    /// Lays the buckets out again from the overflow list (every bucket is empty); `false`
    /// when it holds no finite event.
    fn rebuild(&mut self) -> bool {
        // Every bucket is empty, so every body is in the overflow list: the entries are read
        // in order rather than by following the list, whose random order would make each
        // step wait for a cache miss.
        let overflow = self.buckets;
        debug_assert!(self.entries.iter().all(|e| e.bucket as usize == overflow));
        let earliest = self
            .entries
            .iter()
            .fold(f64::INFINITY, |t, e| t.min(e.time));
        if earliest == f64::INFINITY {
            return false;
        }
        // Buckets about two updates wide at the rate since the last layout (events go on at
        // about that rate). At the first layout, buckets over four times the events' median
        // distance from the earliest (each body's next event about a mean free time away:
        // about one per bucket); a median, so that a few far events (a slow body's wall hit)
        // cannot stretch the buckets. Never of zero width.
        let elapsed = earliest - self.origin;
        let span = if self.updates > 0 && elapsed > 0.0 && self.limit.is_finite() {
            2.0 * elapsed / self.updates as f64 * self.buckets as f64
        } else {
            self.offsets.clear();
            for entry in &self.entries {
                if entry.time.is_finite() {
                    self.offsets.push(entry.time - earliest);
                }
            }
            let middle = self.offsets.len() / 2;
            let (_, median, _) = self.offsets.select_nth_unstable_by(middle, f64::total_cmp);
            4.0 * *median
        }
        .max(f64::MIN_POSITIVE * self.buckets as f64);
        self.updates = 0;
        self.origin = earliest;
        self.inverse_width = self.buckets as f64 / span;
        self.limit = earliest + span;
        if self.limit <= earliest {
            // The span vanished next to a huge time: every finite event goes to the current
            // bucket until the next layout.
            self.limit = f64::INFINITY;
            self.inverse_width = 0.0;
        }
        self.current = 0;
        self.head[overflow] = NONE;
        for body in 0..self.entries.len() {
            let bucket = self.bucket_of(self.entries[body].time);
            self.link(body as u32, bucket);
        }
        true
    }

    /// Puts `body` (in no list) first in `bucket`'s list.
    #[inline(always)]
    fn link(&mut self, body: u32, bucket: usize) {
        let first = self.head[bucket];
        let entry = &mut self.entries[body as usize];
        (entry.next, entry.prev, entry.bucket) = (first, NONE, bucket as u32);
        if first != NONE {
            self.entries[first as usize].prev = body;
        }
        self.head[bucket] = body;
    }

    /// Takes `body` out of its bucket's list.
    #[inline(always)]
    fn unlink(&mut self, body: u32) {
        let Entry {
            next, prev, bucket, ..
        } = self.entries[body as usize];
        if prev != NONE {
            self.entries[prev as usize].next = next;
        } else {
            self.head[bucket as usize] = next;
        }
        if next != NONE {
            self.entries[next as usize].prev = prev;
        }
    }

    /// Checks the bucket invariants and the lists (for tests): buckets below `current` are
    /// empty; a body in a later bucket has its time's bucket; overflow bodies are at or after
    /// `limit`; lists and `bucket` agree.
    #[cfg(test)]
    pub(crate) fn is_valid(&self) -> bool {
        let mut seen = 0;
        for bucket in 0..=self.buckets {
            let mut body = self.head[bucket];
            let mut previous = NONE;
            while body != NONE {
                let i = body as usize;
                let time = self.entries[i].time;
                let filed = if time < self.limit {
                    ((time - self.origin) * self.inverse_width) as usize
                } else {
                    self.buckets
                };
                // A body in the current bucket may have been filed there for a time already
                // passed; in a later one, it is its time's bucket; in the overflow list, at
                // or after the limit (or filed while every bucket was used up).
                let placed = if bucket == self.buckets {
                    filed == self.buckets || self.current == self.buckets
                } else if bucket == self.current {
                    filed.min(self.buckets - 1) <= bucket
                } else {
                    bucket > self.current && filed.min(self.buckets - 1) == bucket
                };
                let ok = self.entries[i].bucket as usize == bucket
                    && self.entries[i].prev == previous
                    && placed;
                if !ok {
                    return false;
                }
                seen += 1;
                previous = body;
                body = self.entries[body as usize].next;
            }
        }
        seen == self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Uniform numbers in `[0, 1)` from a linear congruential generator seeded with `seed`.
    fn uniform_from(seed: u64) -> impl FnMut() -> f64 {
        let mut state = seed;
        move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// A queue driven like the simulation (pop the earliest, schedule that body again a
    /// random while later), with one body's event far away (a median, not a mean, sizes the
    /// first layout) and the event rate rising a hundredfold halfway (crowded buckets are
    /// laid out again): the bucket scanned per pop stays short on average.
    #[test]
    fn buckets_stay_short_despite_a_far_event_and_a_rate_change() {
        let n = 4096;
        let mut queue = EventQueue::<()>::new(n);
        let mut uniform = uniform_from(7);
        queue.set(0, 1e9, 0);
        for body in 1..n {
            queue.set(body, uniform(), body as u64);
        }
        let (mut visited, mut pops) = (0u64, 0u64);
        let mut now = 0.0;
        for step in 0..200_000u64 {
            let top = queue.top();
            assert!(top.time >= now, "step {step}: time went back");
            now = top.time;
            visited += queue.earliest_in(queue.current).1;
            pops += 1;
            let scale = if step < 100_000 { 1.0 } else { 0.01 };
            queue.set(top.body as usize, top.time + uniform() * scale, step);
        }
        assert!(queue.is_valid());
        let mean = visited as f64 / pops as f64;
        assert!(mean < 4.0, "{mean} bodies per scanned bucket");
    }

    /// The guess at the next body: the runner-up of a crowded bucket (ties settled by the
    /// key), `NONE` with a single body, and right for most pops of a simulation-like run.
    #[test]
    fn next_is_the_runner_up_and_mostly_right() {
        let mut queue = EventQueue::<()>::new(5);
        // Filed first, scanned last (each body goes to the front of its bucket's list), so
        // that the earliest so far changes during the scan.
        for (body, (time, key)) in [(1.0, 1), (1.0, 2), (1.0 + 1e-12, 0), (1.0, 3), (1.0, 4)]
            .into_iter()
            .enumerate()
        {
            queue.set(body, time, key);
        }
        // Five events 1e-12 apart fill one bucket at the first layout.
        let top = queue.top();
        assert_eq!((top.body, top.next), (0, 1));
        let mut single = EventQueue::<()>::new(1);
        single.set(0, 1.0, 0);
        assert_eq!(single.top().next, NONE);

        let n = 4096;
        let mut queue = EventQueue::<()>::new(n);
        let mut uniform = uniform_from(99);
        for body in 0..n {
            queue.set(body, uniform(), body as u64);
        }
        let (mut guess, mut right) = (NONE, 0);
        let pops = 100_000u32;
        for step in 0..pops {
            let top = queue.top();
            right += u32::from(top.body == guess);
            guess = top.next;
            queue.set(top.body as usize, top.time + uniform(), u64::from(step));
        }
        assert!(right > pops / 2, "{right} of {pops} guesses right");
    }

    /// Against a model: random updates with ties, infinite times, times in the past of the
    /// current bucket, and pops that advance time like the simulation's.
    #[test]
    fn top_is_the_earliest_under_arbitrary_updates() {
        for n in [1, 2, 7, 50, 300] {
            let mut queue = EventQueue::<()>::new(n);
            let mut model = vec![(f64::INFINITY, u64::MAX); n];
            let mut state = 12345u64 + n as u64;
            let mut now = 0.0f64;
            for step in 0..4000u64 {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let body = (state >> 33) as usize % n;
                let time = match (state >> 20) % 10 {
                    0 => f64::INFINITY,
                    1 => now,
                    2 => now - 0.001, // rounding: due now
                    3 => now + 1000.0 * ((state >> 8) % 7) as f64,
                    _ => now + ((state >> 24) % 97) as f64 * 0.01,
                };
                queue.set(body, time, step % 5);
                model[body] = (time, step % 5);
                let top = queue.top();
                assert!(queue.is_valid(), "n {n} step {step}");
                let best = model
                    .iter()
                    .enumerate()
                    .min_by(|a, b| a.1 .0.total_cmp(&b.1 .0).then(a.1 .1.cmp(&b.1 .1)))
                    .unwrap();
                if best.1 .0.is_finite() {
                    assert_eq!(
                        (top.time, top.key),
                        (best.1 .0, best.1 .1),
                        "n {n} step {step}"
                    );
                    // Advance time to the popped event now and then, as events happen.
                    if step % 3 == 0 {
                        now = now.max(top.time);
                    }
                } else {
                    assert_eq!(top.time, f64::INFINITY);
                }
            }
        }
    }
}
