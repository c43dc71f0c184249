//! Prompts, resources, completion and skills through the dispatcher (no network), on 2026-07-28
//! and in a 2025 session: discovery, pagination, unknown ids, argument checks, input rounds on a
//! prompt, caching hints, list changes and resource updates on listen streams, and the Skills
//! extension's methods.

use serde_json::{json, Value};
use tasks_http::prelude::*;
use tasks_http::Dispatcher;
use tasks_runtime::catalog::{
    Catalog, Completer, Prompt, PromptArgument, PromptMessage, PromptResult, ReadError, Resource,
    ResourceContents, ResourceTemplate, Skill,
};
use tasks_runtime::ListChanges;
use tasks_test_support::dispatcher::*;
use tasks_test_support::protocol::*;
use tasks_test_support::request::*;
use tasks_test_support::sessions::{answer, in_session, legacy_result, open};
use tasks_test_support::wait::WAIT_LIMIT;

fn greet() -> Prompt {
    Prompt::new("greet", "Greets someone", |ctx| async move {
        let name = ctx.arguments()["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        Ok(PromptResult::new([PromptMessage::user(format!(
            "Hello, {name}!"
        ))]))
    })
    .with_argument(PromptArgument::required("name", "Who to greet"))
    .with_argument(PromptArgument::optional("mood", "How"))
    .complete("name", Completer::from_values(["ada", "alan", "grace"]))
}

fn ask() -> Prompt {
    Prompt::new("ask", "Asks for a topic first", |ctx| async move {
        let answer = ctx
            .elicit(
                "topic",
                "Which topic?",
                json!({"type": "object", "properties": {"topic": {"type": "string"}}, "required": ["topic"]}),
            )
            .await?;
        let topic = answer.str_field("topic").unwrap_or("none").to_owned();
        Ok(PromptResult::new([PromptMessage::user(format!(
            "Talk about {topic}"
        ))]))
    })
}

fn catalog() -> Catalog {
    let mut catalog = Catalog::new().with_page_size(2);
    catalog.add_prompt(greet());
    catalog.add_prompt(ask());
    catalog.add_prompt(Prompt::new("third", "The third prompt", |_ctx| async {
        Ok(PromptResult::new([PromptMessage::assistant("three")]))
    }));
    catalog.add_resource(Resource::text("docs://a", "a", "text/plain", "alpha"));
    catalog.add_resource(Resource::blob(
        "docs://b",
        "b",
        "application/octet-stream",
        vec![0, 1, 2],
    ));
    catalog.add_template(
        ResourceTemplate::new("rows://{table}/{id}", "row", |request| async move {
            if request.variables["table"] == "missing" {
                return Err(ReadError::NotFound);
            }
            Ok(vec![ResourceContents::text(
                request.uri.clone(),
                "text/plain",
                format!("{}#{}", request.variables["table"], request.variables["id"]),
            )])
        })
        .complete("table", Completer::from_values(["users", "orders"])),
    );
    catalog
}

fn dispatcher_with(changes: Option<ListChanges>) -> Dispatcher {
    let mut builder = ServerBuilder::new(SERVER_NAME, SERVER_VERSION).catalog(catalog());
    if let Some(changes) = changes {
        builder = builder.list_changes(changes);
    }
    builder.build()
}

fn read(uri: &str) -> Req {
    Req::new("resources/read").param("uri", json!(uri))
}

fn get_prompt(name: &str, arguments: Value) -> Req {
    Req::new("prompts/get")
        .param("name", json!(name))
        .param("arguments", arguments)
}

#[tokio::test]
async fn discover_offers_what_the_catalog_has_and_a_server_without_one_has_no_such_methods() {
    let d = dispatcher_with(Some(ListChanges::new()));
    let caps = Req::new("server/discover").send(&d).await.result()["capabilities"].clone();
    assert_eq!(caps["prompts"], json!({"listChanged": true}));
    assert_eq!(
        caps["resources"],
        json!({"listChanged": true, "subscribe": true})
    );
    assert_eq!(caps["completions"], json!({}));

    let bare = ServerBuilder::new(SERVER_NAME, SERVER_VERSION).build();
    let caps = Req::new("server/discover").send(&bare).await.result()["capabilities"].clone();
    assert!(
        caps.get("prompts").is_none() && caps.get("resources").is_none(),
        "{caps}"
    );
    for method in [
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "completion/complete",
    ] {
        Req::new(method)
            .send(&bare)
            .await
            .error(404, -32601, "Method not found");
    }
}

#[tokio::test]
async fn lists_page_with_cursors_and_carry_caching_hints() {
    let d = dispatcher_with(None);
    let first = Req::new("prompts/list").send(&d).await.result();
    let names = |page: &Value| -> Vec<String> {
        page["prompts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(names(&first), ["greet", "ask"]);
    assert_eq!(
        (first["ttlMs"].is_u64(), &first["cacheScope"]),
        (true, &json!("public"))
    );
    assert_eq!(
        first["prompts"][0]["arguments"],
        json!([{"name": "name", "description": "Who to greet", "required": true},
               {"name": "mood", "description": "How", "required": false}])
    );
    let cursor = first["nextCursor"].clone();
    let second = Req::new("prompts/list")
        .param("cursor", cursor.clone())
        .send(&d)
        .await
        .result();
    assert_eq!(names(&second), ["third"]);
    assert!(second.get("nextCursor").is_none(), "{second}");
    // Not ours, and forged in our own spelling: base64url of `o1` (inside the list but not
    // a page boundary), `o0` (the first page has no cursor) and `o02` (`o2` spelt otherwise).
    for forged in ["not-ours", "bzE", "bzA", "bzAy"] {
        Req::new("prompts/list")
            .param("cursor", json!(forged))
            .send(&d)
            .await
            .error(400, -32602, "Invalid cursor");
    }
    assert_eq!(
        cursor,
        json!("bzI"),
        "the cursor issued is base64url of `o2`"
    );

    let resources = Req::new("resources/list").send(&d).await.result();
    assert_eq!(
        resources["resources"],
        json!([{"uri": "docs://a", "name": "a", "mimeType": "text/plain"},
               {"uri": "docs://b", "name": "b", "mimeType": "application/octet-stream"}])
    );
    let templates = Req::new("resources/templates/list").send(&d).await.result();
    assert_eq!(
        templates["resourceTemplates"],
        json!([{"uriTemplate": "rows://{table}/{id}", "name": "row"}])
    );
    assert_eq!(templates["cacheScope"], "public");
}

#[tokio::test]
async fn reads_give_text_blobs_and_template_values_and_unknown_uris_are_invalid_params() {
    let d = dispatcher_with(None);
    let text = read("docs://a").send(&d).await.result();
    assert_eq!(
        text["contents"],
        json!([{"uri": "docs://a", "mimeType": "text/plain", "text": "alpha"}])
    );
    assert_eq!(text["cacheScope"], "private");
    let blob = read("docs://b").send(&d).await.result();
    assert_eq!(blob["contents"][0]["blob"], "AAEC");
    let row = read("rows://users/7").send(&d).await.result();
    assert_eq!(row["contents"][0]["text"], "users#7");
    for unknown in ["docs://c", "rows://missing/1", "rows://users/7/extra"] {
        let error = read(unknown)
            .send(&d)
            .await
            .error(400, -32602, "Resource not found");
        assert_eq!(error["data"], json!({"uri": unknown}));
    }
    read("")
        .send(&d)
        .await
        .error(400, -32602, "resources/read requires a string uri");
}

#[tokio::test]
async fn prompts_check_their_arguments_and_render() {
    let d = dispatcher_with(None);
    let result = get_prompt("greet", json!({"name": "Ada"}))
        .send(&d)
        .await
        .result();
    assert_eq!(
        result["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "Hello, Ada!"}}])
    );
    assert_eq!(result["resultType"], "complete");
    assert!(
        result.get("ttlMs").is_none(),
        "a prompt is not cacheable: {result}"
    );
    get_prompt("greet", json!({})).send(&d).await.error(
        400,
        -32602,
        "Missing required prompt argument: name",
    );
    get_prompt("greet", json!({"name": "Ada", "nmae": "x"}))
        .send(&d)
        .await
        .error(
            400,
            -32602,
            "Unknown prompt argument: nmae (the prompt takes name, mood)",
        );
    get_prompt("greet", json!({"name": 3}))
        .send(&d)
        .await
        .error(400, -32602, "prompt arguments must be an object of strings");
    get_prompt("nope", json!({}))
        .send(&d)
        .await
        .error(400, -32602, "Unknown prompt");
}

#[tokio::test]
async fn a_prompt_asks_for_input_in_rounds_bound_to_its_request() {
    let d = dispatcher_with(None);
    let round = get_prompt("ask", json!({}))
        .elicitation()
        .send(&d)
        .await
        .result();
    assert_eq!(round["resultType"], "input_required", "{round}");
    assert_eq!(
        round["inputRequests"]["topic"]["method"],
        "elicitation/create"
    );
    let state = round["requestState"].as_str().unwrap().to_owned();
    let done = get_prompt("ask", json!({}))
        .elicitation()
        .param("requestState", json!(state))
        .param(
            "inputResponses",
            json!({"topic": accept(json!({"topic": "rust"}))}),
        )
        .send(&d)
        .await
        .result();
    assert_eq!(done["messages"][0]["content"]["text"], "Talk about rust");
    // The state is bound to this prompt: another prompt's request refuses it.
    get_prompt("third", json!({}))
        .param("requestState", json!(state))
        .send(&d)
        .await
        .error(400, -32602, "Invalid requestState");
    get_prompt("ask", json!({}))
        .param("requestState", json!(format!("{state}-TAMPERED")))
        .send(&d)
        .await
        .error(400, -32602, "Invalid requestState");
}

#[tokio::test]
async fn completions_suggest_by_prefix_and_refuse_unknown_references() {
    let d = dispatcher_with(None);
    let complete = |reference: Value, name: &str, value: &str| {
        Req::new("completion/complete")
            .param("ref", reference)
            .param("argument", json!({"name": name, "value": value}))
    };
    let result = complete(json!({"type": "ref/prompt", "name": "greet"}), "name", "A")
        .send(&d)
        .await
        .result();
    assert_eq!(
        result["completion"],
        json!({"values": ["ada", "alan"], "total": 2, "hasMore": false})
    );
    let result = complete(
        json!({"type": "ref/resource", "uri": "rows://{table}/{id}"}),
        "table",
        "o",
    )
    .send(&d)
    .await
    .result();
    assert_eq!(result["completion"]["values"], json!(["orders"]));
    // A declared argument without a completer has no suggestions.
    let result = complete(json!({"type": "ref/prompt", "name": "greet"}), "mood", "")
        .send(&d)
        .await
        .result();
    assert_eq!(result["completion"]["values"], json!([]));
    complete(json!({"type": "ref/prompt", "name": "nope"}), "x", "")
        .send(&d)
        .await
        .error(400, -32602, "Unknown prompt");
    complete(json!({"type": "ref/prompt", "name": "greet"}), "age", "")
        .send(&d)
        .await
        .error(400, -32602, "The prompt has no such argument");
    complete(
        json!({"type": "ref/resource", "uri": "rows://{x}"}),
        "x",
        "",
    )
    .send(&d)
    .await
    .error(400, -32602, "Unknown resource template");
}

#[tokio::test]
async fn listen_streams_get_the_list_changes_and_resource_updates_they_asked_for() {
    let changes = ListChanges::new();
    let d = dispatcher_with(Some(changes.clone()));
    let mut stream = Req::listen(json!({"promptsListChanged": true,
                                        "resourceSubscriptions": ["docs://a"]}))
    .send(&d)
    .await
    .into_stream();
    let ack = next_message(&mut stream).await;
    assert_eq!(
        ack["params"]["notifications"],
        json!({"promptsListChanged": true, "resourceSubscriptions": ["docs://a"]})
    );
    // Not asked for: tool and resource-list changes, updates of other resources.
    d.runtime()
        .register_tool(Tool::new("extra", "x", |_ctx| async {
            Ok(text_result("x"))
        }));
    d.runtime()
        .register_resource(Resource::text("docs://z", "z", "text/plain", "zeta"));
    d.runtime().resource_updated("docs://b");
    d.runtime().resource_updated("docs://a");
    let update = next_message(&mut stream).await;
    assert_eq!(update["method"], "notifications/resources/updated");
    assert_eq!(update["params"]["uri"], "docs://a");
    assert!(d.runtime().remove_prompt("third"));
    let change = next_message(&mut stream).await;
    assert_eq!(change["method"], "notifications/prompts/list_changed");
    let names = Req::new("prompts/list").send(&d).await.result()["prompts"].clone();
    assert_eq!(names.as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn a_2025_session_lists_reads_gets_completes_and_subscribes() {
    let d = dispatcher_with(Some(ListChanges::new()));
    let session = open(&d).await;
    let init = tasks_test_support::sessions::initialize()
        .send(&d)
        .await
        .json();
    assert_eq!(
        init["result"]["capabilities"]["prompts"],
        json!({"listChanged": true})
    );
    let list = legacy_result(&in_session(&session, "prompts/list").send(&d).await);
    assert_eq!(list["prompts"].as_array().unwrap().len(), 2);
    assert!(list["nextCursor"].is_string());
    let text = legacy_result(
        &in_session(&session, "resources/read")
            .param("uri", json!("docs://a"))
            .send(&d)
            .await,
    );
    assert_eq!(text["contents"][0]["text"], "alpha");
    let prompt = legacy_result(
        &in_session(&session, "prompts/get")
            .param("name", json!("greet"))
            .param("arguments", json!({"name": "Alan"}))
            .send(&d)
            .await,
    );
    assert_eq!(prompt["messages"][0]["content"]["text"], "Hello, Alan!");
    for method in ["resources/subscribe", "resources/unsubscribe"] {
        let done = legacy_result(
            &in_session(&session, method)
                .param("uri", json!("docs://a"))
                .send(&d)
                .await,
        );
        assert_eq!(done, json!({}));
    }
    let unknown = in_session(&session, "resources/read")
        .param("uri", json!("docs://none"))
        .send(&d)
        .await
        .json();
    assert_eq!(unknown["error"]["code"], -32602);
    assert_eq!(unknown["error"]["data"], json!({"uri": "docs://none"}));
}

#[tokio::test]
async fn a_2025_session_hears_updates_of_what_it_subscribed_to_until_it_ends() {
    use futures_util::StreamExt as _;
    let d = dispatcher_with(Some(ListChanges::new()));
    let session = open(&d).await;
    let subscribe = |method: &str, uri: &str| in_session(&session, method).param("uri", json!(uri));
    legacy_result(&subscribe("resources/subscribe", "docs://a").send(&d).await);
    let mut stream = in_session(&session, "x")
        .http_method(http::Method::GET)
        .send(&d)
        .await
        .into_stream();
    // Another URI is not sent; the subscribed one is.
    d.runtime().resource_updated("docs://b");
    d.runtime().resource_updated("docs://a");
    assert_eq!(
        next_message(&mut stream).await,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
               "params": {"uri": "docs://a"}})
    );
    // Unsubscribed: the next update is not sent, the prompt-list change after it is.
    legacy_result(
        &subscribe("resources/unsubscribe", "docs://a")
            .send(&d)
            .await,
    );
    d.runtime().resource_updated("docs://a");
    assert!(d.runtime().remove_prompt("third"));
    assert_eq!(
        next_message(&mut stream).await["method"],
        "notifications/prompts/list_changed"
    );
    // Ending the session ends the stream.
    let reply = in_session(&session, "x")
        .http_method(http::Method::DELETE)
        .send(&d)
        .await;
    assert_eq!(reply.status, 200);
    let end = tokio::time::timeout(WAIT_LIMIT, stream.next())
        .await
        .unwrap();
    assert!(end.is_none());
}

fn skilled() -> Dispatcher {
    let md = "---\nname: refunds\ndescription: Process refunds\n---\n# Refunds\n";
    let skill = Skill::new("acme/refunds", md)
        .and_then(|s| s.file("templates/email.md", "Dear customer"))
        .unwrap();
    ServerBuilder::new(SERVER_NAME, SERVER_VERSION)
        .skill(skill)
        .build()
}

#[tokio::test]
async fn skills_are_listed_got_and_browsed_on_2026_and_not_in_a_2025_session() {
    let d = skilled();
    let caps = Req::new("server/discover").send(&d).await.result()["capabilities"].clone();
    assert_eq!(
        caps["extensions"]["io.modelcontextprotocol/skills"],
        json!({"directoryRead": true})
    );
    assert_eq!(
        caps["extensions"]["io.modelcontextprotocol/tasks"],
        json!({})
    );
    assert!(caps["resources"].is_object(), "{caps}");

    let list = Req::new("skills/list").send(&d).await.result();
    assert_eq!(list["resultType"], "complete");
    assert_eq!(
        (list["ttlMs"].is_u64(), &list["cacheScope"]),
        (true, &json!("public"))
    );
    let entry = &list["skills"][0];
    assert_eq!(entry["uri"], "skill://acme/refunds/SKILL.md");
    assert_eq!(
        entry["frontmatter"],
        json!({"name": "refunds", "description": "Process refunds"})
    );
    assert_eq!(entry["resources"][1]["size"], 13);
    assert!(entry["resources"][1]["digest"]
        .as_str()
        .unwrap()
        .starts_with("sha256:"));

    let got = Req::new("skills/get")
        .param("uri", json!("skill://acme/refunds/SKILL.md"))
        .send(&d)
        .await
        .result();
    assert_eq!(&got["skill"], entry);
    assert_eq!(got["cacheScope"], "public");
    assert!(got.get("nextCursor").is_none());
    let unknown = Req::new("skills/get")
        .param("uri", json!("skill://acme/chargebacks/SKILL.md"))
        .send(&d)
        .await
        .error(400, -32602, "Skill not found");
    assert_eq!(
        unknown["data"],
        json!({"uri": "skill://acme/chargebacks/SKILL.md"})
    );

    let dir = Req::new("resources/directory/read")
        .param("uri", json!("skill://acme/refunds"))
        .send(&d)
        .await
        .result();
    assert_eq!(
        dir["resources"][1],
        json!({"uri": "skill://acme/refunds/templates", "name": "templates", "mimeType": "inode/directory"})
    );
    assert!(dir.get("ttlMs").is_none(), "{dir}");
    Req::new("resources/directory/read")
        .param("uri", json!("skill://acme/refunds/SKILL.md"))
        .send(&d)
        .await
        .error(400, -32602, "Not a directory resource");
    let file = read("skill://acme/refunds/templates/email.md")
        .send(&d)
        .await
        .result();
    assert_eq!(file["contents"][0]["text"], "Dear customer");
    let listed = Req::new("resources/list").send(&d).await.result();
    assert_eq!(listed["resources"][0]["name"], "refunds");

    // The extension is defined on 2026-07-28 only: a session has no such methods, but reads
    // the skill's files as ordinary resources.
    let session = open(&d).await;
    for method in ["skills/list", "skills/get", "resources/directory/read"] {
        let answer = in_session(&session, method)
            .param("uri", json!("skill://acme/refunds"))
            .send(&d)
            .await
            .json();
        assert_eq!(answer["error"]["code"], -32601, "{method}: {answer}");
    }
    let text = legacy_result(
        &in_session(&session, "resources/read")
            .param("uri", json!("skill://acme/refunds/SKILL.md"))
            .send(&d)
            .await,
    );
    assert!(text["contents"][0]["text"]
        .as_str()
        .unwrap()
        .contains("# Refunds"));

    // Without a skill, no extension and no methods.
    let bare = dispatcher_with(None);
    let caps = Req::new("server/discover").send(&bare).await.result()["capabilities"].clone();
    assert_eq!(
        caps["extensions"],
        json!({"io.modelcontextprotocol/tasks": {}})
    );
    for method in ["skills/list", "skills/get", "resources/directory/read"] {
        Req::new(method)
            .send(&bare)
            .await
            .error(404, -32601, "Method not found");
    }
}

#[tokio::test]
async fn a_prompt_asks_for_input_on_a_2025_sessions_stream_and_renders_with_the_answer() {
    let d = dispatcher_with(None);
    let session = open(&d).await;
    let mut stream = in_session(&session, "prompts/get")
        .param("name", json!("ask"))
        .id(json!(9))
        .send(&d)
        .await
        .into_stream();
    let request = next_message(&mut stream).await;
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "Which topic?");
    let reply = answer(
        &session,
        json!({"jsonrpc": "2.0", "id": request["id"],
               "result": {"action": "accept", "content": {"topic": "rust"}}}),
    )
    .send(&d)
    .await;
    assert_eq!(reply.status, 202);
    let done = next_message(&mut stream).await;
    assert_eq!(done["id"], 9);
    assert_eq!(
        done["result"]["messages"][0]["content"],
        json!({"type": "text", "text": "Talk about rust"})
    );
    assert!(done["result"].get("resultType").is_none(), "{done}");

    // A client that answers the question with an error gets -32603 naming it.
    let mut stream = in_session(&session, "prompts/get")
        .param("name", json!("ask"))
        .id(json!(10))
        .send(&d)
        .await
        .into_stream();
    let request = next_message(&mut stream).await;
    answer(
        &session,
        json!({"jsonrpc": "2.0", "id": request["id"],
               "error": {"code": -32601, "message": "no elicitation here"}}),
    )
    .send(&d)
    .await;
    let done = next_message(&mut stream).await;
    assert_eq!(done["id"], 10);
    assert_eq!(done["error"]["code"], -32603);
    assert_eq!(
        done["error"]["message"],
        "The client refused input request topic (JSON-RPC error -32601)"
    );
    // An unknown prompt is still answered at once.
    let unknown = in_session(&session, "prompts/get")
        .param("name", json!("nope"))
        .send(&d)
        .await
        .json();
    assert_eq!(unknown["error"]["code"], -32602);
}
