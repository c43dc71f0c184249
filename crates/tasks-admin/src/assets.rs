//! The stylesheet and the script, compiled into the binary and served at
//! `{prefix}/assets/admin.css` and `{prefix}/assets/admin.js` (the CSP allows only these).

use axum::response::{IntoResponse as _, Response};
use http::header;

/// `GET assets/admin.css`.
pub(crate) async fn css() -> Response {
    (
        [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
        include_str!("assets/admin.css"),
    )
        .into_response()
}

/// `GET assets/admin.js`.
pub(crate) async fn js() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        include_str!("assets/admin.js"),
    )
        .into_response()
}
