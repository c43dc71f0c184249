//! MRTR `requestState`: integrity-protected, request-bound, fresh every round.
//!
//! A synchronous tool that needs input answers `input_required` with `inputRequests` and a
//! `requestState`; the client retries the same call with `inputResponses` and the state echoed.
//! The state carries the answers of earlier rounds, so a retry only sends the newest ones
//! (runner scenario `input-required-result-multi-round`).
//!
//! Format: `base64url(payload JSON) "." base64url(HMAC-SHA256(key, payload part))`. The payload
//! binds the state to the method, tool name, a digest of the arguments and of the scope, and an
//! expiry (MCP 2026-07-28 MRTR, "Server Requirements (Basic Workflow)":
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr>); a random
//! nonce and the round number make every round's state different (runner check
//! `input-required-result-multi-round/sep-2322-multi-round-r2`). Any failure — bad format, bad
//! MAC, other request, expired — is
//! -32602 `Invalid requestState` (runner check `sep-2322-reject-tampered-state`).
//!
//! Pure: the key, the time and the nonce come in as arguments (the HTTP crate draws the key
//! and nonces from the OS). Several processes behind one address must share the key, or a
//! retry landing on another process is rejected.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

use crate::canonical;
use crate::error::McpError;
use crate::id::{TaskId, TASK_ID_RANDOM_BYTES};
use crate::input::InputRequest;
use crate::method::Method;
use crate::time::Timestamp;
use crate::JsonObject;

type HmacSha256 = Hmac<Sha256>;

/// How long an issued `requestState` stays valid at most, in milliseconds (10 minutes). A
/// server whose tasks live shorter issues states that live no longer than its tasks (see
/// [`StateIssuer::new`](crate::exchange::StateIssuer::new)).
pub const STATE_LIFETIME_MS: u64 = 600_000;

/// The bytes of a state's nonce.
pub const NONCE_BYTES: usize = 12;

/// The lifetime of a state issued by a server whose tasks live `task_ttl_ms` (`None`:
/// unlimited): [`STATE_LIFETIME_MS`], or the task TTL when shorter. A task created by a retry
/// then outlives every state that could replay that retry, so a replay always finds the task
/// instead of running the tool again.
pub(crate) fn state_lifetime_ms(task_ttl_ms: Option<u64>) -> u64 {
    task_ttl_ms.map_or(STATE_LIFETIME_MS, |ttl| ttl.min(STATE_LIFETIME_MS))
}

/// The HMAC key protecting `requestState` (32 bytes).
#[derive(Clone)]
pub struct StateKey([u8; 32]);

impl std::fmt::Debug for StateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateKey(..)")
    }
}

impl StateKey {
    /// A key of 32 bytes (draw them from the OS CSPRNG).
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        StateKey(bytes)
    }

    /// A key derived from shared secret bytes (any length), for several processes.
    pub fn from_secret(secret: &[u8]) -> Self {
        StateKey(Sha256::digest(secret).into())
    }
}

/// What a state is bound to: the originating request.
#[derive(Debug, Clone, Copy)]
pub struct Binding<'a> {
    /// The method (`tools/call`).
    pub method: Method,
    /// The tool (or prompt) name.
    pub name: &'a str,
    /// The request arguments.
    pub arguments: &'a JsonObject,
    /// The caller's scope (its opaque string).
    pub scope: &'a str,
}

impl Binding<'_> {
    fn digest(&self) -> String {
        let mut hasher = Sha256::new();
        for part in [self.method.as_str(), self.name, self.scope] {
            hasher.update((part.len() as u64).to_be_bytes());
            hasher.update(part.as_bytes());
        }
        canonical::encode_object(self.arguments, &mut |piece| hasher.update(piece));
        URL_SAFE_NO_PAD.encode(hasher.finalize())
    }
}

/// The verified content of a `requestState`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestState {
    /// The round that issued it (1 for the first `input_required`).
    #[serde(rename = "r")]
    pub round: u32,
    /// Answers gathered in earlier rounds, checked and normalized.
    #[serde(rename = "a")]
    pub answers: JsonObject,
    /// The requests this round asked, by key: a retry's `inputResponses` are checked against
    /// them, and answers to other keys are ignored.
    #[serde(rename = "q", default)]
    pub asked: BTreeMap<String, InputRequest>,
}

impl RequestState {
    /// Checks a retry's `inputResponses` against the requests this state asked and merges them
    /// into the earlier answers: answers to keys it did not ask are ignored.
    ///
    /// # Errors
    /// -32602 `Invalid input response for <key>: …` when an answer does not fit its request;
    /// nothing of the retry is used then.
    pub fn merge(&self, responses: Option<&JsonObject>) -> Result<JsonObject, McpError> {
        let mut merged = self.answers.clone();
        for (key, response) in responses.into_iter().flatten() {
            if let Some(request) = self.asked.get(key) {
                let checked = request
                    .check_response(response)
                    .map_err(|reason| reason.to_error(key))?;
                merged.insert(key.clone(), checked.to_value());
            }
        }
        Ok(merged)
    }
}

/// The id of the task created by the MRTR retry carrying `request_state` (as sent) and whose
/// merged answers are `answers`: a keyed hash, so a replay of the same retry addresses the same
/// task, on any process sharing the key and the store, and nobody without the key can predict
/// it.
pub(crate) fn task_id_for_retry(
    key: &StateKey,
    request_state: &str,
    answers: &JsonObject,
) -> TaskId {
    let mut hmac = mac(key, "task-id");
    hmac.update(&(request_state.len() as u64).to_be_bytes());
    hmac.update(request_state.as_bytes());
    canonical::encode_object(answers, &mut |piece| hmac.update(piece));
    let digest = hmac.finalize().into_bytes();
    let mut bytes = [0u8; TASK_ID_RANDOM_BYTES];
    bytes.copy_from_slice(&digest[..TASK_ID_RANDOM_BYTES]);
    TaskId::from_random_bytes(bytes)
}

/// The payload format. 2: the binding digest and the retry task id hash the arguments and
/// answers in the [`canonical`] encoding (1 hashed serde_json's text, which depends on its
/// map order and on how numbers were spelled); a state of another format is invalid.
const FORMAT: u8 = 2;

#[derive(Serialize, Deserialize)]
struct Payload {
    #[serde(rename = "v")]
    version: u8,
    #[serde(flatten)]
    state: RequestState,
    #[serde(rename = "b")]
    binding: String,
    #[serde(rename = "e")]
    expires_ms: u64,
    #[serde(rename = "n")]
    nonce: String,
}

fn mac(key: &StateKey, payload: &str) -> HmacSha256 {
    let mut mac = HmacSha256::new_from_slice(&key.0).expect("HMAC accepts any key length");
    mac.update(payload.as_bytes());
    mac
}

fn invalid() -> McpError {
    McpError::invalid_params("Invalid requestState")
}

/// Issues a state for `binding` carrying `state`, valid until `now + lifetime_ms`, made
/// unique by `nonce` (draw it from the OS CSPRNG; zeros still work, the round number changes
/// every state of one call).
pub fn issue(
    key: &StateKey,
    binding: Binding<'_>,
    state: RequestState,
    now: Timestamp,
    lifetime_ms: u64,
    nonce: [u8; NONCE_BYTES],
) -> String {
    let payload = Payload {
        version: FORMAT,
        state,
        binding: binding.digest(),
        expires_ms: now.unix_millis().saturating_add(lifetime_ms),
        nonce: URL_SAFE_NO_PAD.encode(nonce),
    };
    let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&payload).unwrap_or_default());
    let tag = URL_SAFE_NO_PAD.encode(mac(key, &payload).finalize().into_bytes());
    format!("{payload}.{tag}")
}

/// Verifies a state echoed by the client for `binding` at `now`.
///
/// # Errors
/// -32602 `Invalid requestState` for any failure.
pub fn verify(
    key: &StateKey,
    binding: Binding<'_>,
    text: &str,
    now: Timestamp,
) -> Result<RequestState, McpError> {
    let (payload, tag) = text.split_once('.').ok_or_else(invalid)?;
    let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| invalid())?;
    mac(key, payload)
        .verify_slice(&tag)
        .map_err(|_| invalid())?;
    let bytes = URL_SAFE_NO_PAD.decode(payload).map_err(|_| invalid())?;
    let payload: Payload = serde_json::from_slice(&bytes).map_err(|_| invalid())?;
    if payload.version != FORMAT
        || payload.binding != binding.digest()
        || now.unix_millis() >= payload.expires_ms
    {
        return Err(invalid());
    }
    Ok(payload.state)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: serde_json::Value) -> JsonObject {
        v.as_object().cloned().unwrap()
    }

    /// A `tools/call` of tool `t` with `arguments`, in the shared scope.
    fn binding(arguments: &JsonObject) -> Binding<'_> {
        Binding {
            method: Method::ToolsCall,
            name: "t",
            arguments,
            scope: "",
        }
    }

    #[test]
    fn round_trip_and_freshness() {
        let key = StateKey::from_bytes([1; 32]);
        let a = args(json!({"x": 1}));
        let b = binding(&a);
        let now = Timestamp::from_unix_millis(1_000);
        let state = RequestState {
            round: 1,
            answers: args(json!({"k": {"action": "accept"}})),
            asked: BTreeMap::new(),
        };
        let s1 = issue(
            &key,
            b,
            state.clone(),
            now,
            STATE_LIFETIME_MS,
            [1; NONCE_BYTES],
        );
        let s2 = issue(
            &key,
            b,
            state.clone(),
            now,
            STATE_LIFETIME_MS,
            [2; NONCE_BYTES],
        );
        assert_ne!(s1, s2, "a nonce makes every issued state distinct");
        assert_eq!(verify(&key, b, &s1, now).unwrap(), state);
    }

    #[test]
    fn tampering_other_requests_and_expiry_are_rejected() {
        let key = StateKey::from_bytes([1; 32]);
        let a = args(json!({"x": 1}));
        let b = binding(&a);
        let now = Timestamp::from_unix_millis(1_000);
        let s = issue(
            &key,
            b,
            RequestState {
                round: 1,
                answers: JsonObject::new(),
                asked: BTreeMap::new(),
            },
            now,
            STATE_LIFETIME_MS,
            [0; NONCE_BYTES],
        );
        let bad = |r: Result<RequestState, McpError>| assert_eq!(r.unwrap_err().code(), -32602);
        bad(verify(&key, b, &format!("{s}-TAMPERED"), now));
        bad(verify(&StateKey::from_bytes([2; 32]), b, &s, now));
        let other = args(json!({"x": 2}));
        bad(verify(
            &key,
            Binding {
                arguments: &other,
                ..b
            },
            &s,
            now,
        ));
        bad(verify(&key, Binding { name: "u", ..b }, &s, now));
        let intruder = "mallory";
        bad(verify(
            &key,
            Binding {
                scope: intruder,
                ..b
            },
            &s,
            now,
        ));
        bad(verify(&key, b, &s, now.plus_millis(STATE_LIFETIME_MS)));
        assert_eq!(state_lifetime_ms(None), STATE_LIFETIME_MS);
        assert_eq!(
            state_lifetime_ms(Some(2_000)),
            2_000,
            "never outlives the tasks"
        );
        assert_eq!(state_lifetime_ms(Some(3_600_000)), STATE_LIFETIME_MS);
        bad(verify(&key, b, "not-a-state", now));
    }

    #[test]
    fn a_retry_binds_by_meaning_not_by_spelling_and_big_integers_stay_apart() {
        let key = StateKey::from_bytes([1; 32]);
        let now = Timestamp::from_unix_millis(1_000);
        let parse = |text: &str| args(serde_json::from_str(text).unwrap());
        let issued = |arguments: &JsonObject| {
            issue(
                &key,
                binding(arguments),
                RequestState {
                    round: 1,
                    answers: JsonObject::new(),
                    asked: BTreeMap::new(),
                },
                now,
                STATE_LIFETIME_MS,
                [0; NONCE_BYTES],
            )
        };
        let first = parse(r#"{"n": 1, "m": {"b": 2.50, "a": [1e2]}}"#);
        let state = issued(&first);
        let respelled = parse(r#"{"m": {"a": [100], "b": 2.5}, "n": 1.0}"#);
        assert!(verify(&key, binding(&respelled), &state, now).is_ok());
        let big = parse(r#"{"n": 9007199254740993}"#);
        let state = issued(&big);
        let neighbour = parse(r#"{"n": 9007199254740992}"#);
        assert!(verify(&key, binding(&neighbour), &state, now).is_err());
        assert!(verify(&key, binding(&big), &state, now).is_ok());
        // The retry's task id too.
        let answers = parse(r#"{"k": {"action": "accept", "content": {"n": 1}}}"#);
        let respelled = parse(r#"{"k": {"content": {"n": 1.0}, "action": "accept"}}"#);
        assert_eq!(
            task_id_for_retry(&key, &state, &answers),
            task_id_for_retry(&key, &state, &respelled)
        );
    }
}
