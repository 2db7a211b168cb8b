//! `soak-server`: the MCP server that `scripts/soak.sh` drives. It is mcpcore's standalone
//! Streamable HTTP listener (both eras on `/mcp`) with the demo server's `echo {text}` tool, and
//! two additions a soak needs and the demo server does not have:
//!
//! - the `HttpOptions` come from a JSON file in core's options shape (`mcpcore::options`), so
//!   the soak raises exactly the caps it needs (sessions, listen streams, connections) and keeps
//!   every other default;
//! - every `--stats-ms` it prints one `STATS` line on stdout with what only the process itself
//!   can see: tokio's live task count and the listener's session, listen-stream and connection
//!   gauges. It also announces a tools list change every `--notify-ms`, so the open
//!   `subscriptions/listen` streams (SUB-01) carry traffic and a consumer that never reads
//!   fills its queue.
//!
//! Usage: `soak-server ADDR OPTIONS.json [--stats-ms N] [--notify-ms N]`; the first stdout line
//! is `LISTENING http://ADDR/mcp`. It runs until stdin closes (the driver's handle on it).

use mcpcore::transport::http::HttpOptions;
use mcpcore::{handler_fn, CallToolResult, HandlerError, Server, Tool};
use serde_json::{json, Value};
use std::io::Write;
use std::time::Duration;
use tokio::io::AsyncReadExt;

fn build() -> Result<Server, mcpcore::server::BuildError> {
    let schema =
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]});
    Server::builder("mcpcore-soak", env!("CARGO_PKG_VERSION"))
        .tool(
            Tool::new("echo").input_schema(schema),
            handler_fn(|_ctx, args: Value| async move {
                let t = args.get("text").and_then(Value::as_str).unwrap_or_default();
                Ok::<_, HandlerError>(CallToolResult::text(t.to_owned()))
            }),
        )
        .build()
}

struct Args {
    addr: std::net::SocketAddr,
    opts: HttpOptions,
    stats: Duration,
    notify: Duration,
}

fn parse() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let addr = it.next().ok_or("missing ADDR")?;
    let addr = addr.parse().map_err(|e| format!("ADDR {addr}: {e}"))?;
    let file = it.next().ok_or("missing OPTIONS.json")?;
    let text = std::fs::read_to_string(&file).map_err(|e| format!("{file}: {e}"))?;
    let patch: Value = serde_json::from_str(&text).map_err(|e| format!("{file}: {e}"))?;
    let mut opts = HttpOptions::default();
    mcpcore::options::apply_json(&mut opts, &patch).map_err(|e| format!("{file}: {e}"))?;
    let (mut stats, mut notify) = (Duration::from_secs(2), Duration::from_secs(5));
    while let Some(flag) = it.next() {
        let ms = it
            .next()
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("{flag} needs a positive number of milliseconds"))?;
        match flag.as_str() {
            "--stats-ms" => stats = Duration::from_millis(ms),
            "--notify-ms" => notify = Duration::from_millis(ms),
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(Args {
        addr,
        opts,
        stats,
        notify,
    })
}

#[tokio::main]
async fn main() {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("soak-server: {e}\nusage: soak-server ADDR OPTIONS.json [--stats-ms N] [--notify-ms N]");
            std::process::exit(2);
        }
    };
    let server = match build() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("soak-server: {e}");
            std::process::exit(2);
        }
    };
    let listener = match server.serve_http(args.addr, args.opts).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("soak-server: cannot listen on {}: {e}", args.addr);
            std::process::exit(1);
        }
    };
    let mut out = std::io::stdout();
    let _ = writeln!(out, "LISTENING http://{}/mcp", listener.local_addr());
    let _ = out.flush();
    let rt = tokio::runtime::Handle::current();
    let (mut stats, mut notify) = (
        tokio::time::interval(args.stats),
        tokio::time::interval(args.notify),
    );
    let stdin_closed = async {
        let mut sink = [0u8; 64];
        let mut stdin = tokio::io::stdin();
        while matches!(stdin.read(&mut sink).await, Ok(n) if n > 0) {}
    };
    tokio::pin!(stdin_closed);
    loop {
        tokio::select! {
            () = &mut stdin_closed => break,
            _ = notify.tick() => {
                server.notify_tools_list_changed();
            }
            _ = stats.tick() => {
                let svc = listener.service();
                let _ = writeln!(
                    out,
                    "STATS tasks={} sessions={} listens={} conns={} accepted={}",
                    rt.metrics().num_alive_tasks(),
                    svc.legacy_session_count(),
                    svc.listen_stream_count(),
                    listener.open_connections(),
                    listener.accepted_connections(),
                );
                let _ = out.flush();
            }
        }
    }
    listener.shutdown().await;
}
