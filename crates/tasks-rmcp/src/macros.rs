//! [`delegate_tasks!`](crate::delegate_tasks).

/// Writes the Tasks methods of an `impl rmcp::ServerHandler` as calls to the
/// [`TasksBridge`](crate::TasksBridge) in the field named:
///
/// * `get_task`, `update_task`, `cancel_task`;
/// * `on_custom_request` (malformed task requests get the error a well-formed one would
///   meet; any other custom method -32601, as rmcp's default);
/// * `accepted_subscription_filter` and `listen` (`subscriptions/listen` following `taskIds`,
///   which reach the handler only through [`ListenPrefilter`](crate::ListenPrefilter) on
///   HTTP).
///
/// `without` leaves groups out for the handler to write itself:
///
/// * `without custom`: a server with custom methods of its own writes `on_custom_request` and
///   asks [`TasksBridge::task_request`](crate::TasksBridge::task_request) first;
/// * `without listen`: a server whose listen streams carry notifications of its own (list
///   changes, resource updates) writes `accepted_subscription_filter` (any `Some` for a listen
///   that names only `taskIds`, whose typed filter is empty) and `listen`, running
///   [`TasksBridge::follow_tasks`](crate::TasksBridge::follow_tasks) beside its own use of
///   `subscription.sink()`;
/// * `without custom, listen`: both.
///
/// The [crate docs](crate) show it in a whole handler.
#[macro_export]
macro_rules! delegate_tasks {
    ($field:ident) => {
        $crate::delegate_tasks!(@tasks $field);
        $crate::delegate_tasks!(@custom $field []);
        $crate::delegate_tasks!(@listen $field []);
    };
    ($field:ident, without $($skip:ident),+ $(,)?) => {
        $($crate::delegate_tasks!(@known $skip);)+
        $crate::delegate_tasks!(@tasks $field);
        $crate::delegate_tasks!(@custom $field [$($skip)+]);
        $crate::delegate_tasks!(@listen $field [$($skip)+]);
    };
    (@known custom) => {};
    (@known listen) => {};
    (@known $other:ident) => {
        ::std::compile_error!(::std::concat!(
            "delegate_tasks!: `without ", ::std::stringify!($other),
            "`: only `custom` and `listen` can be left out"
        ));
    };
    (@custom $field:ident [custom $($rest:ident)*]) => {};
    (@custom $field:ident [$other:ident $($rest:ident)*]) => {
        $crate::delegate_tasks!(@custom $field [$($rest)*]);
    };
    (@custom $field:ident []) => {
        async fn on_custom_request(
            &self,
            request: ::rmcp::model::CustomRequest,
            context: ::rmcp::service::RequestContext<::rmcp::service::RoleServer>,
        ) -> ::std::result::Result<::rmcp::model::CustomResult, ::rmcp::ErrorData> {
            self.$field.custom_request(self, request, &context).await
        }
    };
    (@listen $field:ident [listen $($rest:ident)*]) => {};
    (@listen $field:ident [$other:ident $($rest:ident)*]) => {
        $crate::delegate_tasks!(@listen $field [$($rest)*]);
    };
    (@listen $field:ident []) => {
        fn accepted_subscription_filter(
            &self,
            requested: &::rmcp::model::SubscriptionFilter,
        ) -> ::std::option::Option<::rmcp::model::SubscriptionFilter> {
            self.$field.accepted_subscription_filter(requested)
        }

        async fn listen(
            &self,
            subscription: ::rmcp::service::SubscriptionContext,
        ) -> ::std::result::Result<(), ::rmcp::ErrorData> {
            self.$field.listen(subscription).await
        }
    };
    (@tasks $field:ident) => {
        async fn get_task(
            &self,
            request: ::rmcp::model::GetTaskParams,
            context: ::rmcp::service::RequestContext<::rmcp::service::RoleServer>,
        ) -> ::std::result::Result<::rmcp::model::GetTaskResult, ::rmcp::ErrorData> {
            self.$field.get_task(request, &context).await
        }

        async fn update_task(
            &self,
            request: ::rmcp::model::UpdateTaskParams,
            context: ::rmcp::service::RequestContext<::rmcp::service::RoleServer>,
        ) -> ::std::result::Result<(), ::rmcp::ErrorData> {
            self.$field.update_task(request, &context).await
        }

        async fn cancel_task(
            &self,
            request: ::rmcp::model::CancelTaskParams,
            context: ::rmcp::service::RequestContext<::rmcp::service::RoleServer>,
        ) -> ::std::result::Result<(), ::rmcp::ErrorData> {
            self.$field.cancel_task(request, &context).await
        }
    };
}

#[cfg(test)]
mod tests {
    //! The macro's forms compile into handlers, and what each writes answers as the bridge.

    use std::sync::Arc;

    use rmcp::model::SubscriptionFilter;
    use rmcp::service::SubscriptionContext;
    use rmcp::{ErrorData, ServerHandler};
    use tasks_runtime::store::MemoryStore;
    use tasks_runtime::{RuntimeConfig, TaskRuntime, ToolRegistry};

    use crate::TasksBridge;

    fn bridge() -> TasksBridge {
        let runtime = TaskRuntime::new(
            Arc::new(MemoryStore::new()),
            ToolRegistry::new(),
            RuntimeConfig::default(),
        );
        TasksBridge::builder(runtime).build()
    }

    struct Everything {
        tasks: TasksBridge,
    }

    impl ServerHandler for Everything {
        crate::delegate_tasks!(tasks);
    }

    struct OwnListen {
        tasks: TasksBridge,
    }

    impl ServerHandler for OwnListen {
        crate::delegate_tasks!(tasks, without listen);

        fn accepted_subscription_filter(
            &self,
            _requested: &SubscriptionFilter,
        ) -> Option<SubscriptionFilter> {
            Some(SubscriptionFilter::builder().tools_list_changed().build())
        }

        async fn listen(&self, subscription: SubscriptionContext) -> Result<(), ErrorData> {
            let own = async {
                subscription.cancelled().await;
                Ok(())
            };
            let (tasks, own) = tokio::join!(self.tasks.follow_tasks(&subscription), own);
            tasks.and(own)
        }
    }

    struct Neither {
        _tasks: TasksBridge,
    }

    impl ServerHandler for Neither {
        crate::delegate_tasks!(_tasks, without custom, listen);
    }

    #[test]
    fn each_form_writes_its_methods() {
        let requested = SubscriptionFilter::builder().tools_list_changed().build();
        let everything = Everything { tasks: bridge() };
        assert_eq!(
            everything.accepted_subscription_filter(&requested),
            Some(SubscriptionFilter::default())
        );
        let own = OwnListen { tasks: bridge() };
        assert_eq!(
            own.accepted_subscription_filter(&requested),
            Some(requested.clone())
        );
        // rmcp's default: listen not served.
        let neither = Neither { _tasks: bridge() };
        assert_eq!(neither.accepted_subscription_filter(&requested), None);
    }
}
