//! `fake-server [key=value…]`: a scripted, deliberately misbehaving stdio server for the
//! client's fault tests. Options:
//! `discover=ok|silent|die|malformed|legacy-versions|garbage|null-id|oversize|fail-once|<code>`
//! (default -32601; `fail-once` = -32601, then a modern answer), `linger` (keep running after
//! stdin closes, until signalled), `init=<version>` (answer `initialize` with this version),
//! `init-32022` (refuse `initialize` as a modern-only server), `init-32601` (not know
//! `initialize`), `cycle` (tools/list cursors loop A→B→A), `oversize=<bytes>`. `tools/call`
//! names pick a behaviour: `die`, `garbage`, `oversize`, `typed` (structuredContent violating the
//! listed outputSchema), `weird` (unknown resultType), `hang` (never answers), `late` (answered
//! just before the next request's answer); anything else echoes the params back.

use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{BufRead, Write};

const SUB_KEY: &str = "io.modelcontextprotocol/subscriptionId";

fn send(out: &mut impl Write, v: &Value) {
    let _ = writeln!(out, "{v}");
    let _ = out.flush();
}

fn reply(out: &mut impl Write, id: &Value, result: Value) {
    send(out, &json!({"jsonrpc": "2.0", "id": id, "result": result}));
}

// Long by design: one match arm per scripted server behaviour, read as the list of what the
// fake server can be told to do.
fn main() {
    let opts: HashMap<String, String> = std::env::args()
        .skip(1)
        .map(|a| match a.split_once('=') {
            Some((k, v)) => (k.to_owned(), v.to_owned()),
            None => (a, String::new()),
        })
        .collect();
    let discover = opts
        .get("discover")
        .cloned()
        .unwrap_or_else(|| "-32601".into());
    eprintln!("pid={}", std::process::id());
    let mut out = std::io::stdout();
    let mut notes: Vec<Value> = Vec::new();
    let mut listen_id: Option<Value> = None;
    let mut late: Option<Value> = None;
    let mut discovers = 0u32;
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(msg) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let method = msg
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let params = msg.get("params").cloned().unwrap_or(json!({}));
        let Some(id) = msg.get("id").cloned() else {
            if method == "notifications/cancelled" && params.get("requestId") == listen_id.as_ref()
            {
                if let Some(l) = listen_id.take() {
                    reply(
                        &mut out,
                        &l,
                        json!({"resultType": "complete", "_meta": {SUB_KEY: l}}),
                    );
                }
            }
            notes.push(msg);
            continue;
        };
        if method.is_empty() {
            continue; // a response from the client
        }
        if let Some(l) = late.take() {
            reply(
                &mut out,
                &l,
                json!({"content": [{"type": "text", "text": "late"}]}),
            );
        }
        match method.as_str() {
            "server/discover" if discover == "fail-once" => {
                discovers += 1;
                if discovers == 1 {
                    send(
                        &mut out,
                        &json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}}),
                    );
                } else {
                    reply(
                        &mut out,
                        &id,
                        json!({"supportedVersions": ["2026-07-28"], "capabilities": {},
                        "ttlMs": 0, "cacheScope": "private", "resultType": "complete"}),
                    );
                }
            }
            "initialize" if opts.contains_key("init-32601") => send(
                &mut out,
                &json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}}),
            ),
            "initialize" if opts.contains_key("init-32022") => {
                send(
                    &mut out,
                    &json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32022,
                    "message": "Unsupported protocol version", "data": {"supported": ["2026-07-28"], "requested": "2025-11-25"}}}),
                );
            }
            "server/discover" => match discover.as_str() {
                "silent" => {}
                "die" => std::process::exit(3),
                // Garbage and an answer to some other id, then nothing: the probe times out.
                "garbage" => {
                    let _ = writeln!(out, "not json at all");
                    let _ = writeln!(out, "[1, 2]");
                    let _ = writeln!(out, "{{\"jsonrpc\":\"2.0\",\"id\":424242,\"result\":{{}}}}");
                    let _ = out.flush();
                }
                // An error that names no request (id null): it answers nothing.
                "null-id" => send(
                    &mut out,
                    &json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}),
                ),
                "oversize" => {
                    let big = "a".repeat(5 * 1024 * 1024);
                    reply(&mut out, &id, json!({"supportedVersions": [big]}));
                }
                "malformed" => reply(&mut out, &id, json!(5)),
                "legacy-versions" => reply(
                    &mut out,
                    &id,
                    json!({"supportedVersions": ["2025-11-25"], "capabilities": {}}),
                ),
                "ok" => reply(
                    &mut out,
                    &id,
                    json!({
                    "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                    "serverInfo": {"name": "fake-top", "version": "1"},
                    "ttlMs": 0, "cacheScope": "private", "resultType": "complete"}),
                ),
                code => {
                    let code: i64 = code.parse().unwrap_or(-32601);
                    send(
                        &mut out,
                        &json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": "odd", "data": {"supported": ["2099-01-01"]}}}),
                    );
                }
            },
            "initialize" => {
                let v = opts.get("init").cloned().unwrap_or_else(|| {
                    params
                        .get("protocolVersion")
                        .and_then(Value::as_str)
                        .unwrap_or("2025-11-25")
                        .to_owned()
                });
                reply(
                    &mut out,
                    &id,
                    json!({"protocolVersion": v, "capabilities": {"tools": {}}, "serverInfo": {"name": "fake", "version": "1"}}),
                );
            }
            "ping" => reply(&mut out, &id, json!({})),
            "tools/list" => {
                let tool = |n: &str| json!({"name": n, "inputSchema": {"type": "object"}});
                if opts.contains_key("cycle") {
                    let r = match params.get("cursor").and_then(Value::as_str) {
                        None => json!({"tools": [tool("t1")], "nextCursor": "A"}),
                        Some("A") => json!({"tools": [tool("t2")], "nextCursor": "B"}),
                        _ => json!({"tools": [tool("t3")], "nextCursor": "A"}),
                    };
                    reply(&mut out, &id, r);
                } else {
                    reply(
                        &mut out,
                        &id,
                        json!({"tools": [
                            {"name": "typed", "inputSchema": {"type": "object"},
                             "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}},
                            {"name": "echo", "inputSchema": {"type": "object"}}
                        ]}),
                    );
                }
            }
            "tools/call" => match params
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
            {
                "die" => std::process::exit(1),
                "hang" => {}
                "late" => late = Some(id.clone()),
                "garbage" => {
                    let _ = writeln!(out, "this is not json");
                    let _ = writeln!(out, "5");
                    let _ = writeln!(out, "\"a string\"");
                    let _ = writeln!(out, "[1, 2]");
                    let _ = writeln!(out, "{{\"jsonrpc\":\"2.0\",\"result\":{{}}}}");
                    let _ = writeln!(out, "{{\"jsonrpc\":\"2.0\",\"id\":987654,\"result\":{{}}}}");
                    reply(
                        &mut out,
                        &id,
                        json!({"content": [{"type": "text", "text": "survived"}]}),
                    );
                }
                "oversize" => {
                    let n: usize = opts
                        .get("oversize")
                        .and_then(|s| s.parse().ok())
                        .unwrap_or(5 * 1024 * 1024);
                    let big = "a".repeat(n);
                    reply(
                        &mut out,
                        &id,
                        json!({"content": [{"type": "text", "text": big}]}),
                    );
                }
                "typed" => reply(
                    &mut out,
                    &id,
                    json!({"content": [], "structuredContent": {"n": "not an integer"}}),
                ),
                "weird" => reply(&mut out, &id, json!({"content": [], "resultType": "weird"})),
                _ => reply(
                    &mut out,
                    &id,
                    json!({"content": [{"type": "text", "text": "ok"}], "structuredContent": {"params": params}}),
                ),
            },
            "debug/notifications" => reply(&mut out, &id, json!({"notifications": notes})),
            "subscriptions/listen" => {
                listen_id = Some(id.clone());
                send(
                    &mut out,
                    &json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                    "params": {"_meta": {SUB_KEY: id}, "notifications": {"toolsListChanged": true}}}),
                );
                send(
                    &mut out,
                    &json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                    "params": {"_meta": {SUB_KEY: 424242}, "uri": "x://other"}}),
                );
                send(
                    &mut out,
                    &json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                    "params": {"_meta": {SUB_KEY: id}}}),
                );
            }
            _ => send(
                &mut out,
                &json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}}),
            ),
        }
    }
    // Standard input ended: exit (STDIO-04), or with `linger` stay until signalled.
    eprintln!("eof");
    if opts.contains_key("linger") {
        std::thread::sleep(std::time::Duration::from_secs(120));
    }
}
