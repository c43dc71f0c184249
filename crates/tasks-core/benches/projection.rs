//! The wire projections, serialized to JSON bytes as the HTTP layer does (ns per task).

mod support;

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;
use tasks_core::wire::{creation, detailed, task_notification};

fn projections(c: &mut Criterion) {
    let mut group = c.benchmark_group("projection");
    let meta = support::server_meta();
    let working = support::working();
    let completed = support::completed();
    let parked = support::input_required();
    let subscription = json!(7);
    group.bench_function("creation (CreateTaskResult)", |b| {
        b.iter(|| serde_json::to_vec(&creation(black_box(&working)).with_meta(&meta)))
    });
    group.bench_function("detailed, completed", |b| {
        b.iter(|| serde_json::to_vec(&detailed(black_box(&completed)).with_meta(&meta)))
    });
    group.bench_function("detailed, input_required", |b| {
        b.iter(|| serde_json::to_vec(&detailed(black_box(&parked)).with_meta(&meta)))
    });
    group.bench_function("notification, completed", |b| {
        b.iter(|| serde_json::to_vec(&task_notification(black_box(&completed), &subscription)))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = support::config();
    targets = projections
}
criterion_main!(benches);
