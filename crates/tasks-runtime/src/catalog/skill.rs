//! Skills: directories of files an agent reads as instructions, served as resources under
//! `skill://` with a manifest of digests (the Skills extension, SEP-2640:
//! <https://modelcontextprotocol.io/seps/2640-skills-extension>; the rules are
//! [`tasks_core::skill`]'s).
//!
//! A [`Skill`] is built whole, from its `SKILL.md` and its other files in memory
//! ([`Skill::new`], [`Skill::file`]) or from a directory on disk ([`Skill::from_dir`]), and
//! checked as it is built: the frontmatter, the name, every path, the limits of 512 files and
//! 16 MiB. Its content is then fixed, so its digests are computed once; to change a skill,
//! build it again and register it in place of the old one.

use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};
use tasks_core::skill::{
    check_file_path, check_skill_path, digest, file_uri, frontmatter, root_uri, SkillError,
    MAX_SKILL_BYTES, MAX_SKILL_FILES, SKILL_FILE,
};
use tasks_core::JsonObject;

use super::resource::{Body, ResourceContents};
use super::skill_dir::{self, SkillDirError};

/// The `mimeType` of every `SKILL.md` (the extension's "Resource Metadata").
const SKILL_MD_MIME_TYPE: &str = "text/markdown";

/// A skill the server serves.
#[derive(Debug, Clone)]
pub struct Skill {
    path: String,
    uri: String,
    frontmatter: JsonObject,
    /// `SKILL.md` first, then the other files in the order added.
    files: Vec<Arc<SkillFile>>,
    bytes: u64,
}

/// One file of a skill.
pub(crate) struct SkillFile {
    /// Its path below the skill's root.
    path: String,
    /// Its resource URI.
    pub(crate) uri: String,
    /// Its `mimeType`.
    pub(crate) mime_type: String,
    content: Arc<[u8]>,
    /// `sha256:<hex>` of the content.
    digest: String,
}

impl std::fmt::Debug for SkillFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillFile")
            .field("uri", &self.uri)
            .field("mime_type", &self.mime_type)
            .field("size", &self.size())
            .field("digest", &self.digest)
            .finish_non_exhaustive()
    }
}

impl SkillFile {
    /// Its size in bytes.
    pub(crate) fn size(&self) -> u64 {
        self.content.len() as u64
    }

    /// Its item of a skill entry's `resources`: `{"uri", "digest", "size"}`.
    pub(crate) fn to_manifest_item(&self) -> Value {
        json!({"uri": self.uri, "digest": self.digest, "size": self.size()})
    }

    /// Its `resources/read` contents: text when the bytes are UTF-8, else a blob (the same
    /// bytes either way, so the digest holds for both).
    pub(crate) fn contents(&self) -> ResourceContents {
        let body = match std::str::from_utf8(&self.content) {
            Ok(text) => Body::Text(text.to_owned()),
            Err(_) => Body::Blob(self.content.to_vec()),
        };
        ResourceContents {
            uri: self.uri.clone(),
            mime_type: Some(self.mime_type.clone()),
            body,
        }
    }
}

impl Skill {
    /// A skill at `skill_path` (`git-workflow`, or with a prefix, `acme/billing/refunds`)
    /// whose `SKILL.md` is `skill_md`; its URI is `skill://<skill_path>/SKILL.md`.
    ///
    /// # Errors
    /// As [`tasks_core::skill::frontmatter`] and [`check_skill_path`];
    /// [`SkillError::NameMismatch`] when the path's last segment is not the frontmatter's
    /// `name`.
    pub fn new(skill_path: &str, skill_md: impl Into<String>) -> Result<Self, SkillError> {
        let skill_md = skill_md.into();
        check_skill_path(skill_path)?;
        let fields = frontmatter(&skill_md)?;
        let name = fields["name"].as_str().unwrap_or_default();
        let segment = skill_path.rsplit('/').next().unwrap_or_default();
        if segment != name {
            return Err(SkillError::NameMismatch {
                segment: segment.to_owned(),
                name: name.to_owned(),
            });
        }
        let mut skill = Skill {
            path: skill_path.to_owned(),
            uri: file_uri(skill_path, SKILL_FILE),
            frontmatter: fields,
            files: Vec::new(),
            bytes: 0,
        };
        skill.push(SKILL_FILE, SKILL_MD_MIME_TYPE.into(), skill_md.into_bytes())?;
        Ok(skill)
    }

    /// Adds the file at `path` below the skill's root (`references/FORMS.md`), its `mimeType`
    /// guessed from its extension (`application/octet-stream` when unknown).
    ///
    /// # Errors
    /// As [`check_file_path`]; [`SkillError::DuplicateFile`] for a path already added (or
    /// `SKILL.md`); [`SkillError::InvalidPath`] when the path is a directory of another file, or
    /// under a file; [`SkillError::TooManyFiles`] past 512 files; [`SkillError::TooLarge`] past
    /// 16 MiB in all.
    pub fn file(mut self, path: &str, content: impl Into<Vec<u8>>) -> Result<Self, SkillError> {
        let mime_type = mime_guess::from_path(path)
            .first_raw()
            .unwrap_or("application/octet-stream")
            .to_owned();
        self.push(path, mime_type, content.into())?;
        Ok(self)
    }

    fn push(&mut self, path: &str, mime_type: String, content: Vec<u8>) -> Result<(), SkillError> {
        check_file_path(path)?;
        for known in &self.files {
            if known.path == path {
                return Err(SkillError::DuplicateFile(path.to_owned()));
            }
            let nested = |outer: &str, inner: &str| {
                inner
                    .strip_prefix(outer)
                    .is_some_and(|rest| rest.starts_with('/'))
            };
            if nested(&known.path, path) || nested(path, &known.path) {
                return Err(SkillError::InvalidPath(
                    path.to_owned(),
                    "it is both a file and a directory of the skill".into(),
                ));
            }
        }
        if self.files.len() >= MAX_SKILL_FILES {
            return Err(SkillError::TooManyFiles(self.files.len() + 1));
        }
        let bytes = self.bytes + content.len() as u64;
        if bytes > MAX_SKILL_BYTES {
            return Err(SkillError::TooLarge(bytes));
        }
        self.bytes = bytes;
        self.files.push(Arc::new(SkillFile {
            path: path.to_owned(),
            uri: file_uri(&self.path, path),
            mime_type,
            digest: digest(&content),
            content: content.into(),
        }));
        Ok(())
    }

    /// Loads the skill in directory `root`, served at `skill_path`: its `SKILL.md` and every
    /// regular file below it, in path order. Hidden files and directories (a name starting with
    /// `.`) are not part of the skill; a symbolic link anywhere below `root` is refused, so that
    /// nothing outside `root` is ever served. The directory is read through open handles, never
    /// by path twice, so a file or directory swapped for a link (or for another file) while the
    /// skill loads is refused too, never followed.
    ///
    /// # Errors
    /// [`SkillDirError::Io`] when `root/SKILL.md` or another file cannot be read;
    /// [`SkillDirError::Symlink`]; [`SkillDirError::Changed`] for a file replaced while the
    /// skill loads; [`SkillDirError::NotUtf8`] for a file name that is not UTF-8;
    /// [`SkillDirError::Skill`] as [`Skill::new`] and [`Skill::file`] (too many files is
    /// reported as soon as the walk passes 512).
    pub fn from_dir(skill_path: &str, root: impl AsRef<Path>) -> Result<Self, SkillDirError> {
        let root = root.as_ref();
        let broken = |source| SkillDirError::Skill {
            root: root.to_owned(),
            source,
        };
        let mut files = skill_dir::walk(root)?;
        files.sort_by(|a, b| a.relative.cmp(&b.relative));
        // The limits are checked on the sizes the directory reports, before anything is read:
        // a stray large file costs no memory.
        let total: u64 = files.iter().map(|f| f.len).sum();
        if total > MAX_SKILL_BYTES {
            return Err(broken(SkillError::TooLarge(total)));
        }
        let skill_md = files
            .iter()
            .position(|f| f.relative == SKILL_FILE)
            .map(|at| files.remove(at))
            .ok_or_else(|| SkillDirError::Io {
                path: root.join(SKILL_FILE),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
            })?;
        let skill_md = String::from_utf8(skill_dir::read(root, &skill_md)?).map_err(|_| {
            SkillDirError::Io {
                path: root.join(SKILL_FILE),
                source: std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8"),
            }
        })?;
        let mut skill = Skill::new(skill_path, skill_md).map_err(broken)?;
        for file in &files {
            let content = skill_dir::read(root, file)?;
            skill = skill.file(&file.relative, content).map_err(broken)?;
        }
        Ok(skill)
    }

    /// The URI of its `SKILL.md`: `skill://<skill-path>/SKILL.md`.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Its name (the frontmatter's `name`, also the skill path's last segment).
    pub fn name(&self) -> &str {
        self.frontmatter["name"].as_str().unwrap_or_default()
    }

    /// Its description (the frontmatter's `description`).
    pub fn description(&self) -> &str {
        self.frontmatter["description"].as_str().unwrap_or_default()
    }

    /// Its frontmatter, every field as the author wrote it.
    pub fn frontmatter(&self) -> &JsonObject {
        &self.frontmatter
    }

    /// The URI of its root directory: `skill://<skill-path>`.
    pub fn root_uri(&self) -> String {
        root_uri(&self.path)
    }

    /// Its files' total size in bytes.
    pub fn size(&self) -> u64 {
        self.bytes
    }

    /// Its files, `SKILL.md` first.
    pub(crate) fn files(&self) -> impl Iterator<Item = &Arc<SkillFile>> {
        self.files.iter()
    }

    /// Its file of `uri`, if it has one.
    #[cfg(test)]
    pub(crate) fn file_of(&self, uri: &str) -> Option<&Arc<SkillFile>> {
        self.files.iter().find(|f| f.uri == uri)
    }

    /// Its skill entry on its own: `{"uri", "frontmatter", "resources": [{"uri", "digest",
    /// "size"}, ...]}`, every file listed once, `SKILL.md` first. A catalog's `skills/list` and
    /// `skills/get` list the files of skills registered below it too
    /// ([`Catalog::skill_entry`](super::Catalog::skill_entry)).
    pub fn to_entry(&self) -> Value {
        self.entry_of(self.files.iter())
    }

    /// Its entry with `files` as its `resources`.
    pub(crate) fn entry_of<'a>(&self, files: impl Iterator<Item = &'a Arc<SkillFile>>) -> Value {
        let resources: Vec<Value> = files.map(|f| f.to_manifest_item()).collect();
        json!({"uri": self.uri, "frontmatter": self.frontmatter, "resources": resources})
    }

    /// The `resources/list` item of its `SKILL.md`: named and described by the frontmatter,
    /// `mimeType` `text/markdown`, with its size in bytes.
    pub(crate) fn to_resource(&self) -> Value {
        let size = self.files.first().map_or(0, |f| f.size());
        json!({
            "uri": self.uri,
            "name": self.name(),
            "description": self.description(),
            "mimeType": SKILL_MD_MIME_TYPE,
            "size": size,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    const MD: &str = "---\nname: refunds\ndescription: Process refunds\n---\n# Refunds\n";

    #[test]
    fn a_skill_lists_every_file_once_with_its_digest_and_size() {
        let skill = Skill::new("acme/refunds", MD)
            .unwrap()
            .file("templates/email.md", "Dear customer")
            .unwrap()
            .file("logo.png", vec![0x89, b'P', b'N', b'G', 0xff])
            .unwrap();
        assert_eq!(skill.uri(), "skill://acme/refunds/SKILL.md");
        assert_eq!(skill.root_uri(), "skill://acme/refunds");
        assert_eq!(skill.size(), MD.len() as u64 + 13 + 5);
        let entry = skill.to_entry();
        assert_eq!(entry["frontmatter"]["description"], "Process refunds");
        let resources = entry["resources"].as_array().unwrap();
        assert_eq!(resources.len(), 3);
        assert_eq!(resources[0]["uri"], "skill://acme/refunds/SKILL.md");
        assert_eq!(resources[0]["size"], MD.len());
        assert_eq!(resources[0]["digest"], digest(MD.as_bytes()));
        assert_eq!(
            resources[1]["uri"],
            "skill://acme/refunds/templates/email.md"
        );
        let png = skill.file_of("skill://acme/refunds/logo.png").unwrap();
        assert_eq!(png.mime_type, "image/png");
        assert!(matches!(png.contents().body, Body::Blob(ref b) if b.len() == 5));
        let md = skill
            .file_of("skill://acme/refunds/templates/email.md")
            .unwrap();
        assert_eq!(md.mime_type, "text/markdown");
        assert_eq!(md.contents().body, Body::Text("Dear customer".into()));
        assert_eq!(
            skill.to_resource(),
            json!({"uri": "skill://acme/refunds/SKILL.md", "name": "refunds",
                   "description": "Process refunds", "mimeType": "text/markdown",
                   "size": MD.len()})
        );
    }

    #[test]
    fn a_skill_that_breaks_a_rule_is_refused_when_built() {
        assert_eq!(
            Skill::new("acme/chargebacks", MD).unwrap_err(),
            SkillError::NameMismatch {
                segment: "chargebacks".into(),
                name: "refunds".into()
            }
        );
        let skill = || Skill::new("refunds", MD).unwrap();
        assert_eq!(
            skill().file("SKILL.md", "x").unwrap_err(),
            SkillError::DuplicateFile("SKILL.md".into())
        );
        assert!(matches!(
            skill().file("../secrets", "x").unwrap_err(),
            SkillError::InvalidPath(..)
        ));
        let file_then_dir = skill().file("a", "x").unwrap().file("a/b", "y");
        assert!(matches!(file_then_dir, Err(SkillError::InvalidPath(..))));
        let mut many = skill();
        for i in 1..MAX_SKILL_FILES {
            many = many.file(&format!("f{i}"), "").unwrap();
        }
        assert_eq!(
            many.file("one-more", "").unwrap_err(),
            SkillError::TooManyFiles(MAX_SKILL_FILES + 1)
        );
        let big = vec![0u8; MAX_SKILL_BYTES as usize - MD.len()];
        let full = skill().file("big.bin", big).unwrap();
        assert_eq!(full.size(), MAX_SKILL_BYTES);
        assert_eq!(
            full.file("x", "1").unwrap_err(),
            SkillError::TooLarge(MAX_SKILL_BYTES + 1)
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_directory_loads_its_regular_files_and_nothing_outside_it() {
        let dir = std::env::temp_dir().join(format!("skill-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let root = dir.join("refunds");
        fs::create_dir_all(root.join("templates/deep")).unwrap();
        fs::create_dir_all(root.join(".git")).unwrap();
        fs::write(root.join("SKILL.md"), MD).unwrap();
        fs::write(root.join("templates/a.md"), "a").unwrap();
        fs::write(root.join("templates/deep/b.txt"), "b").unwrap();
        fs::write(root.join(".git/HEAD"), "ref").unwrap();
        fs::write(root.join(".hidden"), "h").unwrap();
        let skill = Skill::from_dir("refunds", &root).unwrap();
        let uris: Vec<&str> = skill.files().map(|f| f.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "skill://refunds/SKILL.md",
                "skill://refunds/templates/a.md",
                "skill://refunds/templates/deep/b.txt",
            ]
        );
        fs::write(dir.join("outside.txt"), "secret").unwrap();
        std::os::unix::fs::symlink(dir.join("outside.txt"), root.join("link.txt")).unwrap();
        assert!(matches!(
            Skill::from_dir("refunds", &root),
            Err(SkillDirError::Symlink(path)) if path.ends_with("link.txt")
        ));
        fs::remove_file(root.join("link.txt")).unwrap();
        // A file past the limit is refused on its reported size, never read (a sparse file of
        // 1 GiB takes no disk); the error names the skill's directory.
        let big = fs::File::create(root.join("video.bin")).unwrap();
        big.set_len(1 << 30).unwrap();
        let error = Skill::from_dir("refunds", &root).unwrap_err();
        assert!(matches!(
            &error,
            SkillDirError::Skill { source: SkillError::TooLarge(total), .. } if *total > 1 << 30
        ));
        assert!(error
            .to_string()
            .starts_with(&format!("the skill in {}: ", root.display())));
        fs::remove_file(root.join("video.bin")).unwrap();
        fs::remove_file(root.join("SKILL.md")).unwrap();
        assert!(matches!(
            Skill::from_dir("refunds", &root),
            Err(SkillDirError::Io { .. })
        ));
        fs::remove_dir_all(&dir).unwrap();
    }
}
