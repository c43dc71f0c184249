//! The JSON API under `{prefix}/api/` (bearer only): `GET tasks`, `GET tasks/{id}`,
//! `GET counts`, `GET nodes`, `POST tasks/{id}/cancel`.

use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse as _, Response};
use axum::Json;
use serde_json::json;
use tasks_core::TaskId;
use tasks_runtime::store::inventory::{InventoryQuery, InventoryRow};
use tasks_runtime::OperatorCancel;

use crate::error::AdminError;
use crate::query::{encode_cursor, ListParams};
use crate::state::Shared;
use crate::view::{CountsView, NodeView, TaskView};

fn answer(result: Result<Response, AdminError>) -> Response {
    result.unwrap_or_else(|error| error.json())
}

/// The inventory row of task `id`.
pub(crate) async fn find(state: &Shared, id: &str) -> Result<InventoryRow, AdminError> {
    let id = TaskId::parse(id).map_err(|_| AdminError::NotFound)?;
    let query = InventoryQuery {
        id: Some(id),
        limit: 1,
        ..InventoryQuery::default()
    };
    let page = state.runtime.inventory(&query).await?;
    page.rows.into_iter().next().ok_or(AdminError::NotFound)
}

/// `GET api/tasks`: `{"tasks": [...], "nextCursor": "..."|null}`.
pub(crate) async fn tasks(
    State(state): State<Shared>,
    params: Result<Query<ListParams>, axum::extract::rejection::QueryRejection>,
) -> Response {
    answer(
        async {
            let Query(params) = params.map_err(|_| AdminError::BadRequest("query".into()))?;
            let page = state.runtime.inventory(&params.to_query()?).await?;
            let tasks: Vec<TaskView> = page.rows.iter().map(TaskView::from).collect();
            let next = page.next.as_ref().map(encode_cursor);
            Ok(Json(json!({ "tasks": tasks, "nextCursor": next })).into_response())
        }
        .await,
    )
}

/// `GET api/tasks/{id}`: the task, or 404.
pub(crate) async fn task(State(state): State<Shared>, Path(id): Path<String>) -> Response {
    answer(
        find(&state, &id)
            .await
            .map(|row| Json(TaskView::from(&row)).into_response()),
    )
}

/// `GET api/counts`.
pub(crate) async fn counts(State(state): State<Shared>) -> Response {
    answer(
        state
            .runtime
            .inventory_counts()
            .await
            .map(|counts| Json(CountsView::from(&counts)).into_response())
            .map_err(AdminError::from),
    )
}

/// `GET api/nodes`: `{"nodes": [...]}`.
pub(crate) async fn nodes(State(state): State<Shared>) -> Response {
    answer(
        state
            .runtime
            .nodes()
            .await
            .map(|nodes| {
                let nodes: Vec<NodeView> = nodes.iter().map(NodeView::from).collect();
                Json(json!({ "nodes": nodes })).into_response()
            })
            .map_err(AdminError::from),
    )
}

/// Cancels task `id` as the configured operator.
pub(crate) async fn cancel_task(state: &Shared, id: &str) -> Result<OperatorCancel, AdminError> {
    let id = TaskId::parse(id).map_err(|_| AdminError::NotFound)?;
    Ok(state
        .runtime
        .cancel_as_operator(&id, &state.config.operator_name)
        .await?)
}

/// `POST api/tasks/{id}/cancel`: `{"outcome":"cancelled"}` or
/// `{"outcome":"alreadyEnded","status":"completed"}`.
pub(crate) async fn cancel(State(state): State<Shared>, Path(id): Path<String>) -> Response {
    answer(cancel_task(&state, &id).await.map(|outcome| {
        let body = match outcome {
            OperatorCancel::Cancelled => json!({ "outcome": "cancelled" }),
            OperatorCancel::AlreadyEnded(status) => {
                json!({ "outcome": "alreadyEnded", "status": status.as_str() })
            }
        };
        Json(body).into_response()
    }))
}
