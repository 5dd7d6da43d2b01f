//! Owner-only files of a data directory (signing keys, master keys), written so that no reader
//! ever sees one half-written, and so that processes starting together on a new directory agree
//! on one first key instead of each making its own.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Creates `path` (owner-only) with `contents`, durably; fails if it exists.
pub fn create_private(path: &Path, contents: &[u8]) -> Result<()> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(path).with_context(|| format!("creating {}", path.display()))?;
    f.write_all(contents)?;
    f.sync_all()?;
    Ok(())
}

/// A temporary name beside `path`, unique to this call.
fn beside(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.tmp", uuid::Uuid::new_v4().simple()))
}

/// Writes `contents` to `path` whether or not it exists: written whole beside it, then renamed
/// over it, so a reader sees the old file or the new one.
pub fn replace_private(path: &Path, contents: &[u8]) -> Result<()> {
    let tmp = beside(path);
    create_private(&tmp, contents)?;
    std::fs::rename(&tmp, path).with_context(|| format!("replacing {}", path.display()))?;
    Ok(())
}

/// Creates `path` with `contents` unless it exists: written whole beside it, then linked to its
/// name, which fails if the file exists (another process's, complete, is then the one kept).
/// Returns whether this call's contents were kept.
pub fn create_once(path: &Path, contents: &[u8]) -> Result<bool> {
    let tmp = beside(path);
    create_private(&tmp, contents)?;
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e).with_context(|| format!("creating {}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn racing_creators_agree_on_one_complete_file() {
        for _ in 0..20 {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("key");
            let contents: Vec<Vec<u8>> = (0..8).map(|i| format!("key {i} ").repeat(4000).into_bytes()).collect();
            let kept: Vec<bool> = std::thread::scope(|s| {
                let racers: Vec<_> = contents.iter().map(|c| s.spawn(|| create_once(&path, c).unwrap())).collect();
                racers.into_iter().map(|r| r.join().unwrap()).collect()
            });
            assert_eq!(kept.iter().filter(|k| **k).count(), 1, "exactly one creator wins");
            let winner = kept.iter().position(|k| *k).unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), contents[winner], "the winner's file, whole");
            let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
            assert_eq!(left.len(), 1, "no temporary file is left behind");
        }
    }

    #[cfg(unix)]
    #[test]
    fn private_files_are_owner_only_and_replaced_whole() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key");
        assert!(create_once(&path, b"first").unwrap());
        assert!(!create_once(&path, b"second").unwrap());
        replace_private(&path, b"third").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"third");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert!(create_private(&path, b"again").is_err(), "create_private never overwrites");
    }
}
