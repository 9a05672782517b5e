//! The console: results go to standard output, notes and progress to standard error, and a
//! stream that cannot be written ends the program the way Unix tools end.
//!
//! A closed standard output (`broadphase … | head -1`) ends the program quietly with success:
//! the reader has what it wanted. Any other write error (a full disk, `> /dev/full`) is an
//! error like the others: one line on standard error and exit code 2. Notes on standard error
//! are best effort: a closed standard error must not end a run.

use std::io;

/// `writeln!` to standard output; the `io::Result` (its kind kept, its message naming the
/// stream) is the caller's to propagate with `?`.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*).map_err($crate::console::writing_stdout)
    }};
}
pub(crate) use out;

/// `writeln!` to standard error, ignoring failure.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}
pub(crate) use note;

/// Whether `error` comes from writing to a closed pipe.
pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// The error of a write to standard output, saying so, of the same kind.
pub fn writing_stdout(error: io::Error) -> io::Error {
    io::Error::new(error.kind(), format!("writing to standard output: {error}"))
}
