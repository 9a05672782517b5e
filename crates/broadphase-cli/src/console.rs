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

/// `n` and `noun`, the noun in the plural unless `n` is one: `count(1, "algorithm")` is
/// "1 algorithm", `count(3, "switch")` is "3 switches". Every count the CLI prints before a
/// noun goes through here, so that no output says "1 algorithms".
pub fn count(n: impl std::fmt::Display, noun: &str) -> String {
    let n = n.to_string();
    if n == "1" {
        format!("{n} {noun}")
    } else {
        format!("{n} {}", plural(noun))
    }
}

/// The plural of an English noun (the regular rules; the CLI's nouns are all regular).
fn plural(noun: &str) -> String {
    let consonant_y = noun.len() >= 2
        && noun.ends_with('y')
        && !noun[..noun.len() - 1].ends_with(['a', 'e', 'i', 'o', 'u']);
    if consonant_y {
        format!("{}ies", &noun[..noun.len() - 1])
    } else if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|end| noun.ends_with(end))
    {
        format!("{noun}es")
    } else {
        format!("{noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::count;

    #[test]
    fn one_is_singular_everything_else_plural() {
        assert_eq!(count(1, "algorithm"), "1 algorithm");
        assert_eq!(count(0, "algorithm"), "0 algorithms");
        assert_eq!(count(2_u64, "switch"), "2 switches");
        assert_eq!(count(1, "switch"), "1 switch");
        assert_eq!(count(5, "mismatch"), "5 mismatches");
        assert_eq!(count(3, "box"), "3 boxes");
        assert_eq!(count(2, "body"), "2 bodies");
        assert_eq!(count(2, "day"), "2 days");
        assert_eq!(count(11, "step"), "11 steps");
    }
}
