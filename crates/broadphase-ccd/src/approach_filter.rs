//! The calendar's approach filter: of a body's neighbours, those approaching it (the only ones
//! that can collide with it), with the coefficients of their time-of-impact quadratics.
//!
//! The arithmetic is that of `motion_pair_time_before` for the pair in either order (swapping
//! the pair negates `dp` and `dv` exactly, which leaves every dot product unchanged; taking a
//! state already at `t0` as `p + 0 v` only changes the sign of a zero, which `< 0` and the
//! quadratic ignore), so the times are bit-identical to every other method's. The AVX2 kernel
//! does the same operations in the same order on four neighbours at a time (no fused
//! multiply-add), so its coefficients are bit-identical to the scalar loop's.

#[cfg(target_arch = "x86_64")]
use crate::simd::compact_lanes;
use crate::vector::{dot, mul_add, sub, Vec3};
use crate::world::{Motion, World};

/// Entries the filter may write past the candidates it returns, and entries past the
/// neighbours it reads (which it overwrites): [`Candidates`] and the neighbour list must hold
/// this many more entries than there are bodies.
pub(crate) const FILTER_SLACK: usize = 4;

/// Approaching neighbours, as arrays: pair `k` has the quadratic `a t^2 + 2 b t + c` in time
/// after `t0[k]` (`b = dp·dv < 0`, `c = |dp|^2 - s^2`, `a = |dv|^2`) with body `body[k]`.
#[derive(Debug, Clone)]
pub(crate) struct Candidates {
    pub(crate) t0: Vec<f64>,
    pub(crate) b: Vec<f64>,
    pub(crate) c: Vec<f64>,
    pub(crate) a: Vec<f64>,
    pub(crate) body: Vec<u32>,
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
    pub(crate) fn new(n: usize) -> Self {
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

/// Writes into the first entries of `out` those of the first `found` bodies of `neighbours`
/// that approach body `i` of `world`, and returns their number. `latest` is the latest
/// motion-state time of any body: when `i`'s state is at it, `t0` is always `i`'s time and its
/// position needs no advancing, the common case right after an event, with its own loop.
/// With `avx2` (where [`crate::simd::avx2_available`]) four neighbours are filtered at a time; the entries
/// of `neighbours` after the first `found` are overwritten.
#[inline]
pub(crate) fn approaching(
    world: &World,
    i: usize,
    latest: f64,
    neighbours: &mut [u32],
    found: usize,
    out: &mut Candidates,
    avx2: bool,
) -> usize {
    let (motion, dim) = (&world.motion[..], world.dim);
    let from_latest = motion[i].time == latest;
    if avx2 {
        // Pad the last group of four with `i` itself: `dp = dv = 0`, so `b = 0` is not
        // approaching and the padding is never a candidate.
        neighbours[found..found + FILTER_SLACK].fill(i as u32);
        // SAFETY: `avx2` is only set where `avx2_available`.
        unsafe {
            if dim == 2 {
                approaching_avx2::<2>(motion, i, from_latest, neighbours, found, out)
            } else {
                approaching_avx2::<3>(motion, i, from_latest, neighbours, found, out)
            }
        }
    } else if dim == 2 {
        approaching_scalar::<2>(motion, i, from_latest, &neighbours[..found], out)
    } else {
        approaching_scalar::<3>(motion, i, from_latest, &neighbours[..found], out)
    }
}

/// [`approaching`] one neighbour at a time in `D` dimensions: in 2D the `z` components are
/// all zero, and leaving out their zero terms changes no sum but the sign of a zero.
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
/// Unchecked writes: the five checks per neighbour were 8% of the scalar calendar's
/// instructions (callgrind, 4,096 bodies in 3D).
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

/// Per mask of four `f64` lanes: the 32-bit lane permutation that moves the set lanes to the
/// front, in order.
#[cfg(target_arch = "x86_64")]
static COMPACT_F64: [[u32; 8]; 16] = compact_lanes::<16, 2>();

/// Per mask of four `u32` lanes: the lane permutation that moves the set lanes to the front.
#[cfg(target_arch = "x86_64")]
static COMPACT_U32: [[u32; 8]; 16] = compact_lanes::<16, 1>();

/// [`approaching_scalar`] on four neighbours at a time: their motion records (one cache line
/// each: position and time, then velocity and radius) are loaded as eight vectors and
/// transposed, the same arithmetic runs lane-wise, and the approaching lanes are moved to the
/// front of each output vector by a table permutation (no per-lane branch or store).
///
/// Reads the neighbours up to the next multiple of four after `found`, which must be `i`
/// (not approaching itself); writes four entries from the returned count at each step.
///
/// # Safety
/// The CPU must have AVX2 and POPCNT.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
unsafe fn approaching_avx2<const D: usize>(
    motion: &[Motion],
    i: usize,
    from_latest: bool,
    neighbours: &[u32],
    found: usize,
    out: &mut Candidates,
) -> usize {
    use std::arch::x86_64::*;

    /// The two halves of a motion record: `(x, y, z, time)` of the position and
    /// `(x, y, z, radius)` of the velocity.
    #[inline(always)]
    fn halves(m: &Motion) -> (__m256d, __m256d) {
        let record = (m as *const Motion).cast::<f64>();
        // SAFETY: `Motion` is `repr(C)`, 64 bytes of eight `f64` in that order; the pointer
        // is derived from the whole record; unaligned loads need no alignment. The caller
        // has AVX2 (this is only inlined into `approaching_avx2`).
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

    let groups = found.div_ceil(4);
    let neighbours = &neighbours[..groups * 4];
    let mi = &motion[i];
    // SAFETY: the intrinsics below are register operations, available as the caller
    // guarantees AVX2; the loads go through `halves` and the stores through bounds-checked
    // slices of four entries.
    unsafe {
        let p_i = [0, 1, 2].map(|k| _mm256_set1_pd(mi.position[k]));
        let v_i = [0, 1, 2].map(|k| _mm256_set1_pd(mi.velocity[k]));
        let (t_i, r_i) = (_mm256_set1_pd(mi.time), _mm256_set1_pd(mi.radius));
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
            [0, 1, 2].map(|k| _mm256_add_pd(a[k], _mm256_mul_pd(s, b[k])))
        };
        let sub = |a: [__m256d; 3], b: [__m256d; 3]| [0, 1, 2].map(|k| _mm256_sub_pd(a[k], b[k]));
        let mut count = 0;
        for ids in neighbours.chunks_exact(4) {
            let records = [0, 1, 2, 3].map(|k| halves(&motion[ids[k] as usize]));
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
            let mask = _mm256_movemask_pd(_mm256_cmp_pd(b, _mm256_setzero_pd(), _CMP_LT_OQ));
            let mask = (mask & 15) as usize;
            let lanes = _mm256_loadu_si256(COMPACT_F64[mask].as_ptr().cast());
            let compact =
                |x: __m256d| _mm256_castps_pd(_mm256_permutevar8x32_ps(_mm256_castpd_ps(x), lanes));
            _mm256_storeu_pd(out.t0[count..count + 4].as_mut_ptr(), compact(t0));
            _mm256_storeu_pd(out.b[count..count + 4].as_mut_ptr(), compact(b));
            _mm256_storeu_pd(out.c[count..count + 4].as_mut_ptr(), compact(c));
            _mm256_storeu_pd(out.a[count..count + 4].as_mut_ptr(), compact(a));
            let id_lanes = _mm256_loadu_si256(COMPACT_U32[mask].as_ptr().cast());
            let ids = _mm256_zextsi128_si256(_mm_loadu_si128(ids.as_ptr().cast()));
            let ids = _mm256_permutevar8x32_epi32(ids, id_lanes);
            _mm_storeu_si128(
                out.body[count..count + 4].as_mut_ptr().cast(),
                _mm256_castsi256_si128(ids),
            );
            count += mask.count_ones() as usize;
        }
        count
    }
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn approaching_avx2<const D: usize>(
    _: &[Motion],
    _: usize,
    _: bool,
    _: &[u32],
    _: usize,
    _: &mut Candidates,
) -> usize {
    unreachable!("AVX2 is only detected on x86_64")
}
