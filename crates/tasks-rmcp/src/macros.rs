//! [`delegate_tasks!`](crate::delegate_tasks).

/// Writes the Tasks methods of an `impl rmcp::ServerHandler` as calls to the
/// [`TasksBridge`](crate::TasksBridge) in the field named: `get_task`, `update_task`,
/// `cancel_task` and `on_custom_request` (malformed task requests get the error a
/// well-formed one would meet; any other custom method -32601, as rmcp's default). A server
/// with custom methods of its own writes `on_custom_request` itself and asks
/// [`TasksBridge::task_request`](crate::TasksBridge::task_request) first, and uses
/// `delegate_tasks!(field, without custom)` for the other three.
///
/// The [crate docs](crate) show it in a whole handler.
#[macro_export]
macro_rules! delegate_tasks {
    ($field:ident) => {
        $crate::delegate_tasks!($field, without custom);

        async fn on_custom_request(
            &self,
            request: ::rmcp::model::CustomRequest,
            context: ::rmcp::service::RequestContext<::rmcp::service::RoleServer>,
        ) -> ::std::result::Result<::rmcp::model::CustomResult, ::rmcp::ErrorData> {
            self.$field.custom_request(self, request, &context).await
        }
    };
    ($field:ident, without custom) => {
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
