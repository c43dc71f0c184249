//! Params validation of the task methods (ns per call, on params already parsed as JSON, as
//! the dispatcher hands them over).

mod support;

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;
use tasks_core::plan::{parse_task_ref, parse_update};

fn params(c: &mut Criterion) {
    let mut group = c.benchmark_group("params");
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
    });
    let id = support::working().id().to_string();
    let get = json!({"taskId": id, "_meta": meta});
    let update = json!({
        "taskId": id,
        "inputResponses": {"confirm-delete": {"action": "accept", "content": {"confirm": true}}},
        "_meta": meta,
    });
    let missing = json!({"_meta": meta});
    group.bench_function("parse_task_ref (tasks/get, tasks/cancel)", |b| {
        b.iter(|| parse_task_ref(black_box(&get)))
    });
    group.bench_function("parse_update (tasks/update)", |b| {
        b.iter(|| parse_update(black_box(&update)))
    });
    group.bench_function("parse_task_ref, missing taskId (-32602)", |b| {
        b.iter(|| parse_task_ref(black_box(&missing)))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = support::config();
    targets = params
}
criterion_main!(benches);
