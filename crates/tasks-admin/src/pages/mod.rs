//! The server-rendered pages (maud: everything a tool or client wrote is escaped).

pub(crate) mod detail;
pub(crate) mod error;
pub(crate) mod layout;
pub(crate) mod list;
pub(crate) mod login;
pub(crate) mod nodes;
pub(crate) mod time;

use axum::response::{IntoResponse as _, Response};
use http::{header, HeaderValue};
use maud::Markup;

/// `markup` as a `200 text/html` response.
pub(crate) fn html(markup: Markup) -> Response {
    let mut response = markup.into_string().into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    response
}
