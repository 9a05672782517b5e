//! Atomic output files: written beside their final name, then renamed into place, so an
//! interrupted run never leaves a half-written file (the temporary names are registered with
//! [`crate::interrupt`], which removes them on a signal).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::interrupt::Temporary;

/// A temporary name in the same directory (so the rename is atomic), keeping the extension
/// (plotters picks the image format from it).
fn temp_path(path: &Path) -> Temporary {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    let (stem, ext) = match name.rsplit_once('.') {
        Some((stem, ext)) => (stem, format!(".{ext}")),
        None => (name, String::new()),
    };
    let tmp: PathBuf = path.with_file_name(format!(".{stem}.tmp{}{ext}", std::process::id()));
    Temporary::new(tmp)
}

/// Lets `write` produce the file at a temporary path, then renames it to `path`. On error
/// the temporary file is removed and `path` is untouched.
pub fn write_atomically_with(
    path: &Path,
    write: impl FnOnce(&Path) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let tmp = temp_path(path);
    let result = write(tmp.path()).and_then(|()| {
        fs::rename(tmp.path(), path).with_context(|| format!("cannot write {}", path.display()))
    });
    if result.is_err() {
        let _ = fs::remove_file(tmp.path());
    }
    result
}

/// Writes `contents` to `path` atomically (temporary file, flush, rename).
pub fn write_atomically(path: &Path, contents: &[u8]) -> anyhow::Result<()> {
    write_atomically_with(path, |tmp| {
        let mut file =
            fs::File::create(tmp).with_context(|| format!("cannot write {}", path.display()))?;
        file.write_all(contents)
            .and_then(|()| file.sync_all())
            .with_context(|| format!("cannot write {}", path.display()))
    })
}

/// Creates `dir` if needed and checks that files can be created in it, before any long run.
pub fn prepare_dir(dir: &Path) -> anyhow::Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let probe = temp_path(&dir.join("probe"));
    fs::write(probe.path(), b"").with_context(|| format!("cannot write into {}", dir.display()))?;
    let _ = fs::remove_file(probe.path());
    Ok(())
}

/// Checks that `path` can be written (its directory exists and takes files), before any
/// long run, without creating anything.
pub fn check_writable_file(path: &Path) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    if path.is_dir() {
        anyhow::bail!("cannot write {}: it is a directory", path.display());
    }
    let probe = temp_path(path);
    fs::write(probe.path(), b"").with_context(|| {
        format!(
            "cannot write {} (directory {})",
            path.display(),
            dir.display()
        )
    })?;
    let _ = fs::remove_file(probe.path());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("bp-out-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn replaces_the_file_whole_and_leaves_no_temporary() {
        let d = dir("replace");
        let path = d.join("results.csv");
        write_atomically(&path, b"old\n").unwrap();
        write_atomically(&path, b"new\n").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new\n");
        assert_eq!(fs::read_dir(&d).unwrap().count(), 1);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_failed_write_keeps_the_old_file_and_no_partial_one() {
        let d = dir("fail");
        let path = d.join("results.csv");
        write_atomically(&path, b"complete\n").unwrap();
        let failed = write_atomically_with(&path, |tmp| {
            fs::write(tmp, b"half a ro")?;
            anyhow::bail!("interrupted")
        });
        assert!(failed.is_err());
        assert_eq!(fs::read(&path).unwrap(), b"complete\n");
        assert_eq!(fs::read_dir(&d).unwrap().count(), 1);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn unwritable_directory_is_reported_before_running() {
        let d = dir("ro");
        let file = d.join("not-a-dir");
        fs::write(&file, b"x").unwrap();
        assert!(prepare_dir(&file.join("sub")).is_err());
        assert!(write_atomically(&file.join("results.csv"), b"x").is_err());
        fs::remove_dir_all(&d).unwrap();
    }
}
