//! Who may use the console: the admin token as `Authorization: Bearer`, or the session cookie
//! a login with that token set; the login and logout handlers.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Redirect, Response};
use axum::Form;
use http::{header, HeaderMap, HeaderValue, Method};
use serde::Deserialize;

use crate::csrf;
use crate::error::AdminError;
use crate::session::{cookie, COOKIE};
use crate::state::{Auth, Shared};

/// Whether `path` (as the router sees it, without the prefix) is the JSON API's.
pub(crate) fn is_api(path: &str) -> bool {
    path == "/api" || path.starts_with("/api/")
}

/// The request's own authority: `Host`, or the URI's (HTTP/2).
pub(crate) fn host(request: &Request) -> Option<String> {
    request
        .headers()
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
        .or_else(|| request.uri().authority().map(|a| a.as_str().to_owned()))
}

/// The refusal of `error` in the form the path calls for (JSON under `/api/`).
pub(crate) fn refuse(state: &Shared, path: &str, error: &AdminError) -> Response {
    if is_api(path) {
        error.json()
    } else {
        crate::pages::error::respond(&state.config, error)
    }
}

/// The bearer token of `headers`: `Some(Err)` for an `Authorization` header of another form.
fn bearer(headers: &HeaderMap) -> Option<Result<&[u8], ()>> {
    let value = headers.get(header::AUTHORIZATION)?;
    let parsed = value
        .to_str()
        .ok()
        .and_then(|text| text.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim().as_bytes());
    Some(parsed.ok_or(()))
}

/// The middleware on every route but the login page and the assets: puts the request's
/// [`Auth`] in its extensions, or answers 401 (no or wrong credential; the JSON API takes the
/// bearer only) or 403 (a state-changing browser request from another origin).
pub(crate) async fn require(
    State(state): State<Shared>,
    mut request: Request,
    next: Next,
) -> Response {
    let path = request.uri().path().to_owned();
    let auth = match bearer(request.headers()) {
        Some(Ok(token)) if state.config.credential.matches(token) => Auth::Bearer,
        Some(_) => return refuse(&state, &path, &AdminError::Unauthorized),
        None if is_api(&path) => return refuse(&state, &path, &AdminError::Unauthorized),
        None => {
            let unsafe_method = !matches!(*request.method(), Method::GET | Method::HEAD);
            if unsafe_method && !csrf::same_origin(request.headers(), host(&request).as_deref()) {
                return refuse(&state, &path, &AdminError::Forbidden("cross-site request"));
            }
            let session = request
                .headers()
                .get(header::COOKIE)
                .and_then(|value| value.to_str().ok())
                .and_then(|header| cookie(header, COOKIE))
                .and_then(|id| state.sessions.find(id).map(|s| (id.to_owned(), s)));
            match session {
                Some((id, session)) => Auth::Session {
                    id,
                    csrf: session.csrf,
                },
                None => return refuse(&state, &path, &AdminError::Unauthorized),
            }
        }
    };
    request.extensions_mut().insert(auth);
    next.run(request).await
}

/// The login form's fields.
#[derive(Debug, Deserialize)]
pub(crate) struct LoginForm {
    #[serde(default)]
    token: String,
}

/// `GET {prefix}/login`: the form.
pub(crate) async fn login_page(State(state): State<Shared>) -> Response {
    crate::pages::html(crate::pages::login::page(&state.config, None))
}

/// `POST {prefix}/login`: checks the token (same origin only); right, opens a session, sets
/// its cookie and redirects (303) to the task list; wrong, 401 with the form again.
pub(crate) async fn login(State(state): State<Shared>, request: Request) -> Response {
    if !csrf::same_origin(request.headers(), host(&request).as_deref()) {
        return crate::pages::error::respond(
            &state.config,
            &AdminError::Forbidden("cross-site request"),
        );
    }
    let form =
        <Form<LoginForm> as axum::extract::FromRequest<Shared>>::from_request(request, &state)
            .await;
    let Ok(Form(form)) = form else {
        let error = AdminError::BadRequest("the login form does not parse".into());
        return crate::pages::error::respond(&state.config, &error);
    };
    if !state
        .config
        .credential
        .matches(form.token.trim().as_bytes())
    {
        let mut response = crate::pages::html(crate::pages::login::page(
            &state.config,
            Some("wrong token"),
        ));
        *response.status_mut() = http::StatusCode::UNAUTHORIZED;
        return response;
    }
    let Some(id) = state.sessions.open() else {
        tracing::error!("admin console: no randomness for a session id");
        return crate::pages::error::respond(&state.config, &AdminError::Unavailable);
    };
    let secure = if state.config.secure_cookie {
        "; Secure"
    } else {
        ""
    };
    let cookie = format!(
        "{COOKIE}={id}; HttpOnly; SameSite=Strict; Path={}; Max-Age={}{secure}",
        state.config.cookie_path(),
        state.config.session_secs
    );
    let mut response = Redirect::to(state.config.home()).into_response();
    match HeaderValue::from_str(&cookie) {
        Ok(value) => {
            response.headers_mut().insert(header::SET_COOKIE, value);
            response
        }
        Err(_) => crate::pages::error::respond(&state.config, &AdminError::Unavailable),
    }
}

/// `POST {prefix}/logout`: with the session's CSRF token, ends the session, clears the cookie
/// and redirects (303) to the login page.
pub(crate) async fn logout(
    State(state): State<Shared>,
    axum::Extension(auth): axum::Extension<Auth>,
    form: Result<Form<crate::csrf::CsrfForm>, axum::extract::rejection::FormRejection>,
) -> Response {
    let offered = form.ok().and_then(|Form(form)| form.csrf);
    if let Err(error) = csrf::check(&auth, offered.as_deref()) {
        return crate::pages::error::respond(&state.config, &error);
    }
    if let Auth::Session { id, .. } = &auth {
        state.sessions.close(id);
    }
    let mut response = Redirect::to(&state.config.path("/login")).into_response();
    let clear = format!(
        "{COOKIE}=; HttpOnly; SameSite=Strict; Path={}; Max-Age=0",
        state.config.cookie_path()
    );
    if let Ok(value) = HeaderValue::from_str(&clear) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}
