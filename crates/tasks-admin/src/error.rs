//! [`AdminError`]: every refusal the console answers, as a small HTML page or as JSON
//! `{"error": "..."}`, never with a store's own error text (that goes to the log).

use axum::response::{IntoResponse as _, Response};
use http::{header, HeaderValue, StatusCode};
use tasks_runtime::OperatorError;

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AdminError {
    /// 400: a query parameter, cursor or form that does not parse.
    BadRequest(String),
    /// 401: no admin credential, or a wrong one.
    Unauthorized,
    /// 403: a cross-site request, or a missing or wrong CSRF token.
    Forbidden(&'static str),
    /// 404: no such task or page.
    NotFound,
    /// 429: the admin surface's rate limit.
    RateLimited,
    /// 501: the store has no inventory.
    NotSupported,
    /// 503: the store failed (details in the log only).
    Unavailable,
}

impl From<OperatorError> for AdminError {
    fn from(error: OperatorError) -> Self {
        match error {
            OperatorError::NotSupported => AdminError::NotSupported,
            OperatorError::NotFound => AdminError::NotFound,
            other => {
                tracing::error!(error = %other, "admin console: the task store failed");
                AdminError::Unavailable
            }
        }
    }
}

impl AdminError {
    fn status(&self) -> StatusCode {
        match self {
            AdminError::BadRequest(_) => StatusCode::BAD_REQUEST,
            AdminError::Unauthorized => StatusCode::UNAUTHORIZED,
            AdminError::Forbidden(_) => StatusCode::FORBIDDEN,
            AdminError::NotFound => StatusCode::NOT_FOUND,
            AdminError::RateLimited => StatusCode::TOO_MANY_REQUESTS,
            AdminError::NotSupported => StatusCode::NOT_IMPLEMENTED,
            AdminError::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// The text shown: fixed phrases, or the parse error of a query (which quotes at most
    /// what the caller sent).
    pub(crate) fn message(&self) -> String {
        match self {
            AdminError::BadRequest(why) => format!("bad request: {why}"),
            AdminError::Unauthorized => "unauthorized: the admin credential is required".into(),
            AdminError::Forbidden(why) => format!("forbidden: {why}"),
            AdminError::NotFound => "not found".into(),
            AdminError::RateLimited => "too many requests".into(),
            AdminError::NotSupported => {
                "the operator's inventory is not supported by this store".into()
            }
            AdminError::Unavailable => "the task store is unavailable".into(),
        }
    }

    pub(crate) fn finish(&self, mut response: Response) -> Response {
        *response.status_mut() = self.status();
        let headers = response.headers_mut();
        match self {
            AdminError::RateLimited => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            }
            AdminError::Unauthorized => {
                headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            _ => {}
        }
        response
    }

    /// The JSON answer: `{"error": "..."}`.
    pub(crate) fn json(&self) -> Response {
        let body = axum::Json(serde_json::json!({ "error": self.message() }));
        self.finish(body.into_response())
    }

    /// Whether a 401 page should offer the login form's link.
    pub(crate) fn wants_login(&self) -> bool {
        matches!(self, AdminError::Unauthorized)
    }
}
