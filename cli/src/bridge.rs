//! `mcpcore serve` (a stdio server behind Streamable HTTP) and `mcpcore stdio` (an HTTP server
//! behind stdio): a core `Server` whose tools, prompts, resources, templates and completions
//! mirror the upstream's and forward every call to it. The engine speaks both eras to the
//! clients; the upstream client speaks whichever era the upstream does, so each side may be
//! either era. The mirror follows the upstream's `list_changed`, and the engine announces
//! every change to the bridge's own clients (dynamic registries).

use mcpcore::client::{CallOptions, Client, ClientError, ListKind};
use mcpcore::server::ItemKind;
use mcpcore::transport::http::HttpOptions;
use mcpcore::{handler_fn, HandlerError, RequestContext, Server};
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use crate::connect::Target;
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

/// The four kinds, as the registry, the list call and the upstream capability name them.
const KINDS: [(ItemKind, ListKind, &str, &str); 4] = [
    (ItemKind::Tool, ListKind::Tools, "tools", "name"),
    (ItemKind::Prompt, ListKind::Prompts, "prompts", "name"),
    (ItemKind::Resource, ListKind::Resources, "resources", "uri"),
    (
        ItemKind::ResourceTemplate,
        ListKind::ResourceTemplates,
        "resources",
        "uriTemplate",
    ),
];

/// Run a bridge to `target` until interrupted (HTTP) or until the client hangs up (stdio).
pub(crate) async fn run(target: Target, c: &ConnArgs, front: Front) -> Result<(), ClientError> {
    let up = Upstream::start(target, c.clone()).await?;
    let first = up
        .client()
        .map_err(|e| ClientError::Closed(format!("{e:?}")))?;
    let server = build(&up, &first).map_err(|e| ClientError::InvalidArgument(e.to_string()))?;
    let mirror = Arc::new(Mirror::default());
    mirror.refresh(&up, &server).await?;
    let (u, s, m) = (up.clone(), server.clone(), mirror.clone());
    up.on_change(Arc::new(move |kind: Option<String>| {
        let (u, s, m) = (u.clone(), s.clone(), m.clone());
        tokio::spawn(async move {
            match m.refresh(&u, &s).await {
                Err(e) => eprintln!("mcpcore: cannot re-list the upstream's items: {e}"),
                // The upstream announced a change the lists do not show (or one already
                // undone): its clients hear of it all the same.
                Ok(changed) => match kind.as_deref() {
                    Some(k) if !changed.contains(k) => {
                        let _ = match k {
                            "tools" => s.notify_tools_list_changed(),
                            "prompts" => s.notify_prompts_list_changed(),
                            _ => s.notify_resources_list_changed(),
                        };
                    }
                    _ => {}
                },
            }
        });
    }));
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
    up.close().await;
    Ok(())
}

/// The bridge's server: the upstream's name, version, instructions and completion support.
fn build(up: &Arc<Upstream>, client: &Client) -> Result<Server, mcpcore::server::BuildError> {
    let raw = client.negotiated().map(|n| n.raw).unwrap_or(Value::Null);
    let info = raw
        .get("serverInfo")
        .or_else(|| raw.pointer("/_meta/io.modelcontextprotocol~1serverInfo"))
        .cloned()
        .unwrap_or(Value::Null);
    let text = |k: &str, d: &str| info.get(k).and_then(Value::as_str).unwrap_or(d).to_owned();
    let mut b = Server::builder(text("name", "mcpcore-bridge"), text("version", "0")).dynamic();
    if let Some(i) = raw.get("instructions").and_then(Value::as_str) {
        b = b.instructions(i);
    }
    if raw.pointer("/capabilities/completions").is_some() {
        let up = up.clone();
        b = b.completion(handler_fn(move |ctx: RequestContext, params: Value| {
            let up = up.clone();
            async move {
                let params = without_meta(params);
                up.forward(ctx, "completion/complete", params).await
            }
        }));
    }
    b.build()
}

fn without_meta(mut v: Value) -> Value {
    if let Some(m) = v.as_object_mut() {
        m.remove("_meta");
    }
    v
}

/// What the bridge mirrors, by kind: each item as it was registered.
#[derive(Default)]
struct Mirror {
    items: Mutex<HashMap<&'static str, HashMap<String, Value>>>,
    /// One refresh at a time (a burst of `list_changed` re-lists in order).
    turn: tokio::sync::Mutex<()>,
}

impl Mirror {
    /// Re-list every kind the upstream offers; add what is new or changed, remove what it no
    /// longer has. An unchanged item is left alone: its clients hear of real changes only.
    /// The capability names (`tools`, `prompts`, `resources`) whose items changed.
    async fn refresh(
        &self,
        up: &Arc<Upstream>,
        server: &Server,
    ) -> Result<HashSet<&'static str>, ClientError> {
        let _turn = self.turn.lock().await;
        let client = up
            .client()
            .map_err(|e| ClientError::Closed(format!("{e:?}")))?;
        let caps = client
            .negotiated()
            .and_then(|n| n.raw.get("capabilities").cloned())
            .unwrap_or(Value::Null);
        let mut changed = HashSet::new();
        for (kind, list, cap, key) in KINDS {
            if caps.get(cap).is_none() {
                continue;
            }
            let listed = client.list_all_json(list, CallOptions::new()).await?;
            let name = list.items_key();
            let before = self
                .items
                .lock()
                .map(|m| m.get(name).cloned().unwrap_or_default())
                .unwrap_or_default();
            let mut now = HashMap::new();
            for item in listed
                .get(name)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let Some(k) = item.get(key).and_then(Value::as_str).map(str::to_owned) else {
                    continue;
                };
                if before.get(&k) != Some(item) {
                    if let Err(e) = server.add_json(kind, item.clone(), forwarder(up, kind, &k)) {
                        eprintln!("mcpcore: not bridging {name} {k:?}: {e}");
                        continue;
                    }
                    changed.insert(cap);
                }
                now.insert(k, item.clone());
            }
            for gone in before.keys().filter(|k| !now.contains_key(*k)) {
                server.remove(kind, gone);
                changed.insert(cap);
            }
            if let Ok(mut m) = self.items.lock() {
                m.insert(name, now);
            }
        }
        Ok(changed)
    }
}

/// The handler of one mirrored item: the call as the upstream names it.
fn forwarder(up: &Arc<Upstream>, kind: ItemKind, key: &str) -> Arc<dyn mcpcore::Handler> {
    let (up, key) = (up.clone(), key.to_owned());
    Arc::new(handler_fn(move |ctx: RequestContext, args: Value| {
        let (up, key) = (up.clone(), key.clone());
        async move {
            let (method, params) = match kind {
                ItemKind::Tool => ("tools/call", json!({"name": key, "arguments": args})),
                ItemKind::Prompt => ("prompts/get", json!({"name": key, "arguments": args})),
                _ => {
                    let uri = ctx.name().unwrap_or_default().to_owned();
                    ("resources/read", json!({ "uri": uri }))
                }
            };
            if !params.is_object() {
                return Err(HandlerError::invalid_params("arguments must be an object"));
            }
            up.forward(ctx, method, params).await
        }
    }))
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
