//! Prompts, resources and completion through the client against the fixture over real HTTP:
//! lists followed across pages with their caching hints, prompts rendered (and one that asks
//! for input first, answered by the input handler in an MRTR round), text and binary reads,
//! completions, the server's refusals with their codes, and a server without these features;
//! the Skills extension in [`skills`].

#[path = "catalog/skills.rs"]
mod skills;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::json;
use tasks_client::{
    CacheScope, Client, ClientError, CompletionRef, Elicitation, ElicitationMode, InputHandler,
    ResourceBody, Role,
};
use tasks_core::input::{ClientCapability, ElicitAnswer};
use tasks_http::RunningServer;

/// The fixture on a loopback port; with `page_size`, its catalog lists that many items a page.
async fn fixture(page_size: Option<usize>) -> RunningServer {
    let settings = tasks_fixture::Settings {
        listen: "127.0.0.1:0".parse().expect("an address"),
        drain_ms: 0,
        ..Default::default()
    };
    let mut builder = tasks_fixture::server(&settings).cache_ttl_ms(42_000);
    if let Some(size) = page_size {
        builder = builder.catalog(tasks_conformance::catalog::catalog().with_page_size(size));
    }
    builder
        .bind(settings.listen)
        .await
        .expect("the fixture binds")
}

/// Answers every form with `{"context": <context>}`; records the keys and messages asked.
#[derive(Clone, Default)]
struct Context {
    asked: Arc<Mutex<Vec<(String, String)>>>,
}

#[async_trait]
impl InputHandler for Context {
    fn capabilities(&self) -> Vec<ClientCapability> {
        vec![ClientCapability::ElicitationForm]
    }

    async fn elicit(&self, key: &str, request: Elicitation) -> Result<ElicitAnswer, ClientError> {
        assert!(
            matches!(&request.mode, ElicitationMode::Form { requested_schema }
                if requested_schema["properties"].get("context").is_some()),
            "{request:?}"
        );
        self.asked
            .lock()
            .expect("lock")
            .push((key.to_owned(), request.message));
        let content = json!({"context": "the 2026 roadmap"});
        Ok(ElicitAnswer::Accept(
            content.as_object().cloned().expect("an object"),
        ))
    }
}

fn rpc_error(error: &ClientError) -> (i64, String) {
    match error {
        ClientError::Rpc { error, .. } => (error.code, error.message.clone()),
        other => panic!("not a JSON-RPC error: {other:?}"),
    }
}

#[tokio::test]
async fn prompts_are_listed_across_pages_with_their_arguments_and_caching_hints() {
    let server = fixture(Some(2)).await;
    let client = Client::connect(server.url()).await.expect("connects");
    let prompts = client.list_prompts().await.expect("prompts/list");
    let names: Vec<&str> = prompts.items.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "test_simple_prompt",
            "test_prompt_with_arguments",
            "test_prompt_with_embedded_resource",
            "test_prompt_with_image",
            "test_input_required_result_prompt",
        ],
        "five prompts on three pages of two"
    );
    let with_arguments = &prompts.items[1];
    assert_eq!(
        with_arguments.description.as_deref(),
        Some("A prompt with two required arguments")
    );
    let arguments: Vec<(&str, bool, Option<&str>)> = with_arguments
        .arguments
        .iter()
        .map(|a| (a.name.as_str(), a.required, a.description.as_deref()))
        .collect();
    assert_eq!(
        arguments,
        [
            ("arg1", true, Some("First test argument")),
            ("arg2", true, Some("Second test argument")),
        ]
    );
    assert!(prompts.items[0].arguments.is_empty());
    assert_eq!(prompts.caching.ttl_ms, Some(42_000));
    assert_eq!(prompts.caching.scope, CacheScope::Public);
}

#[tokio::test]
async fn prompts_render_with_their_arguments_and_refusals_keep_their_code() {
    let server = fixture(None).await;
    let client = Client::connect(server.url()).await.expect("connects");
    let simple = client
        .get_prompt("test_simple_prompt", json!({}))
        .await
        .expect("prompts/get");
    assert_eq!(simple.messages.len(), 1);
    assert_eq!(simple.messages[0].role, Role::User);
    assert_eq!(
        simple.messages[0].text(),
        Some("This is a simple prompt for testing.")
    );
    let rendered = client
        .get_prompt(
            "test_prompt_with_arguments",
            json!({"arg1": "paris", "arg2": "rome"}),
        )
        .await
        .expect("prompts/get");
    assert_eq!(
        rendered.messages[0].text(),
        Some("Prompt with arguments: arg1='paris', arg2='rome'")
    );
    let image = client
        .get_prompt("test_prompt_with_image", json!({}))
        .await
        .expect("prompts/get");
    assert_eq!(image.messages[0].content["type"], "image");
    assert_eq!(image.messages[0].content["mimeType"], "image/png");
    assert_eq!(image.messages[0].text(), None);
    let embedded = client
        .get_prompt(
            "test_prompt_with_embedded_resource",
            json!({"resourceUri": "test://static-text"}),
        )
        .await
        .expect("prompts/get");
    assert_eq!(
        embedded.messages[0].content["resource"]["uri"],
        "test://static-text"
    );

    let missing = client
        .get_prompt("test_prompt_with_arguments", json!({"arg1": "paris"}))
        .await
        .expect_err("arg2 is required");
    assert_eq!(
        rpc_error(&missing),
        (-32602, "Missing required prompt argument: arg2".into())
    );
    let unknown = client
        .get_prompt("no_such_prompt", json!({}))
        .await
        .expect_err("unknown");
    assert_eq!(rpc_error(&unknown), (-32602, "Unknown prompt".into()));
    let not_strings = client
        .get_prompt("test_prompt_with_arguments", json!({"arg1": 1}))
        .await
        .expect_err("not a string");
    assert!(
        matches!(not_strings, ClientError::InvalidArgument(_)),
        "{not_strings:?}"
    );
}

#[tokio::test]
async fn a_prompt_that_asks_for_input_is_answered_by_the_input_handler() {
    let server = fixture(None).await;
    let handler = Context::default();
    let client = Client::builder(server.url())
        .input_handler(handler.clone())
        .connect()
        .await
        .expect("connects");
    let result = client
        .get_prompt("test_input_required_result_prompt", json!({}))
        .await
        .expect("prompts/get after one input round");
    assert_eq!(
        result.messages[0].text(),
        Some("Answer with this context: the 2026 roadmap")
    );
    assert_eq!(
        *handler.asked.lock().expect("lock"),
        [(
            "user_context".to_owned(),
            "What context should the prompt use?".to_owned()
        )]
    );

    // Without a handler the client declares no elicitation: the server refuses to ask (-32021).
    let bare = Client::connect(server.url()).await.expect("connects");
    let error = bare
        .get_prompt("test_input_required_result_prompt", json!({}))
        .await
        .expect_err("no handler");
    assert_eq!(error.code(), Some(-32021), "{error:?}");
}

#[tokio::test]
async fn resources_and_templates_are_listed_and_read_as_text_or_bytes() {
    let server = fixture(Some(2)).await;
    let client = Client::connect(server.url()).await.expect("connects");
    let resources = client.list_resources().await.expect("resources/list");
    let listed: Vec<(&str, &str, Option<&str>)> = resources
        .items
        .iter()
        .map(|r| (r.uri.as_str(), r.name.as_str(), r.mime_type.as_deref()))
        .collect();
    assert_eq!(
        listed,
        [
            ("test://static-text", "static-text", Some("text/plain")),
            ("test://static-binary", "static-binary", Some("image/png")),
            (
                "test://watched-resource",
                "watched-resource",
                Some("text/plain")
            ),
            // Each skill's SKILL.md is a listed resource too (Skills extension).
            (
                "skill://conformance/report-writing/SKILL.md",
                "report-writing",
                Some("text/markdown")
            ),
            (
                "skill://git-workflow/SKILL.md",
                "git-workflow",
                Some("text/markdown")
            ),
        ]
    );
    assert_eq!(
        resources.items[0].description.as_deref(),
        Some("A static text resource")
    );
    assert_eq!(resources.caching.scope, CacheScope::Public);
    let templates = client
        .list_resource_templates()
        .await
        .expect("resources/templates/list");
    assert_eq!(templates.items.len(), 1);
    assert_eq!(templates.items[0].uri_template, "test://template/{id}/data");
    assert_eq!(
        templates.items[0].mime_type.as_deref(),
        Some("application/json")
    );

    let text = client
        .read_resource("test://static-text")
        .await
        .expect("resources/read");
    assert_eq!(text.contents.len(), 1);
    assert_eq!(
        text.contents[0].text(),
        Some("This is the content of the static text resource.")
    );
    assert_eq!(text.caching.scope, CacheScope::Private);
    assert_eq!(text.caching.ttl_ms, Some(42_000));

    let binary = client
        .read_resource("test://static-binary")
        .await
        .expect("resources/read");
    assert_eq!(binary.contents[0].mime_type.as_deref(), Some("image/png"));
    let ResourceBody::Blob(bytes) = &binary.contents[0].body else {
        panic!("a blob: {:?}", binary.contents[0]);
    };
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "{bytes:?}");

    let row = client
        .read_resource("test://template/7/data")
        .await
        .expect("a templated read");
    let body: serde_json::Value =
        serde_json::from_str(row.contents[0].text().expect("text")).expect("JSON");
    assert_eq!(
        body,
        json!({"id": "7", "templateTest": true, "data": "Data for ID: 7"})
    );
    assert_eq!(row.contents[0].uri, "test://template/7/data");

    let unknown = client
        .read_resource("test://nothing-here")
        .await
        .expect_err("unknown");
    assert_eq!(rpc_error(&unknown), (-32602, "Resource not found".into()));
}

#[tokio::test]
async fn completions_suggest_prompt_arguments_and_template_variables() {
    let server = fixture(None).await;
    let client = Client::connect(server.url()).await.expect("connects");
    let prompt = CompletionRef::Prompt("test_prompt_with_arguments".into());
    let completion = client
        .complete(&prompt, "arg1", "par")
        .await
        .expect("completion/complete");
    assert_eq!(completion.values, ["paris", "park", "party"]);
    assert!(!completion.has_more);
    let completion = client.complete(&prompt, "arg1", "part").await.expect("one");
    assert_eq!(completion.values, ["party"]);
    let template = CompletionRef::Resource("test://template/{id}/data".into());
    let completion = client
        .complete(&template, "id", "12")
        .await
        .expect("a template variable");
    assert_eq!(completion.values, ["12", "123"]);
    let error = client
        .complete(&CompletionRef::Prompt("nope".into()), "x", "")
        .await
        .expect_err("unknown prompt");
    assert_eq!(rpc_error(&error), (-32602, "Unknown prompt".into()));
}

#[tokio::test]
async fn a_completion_sends_the_arguments_already_chosen() {
    use tasks_http::catalog::{Completer, Completion, Prompt, PromptArgument, PromptResult};
    // Suggests cities of the country already chosen.
    let cities = Completer::new(|request| {
        let values = match request.context.get("country").map(String::as_str) {
            Some("fr") => vec!["paris".to_owned(), "pau".to_owned()],
            Some(other) => vec![format!("a city of {other}")],
            None => Vec::new(),
        };
        Completion {
            total: Some(values.len() as u64),
            values,
            has_more: false,
        }
    });
    let trip = Prompt::new("trip", "Plans a trip", |_ctx| async {
        Ok(PromptResult::new([]))
    })
    .with_argument(PromptArgument::required("country", "Where"))
    .with_argument(PromptArgument::required("city", "Which city"))
    .complete("city", cities);
    let server = tasks_http::ServerBuilder::new("completions", "1.0.0")
        .prompt(trip)
        .bind("127.0.0.1:0")
        .await
        .expect("binds");
    let client = Client::connect(server.url()).await.expect("connects");
    let reference = CompletionRef::Prompt("trip".into());
    let fr = client
        .complete_with_context(&reference, "city", "pa", [("country", "fr")])
        .await
        .expect("completes");
    assert_eq!(fr.values, ["paris", "pau"]);
    let it = client
        .complete_with_context(&reference, "city", "", [("country", "it")])
        .await
        .expect("completes");
    assert_eq!(it.values, ["a city of it"]);
    let none = client
        .complete(&reference, "city", "pa")
        .await
        .expect("completes");
    assert!(none.values.is_empty(), "{:?}", none.values);
}

#[tokio::test]
async fn a_server_without_prompts_or_resources_says_so_by_method() {
    let server = tasks_http::ServerBuilder::new("bare", "0.0.0")
        .bind("127.0.0.1:0")
        .await
        .expect("binds");
    let client = Client::connect(server.url()).await.expect("connects");
    let errors = [
        ("prompts/list", client.list_prompts().await.map(|_| ())),
        (
            "prompts/get",
            client.get_prompt("x", json!({})).await.map(|_| ()),
        ),
        ("resources/list", client.list_resources().await.map(|_| ())),
        (
            "resources/templates/list",
            client.list_resource_templates().await.map(|_| ()),
        ),
        (
            "resources/read",
            client.read_resource("test://x").await.map(|_| ()),
        ),
        (
            "completion/complete",
            client
                .complete(&CompletionRef::Prompt("x".into()), "a", "")
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
        assert_eq!(
            error.to_string(),
            format!("the server does not offer {method}: Method not found (-32601)")
        );
    }
}
