//! Test support shared by the workspace's tests: one place for what more than one test tree
//! needs. Not published and no API promise: it changes with the tests that use it.
//!
//! Speaking MCP: [`client::Client`] over HTTP, built on the workspace's own client
//! (`tasks-client`) for correct MCP, with a raw escape hatch (any [`request::Req`], header or
//! body; the status, headers and body back); the one SSE reader ([`sse::Sse`]); a
//! [`dispatcher::Dispatcher`](tasks_http::Dispatcher) in process (a [`request::Req`] sent to
//! it). Servers: the fixture in process ([`fixture`]) or as a child process ([`process`]), the
//! multi-process harnesses ([`kill9`], [`cluster`]) and the PostgreSQL test database
//! ([`postgres`]). Runtimes and stores in process: [`runtime`], [`probe`], [`task_wait`],
//! [`events`], [`yielding`], [`store`].
//!
//! Features keep a light user light: without any, only the in-process runtime and store
//! modules build (no HTTP stack); `dispatcher` adds tasks-http, `http` the fixture, reqwest and
//! tasks-client, `kill9` SQLite, `postgres` the database, `cluster` both servers and database.
//!
//! | module | uses |
//! |---|---|
//! | `cluster` (server nodes on one PostgreSQL schema) | `process`, `client`, `postgres` |
//! | `kill9` (kill -9 of a server under load, on one SQLite file) | `process`, `client` |
//! | `process` ([`Fixture`]: a server binary as a child process) | `client` |
//! | `client` ([`Client`]: MCP over HTTP, raw requests too) | `request`, `sse`, `wait`, `protocol` |
//! | `fixture` (the fixture in process) | `dispatcher` |
//! | `sessions` (2025 sessions on a dispatcher) | `dispatcher`, `request` |
//! | `dispatcher` (a dispatcher in process, its replies) | `request`, `tools`, `wait`, `protocol` |
//! | `request` ([`request::Req`]: one request, correct by default) | `protocol` |
//! | `postgres` (the test database, or a clear skip; a fresh schema per store; a stalling proxy) | `store` |
//! | `runtime` (runtimes over a memory store, work, values) | `yielding` |
//! | `task_wait` (waiting on a runtime's tasks) | `runtime`, `wait` |
//! | `probe` (counters of test tools, and the tools) | `runtime` |
//! | `events` (waiting on status events, their order), `sse` ([`Sse`]: one SSE reader), `raw` (one raw TCP exchange) | `wait` |
//! | `tools` (the dispatcher tests' tools), `store` (store tests' updates), `yielding` ([`yielding::YieldingStore`]), `wait` (the wait limit), `protocol` (what a correct request carries; JSON-RPC errors) | the leaves |

#[cfg(feature = "http")]
pub mod client;
#[cfg(feature = "cluster")]
pub mod cluster;
#[cfg(feature = "dispatcher")]
pub mod dispatcher;
pub mod events;
#[cfg(feature = "http")]
pub mod fixture;
#[cfg(feature = "kill9")]
pub mod kill9;
#[cfg(feature = "postgres")]
pub mod postgres;
pub mod probe;
#[cfg(feature = "http")]
pub mod process;
pub mod protocol;
#[cfg(feature = "http")]
pub mod raw;
#[cfg(feature = "dispatcher")]
pub mod request;
pub mod runtime;
#[cfg(feature = "dispatcher")]
pub mod sessions;
#[cfg(feature = "http")]
pub mod sse;
pub mod store;
pub mod task_wait;
#[cfg(feature = "dispatcher")]
pub mod tools;
pub mod wait;
pub mod yielding;

#[cfg(feature = "http")]
pub use client::{result_text, Client};
#[cfg(feature = "http")]
pub use process::Fixture;
#[cfg(feature = "http")]
pub use sse::Sse;
