//! `conformance-server`: the fixture the official MCP conformance suite runs against
//! (shared/conformance/FIXTURE.md), built on the public mcpcore API only. Serves stdio by default,
//! or Streamable HTTP with `--http 127.0.0.1:PORT` (endpoint `/mcp`; port 0 prints the address),
//! whose legacy session limits take `--max-sessions N`, `--session-idle-secs S` and
//! `--init-timeout-secs S`; `--redis URL [--redis-prefix P] --request-state-key [ID:]B64` (with
//! `--allowed-hosts` naming the load balancer) runs it as one worker of several
//! (scripts/conformance-scaleout.sh); `--auth-jwks FILE_OR_URL --auth-issuer ISS --auth-audience
//! AUD` (or `--auth FILE`) protects the endpoint as an OAuth 2.1 resource server.

#[path = "auth_flags.rs"]
mod auth_flags;
#[path = "backplane_flags.rs"]
mod backplane_flags;
#[path = "conformance/fixture.rs"]
mod fixture;
#[path = "http_flags.rs"]
mod http_flags;
#[path = "conformance/tasks.rs"]
mod tasks;

use mcpcore::{handler_fn, CallToolResult, Server, Tool};
use serde_json::{json, Value};
use std::sync::{Arc, OnceLock};

fn build(
    backplane: Option<backplane_flags::Shared>,
) -> Result<(Server, Arc<OnceLock<Server>>), mcpcore::server::BuildError> {
    let handle = Arc::new(OnceLock::new());
    let mut b =
        Server::builder("mcpcore-conformance", env!("CARGO_PKG_VERSION")).cache_hints(0, false);
    if let Some(shared) = backplane {
        b = shared.apply(b);
    }
    let server = tasks::register(fixture::register(b, handle.clone()))
        // A tool whose arguments are mirrored as `Mcp-Param-*` headers (HTTP-14/15), so the suite's
        // server-side custom-header checks have something to exercise.
        .tool(
            Tool::new("test_header_params")
                .description("Echoes arguments that clients mirror into Mcp-Param-* headers.")
                .input_schema(json!({"type": "object", "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "priority": {"type": "integer", "x-mcp-header": "Priority"},
                    "verbose": {"type": "boolean", "x-mcp-header": "Verbose"}
                }})),
            handler_fn(
                |_ctx, args: Value| async move { Ok(CallToolResult::text(args.to_string())) },
            ),
        )
        .build()?;
    let _ = handle.set(server.clone());
    Ok((server, handle))
}

#[tokio::main]
async fn main() {
    http_flags::install_memory_trim();
    let (args, backplane) = match backplane_flags::take(std::env::args().skip(1).collect()) {
        Ok(r) => r,
        Err(e) => usage(&e),
    };
    let with_backplane = backplane.is_some();
    let (server, _handle) = match build(backplane) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("conformance-server: {e}");
            std::process::exit(2);
        }
    };
    let mut opts = mcpcore::transport::http::HttpOptions::default();
    let (args, session_flags) = match http_flags::take(args, &mut opts) {
        Ok(r) => r,
        Err(e) => usage(&e),
    };
    let (args, auth_flags) = match auth_flags::take(args, &mut opts) {
        Ok(r) => r,
        Err(e) => usage(&e),
    };
    let addr = match args.as_slice() {
        [flag, addr] if flag == "--http" => Some(addr.clone()),
        [flag, port] if flag == "--port" => Some(format!("127.0.0.1:{port}")),
        [] => std::env::var("PORT").ok().map(|p| format!("127.0.0.1:{p}")),
        [flag] if flag == "--stdio" => None,
        _ => usage("unexpected arguments"),
    };
    if addr.is_none() && (session_flags || with_backplane || auth_flags) {
        usage("the HTTP flags apply to HTTP only");
    }
    if let Some(addr) = addr {
        let Ok(addr) = addr.parse::<std::net::SocketAddr>() else {
            eprintln!("conformance-server: bad address {addr}");
            std::process::exit(2);
        };
        let scheme = if opts.tls.is_some() { "https" } else { "http" };
        let listener = match server.serve_http(addr, opts).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("conformance-server: cannot listen on {addr}: {e}");
                std::process::exit(1);
            }
        };
        eprintln!(
            "conformance-server: listening on {scheme}://{}/mcp",
            listener.local_addr()
        );
        wait_for_signal().await;
        listener.shutdown().await;
        return;
    }
    if let Err(e) = server.serve_stdio().await {
        eprintln!("conformance-server: {e}");
        std::process::exit(1);
    }
}

fn usage(problem: &str) -> ! {
    eprintln!(
        "conformance-server: {problem}\n\
         usage: conformance-server [--port N | --http 127.0.0.1:PORT | --stdio] [HTTP FLAGS]  (or PORT=N)\n\
         HTTP flags (legacy sessions, HTTPS, authorization, scale-out):\n{}\n{}{}",
        http_flags::USAGE,
        auth_flags::USAGE,
        backplane_flags::USAGE
    );
    std::process::exit(2);
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
