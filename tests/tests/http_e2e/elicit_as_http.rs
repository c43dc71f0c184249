//! Typed questions over HTTP (`Tool::asks`, `ToolContext::elicit_as`): the form generated
//! from a Rust type as the client sees it in `inputRequests`, and accept, decline and cancel
//! answered on both paths, a task answered with `tasks/update` and a synchronous call answered
//! by its MRTR retry; answers that do not fit the type are -32602, never a panic; a type the
//! tool did not declare is -32603; a type a form cannot carry stops the tool being built.

use std::panic::AssertUnwindSafe;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::{json, Value};
use tasks_core::TaskStatus;
use tasks_http::prelude::*;
use tasks_http::RunningServer;
use tasks_test_support::client::*;
use tasks_test_support::events::wait_status;
use tasks_test_support::protocol::*;

/// The booking the tool asks for.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Booking {
    /// Who the room is for.
    #[schemars(length(min = 1, max = 40))]
    guest: String,
    /// Nights to stay.
    #[schemars(range(min = 1, max = 14))]
    nights: u8,
    /// The kind of room.
    room: Room,
    /// Breakfast every morning.
    #[serde(default)]
    breakfast: bool,
    /// The day of arrival (this century).
    #[serde(default, deserialize_with = "this_century")]
    #[schemars(extend("format" = "date"))]
    arrival_day: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Room {
    Single,
    Double,
    Suite,
}

/// A `YYYY-MM-DD` day from 2000 on: a check of the type's own that the form (`format` is an
/// annotation to a JSON Schema validator) does not make.
fn this_century<'de, D: Deserializer<'de>>(day: D) -> Result<Option<String>, D::Error> {
    let day = String::deserialize(day)?;
    if day.as_str() < "2000" {
        return Err(serde::de::Error::custom(format!("{day} is too early")));
    }
    Ok(Some(day))
}

/// A tool that asks for `Booking` without declaring it.
#[derive(Debug, Deserialize, JsonSchema)]
struct Undeclared {
    #[allow(dead_code)]
    ok: bool,
}

/// The form the client is shown for `Booking`.
fn booking_form() -> Value {
    json!({
        "type": "object",
        "properties": {
            "guest": {"type": "string", "description": "Who the room is for.",
                      "minLength": 1, "maxLength": 40},
            "nights": {"type": "integer", "description": "Nights to stay.",
                       "minimum": 1, "maximum": 14},
            "room": {"type": "string", "description": "The kind of room.",
                     "enum": ["single", "double", "suite"]},
            "breakfast": {"type": "boolean", "description": "Breakfast every morning.",
                          "default": false},
            "arrivalDay": {"type": "string", "format": "date",
                           "description": "The day of arrival (this century)."},
        },
        "required": ["guest", "nights", "room"],
    })
}

/// `book_room` (a task when the client declares Tasks) asks the `Booking` form under key
/// `booking`; `ask_undeclared` asks with a type it did not declare.
async fn server() -> RunningServer {
    let book_room = Tool::new("book_room", "Books a room after asking", |ctx| async move {
        let text = match ctx.elicit_as::<Booking>("booking", "Which room?").await? {
            Elicited::Accept(b) => format!(
                "Booked a {:?} room for {}: {} nights, breakfast {}, arriving {}",
                b.room,
                b.guest,
                b.nights,
                b.breakfast,
                b.arrival_day.as_deref().unwrap_or("any day")
            ),
            Elicited::Decline => "Booking declined".to_owned(),
            Elicited::Cancel => "Booking cancelled".to_owned(),
        };
        Ok(text_result(text))
    })
    .asks::<Booking>()
    .with_policy(TaskPolicy::Optional);
    let ask_undeclared = Tool::new(
        "ask_undeclared",
        "Asks an undeclared form",
        |ctx| async move {
            ctx.elicit_as::<Undeclared>("ok", "OK?").await?;
            Ok(text_result("asked"))
        },
    )
    .with_policy(TaskPolicy::Optional);
    ServerBuilder::new("elicit-as-test", "1.0.0")
        .tool(book_room)
        .tool(ask_undeclared)
        .poll_interval_ms(50)
        .bind("127.0.0.1:0")
        .await
        .expect("binds a loopback port")
}

fn text_of(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

/// A full, valid booking: every kind of field answered.
fn full_booking() -> Value {
    json!({"action": "accept", "content": {
        "guest": "Ada", "nights": 3, "room": "suite", "breakfast": true,
        "arrivalDay": "2026-03-01", "note": "not in the form: dropped"}})
}

const BOOKED: &str = "Booked a Suite room for Ada: 3 nights, breakfast true, arriving 2026-03-01";

/// Answers and what the tool makes of them.
fn answers() -> [(Value, &'static str); 4] {
    [
        (full_booking(), BOOKED),
        (
            // Only the required fields: the defaults fill the rest.
            json!({"action": "accept", "content": {"guest": "Bo", "nights": 1, "room": "single"}}),
            "Booked a Single room for Bo: 1 nights, breakfast false, arriving any day",
        ),
        (
            // A decline is never consent, whatever content it carries.
            json!({"action": "decline", "content": {"guest": "Eve"}}),
            "Booking declined",
        ),
        (json!({"action": "cancel"}), "Booking cancelled"),
    ]
}

const NOT_THE_TYPE: &str =
    "Invalid input response for booking: content at /arrivalDay is not accepted by the form's type";

#[tokio::test]
async fn a_task_asks_the_typed_form_and_gets_accept_decline_and_cancel() {
    let server = server().await;
    let client = Client::of(&server);
    let mut events = server.dispatcher().runtime().subscribe();
    for (answer, expected) in answers() {
        let created = client.create_task("book_room", json!({})).await;
        let id = created["taskId"].as_str().unwrap();
        wait_status(&mut events, id, TaskStatus::InputRequired).await;
        let parked = client.get_task(id).await;
        assert_eq!(
            parked["inputRequests"]["booking"],
            json!({"method": "elicitation/create", "params": {
                "mode": "form", "message": "Which room?", "requestedSchema": booking_form()}}),
            "{parked}"
        );
        let ack = client
            .update_task(id, json!({"booking": answer.clone()}))
            .await;
        assert_eq!(ack["resultType"], "complete", "{ack}");
        let done = client.poll_until_terminal(id).await;
        assert_eq!(done["status"], "completed", "{answer}: {done}");
        assert_eq!(text_of(&done["result"]), expected, "{answer}");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn a_task_answer_that_does_not_fit_is_refused_or_fails_the_task_without_a_panic() {
    let server = server().await;
    let client = Client::of(&server);
    let mut events = server.dispatcher().runtime().subscribe();
    let created = client.create_task("book_room", json!({})).await;
    let id = created["taskId"].as_str().unwrap();
    wait_status(&mut events, id, TaskStatus::InputRequired).await;
    // Wrong types break the form: tasks/update is refused and the task stays parked.
    for content in [
        json!({"guest": 12, "nights": 1, "room": "single"}),
        json!({"guest": "Ada", "nights": 15, "room": "single"}),
        json!({"guest": "Ada", "nights": 1, "room": "penthouse"}),
        json!({"guest": "Ada", "room": "single"}),
    ] {
        client
            .request(
                "tasks/update",
                json!({"taskId": id, "inputResponses": {
                    "booking": {"action": "accept", "content": content}}}),
                tasks_caps(),
            )
            .await
            .error(
                400,
                -32602,
                "Invalid input response for booking: content does not match the requested schema",
            );
    }
    assert_eq!(client.get_task(id).await["status"], "input_required");
    // Content that fits the form but not the type: the tool gets -32602 from `elicit_as`, and
    // `?` fails the task with it (the client's value is not quoted).
    let answer = json!({"action": "accept", "content": {
        "guest": "Ada", "nights": 1, "room": "single", "arrivalDay": "1999-12-31"}});
    client.update_task(id, json!({"booking": answer})).await;
    let done = client.poll_until_terminal(id).await;
    assert_eq!(done["status"], "failed", "{done}");
    assert_eq!(
        done["error"],
        json!({"code": -32602, "message": NOT_THE_TYPE}),
        "{done}"
    );
    server.shutdown().await;
}

/// A synchronous call (elicitation declared, Tasks not): the first round's `input_required`.
async fn first_round(client: &Client) -> Value {
    let round = client
        .request(
            "tools/call",
            json!({"name": "book_room", "arguments": {}}),
            json!({"elicitation": {}}),
        )
        .await
        .result();
    assert_eq!(round["resultType"], "input_required", "{round}");
    assert_eq!(
        round["inputRequests"],
        json!({"booking": {"method": "elicitation/create", "params": {
            "mode": "form", "message": "Which room?", "requestedSchema": booking_form()}}}),
        "{round}"
    );
    round
}

/// The MRTR retry of `round` answering `booking` with `answer`.
async fn retry(client: &Client, round: &Value, answer: &Value) -> Reply {
    client
        .request(
            "tools/call",
            json!({"name": "book_room", "arguments": {},
                   "requestState": round["requestState"],
                   "inputResponses": {"booking": answer}}),
            json!({"elicitation": {}}),
        )
        .await
}

#[tokio::test]
async fn a_synchronous_call_asks_the_typed_form_in_an_mrtr_round() {
    let server = server().await;
    let client = Client::of(&server);
    for (answer, expected) in answers() {
        let round = first_round(&client).await;
        let result = retry(&client, &round, &answer).await.result();
        assert_eq!(result["resultType"], "complete", "{result}");
        assert_eq!(text_of(&result), expected, "{answer}");
    }
    // Content that breaks the form, and content that fits it but not the type: -32602, and
    // the client's values are not quoted.
    let round = first_round(&client).await;
    retry(
        &client,
        &round,
        &json!({"action": "accept", "content": {"guest": "Ada", "nights": "three", "room": "single"}}),
    )
    .await
    .error(
        400,
        -32602,
        "Invalid input response for booking: content does not match the requested schema",
    );
    let reply = retry(
        &client,
        &round,
        &json!({"action": "accept", "content": {
            "guest": "Ada", "nights": 1, "room": "single", "arrivalDay": "1999-12-31"}}),
    )
    .await;
    let error = reply.error(400, -32602, NOT_THE_TYPE);
    assert!(!error.to_string().contains("1999"), "{error}");
    server.shutdown().await;
}

#[tokio::test]
async fn a_type_the_tool_did_not_declare_is_an_internal_error_on_both_paths() {
    let server = server().await;
    let client = Client::of(&server);
    const UNDECLARED: &str = "Tool asked with a form type it did not declare with Tool::asks";
    // Checked before anything else: even a client that declares no elicitation hears it.
    for caps in [json!({"elicitation": {}}), json!({})] {
        let reply = client
            .request(
                "tools/call",
                json!({"name": "ask_undeclared", "arguments": {}}),
                caps,
            )
            .await;
        reply.error(500, -32603, UNDECLARED);
    }
    let created = client.create_task("ask_undeclared", json!({})).await;
    let done = client
        .poll_until_terminal(created["taskId"].as_str().unwrap())
        .await;
    assert_eq!(done["status"], "failed", "{done}");
    assert_eq!(
        done["error"],
        json!({"code": -32603, "message": UNDECLARED})
    );
    server.shutdown().await;
}

/// A stop on a trip: a struct, which a form cannot nest.
#[derive(Debug, Deserialize, JsonSchema)]
struct Stop {
    #[allow(dead_code)]
    city: String,
}

/// A form type with a list of structs.
#[derive(Debug, Deserialize, JsonSchema)]
struct Trip {
    #[allow(dead_code)]
    name: String,
    #[allow(dead_code)]
    stops: Vec<Stop>,
}

#[test]
fn a_type_outside_the_form_subset_stops_the_tool_being_built() {
    let built = std::panic::catch_unwind(AssertUnwindSafe(|| {
        Tool::new("book_trip", "Books a trip", |_ctx| async {
            Ok(text_result("booked"))
        })
        .asks::<Trip>()
    }));
    let panic = built.expect_err("the tool is refused when it is built");
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert_eq!(
        message,
        "form type http_e2e::elicit_as_http::Trip of tool book_trip is not an MCP elicitation form: \
         property `stops` is an array of objects; a form's only arrays are multi selects, of \
         string enum values (a form is a flat struct of string, number, integer, boolean and \
         string enum fields: https://modelcontextprotocol.io/specification/2026-07-28/client/elicitation)"
    );
}
