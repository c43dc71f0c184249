//! The reducer: [`tasks_core::apply`] for each kind of event (ns per call; the event is built
//! outside the timed part, the returned transition is dropped inside it).

mod support;

use std::collections::BTreeMap;
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use serde_json::json;
use tasks_core::{apply, Event};

fn reducer(c: &mut Criterion) {
    let mut group = c.benchmark_group("reducer");
    let working = support::working();
    let parked = support::input_required();
    let completed = support::completed();
    let now = support::now().plus_millis(5);
    let cases = [
        (
            "working + completed",
            &working,
            Event::Completed {
                result: support::small_result().into(),
            },
        ),
        (
            "working + input_requested",
            &working,
            Event::InputRequested {
                key: "confirm-delete".into(),
                request: support::elicitation(),
            },
        ),
        (
            "input_required + responses",
            &parked,
            Event::InputResponsesAccepted {
                responses: BTreeMap::from([(
                    "confirm-delete".to_owned(),
                    json!({"action": "accept", "content": {"confirm": true}}),
                )]),
            },
        ),
        ("working + cancelled", &working, Event::Cancelled),
        (
            "completed + cancelled (absorbed)",
            &completed,
            Event::Cancelled,
        ),
    ];
    for (name, task, event) in cases {
        group.bench_function(name, |b| {
            b.iter_batched(
                || event.clone(),
                |event| apply(black_box(task), event, now),
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = support::config();
    targets = reducer
}
criterion_main!(benches);
