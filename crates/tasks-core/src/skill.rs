//! The rules of the Skills extension (`io.modelcontextprotocol/skills`, SEP-2640:
//! <https://modelcontextprotocol.io/seps/2640-skills-extension>): how a skill's files map to
//! resource URIs, its `SKILL.md` frontmatter, its name, digests, limits, and the directory
//! resources `resources/directory/read` lists.
//!
//! A skill is a directory of files, at least a `SKILL.md` that begins with YAML frontmatter
//! holding a `name` and a `description` (the Agent Skills format, <https://agentskills.io/specification>).
//! Each file is a resource `skill://<skill-path>/<file-path>`; the skill path's last segment is
//! the skill's name; the skill's root directory is `skill://<skill-path>` and every directory
//! level below it is a directory resource (`mimeType` [`DIRECTORY_MIME_TYPE`], no trailing
//! slash).
//!
//! Everything here is pure: the runtime's catalog builds skills from these rules
//! (`tasks_runtime::catalog::Skill`) and serves them.

use std::collections::BTreeMap;

use serde_json::Value;
use sha2::{Digest as _, Sha256};

use crate::JsonObject;

/// The extension's identifier, the key under `capabilities.extensions`.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The file every skill has at its root.
pub const SKILL_FILE: &str = "SKILL.md";

/// The URI scheme this server serves skills under (the extension's recommended scheme).
pub const SKILL_SCHEME: &str = "skill";

/// The `mimeType` of a directory resource.
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";

/// The most files one skill has, `SKILL.md` included (the extension's "Limits": servers
/// should not serve more).
pub const MAX_SKILL_FILES: usize = 512;

/// The most bytes one skill's files total: 16 MiB (the extension's "Limits").
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;

/// The longest skill name, in characters (the Agent Skills naming rules).
pub const MAX_NAME_CHARS: usize = 64;

/// Why a skill (its `SKILL.md`, its path or its files) cannot be served. These are the server
/// author's errors, reported when the skill is built, never sent to a client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkillError {
    /// `SKILL.md` does not begin with a `---` line, a YAML block and a closing `---` line.
    #[error("SKILL.md does not begin with YAML frontmatter between two --- lines")]
    NoFrontmatter,
    /// The frontmatter is not YAML (the parser's message, with its line and column).
    #[error("SKILL.md frontmatter is not valid YAML: {0}")]
    Yaml(String),
    /// The frontmatter is YAML but not a mapping.
    #[error("SKILL.md frontmatter is not a mapping of fields")]
    NotAMapping,
    /// A required field (`name` or `description`) is missing, empty or not a string.
    #[error("SKILL.md frontmatter has no non-empty string field `{0}`")]
    MissingField(&'static str),
    /// The name breaks the naming rules ([`check_name`]).
    #[error(
        "skill name {0:?} breaks the naming rules: 1 to 64 lowercase letters, digits and \
         hyphens, with no hyphen first, last or twice in a row"
    )]
    InvalidName(String),
    /// The skill path's last segment is not the frontmatter `name`.
    #[error("the skill path ends in {segment:?}, but the frontmatter name is {name:?}")]
    NameMismatch {
        /// The skill path's last segment.
        segment: String,
        /// The frontmatter `name`.
        name: String,
    },
    /// A skill path or a file path with an empty, `.` or `..` segment, a character outside
    /// a URI path segment (or, in a file path, a `%`), or (for a skill path's first segment)
    /// outside an RFC 3986 reg-name; the reason says which.
    #[error("invalid path {0:?}: {1}")]
    InvalidPath(String, String),
    /// Two files of one skill at the same path.
    #[error("the skill has two files at {0:?}")]
    DuplicateFile(String),
    /// More files than [`MAX_SKILL_FILES`].
    #[error("the skill has {0} files, more than the 512 a skill may have")]
    TooManyFiles(usize),
    /// More bytes than [`MAX_SKILL_BYTES`].
    #[error("the skill's files total {0} bytes, more than the 16 MiB a skill may have")]
    TooLarge(u64),
}

/// Reads the frontmatter of `skill_md`: the YAML block between a first line `---` and the next
/// line that is `---` (trailing spaces and tabs allowed; a leading byte-order mark skipped),
/// as a JSON object, every field as the author wrote it. YAML 1.2 scalars: `yes` and `on` stay
/// strings, as the Agent Skills tools read them.
///
/// # Errors
/// [`SkillError::NoFrontmatter`], [`SkillError::Yaml`], [`SkillError::NotAMapping`];
/// [`SkillError::MissingField`] without a non-empty string `name` or `description`;
/// [`SkillError::InvalidName`] for a name that breaks [`check_name`].
pub fn frontmatter(skill_md: &str) -> Result<JsonObject, SkillError> {
    let block = frontmatter_block(skill_md).ok_or(SkillError::NoFrontmatter)?;
    let options = serde_saphyr::options! { strict_booleans: true };
    let value: Value = serde_saphyr::from_str_with_options(block, options)
        .map_err(|e| SkillError::Yaml(e.to_string()))?;
    let Value::Object(fields) = value else {
        return Err(SkillError::NotAMapping);
    };
    for field in ["name", "description"] {
        if fields
            .get(field)
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            return Err(SkillError::MissingField(field));
        }
    }
    check_name(fields["name"].as_str().unwrap_or_default())?;
    Ok(fields)
}

/// The YAML text between the opening and the closing `---` lines.
fn frontmatter_block(skill_md: &str) -> Option<&str> {
    let text = skill_md.strip_prefix('\u{feff}').unwrap_or(skill_md);
    let body = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in body.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare.trim_end_matches([' ', '\t']) == "---" && bare.starts_with("---") {
            return Some(&body[..offset]);
        }
        offset += line.len();
    }
    None
}

/// Checks a skill name against the Agent Skills naming rules: 1 to [`MAX_NAME_CHARS`]
/// characters, lowercase ASCII letters, digits and hyphens, no hyphen first or last, no two
/// hyphens in a row.
///
/// # Errors
/// [`SkillError::InvalidName`].
pub fn check_name(name: &str) -> Result<(), SkillError> {
    let valid = !name.is_empty()
        && name.len() <= MAX_NAME_CHARS
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--");
    if valid {
        Ok(())
    } else {
        Err(SkillError::InvalidName(name.to_owned()))
    }
}

/// Checks a skill path (`git-workflow`, `acme/billing/refunds`): `/`-separated segments, none
/// empty, `.` or `..`, each of URI path-segment characters (unreserved, sub-delims, `:`, `@`,
/// or a `%XX` escape), the first also a reg-name (no `:` or `@`: it is the URI's authority);
/// the last segment must be the skill's name ([`check_name`]).
///
/// # Errors
/// [`SkillError::InvalidPath`], [`SkillError::InvalidName`].
pub fn check_skill_path(path: &str) -> Result<(), SkillError> {
    check_segments(path, true)?;
    let first = path.split('/').next().unwrap_or_default();
    if first.contains([':', '@']) {
        return Err(SkillError::InvalidPath(
            path.to_owned(),
            "the first segment is the URI's authority and may not hold ':' or '@'".into(),
        ));
    }
    check_name(path.rsplit('/').next().unwrap_or_default())
}

/// Checks a file's path relative to its skill's root (`references/FORMS.md`): `/`-separated
/// segments, none empty, `.` or `..`, each of URI path-segment characters but `%` (a file's
/// URI is its path as written, so a `%` would read as an escape), so that no file path leaves
/// its skill's directory and every file path is its own URI path.
///
/// # Errors
/// [`SkillError::InvalidPath`], naming the first character refused.
pub fn check_file_path(path: &str) -> Result<(), SkillError> {
    check_segments(path, false)
}

fn check_segments(path: &str, escapes: bool) -> Result<(), SkillError> {
    let refuse = |why: String| Err(SkillError::InvalidPath(path.to_owned(), why));
    if path.is_empty() {
        return refuse("it is empty".into());
    }
    for segment in path.split('/') {
        match segment {
            "" => return refuse("it has an empty segment".into()),
            "." | ".." => return refuse("it has a '.' or '..' segment".into()),
            _ => {
                if let Some(c) = refused_char(segment, escapes) {
                    return refuse(format!(
                        "{c:?} cannot stand in a URI path segment (letters, digits and \
                         -._~!$&'()*+,;=:@ can): rename it"
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The first character of `segment` outside RFC 3986 `segment`: `*( unreserved /
/// pct-encoded / sub-delims / ":" / "@" )`, with `pct-encoded` only when `escapes`.
fn refused_char(segment: &str, escapes: bool) -> Option<char> {
    let mut chars = segment.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '%' if escapes => {
                let hex = segment.get(i + 1..i + 3);
                if !hex.is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit())) {
                    return Some('%');
                }
                chars.next();
                chars.next();
            }
            c if c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:@".contains(c) => {}
            c => return Some(c),
        }
    }
    None
}

/// The URI of a skill's root directory: `skill://<skill-path>`.
pub fn root_uri(skill_path: &str) -> String {
    format!("{SKILL_SCHEME}://{skill_path}")
}

/// The URI of a file of a skill: `skill://<skill-path>/<file-path>`.
pub fn file_uri(skill_path: &str, file_path: &str) -> String {
    format!("{SKILL_SCHEME}://{skill_path}/{file_path}")
}

/// The skill name a `SKILL.md` URI carries: its segment before `/SKILL.md` (`refunds` in
/// `skill://acme/billing/refunds/SKILL.md`), if the URI ends so.
pub fn name_in_uri(uri: &str) -> Option<&str> {
    let (_, rest) = uri.split_once("://")?;
    let dir = rest.strip_suffix(SKILL_FILE)?.strip_suffix('/')?;
    let name = dir.rsplit('/').next()?;
    (!name.is_empty()).then_some(name)
}

/// The digest of `bytes`: `sha256:` and 64 lowercase hexadecimal digits (the extension's
/// "Integrity and Verification").
pub fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut text = String::with_capacity(7 + 64);
    text.push_str("sha256:");
    for byte in hash {
        text.push_str(&format!("{byte:02x}"));
    }
    text
}

/// A direct child of a directory resource.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Child {
    /// A file: its URI, one of the files given.
    File(String),
    /// A subdirectory: its URI (no trailing slash).
    Directory(String),
}

impl Child {
    /// The child's URI.
    pub fn uri(&self) -> &str {
        match self {
            Child::File(uri) | Child::Directory(uri) => uri,
        }
    }

    /// The child's name: the last segment of its URI.
    pub fn name(&self) -> &str {
        let uri = self.uri();
        uri.rsplit('/').next().unwrap_or(uri)
    }
}

/// The direct children of directory `dir` among the file URIs `files`, in URI order, each
/// once: a file directly under `dir`, or a subdirectory holding files. `None` when `dir` is
/// no directory: no file lies under it, or it is not `scheme://` and at least one character,
/// or it ends in `/` (directory URIs have no trailing slash).
pub fn children<'a>(dir: &str, files: impl IntoIterator<Item = &'a str>) -> Option<Vec<Child>> {
    let (_, path) = dir.split_once("://")?;
    if path.is_empty() || dir.ends_with('/') {
        return None;
    }
    let mut found = BTreeMap::new();
    for file in files {
        let Some(rest) = file
            .strip_prefix(dir)
            .and_then(|rest| rest.strip_prefix('/'))
        else {
            continue;
        };
        let child = match rest.split_once('/') {
            Some((segment, _)) => Child::Directory(format!("{dir}/{segment}")),
            None => Child::File(file.to_owned()),
        };
        found.insert(child.uri().to_owned(), child);
    }
    if found.is_empty() {
        return None;
    }
    Some(found.into_values().collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn frontmatter_is_read_as_the_author_wrote_it() {
        let md = "---\nname: pdf-tools\ndescription: Fill PDF forms\nlicense: MIT\n\
                  metadata:\n  version: 2.1\n  enabled: yes\n  tags: [a, 'b']\n---\n# Body\n---\n";
        let fields = frontmatter(md).unwrap();
        assert_eq!(
            Value::Object(fields),
            json!({"name": "pdf-tools", "description": "Fill PDF forms", "license": "MIT",
                   "metadata": {"version": 2.1, "enabled": "yes", "tags": ["a", "b"]}})
        );
        // A byte-order mark, CRLF lines and a closing line with trailing blanks.
        let crlf = "\u{feff}---\r\nname: a\r\ndescription: b\r\n--- \t\r\nbody";
        assert_eq!(
            Value::Object(frontmatter(crlf).unwrap()),
            json!({"name": "a", "description": "b"})
        );
    }

    #[test]
    fn bad_frontmatter_is_refused_with_its_reason() {
        let cases: [(&str, SkillError); 7] = [
            ("# no frontmatter", SkillError::NoFrontmatter),
            ("---\nname: a\ndescription: b\n", SkillError::NoFrontmatter),
            ("---\n- a\n- b\n---\n", SkillError::NotAMapping),
            (
                "---\ndescription: b\n---\n",
                SkillError::MissingField("name"),
            ),
            (
                "---\nname: a\ndescription: ''\n---\n",
                SkillError::MissingField("description"),
            ),
            (
                "---\nname: 7\ndescription: b\n---\n",
                SkillError::MissingField("name"),
            ),
            (
                "---\nname: Bad--Name\ndescription: b\n---\n",
                SkillError::InvalidName("Bad--Name".into()),
            ),
        ];
        for (md, error) in cases {
            assert_eq!(frontmatter(md), Err(error), "{md:?}");
        }
        assert!(matches!(
            frontmatter("---\nname: [unclosed\n---\n"),
            Err(SkillError::Yaml(message)) if message.contains("line 1")
        ));
    }

    #[test]
    fn names_and_paths_follow_the_rules() {
        for good in ["a", "git-workflow", "x1-2", &"a".repeat(64)] {
            assert_eq!(check_name(good), Ok(()), "{good}");
        }
        for bad in ["", "-a", "a-", "a--b", "A", "a_b", "é", &"a".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
        for good in ["refunds", "acme/billing/refunds", "a.b/x", "ns%20x/y"] {
            assert_eq!(check_skill_path(good), Ok(()), "{good}");
        }
        for bad in [
            "",
            "a//b",
            "../b",
            "a/./b",
            "a/B",
            "user@host/b",
            "a b/c",
            "a/b/",
            "%zz/a",
        ] {
            assert!(check_skill_path(bad).is_err(), "{bad}");
        }
        for good in ["SKILL.md", "references/FORMS.md", "scripts/x.py"] {
            assert_eq!(check_file_path(good), Ok(()), "{good}");
        }
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "a\\b",
            "a/",
            "a?b",
            "a#b",
            "a%20b",
        ] {
            assert!(check_file_path(bad).is_err(), "{bad}");
        }
        assert_eq!(
            check_file_path("notes/my résumé.md")
                .unwrap_err()
                .to_string(),
            "invalid path \"notes/my résumé.md\": ' ' cannot stand in a URI path segment \
             (letters, digits and -._~!$&'()*+,;=:@ can): rename it"
        );
    }

    #[test]
    fn uris_digests_and_names() {
        assert_eq!(
            file_uri("acme/refunds", "SKILL.md"),
            "skill://acme/refunds/SKILL.md"
        );
        assert_eq!(root_uri("acme/refunds"), "skill://acme/refunds");
        assert_eq!(
            name_in_uri("skill://acme/refunds/SKILL.md"),
            Some("refunds")
        );
        assert_eq!(name_in_uri("skill://refunds/SKILL.md"), Some("refunds"));
        assert_eq!(name_in_uri("skill://SKILL.md"), None);
        assert_eq!(name_in_uri("skill://a/README.md"), None);
        assert_eq!(
            digest(b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn a_directory_lists_its_direct_children_once() {
        let files = [
            "skill://acme/refunds/SKILL.md",
            "skill://acme/refunds/templates/a.md",
            "skill://acme/refunds/templates/deep/b.md",
            "skill://acme/chargebacks/SKILL.md",
            "skill://acme/refunds/SKILL.md",
        ];
        assert_eq!(
            children("skill://acme/refunds", files),
            Some(vec![
                Child::File("skill://acme/refunds/SKILL.md".into()),
                Child::Directory("skill://acme/refunds/templates".into()),
            ])
        );
        assert_eq!(
            children("skill://acme", files),
            Some(vec![
                Child::Directory("skill://acme/chargebacks".into()),
                Child::Directory("skill://acme/refunds".into()),
            ])
        );
        for not_a_directory in [
            "skill://acme/refunds/SKILL.md",
            "skill://acme/refunds/",
            "skill://acme/ref",
            "skill://",
            "skill:",
            "skill",
        ] {
            assert_eq!(children(not_a_directory, files), None, "{not_a_directory}");
        }
    }

    fn file_paths() -> impl Strategy<Value = Vec<String>> {
        // Files end in `.md` and directories never do: a path is never both (as on a disk).
        prop::collection::vec("([ab]{1,2}/){0,3}[ab]{1,2}\\.md", 1..12)
    }

    proptest! {
        /// Every file under a directory is reached exactly once: as a file child, or under
        /// exactly one directory child; every child is one level down; no child is a
        /// prefix-sibling mistake (`ab` is not under `a`).
        #[test]
        fn children_partition_the_files_under_a_directory(paths in file_paths(), dir in "[ab]{1,2}(/[ab]{1,2}){0,2}") {
            let files: Vec<String> = paths.iter().map(|p| format!("s://{p}")).collect();
            let dir = format!("s://{dir}");
            let under: Vec<&String> = files.iter().filter(|f| f.starts_with(&format!("{dir}/"))).collect();
            match children(&dir, files.iter().map(String::as_str)) {
                None => prop_assert!(under.is_empty()),
                Some(kids) => {
                    prop_assert!(!kids.is_empty());
                    for file in &under {
                        let holders = kids.iter().filter(|k| match k {
                            Child::File(uri) => uri == *file,
                            Child::Directory(uri) => file.starts_with(&format!("{uri}/")),
                        }).count();
                        prop_assert_eq!(holders, 1, "{}", file);
                    }
                    for kid in &kids {
                        let rest = kid.uri().strip_prefix(&format!("{dir}/")).unwrap();
                        prop_assert!(!rest.is_empty() && !rest.contains('/'));
                        prop_assert_eq!(kid.name(), rest);
                    }
                }
            }
        }
    }
}
