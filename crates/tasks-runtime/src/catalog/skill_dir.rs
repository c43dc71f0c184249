//! Reading a skill from a directory on disk ([`Skill::from_dir`](super::Skill::from_dir)) so
//! that nothing outside its root is ever read, even while the directory changes.
//!
//! The directory is read through handles (cap-std's [`Dir`]), never by path: each
//! subdirectory is opened from its parent's handle and each file from its directory's, so a
//! name is resolved once, relative to a directory already open, and no `..` nor a link can
//! lead out of the root. A symbolic link is refused wherever it is met: in the walk, and when a
//! file is opened (the open does not follow a link in the last component, so a file swapped for
//! a link after the walk is refused, not followed). A file is read only if it is still the
//! regular file the walk measured (same device and inode): a file swapped for another, for a
//! FIFO or for a device between the walk and the read is refused, and opening never blocks
//! (`O_NONBLOCK`).

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cap_fs_ext::{DirExt as _, FollowSymlinks, OpenOptionsFollowExt as _};
use cap_std::fs::{Dir, OpenOptions};
use tasks_core::skill::{SkillError, MAX_SKILL_BYTES, MAX_SKILL_FILES};

/// Why [`Skill::from_dir`](super::Skill::from_dir) could not load a skill.
#[derive(Debug, thiserror::Error)]
pub enum SkillDirError {
    /// Reading the directory or a file failed.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path read.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A symbolic link, which a skill never follows (it could lead outside the skill's root),
    /// met in the walk or in a file's place when the file is opened.
    #[error("{0} is a symbolic link; a skill serves only the regular files below its root")]
    Symlink(PathBuf),
    /// A file that is no longer the regular file the walk measured when it is opened (replaced,
    /// or swapped for a FIFO or a device): the directory changed while it was read.
    #[error("{0} changed while the skill was read")]
    Changed(PathBuf),
    /// A file name that is not UTF-8.
    #[error("{0} has a name that is not UTF-8")]
    NotUtf8(PathBuf),
    /// The skill in directory `root` breaks a rule of the extension.
    #[error("the skill in {root}: {source}")]
    Skill {
        /// The skill's directory.
        root: PathBuf,
        /// The rule broken.
        source: SkillError,
    },
}

/// A regular file the walk found: where it is (its directory's handle and its name), its path
/// relative to the root, and what it was when measured.
#[derive(Debug)]
pub(super) struct Found {
    /// Its path below the root, `/`-separated.
    pub(super) relative: String,
    /// Its size in bytes when the walk saw it.
    pub(super) len: u64,
    name: String,
    dir: Arc<Dir>,
    identity: Identity,
}

/// A file's device and inode (Unix), to tell that the file read is the file measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
}

impl Identity {
    #[cfg(unix)]
    fn of(metadata: &cap_std::fs::Metadata) -> Self {
        use cap_std::fs::MetadataExt as _;
        Identity {
            dev: metadata.dev(),
            ino: metadata.ino(),
        }
    }

    #[cfg(not(unix))]
    fn of(_: &cap_std::fs::Metadata) -> Self {
        Identity { dev: 0, ino: 0 }
    }
}

/// The [`SkillDirError::Io`] of an operation on `path`.
fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> SkillDirError {
    let path = path.to_owned();
    move |source| SkillDirError::Io { path, source }
}

/// Opens `root` (following a link in `root` itself: the operator named it) and collects every
/// regular file below it that is not hidden (no segment starting with `.`), with its size.
///
/// # Errors
/// [`SkillDirError::Io`]; [`SkillDirError::Symlink`] for a link anywhere below `root`;
/// [`SkillDirError::NotUtf8`]; [`SkillDirError::Skill`] with
/// [`SkillError::TooManyFiles`](tasks_core::skill::SkillError::TooManyFiles) as soon as the walk
/// passes the limit (the rest of the tree is not walked).
pub(super) fn walk(root: &Path) -> Result<Vec<Found>, SkillDirError> {
    let dir = Dir::open_ambient_dir(root, cap_std::ambient_authority()).map_err(io_error(root))?;
    let mut found = Vec::new();
    walk_dir(root, Arc::new(dir), root, "", &mut found)?;
    Ok(found)
}

fn walk_dir(
    root: &Path,
    dir: Arc<Dir>,
    path: &Path,
    prefix: &str,
    found: &mut Vec<Found>,
) -> Result<(), SkillDirError> {
    for entry in dir.entries().map_err(io_error(path))? {
        let entry = entry.map_err(io_error(path))?;
        let child = path.join(entry.file_name());
        let name = entry
            .file_name()
            .into_string()
            .map_err(|_| SkillDirError::NotUtf8(child.clone()))?;
        if name.starts_with('.') {
            continue;
        }
        let relative = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        let kind = entry.file_type().map_err(io_error(&child))?;
        if kind.is_symlink() {
            return Err(SkillDirError::Symlink(child));
        } else if kind.is_dir() {
            let sub = dir
                .open_dir_nofollow(&name)
                .map_err(|source| refused(child.clone(), source))?;
            walk_dir(root, Arc::new(sub), &child, &relative, found)?;
        } else if kind.is_file() {
            let metadata = entry.metadata().map_err(io_error(&child))?;
            if found.len() >= MAX_SKILL_FILES {
                return Err(SkillDirError::Skill {
                    root: root.to_owned(),
                    source: SkillError::TooManyFiles(found.len() + 1),
                });
            }
            found.push(Found {
                relative,
                len: metadata.len(),
                name,
                dir: Arc::clone(&dir),
                identity: Identity::of(&metadata),
            });
        }
    }
    Ok(())
}

/// Reads `file` (at most [`MAX_SKILL_BYTES`] and one byte, so a file that grew past the limit
/// since the walk is refused by [`Skill::file`](super::Skill::file) without being read whole).
///
/// # Errors
/// [`SkillDirError::Symlink`] when the name is now a link; [`SkillDirError::Changed`] when it is
/// no longer the regular file the walk measured; [`SkillDirError::Io`].
pub(super) fn read(root: &Path, file: &Found) -> Result<Vec<u8>, SkillDirError> {
    let path = root.join(&file.relative);
    let mut options = OpenOptions::new();
    options.read(true).follow(FollowSymlinks::No);
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt as _;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let opened = file
        .dir
        .open_with(&file.name, &options)
        .map_err(|source| refused(path.clone(), source))?;
    let metadata = opened.metadata().map_err(io_error(&path))?;
    if !metadata.is_file() || Identity::of(&metadata) != file.identity {
        return Err(SkillDirError::Changed(path));
    }
    let mut content = Vec::new();
    opened
        .take(MAX_SKILL_BYTES + 1)
        .read_to_end(&mut content)
        .map_err(io_error(&path))?;
    Ok(content)
}

/// An open that failed: [`SkillDirError::Symlink`] when the name was a link (`ELOOP`, or
/// `ENOTDIR` for a directory opened without following), else [`SkillDirError::Io`].
fn refused(path: PathBuf, source: std::io::Error) -> SkillDirError {
    #[cfg(unix)]
    let link = matches!(source.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR))
        && std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
    #[cfg(not(unix))]
    let link = false;
    if link {
        SkillDirError::Symlink(path)
    } else {
        SkillDirError::Io { path, source }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::fs;

    const MD: &str = "---\nname: refunds\ndescription: Process refunds\n---\n# Refunds\n";

    fn skill_dir(name: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join(name);
        fs::create_dir_all(root.join("templates")).unwrap();
        fs::write(root.join("SKILL.md"), MD).unwrap();
        fs::write(root.join("templates/a.md"), "a").unwrap();
        fs::write(dir.path().join("outside.txt"), "secret").unwrap();
        (dir, root)
    }

    fn found<'a>(files: &'a [Found], relative: &str) -> &'a Found {
        files.iter().find(|f| f.relative == relative).unwrap()
    }

    #[test]
    fn a_file_swapped_for_a_link_after_the_walk_is_refused_not_followed() {
        let (dir, root) = skill_dir("refunds");
        let files = walk(&root).unwrap();
        assert_eq!(read(&root, found(&files, "templates/a.md")).unwrap(), b"a");
        fs::remove_file(root.join("templates/a.md")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("outside.txt"), root.join("templates/a.md"))
            .unwrap();
        let error = read(&root, found(&files, "templates/a.md")).unwrap_err();
        assert!(
            matches!(&error, SkillDirError::Symlink(path) if path.ends_with("templates/a.md")),
            "{error}"
        );
    }

    #[test]
    fn a_directory_swapped_for_a_link_after_the_walk_leads_nowhere_outside() {
        let (dir, root) = skill_dir("refunds");
        let files = walk(&root).unwrap();
        // The walk's handle is on the directory itself: renaming it away and putting a link
        // to the outside in its place changes nothing the read sees.
        fs::rename(root.join("templates"), dir.path().join("moved")).unwrap();
        fs::create_dir(dir.path().join("evil")).unwrap();
        fs::write(dir.path().join("evil/a.md"), "secret").unwrap();
        std::os::unix::fs::symlink(dir.path().join("evil"), root.join("templates")).unwrap();
        assert_eq!(read(&root, found(&files, "templates/a.md")).unwrap(), b"a");
        // And a new walk refuses the link.
        assert!(matches!(walk(&root), Err(SkillDirError::Symlink(p)) if p.ends_with("templates")));
    }

    #[test]
    fn a_file_replaced_by_another_or_by_a_fifo_after_the_walk_is_refused() {
        let (_dir, root) = skill_dir("refunds");
        let files = walk(&root).unwrap();
        let path = root.join("templates/a.md");
        // Another file (made while the first still exists, so not on a reused inode) renamed
        // over it.
        fs::write(root.join("templates/b.md"), "replaced").unwrap();
        fs::rename(root.join("templates/b.md"), &path).unwrap();
        assert!(matches!(
            read(&root, found(&files, "templates/a.md")),
            Err(SkillDirError::Changed(p)) if p == path
        ));
        fs::remove_file(&path).unwrap();
        let status = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(status.success());
        // Opening a FIFO with no writer would block without O_NONBLOCK.
        assert!(matches!(
            read(&root, found(&files, "templates/a.md")),
            Err(SkillDirError::Changed(p)) if p == path
        ));
    }

    #[test]
    fn the_walk_stops_once_past_the_file_limit() {
        let (_dir, root) = skill_dir("refunds");
        for i in 0..MAX_SKILL_FILES {
            fs::write(root.join(format!("templates/f{i}.txt")), "x").unwrap();
        }
        assert!(matches!(
            walk(&root),
            Err(SkillDirError::Skill {
                source: tasks_core::skill::SkillError::TooManyFiles(n),
                ..
            }) if n == MAX_SKILL_FILES + 1
        ));
    }
}
