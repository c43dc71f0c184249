//! Test support shared by more than one crate's tests: server binaries as child processes, a
//! small client of them, the multi-process harnesses (kill -9 under load, a PostgreSQL cluster
//! of nodes) and the PostgreSQL test database. Not published and no API promise: it changes
//! with the tests that use it.
//!
//! Before this crate these files were included by `#[path]` from one crate's `tests/` folder
//! into another's; now each test crate lists `tasks-test-support` in its `[dev-dependencies]`.
//!
//! | module | uses |
//! |---|---|
//! | `kill9` (kill -9 of a server under load, on one SQLite file) | `process`, `client` |
//! | `cluster` (server nodes on one PostgreSQL schema) | `process`, `client`, `postgres` |
//! | `process` ([`Fixture`]: a server binary as a child process) | `client` |
//! | `postgres` (the test database, or a clear skip; a fresh schema per store; a stalling proxy), `client` ([`Client`], [`Sse`]) | the leaves |

pub mod client;
pub mod cluster;
pub mod kill9;
pub mod postgres;
pub mod process;

pub use client::{result_text, Client, Sse, VERSION};
pub use process::Fixture;
