//! The security headers of every response, and the rate limit in front of every route.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http::{header, HeaderValue};

use crate::error::AdminError;
use crate::state::Shared;

/// The Content-Security-Policy: the console's own stylesheet and script only, no inline
/// code, no framing, forms posting to the console only.
pub const CSP: &str = "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; \
                       form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// Adds the security headers to `response`.
pub(crate) async fn secure(response: Response) -> Response {
    let mut response = response;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

/// Takes a token from the bucket, or answers 429 with `Retry-After: 1`.
pub(crate) async fn limit(State(state): State<Shared>, request: Request, next: Next) -> Response {
    if state.bucket.take() {
        next.run(request).await
    } else {
        crate::auth::refuse(&state, request.uri().path(), &AdminError::RateLimited)
    }
}
