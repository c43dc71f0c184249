//! `GET {prefix}/nodes`: every registered node.

use axum::extract::State;
use axum::response::Response;
use axum::Extension;
use maud::html;

use crate::error::AdminError;
use crate::state::{Auth, Shared};

/// The handler.
pub(crate) async fn handler(
    State(state): State<Shared>,
    Extension(auth): Extension<Auth>,
) -> Response {
    let nodes = match state.runtime.nodes().await {
        Ok(nodes) => nodes,
        Err(error) => return super::error::respond(&state.config, &AdminError::from(error)),
    };
    let now = state.runtime.now();
    let body = html! {
        table.nodes {
            thead { tr { th { "Node" } th { "Started" } th { "Last renewal" } th { "Lease expires" } th { "State" } th { "Tasks held" } } }
            tbody {
                @for node in &nodes {
                    tr {
                        td { code { (node.id) } }
                        td { @if let Some(t) = node.started_at { (super::time::time(now, t)) } }
                        td { @if let Some(t) = node.renewed_at { (super::time::time(now, t)) } }
                        td { (super::time::time(now, node.lease_expires_at)) }
                        td { @if node.live { span.badge.live { "live" } } @else { span.badge.fenced { "fenced" } } }
                        td { (node.held) }
                    }
                }
            }
        }
    };
    super::html(super::layout::page(
        &state.config,
        "Nodes",
        auth.csrf(),
        false,
        body,
    ))
}
