//! `GET {prefix}/`: the counts, the filter form, one page of tasks and the next page's link.

use axum::extract::{Query, State};
use axum::response::Response;
use axum::Extension;
use maud::{html, Markup};
use tasks_core::Timestamp;
use tasks_runtime::store::inventory::{InventoryCounts, InventoryPage, InventoryRow};

use crate::config::AdminConfig;
use crate::error::AdminError;
use crate::query::{encode_cursor, ListParams, STATUSES};
use crate::state::{Auth, Shared};

/// The handler.
pub(crate) async fn handler(
    State(state): State<Shared>,
    Extension(auth): Extension<Auth>,
    params: Result<Query<ListParams>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let result = async {
        let Query(params) = params.map_err(|_| AdminError::BadRequest("query".into()))?;
        let query = params.to_query()?;
        let counts = state.runtime.inventory_counts().await?;
        let page = state.runtime.inventory(&query).await?;
        let now = state.runtime.now();
        let body = render(&state.config, &params, &counts, &page, now);
        Ok::<_, AdminError>(super::layout::page(
            &state.config,
            "Tasks",
            auth.csrf(),
            true,
            body,
        ))
    }
    .await;
    match result {
        Ok(markup) => super::html(markup),
        Err(error) => super::error::respond(&state.config, &error),
    }
}

fn counts_bar(counts: &InventoryCounts) -> Markup {
    html! {
        ul.counts {
            @for status in STATUSES {
                li { span.status data-status=(status.as_str()) { (status.as_str()) } " " strong { (counts.by_status.get(status)) } }
            }
            li.stuck { "stuck " strong { (counts.stuck.total()) }
                " (holder lost " (counts.stuck.holder_lost)
                ", working idle " (counts.stuck.working_idle)
                ", input unanswered " (counts.stuck.input_unanswered) ")" }
        }
    }
}

fn filters(config: &AdminConfig, params: &ListParams) -> Markup {
    let value = |v: &Option<String>| v.clone().unwrap_or_default();
    let status = value(&params.status);
    let order = value(&params.order);
    let stuck = matches!(params.stuck.as_deref(), Some("1" | "true" | "on"));
    html! {
        form.filters method="get" action=(config.home()) {
            label { "Status "
                select name="status" {
                    option value="" selected[status.is_empty()] { "any" }
                    @for s in STATUSES {
                        option value=(s.as_str()) selected[status == s.as_str()] { (s.as_str()) }
                    }
                }
            }
            label { "Tool " input type="text" name="tool" value=(value(&params.tool)); }
            label { "Node " input type="text" name="node" value=(value(&params.node)) size="32"; }
            label { input type="checkbox" name="stuck" value="1" checked[stuck]; " stuck only" }
            label { "Order "
                select name="order" {
                    option value="newest" selected[order != "oldest"] { "newest first" }
                    option value="oldest" selected[order == "oldest"] { "oldest first" }
                }
            }
            button type="submit" { "Filter" }
        }
    }
}

/// The progress cell: a `<progress>` bar (indeterminate without a total) and the numbers.
pub(crate) fn progress(row: &InventoryRow) -> Markup {
    match row.progress {
        None => html! {},
        Some(p) => match p.total() {
            Some(total) => {
                html! { progress value=(p.done()) max=(total) {} " " (p.done()) "/" (total) }
            }
            None => html! { progress {} " " (p.done()) },
        },
    }
}

/// The stuck badge.
pub(crate) fn stuck(row: &InventoryRow) -> Markup {
    match &row.stuck {
        None => html! {},
        Some(reason) => {
            html! { span.badge.stuck data-reason=(reason.label()) { "stuck: " (reason.label()) } }
        }
    }
}

fn table(config: &AdminConfig, page: &InventoryPage, now: Timestamp) -> Markup {
    html! {
        table.tasks {
            thead { tr {
                th { "Task" } th { "Tool" } th { "Status" } th { "Message" } th { "Progress" }
                th { "Created" } th { "Updated" } th { "TTL left" } th { "Attempt" } th { "Node" } th { "Stuck" }
            } }
            tbody {
                @for row in &page.rows {
                    tr data-task=(row.id.as_str()) {
                        td { a href=(config.path(&format!("/tasks/{}", crate::query::percent_encode(row.id.as_str())))) { code { (row.id.as_str()) } } }
                        td { (row.tool.as_deref().unwrap_or("?")) }
                        td { span.status data-status=(row.status.as_str()) { (row.status.as_str()) } }
                        td.message { (row.status_message.as_deref().unwrap_or("")) }
                        td { (progress(row)) }
                        td { (super::time::time(now, row.created_at)) }
                        td { (super::time::time(now, row.last_updated_at)) }
                        td { (super::time::ttl_left(now, row.expires_at)) }
                        td { @if let Some(a) = row.attempt { (a) } }
                        td { @if let Some(n) = row.node { code title=(n) { (n.to_string().get(..8).unwrap_or("")) } } }
                        td { (stuck(row)) }
                    }
                }
            }
        }
        @if page.rows.is_empty() { p.empty { "No task matches." } }
    }
}

fn render(
    config: &AdminConfig,
    params: &ListParams,
    counts: &InventoryCounts,
    page: &InventoryPage,
    now: Timestamp,
) -> Markup {
    html! {
        (counts_bar(counts))
        (filters(config, params))
        (table(config, page, now))
        @if let Some(next) = &page.next {
            p.pager { a.next rel="next" href=(format!("{}{}", config.home(), params.with_after(&encode_cursor(next)))) { "Next page →" } }
        }
    }
}
