//! `GET {prefix}/tasks/{id}` (every field, and a Cancel button while the task runs) and
//! `POST {prefix}/tasks/{id}/cancel` (CSRF-checked; redirects back with 303).

use axum::extract::{Path, State};
use axum::response::{IntoResponse as _, Redirect, Response};
use axum::{Extension, Form};
use maud::html;

use crate::csrf::CsrfForm;
use crate::state::{Auth, Shared};

/// The detail page.
pub(crate) async fn handler(
    State(state): State<Shared>,
    Extension(auth): Extension<Auth>,
    Path(id): Path<String>,
) -> Response {
    let row = match crate::api::find(&state, &id).await {
        Ok(row) => row,
        Err(error) => return super::error::respond(&state.config, &error),
    };
    let now = state.runtime.now();
    let config = &state.config;
    let action = config.path(&format!(
        "/tasks/{}/cancel",
        crate::query::percent_encode(row.id.as_str())
    ));
    let body = html! {
        dl.detail {
            dt { "Task id" } dd { code { (row.id.as_str()) } }
            dt { "Scope" } dd { code { (row.scope.as_str()) } }
            dt { "Tool" } dd { (row.tool.as_deref().unwrap_or("?")) }
            dt { "Status" } dd { span.status data-status=(row.status.as_str()) { (row.status.as_str()) } " " (super::list::stuck(&row)) }
            dt { "Status message" } dd.message { (row.status_message.as_deref().unwrap_or("")) }
            dt { "Progress" } dd { (super::list::progress(&row)) }
            dt { "Created" } dd { (super::time::time(now, row.created_at)) " (" (row.created_at) ")" }
            dt { "Last updated" } dd { (super::time::time(now, row.last_updated_at)) " (" (row.last_updated_at) ")" }
            dt { "Expires" } dd { @if let Some(at) = row.expires_at { (super::time::time(now, at)) " (" (at) ")" } @else { "never" } }
            dt { "TTL left" } dd { (super::time::ttl_left(now, row.expires_at)) }
            dt { "Attempt" } dd { @if let Some(a) = row.attempt { (a) } }
            dt { "Node" } dd { @if let Some(n) = row.node { code { (n) } } }
            dt { "Generation" } dd { @if let Some(g) = row.generation { (g) } }
        }
        @if !row.status.is_terminal() {
            form.cancel method="post" action=(action) {
                @if let Some(csrf) = auth.csrf() {
                    input type="hidden" name=(crate::csrf::FIELD) value=(csrf);
                }
                button #cancel type="submit" { "Cancel task" }
            }
        }
    };
    super::html(super::layout::page(
        config,
        "Task",
        auth.csrf(),
        false,
        body,
    ))
}

/// The cancel form's target.
pub(crate) async fn cancel(
    State(state): State<Shared>,
    Extension(auth): Extension<Auth>,
    Path(id): Path<String>,
    form: Result<Form<CsrfForm>, axum::extract::rejection::FormRejection>,
) -> Response {
    let offered = form.ok().and_then(|Form(form)| form.csrf);
    if let Err(error) = crate::csrf::check(&auth, offered.as_deref()) {
        return super::error::respond(&state.config, &error);
    }
    match crate::api::cancel_task(&state, &id).await {
        Ok(_) => Redirect::to(
            &state
                .config
                .path(&format!("/tasks/{}", crate::query::percent_encode(&id))),
        )
        .into_response(),
        Err(error) => super::error::respond(&state.config, &error),
    }
}
