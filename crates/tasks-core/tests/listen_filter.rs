//! `subscriptions/listen` filters without a network (`tasks_core::exchange::ListenFilter`).

use serde_json::{json, Value};
use tasks_core::exchange::{
    acknowledgement, closing, list_changed_params, Announces, ListenFilter, MAX_TASK_IDS,
};
use tasks_core::{McpError, TaskId};

fn parse(notifications: Value, declared: bool) -> Result<ListenFilter, McpError> {
    ListenFilter::parse(&json!({ "notifications": notifications }), declared)
}

fn invalid(message: &str) -> Result<ListenFilter, McpError> {
    Err(McpError::invalid_params(message))
}

#[test]
fn filters_are_checked_in_order() {
    let ids = |n: usize| Value::from((0..n).map(|i| format!("t{i}")).collect::<Vec<_>>());
    let table: Vec<(Value, bool, Result<ListenFilter, McpError>)> = vec![
        (json!({}), false, Ok(ListenFilter::default())),
        (
            json!({"toolsListChanged": true, "future": 1}),
            false,
            Ok(ListenFilter {
                task_ids: None,
                tools_list_changed: true,
                ..ListenFilter::default()
            }),
        ),
        (
            json!({"promptsListChanged": true, "resourcesListChanged": true,
                   "resourceSubscriptions": ["a://1", "a://2", "a://1"]}),
            false,
            Ok(ListenFilter {
                prompts_list_changed: true,
                resources_list_changed: true,
                resource_subscriptions: vec!["a://1".into(), "a://2".into()],
                ..ListenFilter::default()
            }),
        ),
        (
            json!({"resourceSubscriptions": [""]}),
            false,
            invalid("resourceSubscriptions must hold URIs of 1 to 2048 bytes"),
        ),
        (
            json!({"toolsListChanged": false}),
            false,
            Ok(ListenFilter::default()),
        ),
        (
            json!({"promptsListChanged": "yes"}),
            true,
            invalid("notifications list-changed flags must be booleans"),
        ),
        (
            json!({"resourceSubscriptions": [1]}),
            true,
            invalid("resourceSubscriptions must be an array of strings"),
        ),
        // Types are checked before the Tasks declaration, the declaration before the ids.
        (
            json!({"taskIds": "t1", "toolsListChanged": 1}),
            false,
            invalid("notifications list-changed flags must be booleans"),
        ),
        (
            json!({"taskIds": "t1"}),
            false,
            Err(McpError::missing_tasks_capability()),
        ),
        (
            json!({"taskIds": "t1"}),
            true,
            invalid("taskIds must be an array of task ids"),
        ),
        (
            json!({"taskIds": [""]}),
            true,
            invalid("taskIds must be an array of task ids"),
        ),
        (
            json!({"taskIds": ["x".repeat(257)]}),
            true,
            invalid("taskIds must be an array of task ids"),
        ),
        (
            json!({"taskIds": ids(MAX_TASK_IDS + 1)}),
            true,
            invalid("taskIds lists more than 100 ids"),
        ),
        (
            json!({"taskIds": ["b", "a", "b"]}),
            true,
            Ok(ListenFilter {
                task_ids: Some(vec![
                    TaskId::parse("b").unwrap(),
                    TaskId::parse("a").unwrap(),
                ]),
                ..ListenFilter::default()
            }),
        ),
    ];
    for (notifications, declared, want) in table {
        assert_eq!(
            parse(notifications.clone(), declared),
            want,
            "{notifications} declared={declared}"
        );
    }
    assert_eq!(
        parse(json!({"taskIds": ids(MAX_TASK_IDS)}), true)
            .unwrap()
            .task_ids
            .unwrap()
            .len(),
        100
    );
    assert_eq!(
        ListenFilter::parse(&json!({}), true),
        invalid("subscriptions/listen requires a notifications object")
    );
}

#[test]
fn acknowledgement_and_closing_shapes() {
    let id = json!("sub-7");
    insta::assert_json_snapshot!(
        "listen_acknowledgement",
        acknowledgement(
            &id,
            &[TaskId::parse("t1").unwrap()],
            &Announces::tools(true)
        )
    );
    let bare = serde_json::to_value(acknowledgement(&id, &[], &Announces::default())).unwrap();
    assert_eq!(
        bare,
        json!({"_meta": {"io.modelcontextprotocol/subscriptionId": "sub-7"}, "notifications": {}})
    );
    let back: tasks_core::exchange::Acknowledgement = serde_json::from_value(bare).unwrap();
    assert_eq!(
        back,
        acknowledgement(&id, &[], &Announces::default()),
        "a client reads it back"
    );
    insta::assert_json_snapshot!("listen_closing", closing(&json!(3)));
    assert_eq!(
        list_changed_params(&json!(3)),
        json!({"_meta": {"io.modelcontextprotocol/subscriptionId": 3}})
    );
}
