//! Interruption: on SIGINT, SIGTERM or SIGHUP the program removes every temporary file it is
//! writing, prints one line and exits with 128 + the signal's number (130 for Ctrl-C, 143 for
//! SIGTERM), so that "a failed run leaves no partial file" holds for signals too.
//!
//! Output files are written under a temporary name and renamed into place
//! ([`crate::export::files`]); each temporary name is registered here while it may exist. The
//! signals are received by a thread of [`signal_hook`]'s, not in a signal handler, so the
//! clean-up may lock, allocate and print.

use std::path::PathBuf;
use std::sync::Mutex;

/// The temporary files that may exist now.
static TEMPORARIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Starts the thread that cleans up and exits on a terminating signal. Call once, first.
pub fn install() -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
        std::thread::Builder::new()
            .name("interrupt".into())
            .spawn(move || {
                if let Some(signal) = signals.forever().next() {
                    clean_up_and_exit(signal);
                }
            })?;
    }
    Ok(())
}

/// Removes the registered temporary files, says so, and exits with `128 + signal`. Holds
/// the registry's lock to the end, so that no writer registers a new file meanwhile.
fn clean_up_and_exit(signal: i32) -> ! {
    let temporaries = TEMPORARIES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let removed = temporaries
        .iter()
        .filter(|path| std::fs::remove_file(path).is_ok())
        .count();
    let name = match signal {
        2 => "SIGINT",
        15 => "SIGTERM",
        1 => "SIGHUP",
        _ => "a signal",
    };
    crate::console::note!(
        "interrupted by {name}: {removed} temporary file(s) removed, no output written"
    );
    std::process::exit(128 + signal)
}

/// A temporary file's name, registered for removal on interruption for as long as the value
/// lives; drop it once the file is renamed into place or removed.
pub struct Temporary {
    path: PathBuf,
}

impl Temporary {
    /// Registers `path`.
    pub fn new(path: PathBuf) -> Self {
        let mut temporaries = TEMPORARIES.lock().unwrap_or_else(|p| p.into_inner());
        temporaries.push(path.clone());
        Self { path }
    }

    /// The registered name.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        let mut temporaries = TEMPORARIES.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(k) = temporaries.iter().rposition(|p| *p == self.path) {
            temporaries.swap_remove(k);
        }
    }
}
