//! The authenticated caller of a request: [`tasks_runtime::Principal`], which an
//! authentication layer in front of [`McpService`](crate::McpService) inserts into the request
//! extensions (`request.extensions_mut().insert(Principal::new(user_id))`). The endpoint hashes
//! it with the server's scope key
//! ([`ServerBuilder::scope_secret`](crate::ServerBuilder::scope_secret)) before anything stores
//! or logs it.

pub use tasks_runtime::Principal;
