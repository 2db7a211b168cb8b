//! `mcpcore serve` (a stdio server behind Streamable HTTP) and `mcpcore stdio` (an HTTP server
//! behind stdio): a core `Server` whose tools, prompts, resources, templates and completions
//! mirror the upstream's and forward every call to it. The engine speaks both eras to the
//! clients; the upstream client speaks whichever era the upstream does, so each side may be
//! either era. The mirror follows the upstream's `list_changed`, and the engine announces
//! every change to the bridge's own clients (dynamic registries).

use mcpcore::client::ClientError;
use mcpcore::transport::http::HttpOptions;
use mcpcore::{handler_fn, HandlerError, RequestContext, Server};
use serde_json::Value;
use std::sync::Arc;

use crate::connect::Target;
use crate::hub::{Hub, Member, Naming};
use crate::upstream::Upstream;
use crate::ConnArgs;

/// How the bridge serves its clients.
pub(crate) enum Front {
    Http {
        addr: std::net::SocketAddr,
        opts: Box<HttpOptions>,
    },
    Stdio,
}

/// Several workers sharing sessions and state (`--redis`, `--request-state-key`).
pub(crate) struct Shared {
    pub backplane: mcpcore::backplane::Backplane,
    pub keys: mcpcore::security::KeyRing,
}

/// Who the served server is: its name and version, its instructions, its scale-out.
pub(crate) struct Setup {
    pub identity: (String, String),
    pub instructions: Option<String>,
    pub shared: Option<Shared>,
}

/// Run a bridge to `target` until interrupted (HTTP) or until the client hangs up (stdio).
pub(crate) async fn run(
    target: Target,
    c: &ConnArgs,
    front: Front,
    shared: Option<Shared>,
    policy: crate::lane::Policy,
) -> Result<(), ClientError> {
    let up = Upstream::start(target, c.clone(), true, policy).await?;
    let client = up
        .client()
        .map_err(|e| ClientError::Closed(format!("{e:?}")))?;
    let raw = client.negotiated().map(|n| n.raw).unwrap_or(Value::Null);
    let info = raw
        .get("serverInfo")
        .or_else(|| raw.pointer("/_meta/io.modelcontextprotocol~1serverInfo"))
        .cloned()
        .unwrap_or(Value::Null);
    let text = |k: &str, d: &str| info.get(k).and_then(Value::as_str).unwrap_or(d).to_owned();
    let members = vec![Member::new("upstream".into(), up, Naming::default())];
    let setup = Setup {
        identity: (text("name", "mcpcore-bridge"), text("version", "0")),
        instructions: raw
            .get("instructions")
            .and_then(Value::as_str)
            .map(str::to_owned),
        shared,
    };
    serve(setup, members, front).await
}

/// Serve `members` behind one server as `setup` says until interrupted (HTTP) or until the
/// client hangs up (stdio).
pub(crate) async fn serve(
    setup: Setup,
    members: Vec<Arc<Member>>,
    front: Front,
) -> Result<(), ClientError> {
    let mut b = Server::builder(setup.identity.0, setup.identity.1).dynamic();
    if let Some(i) = setup.instructions {
        b = b.instructions(i);
    }
    if let Some(s) = setup.shared {
        b = b.backplane(s.backplane).request_state_keys(s.keys);
    }
    let hub_slot: Arc<std::sync::OnceLock<std::sync::Weak<Hub>>> = Arc::default();
    if Hub::completes(&members) {
        let slot = hub_slot.clone();
        b = b.completion(handler_fn(move |ctx: RequestContext, params: Value| {
            let hub = slot.get().and_then(std::sync::Weak::upgrade);
            async move {
                match hub {
                    Some(h) => h.complete(ctx, params).await,
                    None => Err(HandlerError::rpc(-32603, "the bridge is starting")),
                }
            }
        }));
    }
    if Hub::scoped(&members) {
        let slot = hub_slot.clone();
        b = b.visibility(move |kind, key, who| {
            slot.get()
                .and_then(std::sync::Weak::upgrade)
                .is_none_or(|h| h.visible(kind, key, who))
        });
    }
    // A 2026-07-28 client subscribes on its listen stream: held upstream as long as it lasts.
    // One task applies the opens and ends in order (an end never overtakes its open); the
    // queue holds at most two entries per listen stream, which the engine caps.
    let (listens, mut heard) = tokio::sync::mpsc::unbounded_channel::<(Vec<String>, bool)>();
    b = b.on_listen_resources(move |uris, on| {
        let _ = listens.send((uris.to_vec(), on));
    });
    let (sub_slot, unsub_slot) = (hub_slot.clone(), hub_slot.clone());
    b = b.subscription_handlers(
        handler_fn(move |_ctx: RequestContext, params: Value| {
            let hub = sub_slot.get().and_then(std::sync::Weak::upgrade);
            subscription(hub, params, true)
        }),
        handler_fn(move |_ctx: RequestContext, params: Value| {
            let hub = unsub_slot.get().and_then(std::sync::Weak::upgrade);
            subscription(hub, params, false)
        }),
    );
    let server = b
        .build()
        .map_err(|e| ClientError::InvalidArgument(e.to_string()))?;
    let hub = Hub::start(server.clone(), members).await;
    let _ = hub_slot.set(Arc::downgrade(&hub));
    let weak = Arc::downgrade(&hub);
    tokio::spawn(async move {
        while let Some((uris, on)) = heard.recv().await {
            let Some(hub) = weak.upgrade() else { break };
            for uri in uris {
                hub.subscribe(&uri, on).await;
            }
        }
    });
    match front {
        Front::Http { addr, opts } => {
            let tls = opts.tls.is_some();
            let listener = server
                .serve_http(addr, *opts)
                .await
                .map_err(|e| ClientError::Transport(format!("cannot serve on {addr}: {e}")))?;
            let scheme = if tls { "https" } else { "http" };
            eprintln!("mcpcore: serving {scheme}://{}/mcp", listener.local_addr());
            let _ = tokio::signal::ctrl_c().await;
            listener.shutdown().await;
        }
        Front::Stdio => {
            if let Err(e) = server.serve_stdio().await {
                eprintln!("mcpcore: stdio: {e}");
            }
        }
    }
    hub.close().await;
    Ok(())
}

/// A client's `resources/subscribe` (`on`) or `resources/unsubscribe`, passed upstream.
async fn subscription(
    hub: Option<Arc<Hub>>,
    params: Value,
    on: bool,
) -> Result<mcpcore::Outcome, HandlerError> {
    if let (Some(hub), Some(uri)) = (hub, params.get("uri").and_then(Value::as_str)) {
        hub.subscribe(uri, on).await;
    }
    Ok(mcpcore::Outcome::Complete(serde_json::json!({})))
}

/// `--tls-cert`/`--tls-key` and the `--auth-*` flags as the HTTP options of `mcpcore serve`.
pub(crate) fn http_options(
    tls: (Option<String>, Option<String>),
    auth: [Option<String>; 3],
) -> Result<HttpOptions, String> {
    let mut o = HttpOptions::default();
    match tls {
        (Some(cert), Some(key)) => {
            o.tls = Some(mcpcore::transport::tls::ServerTls::new(cert, key));
        }
        (None, None) => {}
        _ => return Err("--tls-cert and --tls-key go together".into()),
    }
    match auth {
        [Some(jwks), Some(issuer), Some(audience)] => {
            let a = mcpcore::auth::AuthOptions::jwt(audience.clone(), issuer, audience, jwks);
            a.build_verifier().map_err(|e| format!("--auth-*: {e}"))?;
            o.auth = Some(a);
        }
        [None, None, None] => {}
        _ => return Err("--auth-jwks, --auth-issuer and --auth-audience go together".into()),
    }
    Ok(o)
}
