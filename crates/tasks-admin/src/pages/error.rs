//! The page of a refusal: its message only (nothing of the inventory).

use maud::html;
use maud::Markup;

use crate::config::AdminConfig;
use crate::error::AdminError;

/// The HTML answer to `error`: a small page with the message (and a login link for a 401),
/// with the error's status and headers.
pub(crate) fn respond(config: &AdminConfig, error: &AdminError) -> axum::response::Response {
    error.finish(super::html(page(config, error)))
}

/// The page for `error`.
pub(crate) fn page(config: &AdminConfig, error: &AdminError) -> Markup {
    let body = html! {
        p.error { (error.message()) }
        @if error.wants_login() {
            p { a href=(config.path("/login")) { "Log in" } }
        }
    };
    super::layout::page(config, "Error", None, false, body)
}
