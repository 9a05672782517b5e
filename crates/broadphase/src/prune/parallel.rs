//! Step 5: the sweep on several threads. Sweep positions are cut into contiguous chunks whose
//! pairs are concatenated in position order: exactly the single-threaded output, whatever the
//! thread count.

use rayon::prelude::*;

use super::{Kernel, SweepArrays};

/// Chunks per thread, so that work stealing evens out cells of different density.
const CHUNKS_PER_THREAD: usize = 8;
/// Fewer positions than this per chunk are not worth a task.
/// (Tiny in unit tests, so that small inputs exercise the chunking.)
const MIN_CHUNK: usize = if cfg!(test) { 4 } else { 1024 };

/// The thread pool (built on first use, rebuilt when the thread count changes) and per-chunk
/// pair buffers.
#[derive(Default)]
pub(super) struct ParallelScratch {
    pool: Option<(usize, rayon::ThreadPool)>,
    chunk_pairs: Vec<Vec<(u32, u32)>>,
}

impl ParallelScratch {
    /// Sweeps all positions of `arrays` on `threads` threads, appending to `out`. Falls back
    /// to the calling thread if the pool cannot be built.
    pub(super) fn sweep(
        &mut self,
        arrays: &SweepArrays,
        threads: usize,
        kernel: Kernel,
        shift: u32,
        out: &mut Vec<(u32, u32)>,
    ) {
        let total = arrays.swept;
        let chunks = (threads * CHUNKS_PER_THREAD).min(total / MIN_CHUNK);
        if chunks < 2 || !self.ensure_pool(threads) {
            kernel.sweep(arrays, 0..total, shift, out);
            return;
        }
        let Some((_, pool)) = &self.pool else {
            unreachable!("ensured above")
        };
        if self.chunk_pairs.len() < chunks {
            self.chunk_pairs.resize_with(chunks, Vec::new);
        }
        let buffers = &mut self.chunk_pairs[..chunks];
        pool.install(|| {
            buffers
                .par_iter_mut()
                .enumerate()
                .for_each(|(chunk, pairs)| {
                    pairs.clear();
                    let range = chunk * total / chunks..(chunk + 1) * total / chunks;
                    kernel.sweep(arrays, range, shift, pairs);
                })
        });
        out.reserve(buffers.iter().map(Vec::len).sum());
        for pairs in buffers.iter() {
            out.extend_from_slice(pairs);
        }
    }

    /// Runs `work` in the pool of `threads` threads (where `rayon::join` splits it), or on the
    /// calling thread if the pool cannot be built.
    pub(super) fn install<R: Send>(
        &mut self,
        threads: usize,
        work: impl FnOnce() -> R + Send,
    ) -> R {
        if !self.ensure_pool(threads) {
            return work();
        }
        let Some((_, pool)) = &self.pool else {
            unreachable!("ensured above")
        };
        pool.install(work)
    }

    fn ensure_pool(&mut self, threads: usize) -> bool {
        if !matches!(self.pool, Some((count, _)) if count == threads) {
            self.pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .ok()
                .map(|pool| (threads, pool));
        }
        self.pool.is_some()
    }
}
