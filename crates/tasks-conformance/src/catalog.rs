//! The fixture's prompts and resources: what the runner's `resources-*`, `prompts-*`,
//! `completion-complete`, `caching`, `sep-2164-resource-not-found` and
//! `input-required-result-non-tool-request` scenarios ask for, by the names and URIs they use.
//!
//! | kind | name or URI | what it gives |
//! |---|---|---|
//! | resource | `test://static-text` | `text/plain` text |
//! | resource | `test://static-binary` | a 1×1 PNG (`image/png`, `blob`) |
//! | resource | `test://watched-resource` | `text/plain`; `test_update_watched_resource` announces an update of it |
//! | template | `test://template/{id}/data` | `application/json` naming the id; `id` completes to `1`, `12`, `123` |
//! | prompt | `test_simple_prompt` | one user text message |
//! | prompt | `test_prompt_with_arguments` (`arg1`, `arg2`) | a message with both values; `arg1` completes to `paris`, `park`, `party` |
//! | prompt | `test_prompt_with_embedded_resource` (`resourceUri`) | an embedded text resource at that URI, then a text message |
//! | prompt | `test_prompt_with_image` | a PNG image message, then a text message |
//! | prompt | `test_input_required_result_prompt` | asks `user_context` (a form with `context`) first, then a message with the answer |
//! | skill | `skill://conformance/report-writing/SKILL.md` | a skill with a prefix, a `references/` and a `templates/` subdirectory (the runner's `sep-2640-*` scenarios) |
//! | skill | `skill://git-workflow/SKILL.md` | a skill of one file |
//!
//! The skills' files are in this crate's `skills/` directory, one directory per skill, and
//! compiled in ([`skills`]).

use serde_json::json;
use tasks_runtime::catalog::{
    Catalog, Completer, Prompt, PromptArgument, PromptMessage, PromptResult, ReadError, Resource,
    ResourceContents, ResourceTemplate, Role, Skill,
};
use tasks_runtime::{text_result, ListChanges, ListKind, Tool, ToolError};

use crate::tools::content::PNG_BASE64;

/// The URI whose updates `test_update_watched_resource` announces.
pub const WATCHED: &str = "test://watched-resource";

/// The fixture's catalog.
pub fn catalog() -> Catalog {
    let mut catalog = Catalog::new();
    catalog.add_resource(
        Resource::text(
            "test://static-text",
            "static-text",
            "text/plain",
            "This is the content of the static text resource.",
        )
        .with_description("A static text resource"),
    );
    catalog.add_resource(
        Resource::blob(
            "test://static-binary",
            "static-binary",
            "image/png",
            png_bytes(),
        )
        .with_description("A static binary resource: a 1x1 PNG"),
    );
    catalog.add_resource(
        Resource::text(
            WATCHED,
            "watched-resource",
            "text/plain",
            "Watched resource content.",
        )
        .with_description("A resource whose updates test_update_watched_resource announces"),
    );
    catalog.add_template(
        ResourceTemplate::new(
            "test://template/{id}/data",
            "template-data",
            |request| async move {
                let id = request.segment("id")?;
                if id.len() > 64 {
                    return Err(ReadError::NotFound);
                }
                let body =
                    json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
                Ok(vec![ResourceContents::text(
                    request.uri,
                    "application/json",
                    body.to_string(),
                )])
            },
        )
        .with_description("Data for one id, read from the URI")
        .with_mime_type("application/json")
        .complete("id", Completer::from_values(["1", "12", "123"])),
    );
    for prompt in prompts() {
        catalog.add_prompt(prompt);
    }
    for skill in skills() {
        catalog.add_skill(skill);
    }
    catalog
}

/// The fixture's skills, from the files of `skills/` compiled in (a test checks that
/// [`Skill::from_dir`] reads the same skills from that directory).
pub fn skills() -> Vec<Skill> {
    let report = Skill::new(
        "conformance/report-writing",
        include_str!("../skills/report-writing/SKILL.md"),
    )
    .and_then(|s| {
        s.file(
            "references/style.md",
            include_str!("../skills/report-writing/references/style.md"),
        )
    })
    .and_then(|s| {
        s.file(
            "templates/summary.md",
            include_str!("../skills/report-writing/templates/summary.md"),
        )
    });
    let git = Skill::new(
        "git-workflow",
        include_str!("../skills/git-workflow/SKILL.md"),
    );
    // The files are this crate's own and follow the rules (tested below): an error here is
    // a bug in them, reported by leaving the skill out rather than by a panic.
    [report, git].into_iter().filter_map(Result::ok).collect()
}

fn prompts() -> Vec<Prompt> {
    vec![
        Prompt::new("test_simple_prompt", "A prompt without arguments", |_ctx| async {
            Ok(PromptResult::new([PromptMessage::user(
                "This is a simple prompt for testing.",
            )]))
        }),
        Prompt::new(
            "test_prompt_with_arguments",
            "A prompt with two required arguments",
            |ctx| async move {
                let arg = |key: &str| ctx.arguments()[key].as_str().unwrap_or_default().to_owned();
                Ok(PromptResult::new([PromptMessage::user(format!(
                    "Prompt with arguments: arg1='{}', arg2='{}'",
                    arg("arg1"),
                    arg("arg2")
                ))]))
            },
        )
        .with_argument(PromptArgument::required("arg1", "First test argument"))
        .with_argument(PromptArgument::required("arg2", "Second test argument"))
        .complete("arg1", Completer::from_values(["paris", "park", "party"])),
        Prompt::new(
            "test_prompt_with_embedded_resource",
            "A prompt embedding a resource",
            |ctx| async move {
                let uri = ctx.arguments()["resourceUri"].as_str().unwrap_or_default().to_owned();
                Ok(PromptResult::new([
                    PromptMessage::new(
                        Role::User,
                        json!({"type": "resource", "resource": {"uri": uri, "mimeType": "text/plain",
                            "text": "Embedded resource content for testing."}}),
                    ),
                    PromptMessage::user("Please process the embedded resource above."),
                ]))
            },
        )
        .with_argument(PromptArgument::required("resourceUri", "URI of the resource to embed")),
        Prompt::new("test_prompt_with_image", "A prompt with an image", |_ctx| async {
            Ok(PromptResult::new([
                PromptMessage::new(
                    Role::User,
                    json!({"type": "image", "data": PNG_BASE64, "mimeType": "image/png"}),
                ),
                PromptMessage::user("Please analyze the image above."),
            ]))
        }),
        Prompt::new(
            "test_input_required_result_prompt",
            "A prompt that asks the user for context first",
            |ctx| async move {
                let answer = ctx
                    .elicit(
                        "user_context",
                        "What context should the prompt use?",
                        json!({"type": "object", "properties": {"context": {"type": "string"}},
                               "required": ["context"]}),
                    )
                    .await?;
                let context = answer.str_field("context").unwrap_or("none").to_owned();
                Ok(PromptResult::new([PromptMessage::user(format!(
                    "Answer with this context: {context}"
                ))]))
            },
        ),
    ]
}

/// The catalog's diagnostic tools: `test_trigger_prompt_change` (announces a prompt-list
/// change, runner scenario `server-stateless`) and `test_update_watched_resource` (announces an
/// update of [`WATCHED`]).
pub fn tools(changes: &ListChanges) -> Vec<Tool> {
    let prompts = changes.clone();
    let updates = changes.clone();
    vec![
        Tool::new(
            "test_trigger_prompt_change",
            "Announces notifications/prompts/list_changed to every subscriptions/listen stream \
             that asked for promptsListChanged.",
            move |_ctx| {
                let open = prompts.announce(ListKind::Prompts);
                async move { Ok(text_result(format!("Announced to {open} open streams"))) }
            },
        )
        .with_input_schema(json!({"type": "object", "properties": {}})),
        Tool::new(
            "test_update_watched_resource",
            "Announces notifications/resources/updated for test://watched-resource to every \
             stream subscribed to it.",
            move |_ctx| {
                let open = updates.resource_updated(WATCHED);
                async move {
                    Ok::<_, ToolError>(text_result(format!("Announced to {open} open streams")))
                }
            },
        )
        .with_input_schema(json!({"type": "object", "properties": {}})),
    ]
}

fn png_bytes() -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(PNG_BASE64)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compiled_skills_are_the_skills_directory() {
        let skills = skills();
        assert_eq!(skills.len(), 2, "every fixture skill follows the rules");
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("skills");
        for (skill, (path, dir)) in skills.iter().zip([
            ("conformance/report-writing", "report-writing"),
            ("git-workflow", "git-workflow"),
        ]) {
            let loaded = Skill::from_dir(path, root.join(dir)).unwrap();
            assert_eq!(loaded.to_entry(), skill.to_entry(), "{path}");
        }
        assert_eq!(
            skills[0].to_entry()["resources"].as_array().map(Vec::len),
            Some(3)
        );
    }
}
