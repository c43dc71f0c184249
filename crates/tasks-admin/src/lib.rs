//! # tasks-admin
//!
//! An operator's console for an MCP Tasks server: server-rendered pages and a JSON API over a
//! [`TaskRuntime`]'s inventory (every task across every scope, the counts, the nodes), and an
//! operator's cancel. [`router`] builds it; the host nests it at [`AdminConfig::prefix`]:
//!
//! ```no_run
//! # fn host(runtime: tasks_runtime::TaskRuntime) {
//! use tasks_admin::{AdminConfig, AdminCredential};
//! let credential = AdminCredential::new("a long random admin token").expect("non-empty");
//! let admin = tasks_admin::router(runtime, AdminConfig::new("/admin", credential));
//! let app: axum::Router = axum::Router::new().nest("/admin", admin);
//! # let _ = app; }
//! ```
//!
//! | route (under the prefix) | what |
//! |---|---|
//! | `GET /login`, `POST /login` | the login form (the only page served without the credential) |
//! | `POST /logout` | ends the browser session (CSRF-checked) |
//! | `GET /` | the task list: counts, filters (`?status=&tool=&node=&stuck=1&order=oldest&after=&limit=`), one page |
//! | `GET /tasks/{id}`, `POST /tasks/{id}/cancel` | one task; the operator's cancel (CSRF-checked, 303 back) |
//! | `GET /nodes` | the registered nodes |
//! | `GET /api/tasks`, `GET /api/tasks/{id}`, `GET /api/counts`, `GET /api/nodes`, `POST /api/tasks/{id}/cancel` | the JSON API (bearer only) |
//! | `GET /assets/admin.css`, `GET /assets/admin.js` | the stylesheet and the refresh script |
//!
//! ## Security model
//!
//! **One credential of its own.** Everything but the login page and the two static assets
//! needs the admin token ([`AdminCredential`], compared in constant time): scripts send it as
//! `Authorization: Bearer <token>`, a browser types it once into the login form and gets a
//! session cookie (`HttpOnly; SameSite=Strict; Path=<prefix>`, a random id kept in memory,
//! looked up by its hash). No MCP caller's credential is ever accepted: the console knows only
//! its own token. A request without it, or with a wrong one, gets a 401 holding nothing of the
//! inventory. The JSON API takes the bearer only, never the cookie.
//!
//! **No cross-site writes.** A browser's state-changing request (`POST` cancel, logout,
//! login) is refused with 403 when its `Origin` names another origin than the request's own
//! `Host` (or `Sec-Fetch-Site` says cross-site), and cancel and logout also need the session's
//! CSRF token, a hidden field of the console's own forms, compared in constant time. A bearer
//! request carries no ambient credential, so it needs no CSRF token.
//!
//! **Untrusted text stays text.** Status messages, tool names and task ids are written by
//! tools and clients: every page is a [maud](https://maud.lambda.xyz/) template, which escapes
//! every value it inserts. Every response carries a strict Content-Security-Policy
//! ([`CSP`]: only the console's own stylesheet and script, no inline code, no framing),
//! `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer` and
//! `Cache-Control: no-store`. The inventory holds metadata only: never a task's arguments,
//! results or input answers.
//!
//! **Bounded.** The whole surface shares one token bucket ([`RateLimit`]): past it, 429 with
//! `Retry-After: 1`. A store failure is answered 503 with a generic text; the store's own
//! error goes to the log (`tracing`). A store without an inventory is answered 501, "not
//! supported by this store".
//!
//! ## Layout
//!
//! | module | uses |
//! |---|---|
//! | `headers` (the security headers on every answer, the rate limit's refusal) | `auth`, `error`, `state` |
//! | `auth` (the credential, login, logout, the session cookie) | `csrf`, `error`, `pages`, `session`, `state` |
//! | `pages` (the maud pages: list, detail, nodes, login, refusals) | `api`, `csrf`, `query`, `state`, `config`, `error` |
//! | `api` (the JSON API) | `error`, `query`, `state`, `view` |
//! | `csrf` (same-origin and CSRF-token checks) | `error`, `state` |
//! | `state` (what every handler shares) | `config`, `limit`, `session` |
//! | `query` (filters and cursors from the URL) | `error` |
//! | `limit` (the token bucket) | `config` |
//! | `config`, `error`, `session`, `view` (the JSON shapes), `assets` | nothing of this crate |

mod api;
mod assets;
mod auth;
mod config;
mod csrf;
mod error;
mod headers;
mod limit;
mod pages;
mod query;
mod session;
mod state;
mod view;

use axum::routing::{get, post};
use axum::Router;
use tasks_runtime::TaskRuntime;

pub use config::{AdminConfig, AdminCredential, RateLimit};
pub use headers::CSP;

use error::AdminError;
use state::{AdminState, Shared};

/// The console's routes (the table above), relative: nest the router at
/// [`AdminConfig::prefix`] (links, form actions and the cookie path use that prefix).
pub fn router(runtime: TaskRuntime, config: AdminConfig) -> Router {
    let state = AdminState::new(runtime, config);
    let api = Router::new()
        .route("/api/tasks", get(api::tasks))
        .route("/api/tasks/{id}", get(api::task))
        .route("/api/tasks/{id}/cancel", post(api::cancel))
        .route("/api/counts", get(api::counts))
        .route("/api/nodes", get(api::nodes));
    let protected = Router::new()
        .route("/", get(pages::list::handler))
        .route("/tasks/{id}", get(pages::detail::handler))
        .route("/tasks/{id}/cancel", post(pages::detail::cancel))
        .route("/nodes", get(pages::nodes::handler))
        .route("/logout", post(auth::logout))
        .merge(api)
        .fallback(not_found)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::require,
        ));
    Router::new()
        .route("/login", get(auth::login_page).post(auth::login))
        .route("/assets/admin.css", get(assets::css))
        .route("/assets/admin.js", get(assets::js))
        .merge(protected)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            headers::limit,
        ))
        .layer(axum::middleware::map_response(headers::secure))
        .with_state(state)
}

async fn not_found(
    axum::extract::State(state): axum::extract::State<Shared>,
    uri: http::Uri,
) -> axum::response::Response {
    auth::refuse(&state, uri.path(), &AdminError::NotFound)
}
