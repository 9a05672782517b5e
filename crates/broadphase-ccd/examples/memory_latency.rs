//! Measures the machine's latency of dependent loads at random places in working sets of
//! several sizes: the cost of each cache miss that the calendar's event loop waits on
//! (each event reads the records of bodies at random places).
//!
//! `cargo run --release -p broadphase-ccd --example memory_latency -- [megabytes ...]`
//!
//! Each size is one random cycle through 64-byte lines (one load per line, each address
//! read from the line before), walked once to warm up, then timed over 10 million loads.
use std::hint::black_box;
use std::time::Instant;

/// Largest working set accepted, in megabytes (the walk also keeps an 8-byte index per line).
const MAX_MEGABYTES: f64 = 4096.0;

/// 64 bytes: one cache line per step of the walk.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line {
    next: usize,
}

fn main() {
    let mut args = Vec::new();
    for arg in std::env::args().skip(1) {
        match arg.parse::<f64>() {
            Ok(megabytes) if megabytes > 0.0 && megabytes <= MAX_MEGABYTES => args.push(megabytes),
            _ => {
                eprintln!(
                    "memory_latency: {arg:?} is not a size in megabytes in (0, {MAX_MEGABYTES}]"
                );
                std::process::exit(2);
            }
        }
    }
    let sizes = if args.is_empty() {
        vec![0.25, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 16.0, 64.0]
    } else {
        args
    };
    const LOADS: usize = 10_000_000;
    for megabytes in sizes {
        let lines = ((megabytes * 1e6) as usize / 64).max(2);
        // The lines in a random order (Fisher-Yates), each pointing to the next one in that
        // order and the last to the first: one cycle through every line.
        let mut order: Vec<usize> = (0..lines).collect();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for i in (1..lines).rev() {
            // xorshift64: any spread of indices will do.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let j = (state % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        let mut walk = vec![Line { next: 0 }; lines];
        for k in 0..lines {
            walk[order[k]].next = order[(k + 1) % lines];
        }
        let mut at = 0;
        for _ in 0..lines {
            at = walk[at].next;
        }
        let start = Instant::now();
        for _ in 0..LOADS {
            at = walk[at].next;
        }
        let nanoseconds = start.elapsed().as_secs_f64() * 1e9 / LOADS as f64;
        black_box(at);
        println!("{megabytes:>6} MB: {nanoseconds:6.1} ns per dependent load");
    }
}
