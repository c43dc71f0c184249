//! The Skills extension (`io.modelcontextprotocol/skills`, SEP-2640): the skills a server
//! offers ([`Client::list_skills`], [`Client::get_skill`]), its skill directories
//! ([`Client::read_directory`]) and **verified reads** of a skill's files
//! ([`Client::read_skill_file`]).
//!
//! A skill entry ([`Skill`]) names its `SKILL.md` (`skill://<skill-path>/SKILL.md`), carries
//! the `SKILL.md` frontmatter and lists every file of the skill with its size and SHA-256
//! digest ([`SkillResources::Files`]), or says its files are `"dynamic"`
//! ([`SkillResources::Dynamic`]: no integrity is offered). The files themselves are read with
//! `resources/read`. A host must check what it reads against the entry it holds and must not
//! use what fails; [`Client::read_skill_file`] does so:
//!
//! * a URI the entry does not list is refused before anything is sent;
//! * the content's length in bytes (a text's UTF-8, a blob's decoded bytes) must be the
//!   entry's `size`, and its SHA-256 ([`tasks_core::skill::digest`]) the entry's `digest`;
//! * the `SKILL.md`'s frontmatter, read with [`tasks_core::skill::frontmatter`] (YAML 1.2, as
//!   the server reads it), must equal the entry's `frontmatter` field by field.
//!
//! Each failure is [`ClientError::Verification`] with a
//! [`VerificationFailure`](crate::VerificationFailure) saying what did not match. Lists follow
//! every page, bounded like the other lists ([`MAX_TOOL_PAGES`](crate::MAX_TOOL_PAGES),
//! [`MAX_TOOLS`](crate::MAX_TOOLS)); a server without the extension answers -32601,
//! [`ClientError::MethodNotFound`]. The extension is defined on MCP 2026-07-28 only; a server
//! that has it declares `capabilities.extensions["io.modelcontextprotocol/skills"]` in its
//! `server/discover` result ([`Client::discover`]; [`SKILLS_EXTENSION`]).
//!
//! Source: the Skills extension specification (the methods `skills/list`, `skills/get` and
//! `resources/directory/read`; the checks from its section "Integrity and Verification"):
//! <https://github.com/modelcontextprotocol/ext-skills/blob/main/specification/stable/skills.mdx>.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tasks_core::skill::{SkillError, SKILL_FILE};
use tasks_core::JsonObject;

use crate::catalog::{member, ReadResult, Resource, ResourceBody, ResourceContents};
use crate::client::Client;
use crate::error::{ClientError, FieldMismatch, VerificationFailure};
use crate::listing::{Caching, Listing};

pub use tasks_core::skill::{DIRECTORY_MIME_TYPE, SKILLS_EXTENSION};

/// One skill, as `skills/list` and `skills/get` give it: `{"uri", "frontmatter", "resources"}`.
/// Other members are ignored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Skill {
    /// The URI of its `SKILL.md`, `skill://<skill-path>/SKILL.md`: what
    /// [`Client::get_skill`] takes.
    pub uri: String,
    /// Every field of the `SKILL.md` YAML frontmatter, as JSON: at least `name` and
    /// `description` (strings), and whatever else the author wrote (`license`, `metadata`, …).
    pub frontmatter: JsonObject,
    /// Its files with their sizes and digests, or `"dynamic"`.
    pub resources: SkillResources,
}

/// A skill's `resources`: its files, or `"dynamic"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "WireResources", into = "WireResources")]
#[non_exhaustive]
pub enum SkillResources {
    /// Every file of the skill (its `SKILL.md` included), each with what a read is checked
    /// against.
    Files(Vec<SkillResource>),
    /// `"dynamic"`: the server does not list the files (they may change, or be made on
    /// demand); a read of one cannot be verified.
    Dynamic,
}

/// One file of a skill: `{"uri", "digest", "size"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SkillResource {
    /// Its resource URI, `skill://<skill-path>/<file-path>`.
    pub uri: String,
    /// The SHA-256 of its bytes: `sha256:` and 64 lowercase hexadecimal digits.
    pub digest: String,
    /// Its length in bytes.
    pub size: u64,
}

/// [`SkillResources`] as sent: a list, or the word `dynamic`.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum WireResources {
    Files(Vec<SkillResource>),
    Word(String),
}

/// The word of [`SkillResources::Dynamic`].
const DYNAMIC: &str = "dynamic";

impl TryFrom<WireResources> for SkillResources {
    type Error = String;

    fn try_from(wire: WireResources) -> Result<Self, String> {
        match wire {
            WireResources::Files(files) => Ok(SkillResources::Files(files)),
            WireResources::Word(word) if word == DYNAMIC => Ok(SkillResources::Dynamic),
            WireResources::Word(_) => Err("a skill's resources are a list or \"dynamic\"".into()),
        }
    }
}

impl From<SkillResources> for WireResources {
    fn from(resources: SkillResources) -> Self {
        match resources {
            SkillResources::Files(files) => WireResources::Files(files),
            SkillResources::Dynamic => WireResources::Word(DYNAMIC.into()),
        }
    }
}

impl Skill {
    /// The frontmatter's `name`, if it is a string.
    pub fn name(&self) -> Option<&str> {
        self.frontmatter.get("name").and_then(Value::as_str)
    }

    /// The frontmatter's `description`, if it is a string.
    pub fn description(&self) -> Option<&str> {
        self.frontmatter.get("description").and_then(Value::as_str)
    }

    /// The URI of the skill's directory: its `SKILL.md`'s URI without `/SKILL.md`
    /// (`skill://git-workflow`); for a URI that does not end so, everything before its last
    /// `/`.
    pub fn root_uri(&self) -> &str {
        let uri = self.uri.as_str();
        uri.strip_suffix(SKILL_FILE)
            .and_then(|dir| dir.strip_suffix('/'))
            .or_else(|| uri.rsplit_once('/').map(|(dir, _)| dir))
            .unwrap_or(uri)
    }

    /// The URI of `path`: `path` itself when it is a URI (has `://`), else the file at `path`
    /// below the skill's directory (`references/style.md` →
    /// `skill://conformance/report-writing/references/style.md`).
    pub fn file_uri(&self, path: &str) -> String {
        if path.contains("://") {
            path.to_owned()
        } else {
            format!("{}/{}", self.root_uri(), path.trim_start_matches('/'))
        }
    }

    /// The listed files; `None` for [`SkillResources::Dynamic`].
    pub fn files(&self) -> Option<&[SkillResource]> {
        match &self.resources {
            SkillResources::Files(files) => Some(files),
            SkillResources::Dynamic => None,
        }
    }

    /// The listed file of `uri`, if the entry lists it.
    pub fn file(&self, uri: &str) -> Option<&SkillResource> {
        self.files()?.iter().find(|file| file.uri == uri)
    }

    /// The listed files' sizes added up, in bytes; `None` for [`SkillResources::Dynamic`].
    pub fn total_size(&self) -> Option<u64> {
        self.files()
            .map(|files| files.iter().fold(0u64, |sum, f| sum.saturating_add(f.size)))
    }

    /// Whether a read of `uri` may be checked against this entry: a listed file, or for
    /// [`SkillResources::Dynamic`] a URI below the skill's directory.
    fn covers(&self, uri: &str) -> bool {
        match &self.resources {
            SkillResources::Files(_) => self.file(uri).is_some(),
            SkillResources::Dynamic => uri
                .strip_prefix(self.root_uri())
                .is_some_and(|rest| rest.len() > 1 && rest.starts_with('/')),
        }
    }

    /// Checks `contents` (read from `contents.uri`) against this entry, as the extension's
    /// "Integrity and Verification" asks of a host: a listed file; its length in bytes the
    /// entry's `size`; its SHA-256 the entry's `digest`; and for the `SKILL.md` (the entry's
    /// `uri`) its frontmatter equal to the entry's `frontmatter`, field by field. For
    /// [`SkillResources::Dynamic`] only what can be checked is: that the URI is below the
    /// skill's directory, and the `SKILL.md`'s frontmatter.
    ///
    /// # Errors
    /// The first [`VerificationFailure`] found.
    pub fn verify(&self, contents: &ResourceContents) -> Result<(), VerificationFailure> {
        if !self.covers(&contents.uri) {
            return Err(VerificationFailure::NotListed);
        }
        if let Some(file) = self.file(&contents.uri) {
            check_integrity(file, contents.bytes())?;
        }
        if contents.uri == self.uri {
            self.check_frontmatter(contents)?;
        }
        Ok(())
    }

    /// The `SKILL.md` in `contents` has this entry's frontmatter.
    fn check_frontmatter(&self, contents: &ResourceContents) -> Result<(), VerificationFailure> {
        let text = match &contents.body {
            ResourceBody::Text(text) => text.as_str(),
            ResourceBody::Blob(bytes) => std::str::from_utf8(bytes).map_err(|_| {
                VerificationFailure::FrontmatterUnreadable {
                    why: "the SKILL.md is not UTF-8 text",
                }
            })?,
        };
        let read = tasks_core::skill::frontmatter(text)
            .map_err(|error| VerificationFailure::FrontmatterUnreadable { why: why(&error) })?;
        compare_frontmatter(&self.frontmatter, &read)
    }
}

/// What is wrong with a frontmatter, in words that quote nothing of the file.
fn why(error: &SkillError) -> &'static str {
    match error {
        SkillError::NoFrontmatter => "no YAML frontmatter between two --- lines",
        SkillError::Yaml(_) => "the frontmatter is not valid YAML",
        SkillError::NotAMapping => "the frontmatter is not a mapping of fields",
        SkillError::MissingField("name") => "no non-empty string field `name`",
        SkillError::MissingField(_) => "no non-empty string field `description`",
        SkillError::InvalidName(_) => "its name breaks the Agent Skills naming rules",
        _ => "it is not a skill's frontmatter",
    }
}

/// `bytes` have the `size` and `digest` of `file`.
fn check_integrity(file: &SkillResource, bytes: &[u8]) -> Result<(), VerificationFailure> {
    let actual = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if actual != file.size {
        return Err(VerificationFailure::Size {
            expected: file.size,
            actual,
        });
    }
    let well_formed = file
        .digest
        .strip_prefix("sha256:")
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()));
    if !well_formed {
        return Err(VerificationFailure::UnsupportedDigest);
    }
    let digest = tasks_core::skill::digest(bytes);
    if !digest.eq_ignore_ascii_case(&file.digest) {
        return Err(VerificationFailure::Digest {
            expected: file.digest.clone(),
            actual: digest,
        });
    }
    Ok(())
}

/// The entry's frontmatter and the file's have the same fields with the same values (numbers
/// equal as numbers: `1` and `1.0` are one value); the first field that differs, in name
/// order.
fn compare_frontmatter(entry: &JsonObject, file: &JsonObject) -> Result<(), VerificationFailure> {
    let mut fields: Vec<&String> = entry.keys().chain(file.keys()).collect();
    fields.sort();
    fields.dedup();
    for field in fields {
        let mismatch = match (entry.get(field), file.get(field)) {
            (Some(a), Some(b)) if same(a, b) => continue,
            (Some(_), Some(_)) => FieldMismatch::Value,
            (Some(_), None) => FieldMismatch::OnlyInEntry,
            _ => FieldMismatch::OnlyInFile,
        };
        return Err(VerificationFailure::Frontmatter {
            field: field.clone(),
            mismatch,
        });
    }
    Ok(())
}

/// JSON equality, with numbers compared by value.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y
                || matches!((x.as_f64(), y.as_f64()), (Some(x), Some(y)) if x.total_cmp(&y).is_eq())
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, a)| y.get(k).is_some_and(|b| same(a, b)))
        }
        _ => a == b,
    }
}

/// A `skills/get` result: the skill and how long it may be reused.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SkillResult {
    /// The skill's entry.
    pub skill: Skill,
    /// The caching hints (a server of this project: `public`, the same for every caller).
    pub caching: Caching,
}

/// A file of a skill read by [`Client::read_skill_file`]: verified against the entry, or from
/// a skill whose files are `"dynamic"`, which offers nothing to verify against. Match on it to
/// decide whether unverified content may be used.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
#[non_exhaustive]
pub enum SkillFile {
    /// Its size and digest (and for the `SKILL.md` its frontmatter) are the entry's.
    Verified(ResourceContents),
    /// From a [`SkillResources::Dynamic`] skill: only its place below the skill's directory
    /// (and for the `SKILL.md` its frontmatter) was checked; its bytes are unverified.
    Unverified(ResourceContents),
}

impl SkillFile {
    /// The contents, verified or not.
    pub fn contents(&self) -> &ResourceContents {
        match self {
            SkillFile::Verified(contents) | SkillFile::Unverified(contents) => contents,
        }
    }

    /// Whether the contents were verified.
    pub fn is_verified(&self) -> bool {
        matches!(self, SkillFile::Verified(_))
    }

    /// The contents if they were verified; `None` for unverified ones.
    pub fn into_verified(self) -> Option<ResourceContents> {
        match self {
            SkillFile::Verified(contents) => Some(contents),
            SkillFile::Unverified(_) => None,
        }
    }
}

impl Client {
    /// `skills/list`, every page: the server's skills and the list's caching hints.
    ///
    /// # Errors
    /// [`ClientError::MethodNotFound`] when the server does not serve the Skills extension;
    /// the request's error; [`ClientError::Malformed`] for a page that is not a skill list (an
    /// entry without `uri`, `frontmatter` or `resources`, a file without `uri`, `digest` or
    /// `size`), more than [`MAX_TOOL_PAGES`](crate::MAX_TOOL_PAGES) pages or
    /// [`MAX_TOOLS`](crate::MAX_TOOLS) skills.
    pub async fn list_skills(&self) -> Result<Listing<Skill>, ClientError> {
        self.list_all("skills/list", "skills", "skill").await
    }

    /// `skills/get` of the skill whose `SKILL.md` is `uri`: its entry and caching hints.
    ///
    /// # Errors
    /// [`ClientError::MethodNotFound`] when the server does not serve the Skills extension;
    /// the server's refusal ([`ClientError::Rpc`]: -32602 `Skill not found` with `data.uri`);
    /// [`ClientError::Malformed`] for a result that is not a skill entry, or the entry of
    /// another URI.
    pub async fn get_skill(&self, uri: &str) -> Result<SkillResult, ClientError> {
        let mut params = JsonObject::new();
        params.insert("uri".into(), json!(uri));
        let mut result = self.request_of("skills/get", params, Vec::new()).await?;
        let caching = Caching::of(&result);
        let skill: Skill = member(&mut result, "skill", "skills/get")?;
        if skill.uri != uri {
            return Err(ClientError::malformed(format!(
                "skills/get of {uri} answered with the skill {}",
                skill.uri
            )));
        }
        Ok(SkillResult { skill, caching })
    }

    /// `resources/directory/read` of directory `uri` (a skill's directory, `skill://git-workflow`,
    /// or one below it), every page: its direct children, files with `mimeType` and `size`,
    /// subdirectories with `mimeType` [`DIRECTORY_MIME_TYPE`] ([`Resource::is_directory`]).
    /// The caching hints are a server's that sent them (this project's send none: the result
    /// is not to be reused).
    ///
    /// # Errors
    /// [`ClientError::MethodNotFound`] when the server does not serve the Skills extension;
    /// the server's refusal ([`ClientError::Rpc`]: -32602 `Not a directory resource`);
    /// [`ClientError::Malformed`] as for [`Client::list_skills`].
    pub async fn read_directory(&self, uri: &str) -> Result<Listing<Resource>, ClientError> {
        let mut params = JsonObject::new();
        params.insert("uri".into(), json!(uri));
        self.list_all_of(
            "resources/directory/read",
            &params,
            "resources",
            "directory entry",
        )
        .await
    }

    /// Reads file `uri` of `skill` (an entry from [`Client::list_skills`] or
    /// [`Client::get_skill`]) with `resources/read`, and verifies it against the entry
    /// ([`Skill::verify`]): refused unless listed, then its size, digest and, for the
    /// `SKILL.md`, its frontmatter. A file of a [`SkillResources::Dynamic`] skill is read but
    /// [`SkillFile::Unverified`].
    ///
    /// A server may change a skill after its entry was fetched; its files then no longer match
    /// the entry held, and reading them fails verification until the entry is fetched again
    /// ([`Client::get_skill`]), which a caller should do once before giving up (the extension's
    /// "Integrity and Verification": a host refreshes the entry and proceeds from the current
    /// one, with any approval bound to the old one revoked).
    ///
    /// # Errors
    /// [`ClientError::Verification`]: [`VerificationFailure::NotListed`] before anything is
    /// sent; after the read, an answer without exactly one item of `uri`
    /// ([`VerificationFailure::Contents`]), or content that does not match. The read's errors
    /// as [`Client::read_resource`] has them.
    pub async fn read_skill_file(
        &self,
        skill: &Skill,
        uri: &str,
    ) -> Result<SkillFile, ClientError> {
        let failed = |failure| ClientError::Verification {
            uri: uri.to_owned(),
            failure,
        };
        if !skill.covers(uri) {
            return Err(failed(VerificationFailure::NotListed));
        }
        let ReadResult { contents, .. } = self.read_resource(uri).await?;
        let mut of_uri: Vec<ResourceContents> =
            contents.into_iter().filter(|c| c.uri == uri).collect();
        if of_uri.len() != 1 {
            return Err(failed(VerificationFailure::Contents {
                found: of_uri.len(),
            }));
        }
        let contents = of_uri.remove(0);
        skill.verify(&contents).map_err(failed)?;
        Ok(match skill.resources {
            SkillResources::Files(_) => SkillFile::Verified(contents),
            SkillResources::Dynamic => SkillFile::Unverified(contents),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SKILL_MD: &str = "---\nname: refunds\ndescription: Process refunds\nmetadata:\n  \
                            version: \"1.0\"\n---\n# Refunds\n";
    const EMAIL: &str = "Dear customer";

    fn text(uri: &str, text: &str) -> ResourceContents {
        serde_json::from_value(json!({"uri": uri, "text": text})).expect("contents")
    }

    fn entry(resources: Value) -> Skill {
        serde_json::from_value(json!({
            "uri": "skill://acme/refunds/SKILL.md",
            "frontmatter": {"name": "refunds", "description": "Process refunds",
                "metadata": {"version": "1.0"}},
            "resources": resources,
        }))
        .expect("a skill entry")
    }

    fn listed() -> Skill {
        entry(json!([
            {"uri": "skill://acme/refunds/SKILL.md", "digest": tasks_core::skill::digest(SKILL_MD.as_bytes()), "size": SKILL_MD.len()},
            {"uri": "skill://acme/refunds/templates/email.md", "digest": tasks_core::skill::digest(EMAIL.as_bytes()), "size": 13},
        ]))
    }

    const EMAIL_URI: &str = "skill://acme/refunds/templates/email.md";

    #[test]
    fn listed_files_with_their_size_digest_and_frontmatter_verify() {
        let skill = listed();
        assert_eq!(skill.verify(&text(EMAIL_URI, EMAIL)), Ok(()));
        assert_eq!(skill.verify(&text(&skill.uri, SKILL_MD)), Ok(()));
        // A blob is checked by its decoded bytes.
        let blob: ResourceContents =
            serde_json::from_value(json!({"uri": EMAIL_URI, "blob": "RGVhciBjdXN0b21lcg=="}))
                .expect("a blob");
        assert_eq!(blob.bytes(), EMAIL.as_bytes());
        assert_eq!(skill.verify(&blob), Ok(()));
        assert_eq!(skill.name(), Some("refunds"));
        assert_eq!(skill.description(), Some("Process refunds"));
        assert_eq!(skill.root_uri(), "skill://acme/refunds");
        assert_eq!(skill.file_uri("templates/email.md"), EMAIL_URI);
        assert_eq!(skill.file_uri(EMAIL_URI), EMAIL_URI);
        assert_eq!(skill.total_size(), Some(SKILL_MD.len() as u64 + 13));
    }

    #[test]
    fn a_size_that_differs_is_a_failure_naming_both_sizes() {
        let failure = listed()
            .verify(&text(EMAIL_URI, "Dear customers"))
            .expect_err("one byte more");
        assert_eq!(
            failure,
            VerificationFailure::Size {
                expected: 13,
                actual: 14
            }
        );
        assert_eq!(
            failure.to_string(),
            "its size is 14 bytes, the skill's entry says 13"
        );
    }

    #[test]
    fn a_digest_that_differs_is_a_failure_and_the_content_is_never_quoted() {
        // The same length, another byte.
        let failure = listed()
            .verify(&text(EMAIL_URI, "Dear Customer"))
            .expect_err("another digest");
        let VerificationFailure::Digest { expected, actual } = &failure else {
            panic!("a digest failure: {failure:?}");
        };
        assert_eq!(expected, &tasks_core::skill::digest(EMAIL.as_bytes()));
        assert_eq!(actual, &tasks_core::skill::digest(b"Dear Customer"));
        let error = ClientError::Verification {
            uri: EMAIL_URI.into(),
            failure: failure.clone(),
        };
        let message = error.to_string();
        assert!(
            message.starts_with(&format!(
                "the skill file {EMAIL_URI} failed verification: its digest is sha256:"
            )),
            "{message}"
        );
        assert!(!message.contains("Customer"), "{message}");
        // An entry whose digest is of another algorithm cannot be checked.
        let other = entry(json!([{"uri": EMAIL_URI, "digest": "md5:abc", "size": 13}]));
        assert_eq!(
            other.verify(&text(EMAIL_URI, EMAIL)),
            Err(VerificationFailure::UnsupportedDigest)
        );
        // Upper-case hex is the same digest.
        let upper = entry(json!([{"uri": EMAIL_URI, "size": 13,
            "digest": tasks_core::skill::digest(EMAIL.as_bytes()).to_uppercase().replacen("SHA256", "sha256", 1)}]));
        assert_eq!(upper.verify(&text(EMAIL_URI, EMAIL)), Ok(()));
    }

    #[test]
    fn a_skill_md_whose_frontmatter_differs_fails_by_field() {
        // Same bytes as listed (so size and digest pass), but the entry says another thing.
        let mut skill = listed();
        skill
            .frontmatter
            .insert("description".into(), json!("Process returns"));
        assert_eq!(
            skill.verify(&text(&skill.uri.clone(), SKILL_MD)),
            Err(VerificationFailure::Frontmatter {
                field: "description".into(),
                mismatch: FieldMismatch::Value
            })
        );
        let mut skill = listed();
        skill.frontmatter.insert("license".into(), json!("MIT"));
        let failure = skill
            .verify(&text(&skill.uri.clone(), SKILL_MD))
            .expect_err("a field the file lacks");
        assert_eq!(
            failure.to_string(),
            "its frontmatter field `license` does not match the skill's entry (only in the entry)"
        );
        let mut skill = listed();
        skill.frontmatter.remove("metadata");
        assert_eq!(
            skill.verify(&text(&skill.uri.clone(), SKILL_MD)),
            Err(VerificationFailure::Frontmatter {
                field: "metadata".into(),
                mismatch: FieldMismatch::OnlyInFile
            })
        );
        // A SKILL.md without frontmatter (size and digest made to match).
        let bare = "# Refunds\n";
        let skill = entry(json!([{"uri": "skill://acme/refunds/SKILL.md",
            "digest": tasks_core::skill::digest(bare.as_bytes()), "size": bare.len()}]));
        assert_eq!(
            skill.verify(&text(&skill.uri.clone(), bare)),
            Err(VerificationFailure::FrontmatterUnreadable {
                why: "no YAML frontmatter between two --- lines"
            })
        );
        assert!(same(&json!({"a": [1, 2.0]}), &json!({"a": [1.0, 2]})));
        assert!(!same(&json!({"a": 1}), &json!({"a": "1"})));
    }

    #[test]
    fn a_file_the_entry_does_not_list_fails_before_anything_else() {
        let skill = listed();
        for uri in [
            "skill://acme/refunds/templates/other.md",
            "skill://acme/chargebacks/SKILL.md",
            "test://static-text",
        ] {
            assert_eq!(
                skill.verify(&text(uri, EMAIL)),
                Err(VerificationFailure::NotListed),
                "{uri}"
            );
        }
    }

    #[test]
    fn dynamic_skills_read_files_below_their_directory_unverified() {
        let skill = entry(json!("dynamic"));
        assert_eq!(skill.resources, SkillResources::Dynamic);
        assert_eq!(skill.files(), None);
        assert_eq!(skill.total_size(), None);
        assert_eq!(
            serde_json::to_value(&skill).expect("serializes")["resources"],
            json!("dynamic")
        );
        // Any bytes below the directory pass: there is nothing to check them against.
        assert_eq!(skill.verify(&text(EMAIL_URI, "anything at all")), Ok(()));
        // Not outside it.
        for uri in [
            "skill://acme/refunds",
            "skill://acme/refunds/",
            "skill://acme/refundsX/a.md",
            "skill://other/a.md",
        ] {
            assert_eq!(
                skill.verify(&text(uri, "x")),
                Err(VerificationFailure::NotListed),
                "{uri}"
            );
        }
        // The SKILL.md's frontmatter is still compared.
        assert_eq!(skill.verify(&text(&skill.uri, SKILL_MD)), Ok(()));
        assert!(matches!(
            skill.verify(&text(
                &skill.uri,
                "---\nname: refunds\ndescription: Other\n---\n"
            )),
            Err(VerificationFailure::Frontmatter { ref field, .. }) if field == "description"
        ));
        let file = SkillFile::Unverified(text(EMAIL_URI, "x"));
        assert!(!file.is_verified());
        assert_eq!(file.contents().text(), Some("x"));
        assert_eq!(file.into_verified(), None);
    }

    #[test]
    fn entries_read_leniently_but_resources_are_a_list_or_dynamic() {
        let skill: Skill = serde_json::from_value(json!({
            "uri": "skill://a/SKILL.md", "frontmatter": {"name": "a", "description": "d"},
            "resources": [], "_meta": {"x": 1}, "other": true,
        }))
        .expect("unknown members are ignored");
        assert_eq!(skill.files(), Some(&[][..]));
        for bad in [
            json!({"uri": "skill://a/SKILL.md", "frontmatter": {}, "resources": "static"}),
            json!({"uri": "skill://a/SKILL.md", "frontmatter": {}}),
            json!({"uri": "skill://a/SKILL.md", "frontmatter": {}, "resources": [{"uri": "x"}]}),
        ] {
            assert!(
                serde_json::from_value::<Skill>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }
}
