//! The binary frames the server streams to the page, one WebSocket binary message each.
//!
//! Binary, not JSON: 20,000 boxes are 480 KB of `f32` that the page hands to WebGL as they
//! arrive (a `Float32Array` over the message, no parsing), where JSON would be several
//! times larger and cost a parse per number. `assets/js/stream.js` reads the same layout;
//! a change here is a change there, and [`VERSION`] goes up.
//!
//! Every number is little-endian; every section starts at a multiple of 4 bytes, so that
//! the page can view it as a typed array in place. Both kinds of frame start with
//! [`MAGIC`] and a `u32` kind.
//!
//! # Step frame (kind [`KIND_STEP`]): a discrete scene after a step
//!
//! | offset | type | field |
//! |---:|---|---|
//! | 0 | u32 | [`MAGIC`] |
//! | 4 | u32 | kind = [`KIND_STEP`] |
//! | 8 | u32 | step (0 before the first) |
//! | 12 | u32 | n, boxes |
//! | 16 | u32 | p, pairs reported by the broad phase |
//! | 20 | u32 | c, pairs in contact (the first c of the pairs) |
//! | 24 | u32 | overlay kind ([`OverlayKind`]) |
//! | 28 | u32 | m, overlay boxes |
//! | 32 | u32 | phase under way (index into the scene's phases), `u32::MAX` for none |
//! | 36 | u32 | algorithm doing the work (index into `broadphase::ALGORITHMS`; for `adaptive`, the one it runs now) |
//! | 40 | u32 | switches so far (`adaptive`) |
//! | 44 | f32 | hand boxes over, ms |
//! | 48 | f32 | update, ms |
//! | 52 | f32 | narrow phase, ms |
//! | 56 | f32 | side of the world cube |
//! | 60 | u32 | flags: bit 0, the overlay was cut at [`crate::overlay::MAX_OVERLAY_BOXES`] |
//! | 64 | n × 6 f32 | boxes: min x, y, z, max x, y, z |
//! | | n × u8 | box flags: [`FLAG_STATIC`], [`FLAG_OVERLAP`], [`FLAG_CONTACT`]; padded to 4 bytes |
//! | | p × 2 u32 | pairs as box indices (into the boxes above), those in contact first |
//! | | m × 6 f32 | overlay boxes, as the boxes (a line is a box flat on two axes) |
//! | | m × u8 | overlay tags (depth, level or axis: see [`OverlayKind`]); padded to 4 bytes |
//!
//! # Continuous-time frame (kind [`KIND_CCD`])
//!
//! | offset | type | field |
//! |---:|---|---|
//! | 0 | u32 | [`MAGIC`] |
//! | 4 | u32 | kind = [`KIND_CCD`] |
//! | 8 | u32 | n, bodies |
//! | 12 | u32 | dim (2 or 3) |
//! | 16 | u32 | e, events in the frame (the latest of the advance) |
//! | 20 | u32 | m, overlay boxes |
//! | 24 | f64 | simulated time shown |
//! | 32 | f64 | collisions so far |
//! | 40 | f64 | wall hits so far |
//! | 48 | 3 × f32 | world size x, y, z (z = 0 in 2D) |
//! | 60 | f32 | wall-clock ms the advance took |
//! | 64 | u32 | events during the advance (all of them; e ≤ this) |
//! | 68 | 3 × u32 | the calendar's cells per axis (0 when not drawn) |
//! | 80 | f32 | the swept BVH's Δt (0 for the other methods) |
//! | 84 | u32 | flags: bit 0, the advance stopped short of its target to keep the page live |
//! | 88 | 2 × u32 | reserved, 0 |
//! | 96 | n × 4 f32 | bodies: centre x, y, z, radius |
//! | | e × 4 (f32, u32, u32, u32) | events: time, kind (0 collision, 1 wall), body, partner or wall |
//! | | m × 6 f32 | overlay boxes (swept AABBs) |

use bytes::BytesMut;

use crate::overlay::{Overlay, OverlayKind};
use crate::session::StepTimes;

/// The first four bytes of every frame: `BPV1` (the last byte is [`VERSION`]'s digit).
pub const MAGIC: u32 = u32::from_le_bytes(*b"BPV1");
/// The frame format's version.
pub const VERSION: u32 = 1;
/// A discrete step.
pub const KIND_STEP: u32 = 1;
/// A continuous-time frame.
pub const KIND_CCD: u32 = 2;
/// Bytes before a step frame's boxes.
pub const STEP_HEADER_BYTES: usize = 64;
/// Bytes before a continuous-time frame's bodies.
pub const CCD_HEADER_BYTES: usize = 96;

/// Box flag: a static proxy.
pub const FLAG_STATIC: u8 = 1;
/// Box flag: in at least one pair of the broad phase.
pub const FLAG_OVERLAP: u8 = 2;
/// Box flag: its shape touches another's (narrow phase).
pub const FLAG_CONTACT: u8 = 4;

/// A step frame's fixed fields.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepHeader {
    /// Steps run.
    pub step: u32,
    /// Pairs in contact.
    pub contacts: u32,
    /// Phase under way.
    pub phase: Option<u32>,
    /// Index of the algorithm doing the work in `broadphase::ALGORITHMS`.
    pub active: Option<u32>,
    /// Switches made (`adaptive`).
    pub switches: u32,
    /// The step's times.
    pub times: StepTimes,
    /// Side of the world cube.
    pub side: f32,
}

/// Writes a step frame into `out` (cleared first). The whole frame's size is reserved at
/// once, so that a buffer whose previous frame has been sent and dropped is reclaimed in
/// place rather than grown piecemeal.
pub fn encode_step(
    out: &mut BytesMut,
    header: &StepHeader,
    boxes: &[[f32; 6]],
    flags: &[u8],
    pairs: &[[u32; 2]],
    overlay: &Overlay,
) {
    assert_eq!(boxes.len(), flags.len(), "one flag per box");
    out.clear();
    out.reserve(
        STEP_HEADER_BYTES + boxes.len() * 25 + pairs.len() * 8 + overlay.boxes.len() * 25 + 8,
    );
    for word in [
        MAGIC,
        KIND_STEP,
        header.step,
        boxes.len() as u32,
        pairs.len() as u32,
        header.contacts,
        overlay.kind as u32,
        overlay.boxes.len() as u32,
        header.phase.unwrap_or(u32::MAX),
        header.active.unwrap_or(u32::MAX),
        header.switches,
    ] {
        put_u32(out, word);
    }
    for ms in [header.times.hand, header.times.update, header.times.narrow] {
        put_f32(out, ms as f32);
    }
    put_f32(out, header.side);
    put_u32(out, u32::from(overlay.truncated));
    debug_assert_eq!(out.len(), STEP_HEADER_BYTES);
    put_boxes(out, boxes);
    out.extend_from_slice(flags);
    pad4(out);
    for &[a, b] in pairs {
        put_u32(out, a);
        put_u32(out, b);
    }
    put_boxes(out, &overlay.boxes);
    out.extend_from_slice(&overlay.tags);
    pad4(out);
}

/// A continuous-time frame's fixed fields.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CcdHeader {
    /// 2 or 3.
    pub dim: u32,
    /// Simulated time shown.
    pub time: f64,
    /// Collisions so far.
    pub collisions: u64,
    /// Wall hits so far.
    pub wall_hits: u64,
    /// World size.
    pub size: [f32; 3],
    /// Wall-clock milliseconds of the advance.
    pub compute_ms: f32,
    /// Events during the advance.
    pub events: u32,
    /// The calendar's cells per axis, zeros when not drawn.
    pub cells: [u32; 3],
    /// The swept BVH's Δt.
    pub time_step: f32,
    /// The advance stopped short of its target.
    pub behind: bool,
}

/// An event as the page gets it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameEvent {
    /// Simulated time.
    pub time: f64,
    /// 0 collision, 1 wall hit.
    pub kind: u32,
    /// The body.
    pub a: u32,
    /// The partner body, or the wall (`2·axis + side`).
    pub b: u32,
}

/// Writes a continuous-time frame into `out` (cleared first): `bodies` are centre and
/// radius.
pub fn encode_ccd(
    out: &mut BytesMut,
    header: &CcdHeader,
    bodies: &[[f32; 4]],
    events: &[FrameEvent],
    overlay: &[[f32; 6]],
) {
    out.clear();
    out.reserve(CCD_HEADER_BYTES + bodies.len() * 16 + events.len() * 16 + overlay.len() * 24);
    for word in [
        MAGIC,
        KIND_CCD,
        bodies.len() as u32,
        header.dim,
        events.len() as u32,
        overlay.len() as u32,
    ] {
        put_u32(out, word);
    }
    for value in [
        header.time,
        header.collisions as f64,
        header.wall_hits as f64,
    ] {
        out.extend_from_slice(&value.to_le_bytes());
    }
    for value in header.size {
        put_f32(out, value);
    }
    put_f32(out, header.compute_ms);
    put_u32(out, header.events);
    for cells in header.cells {
        put_u32(out, cells);
    }
    put_f32(out, header.time_step);
    put_u32(out, u32::from(header.behind));
    put_u32(out, 0);
    put_u32(out, 0);
    debug_assert_eq!(out.len(), CCD_HEADER_BYTES);
    for body in bodies {
        for &value in body {
            put_f32(out, value);
        }
    }
    for event in events {
        put_f32(out, event.time as f32);
        put_u32(out, event.kind);
        put_u32(out, event.a);
        put_u32(out, event.b);
    }
    put_boxes(out, overlay);
}

fn put_u32(out: &mut BytesMut, value: u32) {
    out.extend_from_slice(&value.to_le_bytes());
}

fn put_f32(out: &mut BytesMut, value: f32) {
    out.extend_from_slice(&value.to_le_bytes());
}

fn put_boxes(out: &mut BytesMut, boxes: &[[f32; 6]]) {
    for b in boxes {
        for &value in b {
            put_f32(out, value);
        }
    }
}

fn pad4(out: &mut BytesMut) {
    while !out.len().is_multiple_of(4) {
        out.extend_from_slice(&[0]);
    }
}

/// A step frame read back, for tests and tools: the inverse of [`encode_step`].
#[derive(Debug, Clone, PartialEq)]
pub struct DecodedStep {
    /// The fixed fields (times as `f32`, widened).
    pub header: StepHeader,
    /// The boxes.
    pub boxes: Vec<[f32; 6]>,
    /// One flag byte per box.
    pub flags: Vec<u8>,
    /// The pairs, box indices.
    pub pairs: Vec<[u32; 2]>,
    /// The overlay.
    pub overlay: Overlay,
}

/// Reads a step frame, checking every length and index; the error says what is wrong.
pub fn decode_step(bytes: &[u8]) -> Result<DecodedStep, String> {
    let mut r = Reader { bytes, at: 0 };
    if r.u32()? != MAGIC || r.u32()? != KIND_STEP {
        return Err("not a step frame".into());
    }
    let step = r.u32()?;
    let (n, p, contacts) = (r.count()?, r.count()?, r.u32()?);
    let kind = OverlayKind::from_u32(r.u32()?).ok_or("unknown overlay kind")?;
    let m = r.count()?;
    let optional = |v: u32| (v != u32::MAX).then_some(v);
    let (phase, active, switches) = (optional(r.u32()?), optional(r.u32()?), r.u32()?);
    let times = StepTimes {
        hand: r.f32()? as f64,
        update: r.f32()? as f64,
        narrow: r.f32()? as f64,
    };
    let side = r.f32()?;
    let truncated = r.u32()? & 1 == 1;
    let boxes = r.boxes(n)?;
    let flags = r.bytes_padded(n)?;
    let mut pairs = Vec::with_capacity(p.min(bytes.len() / 8));
    for _ in 0..p {
        let pair = [r.u32()?, r.u32()?];
        if pair.iter().any(|&i| i as usize >= n) {
            return Err(format!("pair {pair:?} names a box beyond {n}"));
        }
        pairs.push(pair);
    }
    if contacts as usize > p {
        return Err("more contacts than pairs".into());
    }
    let overlay = Overlay {
        kind,
        boxes: r.boxes(m)?,
        tags: r.bytes_padded(m)?,
        truncated,
    };
    if r.at != bytes.len() {
        return Err(format!("{} bytes after the frame", bytes.len() - r.at));
    }
    Ok(DecodedStep {
        header: StepHeader {
            step,
            contacts,
            phase,
            active,
            switches,
            times,
            side,
        },
        boxes,
        flags,
        pairs,
        overlay,
    })
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, len: usize) -> Result<&[u8], String> {
        let end = self.at.checked_add(len).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| format!("frame ends before byte {}", self.at + len))?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }

    fn count(&mut self) -> Result<usize, String> {
        Ok(self.u32()? as usize)
    }

    fn f32(&mut self) -> Result<f32, String> {
        Ok(f32::from_bits(self.u32()?))
    }

    fn boxes(&mut self, n: usize) -> Result<Vec<[f32; 6]>, String> {
        let bytes = self.take(n.checked_mul(24).ok_or("too many boxes")?)?;
        Ok(bytes
            .chunks_exact(24)
            .map(|c| {
                std::array::from_fn(|k| {
                    f32::from_le_bytes(c[4 * k..4 * k + 4].try_into().expect("4 bytes"))
                })
            })
            .collect())
    }

    fn bytes_padded(&mut self, n: usize) -> Result<Vec<u8>, String> {
        let values = self.take(n)?.to_vec();
        self.take((4 - n % 4) % 4)?;
        Ok(values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_frame_reads_back_as_written() {
        let overlay = Overlay {
            kind: OverlayKind::TreeNodes,
            boxes: vec![[0.0, 0.0, 0.0, 2.0, 2.0, 2.0]],
            tags: vec![3],
            truncated: false,
        };
        let header = StepHeader {
            step: 7,
            contacts: 1,
            phase: Some(2),
            active: None,
            switches: 0,
            times: StepTimes {
                hand: 0.5,
                update: 0.25,
                narrow: 2.0,
            },
            side: 30.0,
        };
        let boxes = vec![[0.0; 6], [1.0, 1.0, 1.0, 2.0, 2.0, 2.0], [5.0; 6]];
        let flags = vec![6, 2, FLAG_STATIC];
        let pairs = vec![[0, 1]];
        let mut out = BytesMut::new();
        encode_step(&mut out, &header, &boxes, &flags, &pairs, &overlay);
        assert_eq!(out.len() % 4, 0);
        assert_eq!(out.len(), 64 + 3 * 24 + 4 + 8 + 24 + 4);
        let read = decode_step(&out).unwrap();
        assert_eq!(
            (read.header, read.boxes, read.flags),
            (header, boxes, flags)
        );
        assert_eq!((read.pairs, read.overlay), (pairs, overlay));
        for cut in [0, 10, 64, out.len() - 1] {
            assert!(decode_step(&out[..cut]).is_err());
        }
    }

    #[test]
    fn a_ccd_frame_has_its_documented_length() {
        let mut out = BytesMut::new();
        let event = FrameEvent {
            time: 1.0,
            kind: 0,
            a: 0,
            b: 1,
        };
        encode_ccd(
            &mut out,
            &CcdHeader::default(),
            &[[0.0; 4]; 2],
            &[event],
            &[[0.0; 6]],
        );
        assert_eq!(out.len(), CCD_HEADER_BYTES + 2 * 16 + 16 + 24);
        assert_eq!(&out[..4], b"BPV1");
    }
}
