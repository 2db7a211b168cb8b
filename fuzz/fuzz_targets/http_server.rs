//! The Streamable HTTP server's request path (HTTP-01 … HTTP-16, LHTTP-*, §0.2; the
//! `HttpService` that `Server::serve_http` mounts in hyper), driven in-process with arbitrary
//! methods, paths, headers and bodies, in both eras, with legacy sessions.
//!
//! Input: up to four requests separated by a line `===`. Each request is text shaped like
//! HTTP/1.1: `METHOD TARGET`, then `Name: value` lines, a blank line and the body (invalid
//! methods, targets and header lines fall back or are skipped, so every input is a request).
//! A header value `$SESSION` is replaced by the `Mcp-Session-Id` the service handed out last,
//! so a session's later requests are reachable. Each input gets a fresh service on one
//! current-thread runtime (created once per process) whose clock is paused: waits resolve
//! instantly and a stream that would stay open (listen streams, session GETs) is read for a
//! bounded number of frames and then dropped.
//!
//! Invariants: no panic; never a 500; a JSON response body is one JSON object (or a batch
//! array); a response never carries a Rust panic message.

#![no_main]

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Method, Request, Uri};
use http_body_util::{BodyExt, Full};
use libfuzzer_sys::fuzz_target;
use mcpcore::security::{KeyRing, SealKey};
use mcpcore::transport::http::HttpOptions;
use mcpcore::{
    handler_fn, CallToolResult, GetPromptResult, InputRequired, Outcome, Prompt, PromptArgument,
    ReadResourceResult, Resource, ResourceTemplate, Server, Tool,
};
use serde_json::{json, Value};
use std::sync::OnceLock;
use std::time::Duration;

const MAX_REQUESTS: usize = 4;
const MAX_FRAMES: usize = 8;

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("a current-thread runtime")
    })
}

/// A server with something behind every method: a tool with `x-mcp-header` declarations and
/// progress, a tool that asks for input (MRTR, sealed requestState), a prompt, a resource and
/// a template, and completion.
fn server() -> &'static Server {
    static S: OnceLock<Server> = OnceLock::new();
    S.get_or_init(|| {
        let key = SealKey::new("fuzz", [3; 32]).expect("a valid key");
        let echo_schema = json!({
            "type": "object",
            "properties": {
                "text": {"type": "string", "x-mcp-header": "Text"},
                "n": {"type": ["integer", "null"], "x-mcp-header": "N"},
                "flag": {"type": "boolean", "x-mcp-header": "Flag"}
            },
            "required": ["text"]
        });
        Server::builder("fuzz", "0")
            .request_state_keys(KeyRing::new(key))
            .tool(
                Tool::new("echo").input_schema(echo_schema),
                handler_fn(|ctx, args: Value| async move {
                    ctx.progress(1.0, Some(2.0), Some("half"));
                    let text = args.get("text").and_then(Value::as_str).unwrap_or_default();
                    Ok(CallToolResult::text(text.to_owned()))
                }),
            )
            .tool(
                Tool::new("ask").input_schema(json!({"type": "object"})),
                handler_fn(|ctx, _args: Value| async move {
                    if let Some(r) = ctx.input_responses() {
                        let state = ctx.request_state().unwrap_or_default().to_owned();
                        return Ok(Outcome::Complete(json!({
                            "content": [{"type": "text", "text": format!("{state} {}", r.len())}]
                        })));
                    }
                    let ask = json!({"message": "name?", "requestedSchema": {
                        "type": "object", "properties": {"name": {"type": "string"}}}});
                    Ok(InputRequired::new()
                        .elicit("name", ask)
                        .state("round-1")
                        .into())
                }),
            )
            .prompt(
                Prompt::new("greet").argument(PromptArgument::new("name", true)),
                handler_fn(|_ctx, args: Value| async move {
                    let name = args.get("name").and_then(Value::as_str).unwrap_or_default();
                    Ok(GetPromptResult::new().user(format!("Hello {name}")))
                }),
            )
            .resource(
                Resource::new("demo://readme", "readme"),
                handler_fn(|_ctx, _v: Value| async move {
                    Ok(ReadResourceResult::text(
                        "demo://readme",
                        "text/plain",
                        "hi",
                    ))
                }),
            )
            .resource_template(
                ResourceTemplate::new("file:///{+path}", "file"),
                handler_fn(|ctx, _v: Value| async move {
                    let uri = ctx.name().unwrap_or_default().to_owned();
                    Ok(ReadResourceResult::text(uri, "text/plain", "x"))
                }),
            )
            .completion(handler_fn(|_ctx, _p: Value| async move {
                Ok(json!({"completion": {"values": ["a"], "total": 1, "hasMore": false}}))
            }))
            .build()
            .expect("the fuzz server builds")
    })
}

fn request(raw: &[u8], session: Option<&str>) -> Request<Full<Bytes>> {
    let (head, body) = match raw.windows(2).position(|w| w == b"\n\n") {
        Some(i) => (&raw[..i], &raw[i + 2..]),
        None => (raw, &[][..]),
    };
    let mut lines = head.split(|&b| b == b'\n');
    let first = lines.next().unwrap_or_default();
    let mut words = first.splitn(2, |&b| b == b' ');
    let method = Method::from_bytes(words.next().unwrap_or_default()).unwrap_or(Method::POST);
    let uri = words
        .next()
        .and_then(|t| Uri::try_from(t).ok())
        .unwrap_or_else(|| Uri::from_static("/mcp"));
    let mut req = Request::new(Full::new(Bytes::copy_from_slice(body)));
    *req.method_mut() = method;
    *req.uri_mut() = uri;
    for line in lines {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            continue;
        };
        let value = line[colon + 1..].trim_ascii();
        let value = match (value, session) {
            (b"$SESSION", Some(s)) => s.as_bytes(),
            _ => value,
        };
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(&line[..colon]),
            HeaderValue::from_bytes(value),
        ) {
            req.headers_mut().append(n, v);
        }
    }
    req
}

/// The requests of one input: separated by a line `===`.
fn split(mut data: &[u8]) -> Vec<&[u8]> {
    const SEP: &[u8] = b"\n===\n";
    let mut out = Vec::new();
    while let Some(i) = data.windows(SEP.len()).position(|w| w == SEP) {
        out.push(&data[..i]);
        data = &data[i + SEP.len()..];
    }
    out.push(data);
    out
}

/// Reads a response body: whole for JSON, a bounded number of frames for a stream.
async fn drain(mut body: mcpcore::transport::http::HttpBody) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..MAX_FRAMES {
        match tokio::time::timeout(Duration::from_secs(5), body.frame()).await {
            Ok(Some(Ok(f))) => {
                if let Ok(d) = f.into_data() {
                    out.extend_from_slice(&d);
                }
            }
            Ok(Some(Err(_))) | Ok(None) | Err(_) => break,
        }
    }
    out
}

async fn run(data: &[u8]) {
    let mut opts = HttpOptions::default();
    opts.max_sessions = 8;
    let svc = server().http_service(opts).expect("valid options");
    let mut session: Option<String> = None;
    for raw in split(data).into_iter().take(MAX_REQUESTS) {
        let resp = svc.handle(request(raw, session.as_deref())).await;
        let status = resp.status();
        assert_ne!(status.as_u16(), 500, "a 500 for peer input");
        if let Some(s) = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        {
            session = Some(s.to_owned());
        }
        let json = resp
            .headers()
            .get(http::header::CONTENT_TYPE)
            .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
        let body = drain(resp.into_body()).await;
        assert!(
            !String::from_utf8_lossy(&body).contains("panicked"),
            "a panic leaked"
        );
        if json && !body.is_empty() {
            let v: Value = serde_json::from_slice(&body).expect("a JSON response parses");
            assert!(v.is_object() || v.is_array(), "a JSON response is {v}");
        }
    }
    svc.shutdown().await;
}

fuzz_target!(|data: &[u8]| {
    runtime().block_on(run(data));
});
