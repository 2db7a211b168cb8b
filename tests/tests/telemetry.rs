//! Observability by the OpenTelemetry MCP semantic conventions: the `tracing` spans of a
//! client→server call (names, attributes, the client span as the server span's W3C parent, the
//! server span under the HTTP span), the trace context a handler reads
//! (`RequestContext::trace_context`, from `_meta.traceparent` or the `traceparent` header),
//! and the Prometheus exposition at `metricsPath` after a scripted workload.

use mcpcore::client::{CallOptions, Client, ConnectMode, HttpClientOptions};
use mcpcore::transport::http::{serve, HttpListener, HttpOptions};
use mcpcore::{handler_fn, CallToolResult, HandlerError, Server, Tool};
use mcpcore_tests::http::{raw_request, WAIT};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::Layer;

const TP: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

fn server(metrics: bool) -> Server {
    Server::builder("telemetry", "1")
        .options(|o| o.metrics = metrics)
        .tool(
            Tool::new("echo").input_schema(json!({"type": "object",
                "properties": {"text": {"type": "string"}}, "required": ["text"]})),
            handler_fn(|_ctx, args: Value| async move {
                Ok::<_, HandlerError>(CallToolResult::text(args["text"].as_str().unwrap_or("")))
            }),
        )
        .tool(
            // Called only by the span test: the other tests' calls run at the same time and
            // are captured by the same global subscriber.
            Tool::new("spanned"),
            handler_fn(|_ctx, _args: Value| async move {
                Ok::<_, HandlerError>(CallToolResult::text("spanned"))
            }),
        )
        .tool(
            Tool::new("trace"),
            handler_fn(|ctx, _args: Value| async move {
                Ok::<_, HandlerError>(CallToolResult::text(ctx.trace_context().traceparent()))
            }),
        )
        .tool(
            Tool::new("fails"),
            handler_fn(|_ctx, _args: Value| async move {
                Ok::<_, HandlerError>(CallToolResult::error("no"))
            }),
        )
        .build()
        .expect("server")
}

async fn listen(server: Server, opts: HttpOptions) -> HttpListener {
    serve(server, "127.0.0.1:0".parse().expect("addr"), opts)
        .await
        .expect("listen")
}

async fn connect(l: &HttpListener, mode: ConnectMode) -> Client {
    let url = format!("http://{}/mcp", l.local_addr());
    tokio::time::timeout(
        WAIT,
        Client::builder()
            .mode(mode)
            .connect_http(&url, HttpClientOptions::default()),
    )
    .await
    .expect("connect in time")
    .expect("connect")
}

fn text(r: &Value) -> String {
    r["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// One recorded span: its name, fields and local parent.
#[derive(Clone, Debug, Default)]
struct Rec {
    name: String,
    fields: HashMap<String, String>,
    parent: Option<u64>,
    closed: bool,
    /// The thread that opened it: each `#[tokio::test]` runs its own current-thread runtime,
    /// so a test finds only its own spans although the subscriber sees every test's.
    thread: Option<std::thread::ThreadId>,
}

/// Records by a sequence number of this capture (never reused), and the live span ids'
/// sequence numbers: the registry reuses a closed span's id, and another test running in
/// parallel must not overwrite a record this test still reads.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<HashMap<u64, Rec>>>, Arc<Mutex<Live>>);

#[derive(Default)]
struct Live {
    seq: HashMap<u64, u64>,
    next: u64,
}

/// The one subscriber of this test binary, global: a thread-local default races with the
/// callsite interest cache when tests run in parallel.
fn capture() -> &'static Capture {
    static CAP: std::sync::OnceLock<Capture> = std::sync::OnceLock::new();
    CAP.get_or_init(|| {
        let cap = Capture::default();
        tracing::subscriber::set_global_default(tracing_subscriber::registry().with(cap.clone()))
            .expect("the only global subscriber");
        cap
    })
}

struct Fields<'a>(&'a mut HashMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, f: &Field, v: &str) {
        self.0.insert(f.name().to_owned(), v.to_owned());
    }
    fn record_debug(&mut self, f: &Field, v: &dyn std::fmt::Debug) {
        self.0.insert(f.name().to_owned(), format!("{v:?}"));
    }
}

impl<S> Layer<S> for Capture
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut rec = Rec {
            name: attrs.metadata().name().to_owned(),
            thread: Some(std::thread::current().id()),
            ..Rec::default()
        };
        attrs.record(&mut Fields(&mut rec.fields));
        let parent = ctx
            .span(id)
            .and_then(|s| s.parent())
            .map(|p| p.id().into_u64());
        let seq = {
            let mut live = self.1.lock().expect("lock");
            live.next += 1;
            let seq = live.next;
            rec.parent = parent.and_then(|p| live.seq.get(&p).copied());
            live.seq.insert(id.into_u64(), seq);
            seq
        };
        self.0.lock().expect("lock").insert(seq, rec);
    }
    fn on_record(&self, id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        let Some(seq) = self.seq(id) else { return };
        if let Some(rec) = self.0.lock().expect("lock").get_mut(&seq) {
            values.record(&mut Fields(&mut rec.fields));
        }
    }
    fn on_close(&self, id: Id, _ctx: Context<'_, S>) {
        let Some(seq) = self.1.lock().expect("lock").seq.remove(&id.into_u64()) else {
            return;
        };
        if let Some(rec) = self.0.lock().expect("lock").get_mut(&seq) {
            rec.closed = true;
        }
    }
}

impl Capture {
    fn seq(&self, id: &Id) -> Option<u64> {
        self.1
            .lock()
            .expect("lock")
            .seq
            .get(&id.into_u64())
            .copied()
    }

    fn find(&self, name: &str, otel_name: &str) -> Vec<(u64, Rec)> {
        self.0
            .lock()
            .expect("lock")
            .iter()
            .filter(|(_, r)| {
                r.name == name
                    && r.fields.get("otel.name").map(String::as_str) == Some(otel_name)
                    && r.thread == Some(std::thread::current().id())
            })
            .map(|(k, r)| (*k, r.clone()))
            .collect()
    }
}

/// Client and server spans of `tools/call spanned` over HTTP in both eras: named
/// `tools/call echo`, with the conventions' attributes, one trace: client span → HTTP request
/// span → MCP server span, by W3C ids (the client injects `traceparent` into `_meta` and the
/// header) and by local nesting.
/// The one test that reads the captured spans (it clears them between scenarios).
#[tokio::test]
async fn spans_follow_the_conventions() {
    let cap = capture();
    a_call_is_one_trace_from_client_span_to_server_span(cap).await;
    cap.0.lock().expect("lock").clear();
    errors_set_error_type_and_status(cap).await;
    cap.0.lock().expect("lock").clear();
    a_listen_stream_is_one_span_as_long_as_the_stream(cap).await;
}

/// `subscriptions/listen` over HTTP: one server span, under the HTTP request's span, open while
/// the stream is and closed when it ends (here: the server shuts down, SUB-05).
async fn a_listen_stream_is_one_span_as_long_as_the_stream(cap: &Capture) {
    let l = listen(server(false), HttpOptions::default()).await;
    let c = connect(&l, ConnectMode::Modern).await;
    let _sub = c
        .listen(json!({"toolsListChanged": true}))
        .await
        .expect("listen");
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let spans = cap.find("mcp.server.request", "subscriptions/listen");
    assert_eq!(spans.len(), 1, "one span for the stream");
    let (_, s) = &spans[0];
    assert!(!s.closed, "open while the stream is");
    assert_eq!(
        s.fields.get("mcp.method.name").map(String::as_str),
        Some("subscriptions/listen")
    );
    let parent = s.parent.expect("a local parent");
    assert_eq!(
        cap.0.lock().expect("lock")[&parent].name,
        "http.server.request"
    );
    l.shutdown().await;
    let (_, s) = &cap.find("mcp.server.request", "subscriptions/listen")[0];
    assert!(s.closed, "closed when the stream ended");
    c.close().await;
}

async fn a_call_is_one_trace_from_client_span_to_server_span(cap: &Capture) {
    let l = listen(server(false), HttpOptions::default()).await;
    for (mode, version) in [
        (ConnectMode::Modern, "2026-07-28"),
        (ConnectMode::Legacy, "2025-11-25"),
    ] {
        cap.0.lock().expect("lock").clear();
        let c = connect(&l, mode).await;
        let r = c.call_tool("spanned", json!({})).await.expect("call");
        assert_eq!(r.content[0]["text"], "spanned");
        let clients = cap.find("mcp.client.request", "tools/call spanned");
        let servers = cap.find("mcp.server.request", "tools/call spanned");
        assert_eq!((clients.len(), servers.len()), (1, 1), "{mode:?}");
        let (_, client) = &clients[0];
        let (_, srv) = &servers[0];
        let f = |r: &Rec, k: &str| r.fields.get(k).cloned().unwrap_or_default();
        assert_eq!(f(client, "otel.kind"), "client");
        assert_eq!(f(srv, "otel.kind"), "server");
        for r in [client, srv] {
            assert_eq!(f(r, "mcp.method.name"), "tools/call");
            assert_eq!(f(r, "gen_ai.tool.name"), "spanned");
            assert_eq!(f(r, "gen_ai.operation.name"), "execute_tool");
            assert!(f(r, "error.type").is_empty(), "{r:?}");
        }
        // The client's numeric id, as text, on both sides.
        let id = f(client, "jsonrpc.request.id");
        assert!(id.parse::<i64>().is_ok(), "{id:?}");
        assert_eq!(f(srv, "jsonrpc.request.id"), id);
        assert_eq!(f(srv, "network.transport"), "tcp");
        assert_eq!(f(client, "network.transport"), "tcp");
        assert_eq!(f(client, "mcp.protocol.version"), version, "{mode:?}");
        assert_eq!(f(srv, "mcp.protocol.version"), version, "{mode:?}");
        assert_eq!(f(srv, "trace_id"), f(client, "trace_id"), "one trace");
        let parent = srv.parent.expect("a local parent");
        let http = cap.0.lock().expect("lock")[&parent].clone();
        assert_eq!(http.name, "http.server.request");
        assert_eq!(f(&http, "http.response.status_code"), "200");
        // The client sent its span's context in `_meta` and in the `traceparent` header: the
        // HTTP span is the client span's child, the MCP span the HTTP span's.
        assert_eq!(f(&http, "trace_id"), f(client, "trace_id"));
        assert_eq!(f(&http, "parent_span_id"), f(client, "span_id"));
        assert_eq!(f(srv, "parent_span_id"), f(&http, "span_id"));
        if mode == ConnectMode::Legacy {
            assert!(
                !f(srv, "mcp.session.id").is_empty(),
                "legacy span names its session"
            );
            // A notification the client sends is a span too.
            c.notify("notifications/roots/list_changed", None)
                .await
                .expect("notify");
            let sent = cap.find(
                "mcp.client.notification",
                "notifications/roots/list_changed",
            );
            assert_eq!(sent.len(), 1, "the client's notification span");
            assert_eq!(f(&sent[0].1, "otel.kind"), "client");
            assert_eq!(f(&sent[0].1, "network.transport"), "tcp");
        }
        c.close().await;
    }
}

/// A failing call sets `error.type` and the span status: a JSON-RPC error carries its code,
/// a tool result with `isError` is `tool_error`; notifications get spans too.
async fn errors_set_error_type_and_status(cap: &Capture) {
    let c = Client::connect_in_memory(&server(false))
        .await
        .expect("connect");
    let _ = c.call_tool("absent", json!({})).await;
    let r = c.call_tool("fails", json!({})).await.expect("a result");
    assert_eq!(r.is_error, Some(true));
    let missing = cap.find("mcp.server.request", "tools/call absent");
    assert_eq!(missing.len(), 1);
    let f = |r: &Rec, k: &str| r.fields.get(k).cloned().unwrap_or_default();
    assert_eq!(f(&missing[0].1, "error.type"), "-32602");
    assert_eq!(f(&missing[0].1, "rpc.response.status_code"), "-32602");
    assert_eq!(f(&missing[0].1, "otel.status_code"), "ERROR");
    assert_eq!(f(&missing[0].1, "network.transport"), "pipe");
    let client_missing = cap.find("mcp.client.request", "tools/call absent");
    assert_eq!(f(&client_missing[0].1, "error.type"), "-32602");
    let fails = cap.find("mcp.server.request", "tools/call fails");
    assert_eq!(f(&fails[0].1, "error.type"), "tool_error");
    c.close().await;
}

/// The handler's trace context continues the caller's trace: from `_meta.traceparent`, and
/// over HTTP from the `traceparent` header when `_meta` has none; a new trace otherwise.
#[tokio::test]
async fn a_handler_reads_the_callers_trace_context() {
    let cap = capture();
    let l = listen(server(false), HttpOptions::default()).await;
    let c = connect(&l, ConnectMode::Modern).await;
    let mut meta = Map::new();
    meta.insert("traceparent".into(), json!(TP));
    let mut opts = CallOptions::default();
    opts.meta = meta;
    let r = c
        .request_with(
            "tools/call",
            json!({"name": "trace", "arguments": {}}),
            opts,
        )
        .await
        .expect("call");
    let seen = text(&r);
    assert!(
        seen.starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-"),
        "{seen}"
    );
    assert!(
        !seen.contains("00f067aa0ba902b7"),
        "the handler's span is a new child: {seen}"
    );
    let fresh = text(
        &c.request("tools/call", json!({"name": "trace", "arguments": {}}))
            .await
            .expect("call"),
    );
    assert!(
        !fresh.contains("4bf92f3577b34da6a3ce929d0e0e4736"),
        "{fresh}"
    );
    c.close().await;

    // Over HTTP with no `traceparent` in `_meta`: the header's.
    let body = json!({"jsonrpc": "2.0", "id": "req-7", "method": "tools/call",
        "params": {"name": "trace", "arguments": {},
            "_meta": mcpcore_tests::stdio::envelope(json!({}))}})
    .to_string();
    let mut h = mcpcore_tests::http::modern_headers("tools/call", Some("trace"));
    h.push(("traceparent".into(), TP.into()));
    let h: Vec<(&str, &str)> = h.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut reply = raw_request(l.local_addr(), "POST", "/mcp", &h, body.as_bytes()).await;
    let v: Value = serde_json::from_slice(&reply.body().await).expect("json");
    let seen = text(&v["result"]);
    assert!(
        seen.starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-"),
        "{v}"
    );
    // A string id is its span's `jsonrpc.request.id` as it is, unquoted (the conventions'
    // example: `request-7`).
    let ids: Vec<String> = cap
        .find("mcp.server.request", "tools/call trace")
        .into_iter()
        .filter_map(|(_, r)| r.fields.get("jsonrpc.request.id").cloned())
        .collect();
    assert!(ids.iter().any(|i| i == "req-7"), "{ids:?}");
}

fn series(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    text.lines().filter(|l| !l.starts_with('#')).find_map(|l| {
        let (head, value) = l.rsplit_once(' ')?;
        let (n, rest) = head.split_once('{').unwrap_or((head, "}"));
        if n != name {
            return None;
        }
        let body = rest.strip_suffix('}')?;
        let have: Vec<&str> = if body.is_empty() {
            vec![]
        } else {
            body.split(',').collect()
        };
        let want: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
        (have.len() == want.len() && want.iter().all(|w| have.contains(&w.as_str())))
            .then(|| value.parse().ok())?
    })
}

/// After a scripted workload the exposition at `metricsPath` counts it: three successful
/// echoes, one unknown tool, one `isError` result, a refused oversized body, one live legacy
/// session; off by default, the same endpoint shows no operation series.
#[tokio::test]
async fn the_metrics_path_counts_a_scripted_workload() {
    let mut opts = HttpOptions::default();
    opts.metrics_path = Some("/metrics".into());
    let srv = server(true);
    let l = listen(srv.clone(), opts.clone()).await;
    let modern = connect(&l, ConnectMode::Modern).await;
    for _ in 0..3 {
        modern
            .call_tool("echo", json!({"text": "x"}))
            .await
            .expect("echo");
    }
    let _ = modern.call_tool("missing", json!({})).await;
    modern.call_tool("fails", json!({})).await.expect("result");
    let legacy = connect(&l, ConnectMode::Legacy).await;
    let big = vec![b' '; 5 << 20];
    let h = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    let r = raw_request(l.local_addr(), "POST", "/mcp", &h, &big).await;
    assert_eq!(r.status, 413);
    let mut reply = raw_request(l.local_addr(), "GET", "/metrics", &[], b"").await;
    assert_eq!(reply.status, 200);
    assert!(reply
        .content_type()
        .starts_with("text/plain; version=0.0.4"));
    let text = String::from_utf8(reply.body().await).expect("utf8");
    assert_eq!(srv.metrics_text().lines().next(), text.lines().next());
    let req = "mcpcore_server_requests_total";
    let echo = [
        ("mcp_method_name", "tools/call"),
        ("gen_ai_tool_name", "echo"),
    ];
    assert_eq!(series(&text, req, &echo), Some(3.0), "{text}");
    let missing = [
        ("mcp_method_name", "tools/call"),
        ("gen_ai_tool_name", "missing"),
        ("error_type", "-32602"),
    ];
    assert_eq!(series(&text, req, &missing), Some(1.0), "{text}");
    let fails = [
        ("mcp_method_name", "tools/call"),
        ("gen_ai_tool_name", "fails"),
        ("error_type", "tool_error"),
    ];
    assert_eq!(series(&text, req, &fails), Some(1.0), "{text}");
    let hist = "mcp_server_operation_duration_seconds_count";
    assert_eq!(series(&text, hist, &echo), Some(3.0), "{text}");
    assert_eq!(
        series(
            &text,
            "mcpcore_server_refused_total",
            &[("reason", "too_large")]
        ),
        Some(1.0)
    );
    assert_eq!(
        series(&text, "mcpcore_legacy_sessions", &[]),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        series(&text, "mcpcore_http_connections", &[]).map(|n| n >= 1.0),
        Some(true)
    );
    assert_eq!(
        series(&text, "mcpcore_server_requests_in_flight", &[]),
        Some(0.0)
    );
    let post = raw_request(l.local_addr(), "POST", "/metrics", &h, b"{}").await;
    assert_eq!(post.status, 405);
    legacy.close().await;
    modern.close().await;

    let quiet = listen(server(false), opts).await;
    let c = connect(&quiet, ConnectMode::Modern).await;
    c.call_tool("echo", json!({"text": "x"}))
        .await
        .expect("echo");
    let mut reply = raw_request(quiet.local_addr(), "GET", "/metrics", &[], b"").await;
    let text = String::from_utf8(reply.body().await).expect("utf8");
    assert_eq!(
        series(&text, req, &echo),
        None,
        "metrics off records nothing: {text}"
    );
    c.close().await;
}

/// The client side of the conventions: `mcp.client.operation.duration` and the requests sent by
/// method, target and outcome, in-flight, and `mcp.client.session.duration` once the client
/// closed — over HTTP ("tcp") and in process ("pipe"); nothing without `metrics`.
#[tokio::test]
async fn a_client_records_what_it_sent() {
    let l = listen(server(false), HttpOptions::default()).await;
    let url = format!("http://{}/mcp", l.local_addr());
    let mut o = mcpcore::client::ClientOptions::default();
    o.metrics = true;
    let http = Client::builder()
        .options(o.clone())
        .mode(ConnectMode::Modern)
        .connect_http(&url, HttpClientOptions::default())
        .await
        .expect("connect");
    let piped = Client::builder()
        .options(o)
        .connect_in_memory(&server(false))
        .await
        .expect("connect");
    for c in [&http, &piped] {
        for _ in 0..2 {
            c.call_tool("echo", json!({"text": "x"}))
                .await
                .expect("echo");
        }
        let _ = c.call_tool("absent", json!({})).await;
        c.call_tool("fails", json!({})).await.expect("a tool error");
    }
    let dur = "mcp_client_operation_duration_seconds_count";
    let req = "mcpcore_client_requests_total";
    let echo = [
        ("mcp_method_name", "tools/call"),
        ("gen_ai_tool_name", "echo"),
    ];
    let absent = [
        ("mcp_method_name", "tools/call"),
        ("gen_ai_tool_name", "absent"),
        ("error_type", "-32602"),
    ];
    let fails = [
        ("mcp_method_name", "tools/call"),
        ("gen_ai_tool_name", "fails"),
        ("error_type", "tool_error"),
    ];
    let mut closed = Vec::new();
    for (c, transport) in [(http, "tcp"), (piped, "pipe")] {
        let text = c.metrics_text();
        assert_eq!(series(&text, dur, &echo), Some(2.0), "{text}");
        assert_eq!(series(&text, req, &echo), Some(2.0), "{text}");
        assert_eq!(series(&text, req, &absent), Some(1.0), "{text}");
        assert_eq!(series(&text, req, &fails), Some(1.0), "{text}");
        assert_eq!(
            series(&text, "mcpcore_client_requests_in_flight", &[]),
            Some(0.0)
        );
        assert!(
            !text.contains("mcpcore_server_"),
            "client names only: {text}"
        );
        c.close().await;
        let text = c.metrics_text();
        let sess = "mcp_client_session_duration_seconds_count";
        assert_eq!(
            series(&text, sess, &[("network_transport", transport)]),
            Some(1.0),
            "{text}"
        );
        closed.push(c);
    }
    let quiet = Client::connect_in_memory(&server(false))
        .await
        .expect("connect");
    quiet
        .call_tool("echo", json!({"text": "x"}))
        .await
        .expect("echo");
    assert_eq!(
        series(&quiet.metrics_text(), req, &echo),
        None,
        "off records nothing"
    );
    quiet.close().await;
}
