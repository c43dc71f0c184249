//! In-process cost of serving one MCP request, without sockets or a load generator: the
//! fixture's own requests of rows 2 and 3 of `docs/benchmarks.md` (`tasks/get` of a completed
//! task, and creation of a `slow_compute` task with `seconds: 0`), at three depths:
//!
//! * `dispatch`: [`Dispatcher::dispatch`] on a collected body (the planner, the store, the
//!   projection, metrics);
//! * `service`: [`McpService::handle`] (adds the head checks, reading the body and building the
//!   HTTP response);
//! * `router`: the fixture's axum application ([`tasks_fixture::app::router`]);
//! * `app`: [`tasks_fixture::app::App`], as the fixture binary serves it (the endpoint's
//!   requests handed to the service, the rest to the router).
//!
//! The allocator is mimalloc, as in the fixture binary. Run with
//! `cargo bench -p tasks-fixture --bench dispatch`. On a machine whose speed varies from
//! minute to minute, count instructions instead: with `DISPATCH_COUNT=N` the binary serves
//! exactly N requests and exits (see [`counted`]), to be run under
//! `valgrind --tool=callgrind`.

use std::hint::black_box;

use bytes::Bytes;
use criterion::{criterion_group, Criterion};
use http::{HeaderMap, HeaderValue, Request};
use http_body_util::Full;
use serde_json::{json, Value};
use tasks_core::protocol::{
    META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, PROTOCOL_VERSION, TASKS_EXTENSION,
};
use tasks_fixture::Settings;
use tower::ServiceExt as _;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A prepared request: its body and headers, as the benchmark's wrk script sends them.
struct Call {
    method: &'static str,
    name: String,
    body: Bytes,
}

impl Call {
    fn new(method: &'static str, name: &str, mut params: Value) -> Call {
        params["_meta"] = json!({
            META_PROTOCOL_VERSION: PROTOCOL_VERSION,
            META_CLIENT_CAPABILITIES: {"extensions": {TASKS_EXTENSION: {}}},
        });
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        Call {
            method,
            name: name.to_owned(),
            body: Bytes::from(body.to_string()),
        }
    }

    fn headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        let mut put = |name: &'static str, value: &str| {
            headers.insert(name, HeaderValue::from_str(value).expect("header value"));
        };
        put("host", "127.0.0.1:3000");
        put("content-type", "application/json");
        put("accept", "application/json, text/event-stream");
        put("mcp-protocol-version", PROTOCOL_VERSION);
        put("mcp-method", self.method);
        put("mcp-name", &self.name);
        headers
    }

    fn request(&self) -> Request<Full<Bytes>> {
        let mut request = Request::post("/mcp")
            .body(Full::new(self.body.clone()))
            .expect("request");
        *request.headers_mut() = self.headers();
        request
    }
}

/// Where a request enters: see the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Depth {
    Dispatch,
    Service,
    Router,
    App,
}

impl Depth {
    const ALL: [Depth; 4] = [Depth::Dispatch, Depth::Service, Depth::Router, Depth::App];

    fn label(self) -> &'static str {
        match self {
            Depth::Dispatch => "dispatch",
            Depth::Service => "service",
            Depth::Router => "router",
            Depth::App => "app",
        }
    }
}

/// A fixture served in process, with one completed task to read.
struct Served {
    runtime: tokio::runtime::Runtime,
    service: tasks_http::McpService,
    router: axum::Router,
    app: tasks_fixture::app::App,
    get: Call,
    create: Call,
}

impl Served {
    fn new() -> Served {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        // No TTL and room for every task the creation benchmark stores (as the wrk rows run
        // the fixture: `--ttl-ms 0 --max-tasks 10000000 …`).
        let settings = Settings {
            ttl_ms: 0,
            max_tasks: 100_000_000,
            max_active_per_scope: 100_000_000,
            max_workers: 1_000_000,
            ..Settings::default()
        };
        let (service, handle) = runtime
            .block_on(tasks_fixture::server(&settings).into_service())
            .expect("service");
        // The background work lives as long as a clone of the service does.
        drop(handle);
        let router = tasks_fixture::app::router(service.clone(), &settings);
        let app = tasks_fixture::app::app(service.clone(), &settings);
        let create = Call::new(
            "tools/call",
            "slow_compute",
            json!({"name": "slow_compute", "arguments": {"seconds": 0}}),
        );
        let created: Value = runtime.block_on(async {
            use http_body_util::BodyExt as _;
            let response = service.handle(create.request()).await;
            let bytes = response
                .into_body()
                .collect()
                .await
                .expect("body")
                .to_bytes();
            serde_json::from_slice(&bytes).expect("json")
        });
        let task_id = created["result"]["taskId"].as_str().expect("taskId");
        let get = Call::new("tasks/get", task_id, json!({"taskId": task_id}));
        Served {
            runtime,
            service,
            router,
            app,
            get,
            create,
        }
    }

    /// Serves `call` once at `depth`; the answer must be HTTP 200.
    fn serve(&self, depth: Depth, call: &Call, headers: &HeaderMap) {
        let status = match depth {
            Depth::Dispatch => {
                let dispatcher = self.service.dispatcher();
                let response = self.runtime.block_on(dispatcher.dispatch(
                    headers,
                    &call.body,
                    tasks_runtime::Caller::shared(),
                ));
                response.status
            }
            Depth::Service => {
                let response = self.runtime.block_on(self.service.handle(call.request()));
                response.status().as_u16()
            }
            Depth::Router => self.oneshot(self.router.clone(), call),
            Depth::App => self.oneshot(self.app.clone(), call),
        };
        assert_eq!(black_box(status), 200);
    }

    /// Serves `call` once with the tower service `service` (as hyper-util's adapter does: a
    /// clone per request); the answer's status.
    fn oneshot<S, B>(&self, service: S, call: &Call) -> u16
    where
        S: tower::Service<
            Request<Full<Bytes>>,
            Response = http::Response<B>,
            Error = std::convert::Infallible,
        >,
    {
        let response = self
            .runtime
            .block_on(service.oneshot(call.request()))
            .expect("infallible");
        response.status().as_u16()
    }
}

fn benches(c: &mut Criterion) {
    let served = Served::new();
    for (label, call) in [("tasks/get", &served.get), ("creation", &served.create)] {
        let headers = call.headers();
        for depth in Depth::ALL {
            c.bench_function(&format!("{}: {label}", depth.label()), |b| {
                b.iter(|| served.serve(depth, call, &headers))
            });
        }
    }
}

/// `DISPATCH_COUNT=N` (with `DISPATCH_CALL=get|create`, `DISPATCH_DEPTH=dispatch|service|router`):
/// serve exactly N requests and exit, for an instruction count that does not depend on the
/// machine's speed (`valgrind --tool=callgrind`; two counts subtracted give the cost of the
/// requests between them).
fn counted(count: u64) {
    let served = Served::new();
    let call = match std::env::var("DISPATCH_CALL").as_deref() {
        Ok("create") => &served.create,
        _ => &served.get,
    };
    let depth = match std::env::var("DISPATCH_DEPTH").as_deref() {
        Ok("service") => Depth::Service,
        Ok("router") => Depth::Router,
        Ok("app") => Depth::App,
        _ => Depth::Dispatch,
    };
    let headers = call.headers();
    for _ in 0..count {
        served.serve(depth, call, &headers);
    }
}

criterion_group! {
    name = dispatch;
    config = Criterion::default()
        .sample_size(40)
        .measurement_time(std::time::Duration::from_secs(3));
    targets = benches
}

fn main() {
    match std::env::var("DISPATCH_COUNT")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        Some(count) => counted(count),
        None => {
            dispatch();
            Criterion::default().configure_from_args().final_summary();
        }
    }
}
