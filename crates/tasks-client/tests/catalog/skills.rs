//! The Skills extension through the client against the fixture over real HTTP: the two skills
//! listed across pages and got, their directories browsed, every listed file read and
//! verified against the real bytes on disk, held entries that do not match the server's files
//! refused by what differs, a dynamic entry read unverified, and a server without the
//! extension.

use std::path::PathBuf;

use serde_json::json;
use tasks_client::{
    CacheScope, Client, ClientError, FieldMismatch, SkillFile, SkillResources, VerificationFailure,
};

use super::{fixture, rpc_error};

const REPORT: &str = "skill://conformance/report-writing/SKILL.md";
const GIT: &str = "skill://git-workflow/SKILL.md";

/// A file of the fixture's skills, as on disk (`tasks-conformance/skills/…`).
fn on_disk(path: &str) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tasks-conformance/skills");
    std::fs::read_to_string(root.join(path)).expect("a fixture skill file")
}

fn verification(error: &ClientError) -> (&str, &VerificationFailure) {
    match error {
        ClientError::Verification { uri, failure } => (uri, failure),
        other => panic!("not a verification failure: {other:?}"),
    }
}

#[tokio::test]
async fn skills_are_listed_across_pages_and_got_with_their_files() {
    let server = fixture(Some(1)).await;
    let client = Client::connect(server.url()).await.expect("connects");
    let skills = client.list_skills().await.expect("skills/list");
    let listed: Vec<(&str, Option<&str>, Option<usize>)> = skills
        .items
        .iter()
        .map(|s| (s.uri.as_str(), s.name(), s.files().map(<[_]>::len)))
        .collect();
    assert_eq!(
        listed,
        [
            (REPORT, Some("report-writing"), Some(3)),
            (GIT, Some("git-workflow"), Some(1)),
        ],
        "two skills on two pages of one"
    );
    assert_eq!(skills.caching.ttl_ms, Some(42_000));
    assert_eq!(skills.caching.scope, CacheScope::Public);

    let report = &skills.items[0];
    assert_eq!(
        report.description(),
        Some("Write a short status report from a task's result, in the house style")
    );
    assert_eq!(report.frontmatter["license"], "MIT OR Apache-2.0");
    assert_eq!(report.frontmatter["metadata"], json!({"version": "1.0"}));
    let files: Vec<(&str, u64)> = report
        .files()
        .expect("listed files")
        .iter()
        .map(|f| (f.uri.as_str(), f.size))
        .collect();
    let sizes = ["SKILL.md", "references/style.md", "templates/summary.md"]
        .map(|path| on_disk(&format!("report-writing/{path}")).len() as u64);
    assert_eq!(
        files,
        [
            (REPORT, sizes[0]),
            (
                "skill://conformance/report-writing/references/style.md",
                sizes[1]
            ),
            (
                "skill://conformance/report-writing/templates/summary.md",
                sizes[2]
            ),
        ]
    );
    assert_eq!(report.total_size(), Some(sizes.iter().sum()));

    let got = client.get_skill(REPORT).await.expect("skills/get");
    assert_eq!(&got.skill, report, "the entry skills/list gave");
    assert_eq!(got.caching.scope, CacheScope::Public);
    let unknown = client
        .get_skill("skill://conformance/nothing/SKILL.md")
        .await
        .expect_err("unknown");
    assert_eq!(rpc_error(&unknown), (-32602, "Skill not found".into()));
}

#[tokio::test]
async fn skill_directories_are_read_across_pages() {
    let server = fixture(Some(1)).await;
    let client = Client::connect(server.url()).await.expect("connects");
    let dir = client
        .read_directory("skill://conformance/report-writing")
        .await
        .expect("resources/directory/read");
    let entries: Vec<(&str, &str, bool, Option<u64>)> = dir
        .items
        .iter()
        .map(|r| (r.uri.as_str(), r.name.as_str(), r.is_directory(), r.size))
        .collect();
    let size = on_disk("report-writing/SKILL.md").len() as u64;
    assert_eq!(
        entries,
        [
            (REPORT, "SKILL.md", false, Some(size)),
            (
                "skill://conformance/report-writing/references",
                "references",
                true,
                None
            ),
            (
                "skill://conformance/report-writing/templates",
                "templates",
                true,
                None
            ),
        ],
        "three entries on three pages of one"
    );
    assert_eq!(dir.items[0].mime_type.as_deref(), Some("text/markdown"));
    assert_eq!(dir.caching.ttl_ms, None, "not cacheable");
    let below = client
        .read_directory("skill://conformance/report-writing/templates")
        .await
        .expect("a subdirectory");
    assert_eq!(below.items.len(), 1);
    assert_eq!(below.items[0].name, "summary.md");
    let error = client
        .read_directory(REPORT)
        .await
        .expect_err("a file is no directory");
    assert_eq!(
        rpc_error(&error),
        (-32602, "Not a directory resource".into())
    );
}

#[tokio::test]
async fn every_listed_file_reads_verified_and_a_tampered_entry_is_refused() {
    let server = fixture(None).await;
    let client = Client::connect(server.url()).await.expect("connects");
    let report = client.get_skill(REPORT).await.expect("skills/get").skill;
    for (uri, path) in [
        (REPORT, "report-writing/SKILL.md"),
        (
            "skill://conformance/report-writing/references/style.md",
            "report-writing/references/style.md",
        ),
        (
            "skill://conformance/report-writing/templates/summary.md",
            "report-writing/templates/summary.md",
        ),
    ] {
        let file = client
            .read_skill_file(&report, uri)
            .await
            .unwrap_or_else(|e| panic!("{uri}: {e}"));
        let SkillFile::Verified(contents) = file else {
            panic!("{uri} is verified: {file:?}");
        };
        assert_eq!(contents.text(), Some(on_disk(path).as_str()), "{uri}");
    }
    let git = client.get_skill(GIT).await.expect("skills/get").skill;
    let file = client
        .read_skill_file(&git, &git.file_uri("SKILL.md"))
        .await
        .expect("the git-workflow SKILL.md");
    assert!(file.is_verified());
    assert_eq!(
        file.contents().text(),
        Some(on_disk("git-workflow/SKILL.md").as_str())
    );

    // A file the entry does not list: refused, whether the server has it or not.
    for uri in [
        "skill://conformance/report-writing/references/other.md",
        GIT,
        "test://static-text",
    ] {
        let error = client
            .read_skill_file(&report, uri)
            .await
            .expect_err("not listed");
        assert_eq!(verification(&error), (uri, &VerificationFailure::NotListed));
    }

    // Entries that do not match what the server serves (as a changed file would make them).
    let style = "skill://conformance/report-writing/references/style.md";
    let tampered = |change: &dyn Fn(&mut tasks_client::SkillResource)| {
        let mut skill = report.clone();
        if let SkillResources::Files(files) = &mut skill.resources {
            files.iter_mut().filter(|f| f.uri == style).for_each(change);
        }
        skill
    };
    let real = on_disk("report-writing/references/style.md");
    let error = client
        .read_skill_file(&tampered(&|f| f.size += 1), style)
        .await
        .expect_err("another size");
    assert_eq!(
        verification(&error).1,
        &VerificationFailure::Size {
            expected: real.len() as u64 + 1,
            actual: real.len() as u64
        }
    );
    let zeros = format!("sha256:{}", "0".repeat(64));
    let error = client
        .read_skill_file(&tampered(&|f| f.digest = zeros.clone()), style)
        .await
        .expect_err("another digest");
    assert_eq!(
        verification(&error).1,
        &VerificationFailure::Digest {
            expected: zeros.clone(),
            actual: tasks_core::skill::digest(real.as_bytes())
        }
    );
    assert!(!error.to_string().contains("House style"), "{error}");
    let mut renamed = report.clone();
    renamed
        .frontmatter
        .insert("description".into(), json!("Write a long report"));
    let error = client
        .read_skill_file(&renamed, REPORT)
        .await
        .expect_err("another frontmatter");
    assert_eq!(
        verification(&error),
        (
            REPORT,
            &VerificationFailure::Frontmatter {
                field: "description".into(),
                mismatch: FieldMismatch::Value
            }
        )
    );

    // A dynamic entry: read, but unverified.
    let mut dynamic = report.clone();
    dynamic.resources = SkillResources::Dynamic;
    let file = client
        .read_skill_file(&dynamic, style)
        .await
        .expect("read unverified");
    assert!(matches!(&file, SkillFile::Unverified(c) if c.text() == Some(real.as_str())));
    assert_eq!(file.into_verified(), None);
    let error = client
        .read_skill_file(&dynamic, "skill://git-workflow/SKILL.md")
        .await
        .expect_err("outside the skill's directory");
    assert_eq!(verification(&error).1, &VerificationFailure::NotListed);
}

#[tokio::test]
async fn a_server_without_skills_says_so_by_method() {
    let server = tasks_http::ServerBuilder::new("bare", "0.0.0")
        .bind("127.0.0.1:0")
        .await
        .expect("binds");
    let client = Client::connect(server.url()).await.expect("connects");
    let discovered = client.discover().await.expect("server/discover");
    assert!(discovered.capabilities["extensions"]
        .get(tasks_client::SKILLS_EXTENSION)
        .is_none());
    let errors = [
        ("skills/list", client.list_skills().await.map(|_| ())),
        ("skills/get", client.get_skill(GIT).await.map(|_| ())),
        (
            "resources/directory/read",
            client
                .read_directory("skill://git-workflow")
                .await
                .map(|_| ()),
        ),
    ];
    for (method, result) in errors {
        let error = result.expect_err(method);
        assert!(
            matches!(&error, ClientError::MethodNotFound { method: m, .. } if m == method),
            "{method}: {error:?}"
        );
        assert_eq!(error.code(), Some(-32601));
    }
    // The fixture declares the extension.
    let fixture = fixture(None).await;
    let client = Client::connect(fixture.url()).await.expect("connects");
    let discovered = client.discover().await.expect("server/discover");
    assert_eq!(
        discovered.capabilities["extensions"][tasks_client::SKILLS_EXTENSION],
        json!({"directoryRead": true})
    );
}
