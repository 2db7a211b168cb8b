//! `tracing` spans by the OpenTelemetry MCP semantic conventions: one per request or
//! notification the server handles and per request the client sends, named
//! `{mcp.method.name} {target}` (`otel.name`, the field `tracing-opentelemetry` turns into the
//! span name), with `mcp.method.name`, `jsonrpc.request.id`, `gen_ai.tool.name` /
//! `gen_ai.prompt.name` / `mcp.resource.uri`, `mcp.protocol.version`, `mcp.session.id`,
//! `network.transport`, and on failure `error.type`, `rpc.response.status_code` and
//! `otel.status_code = "ERROR"`. The W3C ids of the span (`trace_id`, `span_id`,
//! `parent_span_id`) are fields too, so any subscriber can join it to the caller's trace.
//!
//! Spans are `INFO` in the `mcpcore::server` / `mcpcore::client` targets. With no subscriber
//! interested, creating one is a single check of the callsite's cached interest and no field
//! is computed.

use http::HeaderName;
use serde_json::{Map, Value};
use tracing::field::Empty;
use tracing::Span;

use super::TraceContext;
use crate::error::ErrorObject;
use crate::jsonrpc::Id;

/// A request span by the conventions, every attribute known when the request is made given at
/// once (`error.type`, `otel.status_code` and `rpc.response.status_code` are recorded when it
/// ends): each later `record` is a call through the subscriber (a span lookup and a lock), and
/// ten of them per request cost more than the values. The W3C ids also reach the OTLP layer as
/// bytes ([`with_ids`]).
macro_rules! request_span {
    ($target:literal, $name:literal, $kind:literal, $method:expr, $id:expr, $attrs:expr,
     $version:expr, $session:expr, $transport:expr, $tc:expr, $parent:expr) => {{
        let (a, tc, parent): (&Attrs<'_>, &TraceContext, Option<&TraceContext>) =
            ($attrs, $tc, $parent);
        with_ids(tc, parent, || {
            tracing::info_span!(
                target: $target,
                $name,
                otel.name = %a.name,
                otel.kind = $kind,
                otel.status_code = Empty,
                mcp.method.name = $method,
                jsonrpc.request.id = IdText::of($id).as_str(),
                gen_ai.operation.name = a.operation,
                gen_ai.tool.name = a.tool,
                gen_ai.prompt.name = a.prompt,
                mcp.resource.uri = a.uri,
                mcp.protocol.version = $version,
                mcp.session.id = $session,
                network.transport = $transport,
                error.type = Empty,
                rpc.response.status_code = Empty,
                trace_id = %Hex(&tc.trace_id),
                span_id = %Hex(&tc.span_id),
                parent_span_id = parent.map(|p| tracing::field::display(Hex(&p.span_id))),
            )
        })
    }};
}

/// A request id as the attribute's text, written without `std::fmt` (every request span
/// records one; formatting through `Display` cost more than the rest of the attribute).
enum IdText<'a> {
    Str(&'a str),
    Num([u8; 20], usize),
}

impl<'a> IdText<'a> {
    fn of(id: &'a Id) -> Self {
        match id {
            Id::Str(s) => Self::Str(s),
            Id::Num(n) => {
                let mut buf = [0u8; 20];
                let mut at = buf.len();
                let mut v = n.unsigned_abs();
                loop {
                    at -= 1;
                    buf[at] = b'0' + (v % 10) as u8;
                    v /= 10;
                    if v == 0 {
                        break;
                    }
                }
                if *n < 0 {
                    at -= 1;
                    buf[at] = b'-';
                }
                Self::Num(buf, at)
            }
        }
    }

    fn as_str(&self) -> &str {
        match self {
            Self::Str(s) => s,
            Self::Num(buf, at) => std::str::from_utf8(&buf[*at..]).unwrap_or_default(),
        }
    }
}

// Header names made once: a lookup by `&str` parses and checks the name on every request.
static TRACEPARENT: HeaderName = HeaderName::from_static(super::TRACEPARENT);
static TRACESTATE: HeaderName = HeaderName::from_static(super::TRACESTATE);
static SESSION_ID: HeaderName =
    HeaderName::from_static(crate::transport::http::headers::SESSION_ID);

/// The handler target a request names: the tool or prompt `name`, or the resource `uri`.
pub(crate) fn target<'a>(method: &str, p: Option<&'a Map<String, Value>>) -> Option<&'a str> {
    let key = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => "uri",
        _ => return None,
    };
    p?.get(key)?.as_str()
}

/// The span of one request the server handles (`otel.kind = "server"`), a child of the current
/// span (over HTTP, the HTTP request's). `None` when no subscriber wants it. `negotiated`: the
/// legacy session's protocol version (a modern request names its own in `_meta`).
pub(crate) fn server_request(
    method: &str,
    id: &Id,
    params: Option<&Map<String, Value>>,
    transport: &'static str,
    http: Option<&http::HeaderMap>,
    negotiated: &dyn Fn() -> Option<String>,
) -> Option<(Span, TraceContext)> {
    if !tracing::span_enabled!(target: "mcpcore::server", tracing::Level::INFO) {
        return None;
    }
    let meta = params.and_then(|p| p.get("_meta"));
    let header = |name: &HeaderName| http.and_then(|h| h.get(name)).and_then(|v| v.to_str().ok());
    // `_meta` first (the conventions' carrier); over HTTP the HTTP request's span otherwise
    // (itself in the `traceparent` header's trace).
    let from_meta = TraceContext::from_meta(meta);
    let parent = match super::HTTP_TRACE.try_with(Clone::clone).ok() {
        // The HTTP span continued the same context (the client sent it in both places): the
        // MCP span nests under the HTTP span.
        Some(h) if from_meta.is_none() || from_meta.as_ref().map(|m| m.span_id) == h.via => {
            Some(h.span)
        }
        _ => from_meta,
    };
    let parent = parent.or_else(|| {
        header(&TRACEPARENT).and_then(|tp| TraceContext::parse(tp, header(&TRACESTATE)))
    });
    let tc = TraceContext::child_of(parent.as_ref());
    let version = meta
        .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"))
        .and_then(Value::as_str)
        .map(std::borrow::Cow::Borrowed)
        .or_else(|| negotiated().map(std::borrow::Cow::Owned));
    let span = request_span!(
        "mcpcore::server",
        "mcp.server.request",
        "server",
        method,
        id,
        &Attrs::of(method, params),
        version.as_deref(),
        header(&SESSION_ID),
        transport,
        &tc,
        parent.as_ref()
    );
    Some((span, tc))
}

/// The target attributes of a request: its span's name (`{method} {target}`) and the
/// conventions' attribute naming the target.
struct Attrs<'a> {
    name: SpanName<'a>,
    operation: Option<&'static str>,
    tool: Option<&'a str>,
    prompt: Option<&'a str>,
    uri: Option<&'a str>,
}

impl<'a> Attrs<'a> {
    fn of(method: &'a str, params: Option<&'a Map<String, Value>>) -> Self {
        let t = target(method, params);
        let (mut a, pick) = (
            Self {
                name: SpanName(method, t),
                operation: None,
                tool: None,
                prompt: None,
                uri: None,
            },
            t,
        );
        match method {
            "tools/call" => {
                a.operation = pick.map(|_| "execute_tool");
                a.tool = pick;
            }
            "prompts/get" => a.prompt = pick,
            _ => a.uri = pick,
        }
        a
    }
}

/// `{method} {target}`, or the method alone: written where the subscriber wants it, never
/// formatted into a string of its own.
struct SpanName<'a>(&'a str, Option<&'a str>);

impl std::fmt::Display for SpanName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.1 {
            Some(t) => write!(f, "{} {t}", self.0),
            None => f.write_str(self.0),
        }
    }
}

/// Make a span whose W3C ids are `tc`'s (under `parent`): the OTLP layer takes them as bytes
/// from [`super::NEXT_IDS`] while the span is made.
fn with_ids(tc: &TraceContext, parent: Option<&TraceContext>, make: impl FnOnce() -> Span) -> Span {
    #[cfg(feature = "otlp")]
    super::NEXT_IDS.set(Some(super::SpanIds {
        trace: tc.trace_id,
        span: tc.span_id,
        parent: parent.map(|p| p.span_id),
    }));
    #[cfg(not(feature = "otlp"))]
    let _ = (tc, parent);
    let span = make();
    #[cfg(feature = "otlp")]
    super::NEXT_IDS.set(None);
    span
}

/// Lower-case hex of an id, written where the subscriber wants it.
pub(crate) struct Hex<'a>(pub &'a [u8]);

impl std::fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut buf = [0u8; 64];
        let n = self.0.len().min(32);
        for (i, b) in self.0[..n].iter().enumerate() {
            buf[2 * i] = DIGITS[usize::from(b >> 4)];
            buf[2 * i + 1] = DIGITS[usize::from(b & 0xf)];
        }
        f.write_str(std::str::from_utf8(&buf[..2 * n]).map_err(|_| std::fmt::Error)?)
    }
}

/// The span of one notification the server handles.
pub(crate) fn server_notification(method: &str, transport: &'static str) -> Span {
    tracing::info_span!(
        target: "mcpcore::server",
        "mcp.server.notification",
        otel.name = method,
        otel.kind = "server",
        mcp.method.name = method,
        network.transport = transport,
    )
}

/// The span of one notification the client sends.
pub(crate) fn client_notification(method: &str, transport: &'static str) -> Span {
    tracing::info_span!(
        target: "mcpcore::client",
        "mcp.client.notification",
        otel.name = method,
        otel.kind = "client",
        mcp.method.name = method,
        network.transport = transport,
    )
}

/// The span of one request the client sends (`otel.kind = "client"`), when a subscriber wants
/// it, and the context to inject into its `_meta` so the server's span joins it. `parent`: the
/// caller's own context (a `traceparent` it put in `_meta`). With no subscriber nothing is made
/// and the request goes out as the caller wrote it.
pub(crate) fn client_request(
    method: &str,
    id: &Id,
    params: &Map<String, Value>,
    transport: &'static str,
    negotiated: &dyn Fn() -> Option<String>,
) -> Option<(Span, TraceContext)> {
    if !tracing::span_enabled!(target: "mcpcore::client", tracing::Level::INFO) {
        return None;
    }
    let parent = TraceContext::from_meta(params.get("_meta"));
    let tc = TraceContext::child_of(parent.as_ref());
    let span = request_span!(
        "mcpcore::client",
        "mcp.client.request",
        "client",
        method,
        id,
        &Attrs::of(method, Some(params)),
        negotiated().as_deref(),
        Empty,
        transport,
        &tc,
        parent.as_ref()
    );
    Some((span, tc))
}

/// `error.type` of an outcome: the JSON-RPC code of an error, `tool_error` for a tool result
/// with `isError: true` (the conventions' value), `None` on success.
pub(crate) fn error_type(result: &Result<crate::server::Payload, ErrorObject>) -> Option<String> {
    match result {
        Err(e) => Some(e.code.to_string()),
        Ok(crate::server::Payload::Value(v)) => result_error(v),
        Ok(crate::server::Payload::Json(raw)) => json_result_error(raw),
    }
}

/// `result_error` of a JSON-text result, read without building a tree.
fn json_result_error(raw: &serde_json::value::RawValue) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Flag {
        #[serde(default, rename = "isError")]
        is_error: Option<bool>,
    }
    // A derived struct would also read an array as its fields: objects only.
    if !raw.get().starts_with('{') {
        return None;
    }
    let f: Flag = serde_json::from_str(raw.get()).ok()?;
    (f.is_error == Some(true)).then(|| "tool_error".into())
}

/// `error.type` of a result: `tool_error` when it says `isError: true`.
pub(crate) fn result_error(v: &Value) -> Option<String> {
    (v.get("isError").and_then(Value::as_bool) == Some(true)).then(|| "tool_error".into())
}

/// Record how a request ended on its span.
pub(crate) fn finish(span: &Span, error: Option<&str>, code: Option<i64>) {
    if span.is_disabled() {
        return;
    }
    if let Some(e) = error {
        span.record("error.type", e);
        span.record("otel.status_code", "ERROR");
    }
    if let Some(c) = code {
        span.record("rpc.response.status_code", c.to_string().as_str());
    }
}

/// The HTTP request span (`None` when no subscriber wants it), a child of the `traceparent`
/// header's context or the root of a new trace, with its path and W3C ids; the context is what
/// the MCP span under it continues.
pub(crate) fn http_request(
    method: &str,
    path: &str,
    h: &http::HeaderMap,
) -> Option<(Span, super::HttpTrace)> {
    if !tracing::span_enabled!(target: "mcpcore::http", tracing::Level::INFO) {
        return None;
    }
    let header = |name: &HeaderName| h.get(name).and_then(|v| v.to_str().ok());
    let parent = header(&TRACEPARENT).and_then(|tp| TraceContext::parse(tp, header(&TRACESTATE)));
    let tc = TraceContext::child_of(parent.as_ref());
    let span = with_ids(&tc, parent.as_ref(), || {
        tracing::info_span!(
            target: "mcpcore::http",
            "http.server.request",
            otel.name = method,
            otel.kind = "server",
            http.request.method = method,
            url.path = path,
            network.transport = "tcp",
            http.response.status_code = Empty,
            trace_id = %Hex(&tc.trace_id),
            span_id = %Hex(&tc.span_id),
            parent_span_id = parent.as_ref().map(|p| tracing::field::display(Hex(&p.span_id))),
        )
    });
    let trace = super::HttpTrace {
        span: tc,
        via: parent.map(|p| p.span_id),
    };
    Some((span, trace))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `jsonrpc.request.id` is the id's text: digits (with a sign) for a number, the string
    /// itself — no quotes, no escapes — for a string (the conventions' examples: `10`,
    /// `request-7`).
    #[test]
    fn request_ids_are_written_as_the_conventions_show() {
        for n in [0, 7, 10, -1, -42, 1_000_000, i64::MAX, i64::MIN] {
            assert_eq!(IdText::of(&Id::Num(n)).as_str(), n.to_string());
        }
        let s = Id::Str("request-7 \"q\"".into());
        assert_eq!(IdText::of(&s).as_str(), "request-7 \"q\"");
    }
}
