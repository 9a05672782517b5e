//! One box as the sweep sees it: an [`Entry`] record (bounds, dedup code, index), the
//! register form [`EntryParts`] for writing copies that differ in the code, and the
//! [`PADDING`] of sentinels after every cell.

use crate::Aabb;

/// One entry of [`SweepArrays`] as a record, half a cache line.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(32))]
pub(crate) struct Entry {
    pub(super) min_x: f32,
    pub(super) max_x: f32,
    pub(super) min_y: f32,
    pub(super) max_y: f32,
    pub(super) min_z: f32,
    pub(super) max_z: f32,
    pub(super) code: u32,
    pub(super) index: u32,
}

impl Entry {
    pub(super) const SENTINEL: Entry = Entry {
        min_x: f32::INFINITY,
        max_x: f32::NEG_INFINITY,
        min_y: 0.0,
        max_y: 0.0,
        min_z: 0.0,
        max_z: 0.0,
        code: 0,
        index: 0,
    };

    #[inline]
    pub(super) fn new(aabb: &Aabb, code: u32, index: u32) -> Self {
        let (min, max) = (aabb.min(), aabb.max());
        Entry {
            min_x: min.x,
            max_x: max.x,
            min_y: min.y,
            max_y: max.y,
            min_z: min.z,
            max_z: max.z,
            code,
            index,
        }
    }
}

/// An [`Entry`] without its code, for writing several copies of a box that differ only in
/// the code: on x86_64 it sits in two SSE registers, so a copy is two 16-byte stores rather
/// than eight scalar ones (from a plain `Entry` the compiler writes each field on its own).
#[derive(Clone, Copy)]
pub(crate) struct EntryParts {
    #[cfg(target_arch = "x86_64")]
    halves: [std::arch::x86_64::__m128; 2],
    #[cfg(not(target_arch = "x86_64"))]
    entry: Entry,
}

impl EntryParts {
    #[inline(always)]
    pub(crate) fn new(aabb: &Aabb, index: u32) -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::*;
            let (min, max) = (aabb.min(), aabb.max());
            // SAFETY: SSE2 register operations only (no memory access); SSE2 is part of the
            // x86_64 baseline.
            let halves = unsafe {
                [
                    _mm_setr_ps(min.x, max.x, min.y, max.y),
                    _mm_setr_ps(min.z, max.z, 0.0, f32::from_bits(index)),
                ]
            };
            EntryParts { halves }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            EntryParts {
                entry: Entry::new(aabb, 0, index),
            }
        }
    }

    /// The entry with `code`.
    #[inline(always)]
    pub(crate) fn with_code(self, code: u32) -> Entry {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::*;
            let [xy, z] = self.halves;
            // SAFETY: SSE2 register operations (baseline on x86_64). The transmute turns 32
            // bytes into an `Entry`, 32 bytes of f32 and u32 fields in this order (repr(C),
            // checked below), for which every bit pattern is valid.
            unsafe {
                let code = _mm_castsi128_ps(_mm_setr_epi32(0, 0, code as i32, 0));
                std::mem::transmute::<[__m128; 2], Entry>([xy, _mm_or_ps(z, code)])
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            Entry { code, ..self.entry }
        }
    }
}

const _: () = assert!(
    std::mem::offset_of!(Entry, min_x) == 0
        && std::mem::offset_of!(Entry, max_x) == 4
        && std::mem::offset_of!(Entry, min_y) == 8
        && std::mem::offset_of!(Entry, max_y) == 12
        && std::mem::offset_of!(Entry, min_z) == 16
        && std::mem::offset_of!(Entry, max_z) == 20
        && std::mem::offset_of!(Entry, code) == 24
        && std::mem::offset_of!(Entry, index) == 28
        && size_of::<Entry>() == 32
);

/// Sentinels after each cell: one AVX-512 vector of candidates.
pub(crate) const PADDING: usize = 16;
