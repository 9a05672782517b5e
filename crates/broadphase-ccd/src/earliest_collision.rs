//! The earliest collision of a body with its neighbours, for the event calendar: which
//! neighbours approach it (the only ones that can collide with it) and when they touch it.
//!
//! The arithmetic is that of `motion_pair_time_before` for the pair in either order (swapping
//! the pair negates `dp` and `dv` exactly, which leaves every dot product unchanged; taking a
//! state already at `t0` as `p + 0 v` only changes the sign of a zero, which `< 0` and the
//! quadratic ignore), so the times are bit-identical to every other method's.
//!
//! Two kernels give the same result. The scalar one filters the approaching neighbours into
//! arrays without a branch, then solves their quadratics one at a time. The AVX2 one does the
//! same operations in the same order on four neighbours at a time (no fused multiply-add), the
//! quadratic included: solving it for all four lanes costs one vector division and one square
//! root, where solving only the approaching ones cost a compaction, its stores and a
//! mispredicted branch or two per neighbour. Only lanes whose time does not exceed the best so
//! far go through the scalar tie rule.

use crate::event::earlier;
use crate::linked_lists::NONE;
use crate::time_of_impact::{collision_key, impact_time_before};
use crate::vector::{dot, mul_add, sub, Vec3};
use crate::world::{Motion, World};

/// Entries past the neighbours the AVX2 kernel reads (which it overwrites), and entries the
/// scalar filter may write past its candidates: the neighbour list and [`Candidates`] must hold
/// this many more entries than there are bodies.
pub(crate) const FILTER_SLACK: usize = 4;

/// A body's earliest event found so far: its time, its tie key, and for a collision found by
/// [`CollisionSearch::earliest`], the partner (else [`NONE`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Earliest {
    pub(crate) time: f64,
    pub(crate) key: u64,
    pub(crate) partner: u32,
}

impl Earliest {
    /// The event `(time, key)`, found elsewhere (no partner).
    pub(crate) fn new(time: f64, key: u64) -> Self {
        Earliest {
            time,
            key,
            partner: NONE,
        }
    }

    /// Takes the collision with `partner` at `time` (tie key `key`) if it comes first.
    #[inline(always)]
    fn offer(&mut self, time: f64, key: u64, partner: u32) {
        if earlier(time, key, self.time, self.key) {
            *self = Earliest { time, key, partner };
        }
    }
}

/// Approaching neighbours, as arrays (the scalar kernel's): pair `k` has the quadratic
/// `a t^2 + 2 b t + c` in time after `t0[k]` (`b = dp·dv < 0`, `c = |dp|^2 - s^2`,
/// `a = |dv|^2`) with body `body[k]`.
#[derive(Debug, Clone)]
struct Candidates {
    t0: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
    a: Vec<f64>,
    body: Vec<u32>,
}

impl Candidates {
    /// Entries of the shortest of the five arrays (they are built equally long).
    fn len(&self) -> usize {
        [
            self.t0.len(),
            self.b.len(),
            self.c.len(),
            self.a.len(),
            self.body.len(),
        ]
        .into_iter()
        .min()
        .unwrap_or(0)
    }

    /// Room for the neighbours of one body among `n`.
    fn new(n: usize) -> Self {
        let len = n + FILTER_SLACK;
        Candidates {
            t0: vec![0.0; len],
            b: vec![0.0; len],
            c: vec![0.0; len],
            a: vec![0.0; len],
            body: vec![0; len],
        }
    }
}

/// The kernel that finds a body's earliest collision with its neighbours, and its scratch
/// space (no allocation per call).
#[derive(Debug, Clone)]
pub(crate) struct CollisionSearch {
    /// Whether the AVX2 kernel runs (the CPU has it and the caller allows it).
    avx2: bool,
    /// The scalar kernel's approaching neighbours.
    candidates: Candidates,
}

impl CollisionSearch {
    /// The search among the neighbours of one body of `n`; `simd` allows the AVX2 kernel
    /// where the CPU has it.
    pub(crate) fn new(n: usize, simd: bool) -> Self {
        let avx2 = simd && crate::simd::avx2_available();
        CollisionSearch {
            avx2,
            candidates: Candidates::new(if avx2 { 0 } else { n }),
        }
    }

    /// The earlier of `best` and body `i`'s earliest collision with the first `found` bodies
    /// of `neighbours`. `latest` is the latest motion-state time of any body: when `i`'s
    /// state is at it, `t0` is always `i`'s time and its position needs no advancing, the
    /// common case right after an event, with its own loop. The [`FILTER_SLACK`] entries of
    /// `neighbours` after the first `found` are overwritten.
    ///
    /// Both kernels return the same event: the minimum of `(time, key)` does not depend on
    /// the order in which the pairs are offered.
    ///
    /// With `INLINE_AVX2`, the AVX2 kernel is inlined into the caller, for callers compiled
    /// for AVX2 (a call costs its prologue, epilogue and the passing of the result through
    /// memory; in code not compiled for AVX2 each intrinsic would be a call instead).
    #[inline(always)]
    pub(crate) fn earliest<const INLINE_AVX2: bool>(
        &mut self,
        world: &World,
        i: usize,
        latest: f64,
        neighbours: &mut [u32],
        found: usize,
        best: Earliest,
    ) -> Earliest {
        let (motion, dim) = (&world.motion[..], world.dim);
        let from_latest = motion[i].time == latest;
        // Start loading every neighbour's record at once: the kernels read them a group at a
        // time, and each group's loads would otherwise wait behind the arithmetic before it.
        for &j in &neighbours[..found] {
            crate::simd::prefetch_address(motion.as_ptr().wrapping_add(j as usize));
        }
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // Pad the last group of four with `i` itself: `dp = dv = 0`, so `b = 0` is not
            // approaching and the padding never collides.
            neighbours[found..found + FILTER_SLACK].fill(i as u32);
            let groups = &neighbours[..found.div_ceil(4) * 4];
            // SAFETY: `avx2` is only set where `avx2_available`.
            return unsafe {
                match (INLINE_AVX2, dim) {
                    (true, 2) => earliest_avx2_inlined::<2>(motion, i, from_latest, groups, best),
                    (true, _) => earliest_avx2_inlined::<3>(motion, i, from_latest, groups, best),
                    (false, 2) => earliest_avx2::<2>(motion, i, from_latest, groups, best),
                    (false, _) => earliest_avx2::<3>(motion, i, from_latest, groups, best),
                }
            };
        }
        let scratch = &mut self.candidates;
        let neighbours = &neighbours[..found];
        let count = if dim == 2 {
            approaching_scalar::<2>(motion, i, from_latest, neighbours, scratch)
        } else {
            approaching_scalar::<3>(motion, i, from_latest, neighbours, scratch)
        };
        earliest_of_candidates(i, scratch, count, best)
    }
}

/// The earlier of `best` and the collisions with the first `count` approaching pairs of
/// `candidates`, one quadratic at a time.
fn earliest_of_candidates(
    i: usize,
    candidates: &Candidates,
    count: usize,
    mut best: Earliest,
) -> Earliest {
    for k in 0..count {
        let time = impact_time_before(
            candidates.t0[k],
            candidates.b[k],
            candidates.c[k],
            || candidates.a[k],
            best.time,
        );
        if let Some(time) = time {
            let j = candidates.body[k];
            best.offer(time, collision_key(i.min(j as usize), i.max(j as usize)), j);
        }
    }
    best
}

/// The scalar kernel's filter: writes into the first entries of `out` the `neighbours` that
/// approach body `i`, with their quadratics' coefficients, and returns their number. In `D`
/// dimensions: in 2D the `z` components are all zero, and leaving out their zero terms
/// changes no sum but the sign of a zero.
///
/// The filter is branch free (every neighbour is written, the count advances by the test),
/// so the coin-flip approach test costs no branch mispredictions.
#[inline(always)]
fn approaching_scalar<const D: usize>(
    motion: &[Motion],
    i: usize,
    from_latest: bool,
    neighbours: &[u32],
    out: &mut Candidates,
) -> usize {
    let mi = &motion[i];
    // `push` writes at `count`, which is at most the number of neighbours done so far.
    assert!(neighbours.len() <= out.len());
    let mut count = 0;
    if from_latest {
        let (pi, ti, vi, ri) = (mi.position, mi.time, mi.velocity, mi.radius);
        for &j in neighbours {
            let mj = &motion[j as usize];
            let dp = sub_in::<D>(mul_add_in::<D>(mj.position, ti - mj.time, mj.velocity), pi);
            let dv = sub_in::<D>(mj.velocity, vi);
            // SAFETY: `count` is at most the neighbours done before this one, so below
            // `neighbours.len() <= out.len()` (asserted above).
            count = unsafe { push::<D>(out, count, ti, dp, dv, ri + mj.radius, j) };
        }
    } else {
        for &j in neighbours {
            let mj = &motion[j as usize];
            let t0 = mi.time.max(mj.time);
            let pi = mul_add_in::<D>(mi.position, t0 - mi.time, mi.velocity);
            let pj = mul_add_in::<D>(mj.position, t0 - mj.time, mj.velocity);
            let dp = sub_in::<D>(pj, pi);
            let dv = sub_in::<D>(mj.velocity, mi.velocity);
            // SAFETY: as above.
            count = unsafe { push::<D>(out, count, t0, dp, dv, mi.radius + mj.radius, j) };
        }
    }
    count
}

/// Writes the pair with body `j` (relative position `dp` and velocity `dv` at `t0`, contact
/// distance `s`) at `count` and returns the count advanced if it is approaching.
///
/// Unchecked writes, as this runs for every neighbour of every prediction and five bounds
/// checks per neighbour are a visible share of the scalar calendar's work.
///
/// # Safety
/// `count < out.len()`.
#[inline(always)]
unsafe fn push<const D: usize>(
    out: &mut Candidates,
    count: usize,
    t0: f64,
    dp: Vec3,
    dv: Vec3,
    s: f64,
    j: u32,
) -> usize {
    let b = dot_in::<D>(dp, dv);
    debug_assert!(count < out.len());
    // SAFETY: `count < out.len()`, the length of the shortest array (the caller's obligation).
    unsafe {
        *out.t0.get_unchecked_mut(count) = t0;
        *out.b.get_unchecked_mut(count) = b;
        *out.c.get_unchecked_mut(count) = dot_in::<D>(dp, dp) - s * s;
        *out.a.get_unchecked_mut(count) = dot_in::<D>(dv, dv);
        *out.body.get_unchecked_mut(count) = j;
    }
    count + usize::from(b < 0.0)
}

/// `a - b` on the first `D` components (the others zero).
#[inline(always)]
fn sub_in<const D: usize>(a: Vec3, b: Vec3) -> Vec3 {
    if D == 3 {
        sub(a, b)
    } else {
        [a[0] - b[0], a[1] - b[1], 0.0]
    }
}

/// `a · b` on the first `D` components: in 2D the same sum as [`dot`] without its zero
/// `z` term, `(x + y) + 0 = x + y` (up to the sign of a zero).
#[inline(always)]
fn dot_in<const D: usize>(a: Vec3, b: Vec3) -> f64 {
    if D == 3 {
        dot(a, b)
    } else {
        a[0] * b[0] + a[1] * b[1]
    }
}

/// `a + s b` on the first `D` components (the others zero).
#[inline(always)]
fn mul_add_in<const D: usize>(a: Vec3, s: f64, b: Vec3) -> Vec3 {
    if D == 3 {
        mul_add(a, s, b)
    } else {
        [a[0] + s * b[0], a[1] + s * b[1], 0.0]
    }
}

/// [`CollisionSearch::earliest`] on four neighbours at a time: their motion records (one
/// cache line each: position and time, then velocity and radius) are loaded as eight vectors
/// and transposed, and the approach test and the quadratic of [`approaching_scalar`] and
/// [`impact_time_before`] run lane-wise. Lanes that collide no later than the best event so
/// far (rarely more than one per call) are offered to it in lane order.
///
/// `neighbours` holds whole groups of four; the padding of the last one must be `i` (not
/// approaching itself).
///
/// `impact_time_before`'s early exit (a lower bound on the time beyond the best so far) is
/// left out: the time it would skip is later than the best, so `offer` rejects it anyway.
///
/// # Safety
/// The CPU must have AVX2 and POPCNT.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
unsafe fn earliest_avx2<const D: usize>(
    motion: &[Motion],
    i: usize,
    from_latest: bool,
    neighbours: &[u32],
    best: Earliest,
) -> Earliest {
    // SAFETY: this function is compiled for AVX2 and POPCNT, which the caller guarantees.
    unsafe { earliest_avx2_inlined::<D>(motion, i, from_latest, neighbours, best) }
}

/// The body of [`earliest_avx2`], to be inlined into code compiled for AVX2.
///
/// # Safety
/// The CPU must have AVX2 and POPCNT. The caller should be compiled for them: elsewhere every
/// intrinsic is a call (correct, but slow).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn earliest_avx2_inlined<const D: usize>(
    motion: &[Motion],
    i: usize,
    from_latest: bool,
    neighbours: &[u32],
    mut best: Earliest,
) -> Earliest {
    use std::arch::x86_64::*;

    /// The two halves of a motion record: `(x, y, z, time)` of the position and
    /// `(x, y, z, radius)` of the velocity.
    #[inline(always)]
    fn halves(m: &Motion) -> (__m256d, __m256d) {
        let record = (m as *const Motion).cast::<f64>();
        // SAFETY: `Motion` is `repr(C)`, 64 bytes of eight `f64` in that order; the pointer
        // is derived from the whole record; unaligned loads need no alignment. The caller
        // has AVX2 (this is only inlined into `earliest_avx2_inlined`).
        unsafe { (_mm256_loadu_pd(record), _mm256_loadu_pd(record.add(4))) }
    }

    /// Transposes four rows of four lanes into four columns.
    #[inline(always)]
    fn transpose(r0: __m256d, r1: __m256d, r2: __m256d, r3: __m256d) -> [__m256d; 4] {
        // SAFETY: register operations; the caller has AVX2.
        unsafe {
            let t0 = _mm256_unpacklo_pd(r0, r1);
            let t1 = _mm256_unpackhi_pd(r0, r1);
            let t2 = _mm256_unpacklo_pd(r2, r3);
            let t3 = _mm256_unpackhi_pd(r2, r3);
            [
                _mm256_permute2f128_pd(t0, t2, 0x20),
                _mm256_permute2f128_pd(t1, t3, 0x20),
                _mm256_permute2f128_pd(t0, t2, 0x31),
                _mm256_permute2f128_pd(t1, t3, 0x31),
            ]
        }
    }

    let mi = &motion[i];
    // SAFETY: the intrinsics below are register operations, available as the caller
    // guarantees AVX2; the loads go through `halves` and the one store into a local array.
    unsafe {
        // Arrays written out rather than built by `array::map`, which the inliner leaves as a
        // call once this kernel is inlined into the event loop.
        let broadcast = |v: [f64; 3]| {
            [
                _mm256_set1_pd(v[0]),
                _mm256_set1_pd(v[1]),
                _mm256_set1_pd(v[2]),
            ]
        };
        let (p_i, v_i) = (broadcast(mi.position), broadcast(mi.velocity));
        let (t_i, r_i) = (_mm256_set1_pd(mi.time), _mm256_set1_pd(mi.radius));
        let zero = _mm256_setzero_pd();
        let infinity = _mm256_set1_pd(f64::INFINITY);
        let dot = |a: [__m256d; 3], b: [__m256d; 3]| {
            let xy = _mm256_add_pd(_mm256_mul_pd(a[0], b[0]), _mm256_mul_pd(a[1], b[1]));
            if D == 3 {
                _mm256_add_pd(xy, _mm256_mul_pd(a[2], b[2]))
            } else {
                xy
            }
        };
        // `a + s b` per component.
        let mul_add = |a: [__m256d; 3], s: __m256d, b: [__m256d; 3]| {
            [
                _mm256_add_pd(a[0], _mm256_mul_pd(s, b[0])),
                _mm256_add_pd(a[1], _mm256_mul_pd(s, b[1])),
                _mm256_add_pd(a[2], _mm256_mul_pd(s, b[2])),
            ]
        };
        let sub = |a: [__m256d; 3], b: [__m256d; 3]| {
            [
                _mm256_sub_pd(a[0], b[0]),
                _mm256_sub_pd(a[1], b[1]),
                _mm256_sub_pd(a[2], b[2]),
            ]
        };
        for ids in neighbours.chunks_exact(4) {
            let records = [
                halves(&motion[ids[0] as usize]),
                halves(&motion[ids[1] as usize]),
                halves(&motion[ids[2] as usize]),
                halves(&motion[ids[3] as usize]),
            ];
            let [px, py, pz, t_j] =
                transpose(records[0].0, records[1].0, records[2].0, records[3].0);
            let [vx, vy, vz, r_j] =
                transpose(records[0].1, records[1].1, records[2].1, records[3].1);
            let (p_j, v_j) = ([px, py, pz], [vx, vy, vz]);
            let (t0, dp) = if from_latest {
                let p_j = mul_add(p_j, _mm256_sub_pd(t_i, t_j), v_j);
                (t_i, sub(p_j, p_i))
            } else {
                // `f64::max` and `max_pd` agree on the non-NaN times (up to the sign of a
                // zero time, which only `t0 - t` sees, as a zero).
                let t0 = _mm256_max_pd(t_i, t_j);
                let p_i = mul_add(p_i, _mm256_sub_pd(t0, t_i), v_i);
                let p_j = mul_add(p_j, _mm256_sub_pd(t0, t_j), v_j);
                (t0, sub(p_j, p_i))
            };
            let dv = sub(v_j, v_i);
            let b = dot(dp, dv);
            let s = _mm256_add_pd(r_i, r_j);
            let c = _mm256_sub_pd(dot(dp, dp), _mm256_mul_pd(s, s));
            let a = dot(dv, dv);
            // `impact_time_before`: touching (`c <= 0`) now, else the smaller root when the
            // discriminant is positive and the time finite. `-b + sqrt` is `sqrt - b` exactly.
            let disc = _mm256_sub_pd(_mm256_mul_pd(b, b), _mm256_mul_pd(a, c));
            let root = _mm256_add_pd(t0, _mm256_div_pd(c, _mm256_sub_pd(_mm256_sqrt_pd(disc), b)));
            let touching = _mm256_cmp_pd(c, zero, _CMP_LE_OQ);
            let hits = _mm256_and_pd(
                _mm256_cmp_pd(disc, zero, _CMP_GT_OQ),
                _mm256_cmp_pd(root, infinity, _CMP_LT_OQ),
            );
            let time = _mm256_blendv_pd(root, t0, touching);
            let collides = _mm256_and_pd(
                _mm256_cmp_pd(b, zero, _CMP_LT_OQ),
                _mm256_or_pd(touching, hits),
            );
            // Ties in time are settled by the key, so lanes equal to the best are offered too.
            let early = _mm256_cmp_pd(time, _mm256_set1_pd(best.time), _CMP_LE_OQ);
            let mut lanes = _mm256_movemask_pd(_mm256_and_pd(collides, early)) as u32 & 15;
            if lanes != 0 {
                let mut times = [0.0; 4];
                _mm256_storeu_pd(times.as_mut_ptr(), time);
                while lanes != 0 {
                    let lane = lanes.trailing_zeros() as usize;
                    lanes &= lanes - 1;
                    let j = ids[lane];
                    let key = collision_key(i.min(j as usize), i.max(j as usize));
                    best.offer(times[lane], key, j);
                }
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::{Body, MassModel};

    /// A body at the centre of a lattice of neighbours, with velocities and state times drawn
    /// from small sets so that pairs touch now (`c <= 0`), graze, miss, and collide at equal
    /// times (ties settled by the key): both kernels find the same event, bit for bit, and
    /// the same one a pair-by-pair search finds.
    #[test]
    fn kernels_agree_on_lattices_with_ties_and_contacts() {
        let mut state = 7u64;
        let mut next = |k: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % k
        };
        let (mut ties, mut contacts, mut found) = (0, 0, 0);
        for round in 0..3000 {
            let dim = 2 + (round % 2) as usize;
            let neighbours = 1 + next(13) as usize;
            let mut bodies = vec![Body::new([4.0; 3], [0.0; 3], 0.25, MassModel::Equal, dim)];
            let mut taken = vec![[0i64; 3]];
            while bodies.len() <= neighbours {
                let cell = [0, 1, 2].map(|k| if k < dim { next(7) as i64 - 3 } else { 0 });
                if taken.contains(&cell) {
                    continue;
                }
                taken.push(cell);
                // Lattice spacing 0.5 is the contact distance: axis neighbours touch.
                let position = cell.map(|c| 4.0 + 0.5 * c as f64);
                let velocity = [0, 1, 2].map(|k| {
                    if k < dim {
                        [-1.0, -0.5, 0.0, 0.5, 1.0][next(5) as usize]
                    } else {
                        0.0
                    }
                });
                bodies.push(Body::new(position, velocity, 0.25, MassModel::Equal, dim));
            }
            let mut world = World::new(dim, [8.0; 3], &bodies).unwrap();
            // States at different times: advanced exactly (times and speeds are dyadic).
            let latest = 0.25 * next(3) as f64;
            for (i, m) in world.motion.iter_mut().enumerate() {
                let t = if i == 0 || next(2) == 0 { latest } else { 0.0 };
                m.position = [0, 1, 2].map(|k| m.position[k] + t * m.velocity[k]);
                m.time = t;
            }
            let ids: Vec<u32> = (1..bodies.len() as u32).collect();
            let bound = [f64::INFINITY, 0.5, latest][next(3) as usize];
            let start = Earliest::new(bound, u64::MAX);
            let mut results = Vec::new();
            for simd in [false, true] {
                let mut list = ids.clone();
                list.resize(ids.len() + FILTER_SLACK, 0);
                let mut search = CollisionSearch::new(bodies.len(), simd);
                results.push(search.earliest::<false>(
                    &world,
                    0,
                    latest,
                    &mut list,
                    ids.len(),
                    start,
                ));
                // The form the calendar inlines into its AVX2 event loop (the scalar kernel
                // where the search has no AVX2).
                let mut list = ids.clone();
                list.resize(ids.len() + FILTER_SLACK, 0);
                let inlined =
                    search.earliest::<true>(&world, 0, latest, &mut list, ids.len(), start);
                assert_eq!(
                    inlined,
                    results[results.len() - 1],
                    "round {round}: inlined kernel"
                );
            }
            let [scalar, vector] = [results[0], results[1]];
            assert_eq!(
                (scalar.time.to_bits(), scalar.key, scalar.partner),
                (vector.time.to_bits(), vector.key, vector.partner),
                "round {round}"
            );
            // The reference: every pair through the time of impact all methods use.
            let mut reference = start;
            for &j in &ids {
                let m = (&world.motion[0], &world.motion[j as usize]);
                if let Some(t) =
                    crate::time_of_impact::motion_pair_time_before(m.0, m.1, reference.time)
                {
                    reference.offer(t, collision_key(0, j as usize), j);
                }
            }
            assert_eq!(
                (scalar.time.to_bits(), scalar.partner),
                (reference.time.to_bits(), reference.partner),
                "round {round}"
            );
            if scalar.partner != NONE {
                found += 1;
                contacts += usize::from(scalar.time == world.motion[0].time.max(0.0));
                let equal = ids.iter().filter(|&&j| {
                    let m = (&world.motion[0], &world.motion[j as usize]);
                    crate::time_of_impact::motion_pair_time_before(m.0, m.1, f64::INFINITY)
                        == Some(scalar.time)
                });
                ties += usize::from(equal.count() > 1);
            }
        }
        assert!(
            found > 500 && ties > 25 && contacts > 100,
            "{found} {ties} {contacts}"
        );
    }
}
