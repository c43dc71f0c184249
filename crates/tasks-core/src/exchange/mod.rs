//! Exchanges: the state machines of what outlives one message, each events in, frames out,
//! with no async, no IO and no clock read (the time and the nonces come in as arguments).
//!
//! * [`ListenExchange`]: a `subscriptions/listen` stream, from its acknowledgement to its
//!   graceful closure (MCP 2026-07-28 "Subscriptions":
//!   <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions>;
//!   SEP-2663 "Task Status Notifications":
//!   <https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/2026-07-28/tasks.md>).
//! * [`SyncExchange`]: a request answered now, whatever its method (`tools/call` today): its
//!   progress and log notifications, then its response, which is the result, the error, or the
//!   next MRTR `input_required` round with the `requestState` this exchange issues (MCP
//!   2026-07-28 MRTR:
//!   <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr>).
//!
//! A frame is one JSON-RPC message, serialized (one JSON object, UTF-8): the transport sends it
//! as it is, as a whole `application/json` body or as one SSE event. A transport drives a
//! machine: it feeds it what happened (a committed task state, a tool's notification, its
//! outcome, a shutdown) and writes the frames it gets back; which events become frames, in
//! which order, and when the exchange is over is decided here.

// The listen stream's rules, used from here.
pub use crate::listen::{
    acknowledgement, closing, list_changed_params, resource_updated_params, Acknowledgement,
    Announces, Honoured, ListKind, ListenFilter, SubscriptionMeta, MAX_RESOURCE_SUBSCRIPTIONS,
    MAX_TASK_IDS,
};

mod listen;
mod sync_call;

pub use self::listen::{ListenExchange, ListenFrame, ListenFrameKind};
pub use self::sync_call::{
    notification_message, NotificationsWanted, RequestNotification, StateIssuer, SyncExchange,
    SyncOutcome, SyncRequest, SyncResponse,
};
