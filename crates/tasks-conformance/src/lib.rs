//! What a conformance server for the MCP Tasks extension (SEP-2663) needs besides its protocol
//! layer: the tools the official MCP conformance runner
//! (`@modelcontextprotocol/conformance@0.2.0-alpha.12`) calls ([`tools`]), the prompts and
//! resources it reads ([`catalog`]), and the `--store`
//! choice of memory, SQLite or PostgreSQL ([`store`]).
//!
//! It depends on `tasks-core`, `tasks-runtime` and the store crates only, so a server on
//! another MCP layer (the `rmcp-app` example, on the official Rust SDK) serves the very tools
//! `tasks-fixture` serves.
//!
//! # Modules
//!
//! | module | uses |
//! |---|---|
//! | `catalog` (the fixture's prompts and resources) | `tools::content` |
//! | `tools` (the fixture's tools: `tools::tasks`, `tools::content`, `tools::mrtr`, `tools::session`), `store` (the `--store` choice) | nothing outside itself |

pub mod catalog;
pub mod store;
pub mod tools;
