//! A stream in steady state allocates no frame buffer: each frame is written over the
//! previous one's allocation once the previous frame has been sent and dropped.
//!
//! A counting allocator sees every allocation of this test binary; this file holds one test
//! so that no other test allocates meanwhile.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use broadphase_sim::Scene;
use broadphase_view::connection::{Mode, Reply, Stream};
use broadphase_view::frame::decode_step;
use broadphase_view::ServerConfig;

/// Allocations of at least [`LARGE`] bytes: a frame of the scene below is several times that,
/// the commands' and replies' small allocations are below it.
static LARGE_ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
const LARGE: usize = 2048;

struct Counting;

// SAFETY: forwards every call to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() >= LARGE {
            LARGE_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size >= LARGE {
            LARGE_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Sends `command` and returns the one frame it is answered with, as the socket would:
/// the frame is dropped by the caller once "sent".
fn frame_for(stream: &mut Stream, command: &str) -> bytes::Bytes {
    stream.handle_text(command);
    let mut frames = stream.replies().map(|reply| match reply {
        Reply::Frame(frame) => frame,
        Reply::Text(text) => panic!("{command}: {text}"),
    });
    let frame = frames.next().expect("a frame");
    assert!(frames.next().is_none());
    frame
}

#[test]
fn a_steady_stream_writes_each_frame_over_the_last() {
    let config = ServerConfig {
        scene: Scene {
            objects: 300,
            ..Scene::default()
        },
        algorithm: "sap".into(),
        ccd: false,
        port: 0,
    };
    let mut stream = Stream::open(Mode::Discrete, &config).unwrap();
    stream.replies().for_each(drop);
    let size = frame_for(&mut stream, r#"{"cmd":"frame"}"#).len();
    assert!(size > 4 * LARGE, "a frame of {size} bytes");
    let before = LARGE_ALLOCATIONS.load(Ordering::Relaxed);
    for _ in 0..50 {
        let frame = frame_for(&mut stream, r#"{"cmd":"frame"}"#);
        assert_eq!(frame.len(), size);
    }
    assert_eq!(
        LARGE_ALLOCATIONS.load(Ordering::Relaxed),
        before,
        "frames allocated"
    );
    // A frame still held (not yet sent) is not written over: the next gets its own buffer.
    let held = frame_for(&mut stream, r#"{"cmd":"frame"}"#);
    let next = frame_for(&mut stream, r#"{"cmd":"frame"}"#);
    assert_ne!(held.as_ptr(), next.as_ptr());
    assert_eq!(decode_step(&held).unwrap(), decode_step(&next).unwrap());
}
