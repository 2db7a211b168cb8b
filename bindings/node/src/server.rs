//! `NativeServer`: a core [`Server`] built from the JavaScript registry when serving starts,
//! and `NativeHttpHandle`, a running Streamable HTTP listener.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use mcpcore::options::{apply_json, JsonOptions};
use mcpcore::transport::http::{HttpListener, HttpOptions};
use mcpcore::{ErrorKind, Handler, InputRequired, Server, ServerBuilder};
use napi::bindgen_prelude::{Buffer, Either, Function};
use napi::threadsafe_function::ThreadsafeFunction;
use napi::Status;
use napi_derive::napi;
use serde_json::Value;

use crate::handler::InvokeFn;
use crate::registry::{self, Entry};
use crate::reply;
use crate::stdio::{DirectFn, NativeStdioPump};

/// A refused registration (thrown by `add`; `lib/` rethrows it as `McpcoreError` with code
/// `invalid_argument`).
fn invalid(e: impl std::fmt::Display) -> napi::Error {
    napi::Error::new(napi::Status::InvalidArg, e.to_string())
}

/// The MIME type of MCP Apps UI resources (`lib/` exports it as `APP_MIME_TYPE`).
#[napi]
// Called from JavaScript only: napi registers it outside test builds, so a test build sees no use.
#[cfg_attr(test, allow(dead_code))]
pub fn app_mime_type() -> &'static str {
    mcpcore::protocol::apps::APP_MIME_TYPE
}

/// `data` as an image (`image/*`) or audio (`audio/*`) content block, by core's rule
/// (`mcpcore::server::media_block`); another MIME type is thrown (`lib/` rethrows it as a
/// `TypeError`).
#[napi(ts_return_type = "{ type: string; data: string; mimeType: string }")]
#[cfg_attr(test, allow(dead_code))]
pub fn media_block(data: Buffer, mime_type: String) -> napi::Result<Value> {
    mcpcore::server::media_block(&data, &mime_type).map_err(invalid)
}

/// Check an `inputRequired(...)` answer with core's rule (MRTR-02), so the handler hears at
/// once what is wrong; `lib/` throws the message as a `TypeError`.
#[napi(ts_args_type = "inputRequests: Record<string, any>, requestState?: string | null")]
#[cfg_attr(test, allow(dead_code))]
pub fn check_input_required(
    input_requests: Value,
    request_state: Option<String>,
) -> Option<String> {
    let Value::Object(input_requests) = input_requests else {
        return Some("inputRequests must be an object of {method, params}".into());
    };
    InputRequired {
        input_requests,
        request_state,
    }
    .validate()
    .err()
}

/// Options of core's JSON shape (`mcpcore::options`) applied over the defaults.
pub fn patched<T: JsonOptions + Default>(patch: Option<&Value>) -> Result<T, String> {
    patched_from(T::default(), patch)
}

/// `base` with the caller's JSON patch applied.
pub fn patched_from<T: JsonOptions>(base: T, patch: Option<&Value>) -> Result<T, String> {
    let mut o = base;
    if let Some(p) = patch.filter(|p| !p.is_null()) {
        apply_json(&mut o, p).map_err(|e| e.to_string())?;
    }
    Ok(o)
}

/// The server registry and, once serving started, the built core server (private: `lib/`
/// wraps it as `Server`).
#[napi]
pub struct NativeServer {
    name: String,
    version: String,
    instructions: Option<String>,
    options: Option<Value>,
    entries: Mutex<Vec<Entry>>,
    built: Mutex<Option<Server>>,
}

#[napi]
impl NativeServer {
    /// A server named `name`/`version`; `options` is core's `ServerOptions` JSON shape.
    #[napi(constructor)]
    pub fn new(
        name: String,
        version: String,
        instructions: Option<String>,
        options: Option<Value>,
    ) -> Self {
        Self {
            name,
            version,
            instructions,
            options,
            entries: Mutex::new(Vec::new()),
            built: Mutex::new(None),
        }
    }

    /// Register `invoke(ctx, params)` for a `"tool"`, `"prompt"`, `"resource"` or
    /// `"resource_template"` with its wire definition, a tool's `"gate"` (`{name}`), or the
    /// `"completion"` handler (`completion/complete`, both eras; the definition is ignored, a
    /// later one replaces it). Before serving this edits the registry the server is built
    /// from: with `replace` (a handle's `update`) an entry of the same kind and key (name,
    /// URI, URI template) is replaced in place, enabled, else a taken key is refused by the
    /// build, as the builder refuses it. Once it serves, a tool, prompt, resource or template
    /// goes to the running server (core's `Server::add_json`, which replaces a taken key in
    /// place), and a gate or completion handler is refused.
    /// `direct`, the same wrapper returning its reply synchronously when the handler did (else
    /// a Promise of it), is what stdio served from the JavaScript thread calls (`openStdio`).
    #[napi(
        ts_args_type = "kind: string, definition: any, invoke: (call: number, method: string, name: string | null, requestId: number | string, params: string) => Promise<string>, direct?: (call: number, method: string, name: string | null, requestId: number | string, params: string) => string | Promise<string>, replace?: boolean"
    )]
    pub fn add(
        &self,
        kind: String,
        definition: Value,
        invoke: InvokeFn,
        direct: Option<DirectFn>,
        replace: Option<bool>,
    ) -> napi::Result<()> {
        if !matches!(
            kind.as_str(),
            "tool" | "gate" | "prompt" | "resource" | "resource_template" | "completion"
        ) {
            return Err(invalid(format!("unknown entry kind {kind:?}")));
        }
        let entry = Entry {
            kind,
            definition,
            invoke: Arc::new(invoke),
            direct: direct.map(Arc::new),
            enabled: true,
        };
        // The `built` lock is held across the edit, so an entry is never added to the
        // registry after the build has read it.
        let built = self.built.lock().unwrap_or_else(|p| p.into_inner());
        match built.as_ref() {
            Some(server) => registry::add_live(server, &entry).map_err(invalid),
            None => {
                let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
                if replace == Some(true) {
                    registry::put(&mut entries, entry);
                } else {
                    entries.push(entry);
                }
                Ok(())
            }
        }
    }

    /// Remove the `kind` entry under `key` (a tool's gate with it): from the registry before
    /// serving, from the running server after (core's `Server::remove`: calls in flight
    /// finish). False when none is registered.
    #[napi]
    pub fn remove(&self, kind: String, key: String) -> napi::Result<bool> {
        let built = self.built.lock().unwrap_or_else(|p| p.into_inner());
        match built.as_ref() {
            Some(server) => Ok(server.remove(live_kind(&kind)?, &key)),
            None => Ok(registry::remove(
                &mut self.entries.lock().unwrap_or_else(|p| p.into_inner()),
                &kind,
                &key,
            )),
        }
    }

    /// Enable or disable the `kind` entry under `key` (core's `Server::set_enabled` once
    /// serving: a disabled item is absent from its list and unknown to calls). False when none
    /// is registered.
    #[napi]
    pub fn set_enabled(&self, kind: String, key: String, on: bool) -> napi::Result<bool> {
        let built = self.built.lock().unwrap_or_else(|p| p.into_inner());
        match built.as_ref() {
            Some(server) => Ok(server.set_enabled(live_kind(&kind)?, &key, on)),
            None => Ok(registry::set_enabled(
                &mut self.entries.lock().unwrap_or_else(|p| p.into_inner()),
                &kind,
                &key,
                on,
            )),
        }
    }

    /// True once serving started (the registry is then the running server's).
    #[napi(getter)]
    pub fn serving(&self) -> bool {
        self.built
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }

    /// Build the core server (once; later calls return the same server). A refused
    /// registration or option is `{error}` with kind `invalid_argument`.
    pub(crate) fn server(&self) -> Result<Server, Value> {
        self.build()
            .map_err(|e| reply::err(ErrorKind::InvalidArgument, e))
    }

    fn build(&self) -> Result<Server, String> {
        let mut built = self.built.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = built.as_ref() {
            return Ok(s.clone());
        }
        let mut b = ServerBuilder::new(self.name.clone(), self.version.clone());
        if let Some(text) = &self.instructions {
            b = b.instructions(text.clone());
        }
        if let Some(patch) = self.options.as_ref().filter(|p| !p.is_null()) {
            let mut err = None;
            b = b.options(|o| err = apply_json(o, patch).err());
            if let Some(e) = err {
                return Err(e.to_string());
            }
        }
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        // A gate (`{name}` of its tool) runs on the request before the tool's task is created.
        let mut gates: HashMap<&str, Arc<dyn Handler>> = entries
            .iter()
            .filter(|e| e.kind == "gate")
            .filter_map(|e| Some((e.key()?, e.handler())))
            .collect();
        for e in entries.iter().filter(|e| e.kind != "gate") {
            let gate = (e.kind == "tool")
                .then(|| e.key())
                .flatten()
                .and_then(|n| gates.remove(n));
            b.add_json(&e.kind, e.definition.clone(), e.handler(), gate)?;
        }
        let s = b.build().map_err(|e| e.to_string())?;
        registry::apply_disabled(&s, &entries);
        // From now on the running server is the registry (see `add`).
        entries.clear();
        *built = Some(s.clone());
        Ok(s)
    }
}

/// Core's item kind for a change while serving.
fn live_kind(kind: &str) -> napi::Result<mcpcore::server::ItemKind> {
    registry::item_kind(kind).ok_or_else(|| invalid(format!("unknown item kind {kind:?}")))
}

#[napi]
impl NativeServer {
    /// Serve stdio from the JavaScript thread: `lib/` feeds stdin's bytes to the returned
    /// pump and writes its output; `wake()` is called when output is waiting outside `feed`.
    /// A refused registration or option is `{error}`.
    #[napi(ts_return_type = "NativeStdioPump | { error: NativeError }")]
    pub fn open_stdio(&self, wake: Function<(), ()>) -> Either<NativeStdioPump, Value> {
        let server = match self.server() {
            Ok(s) => s,
            Err(e) => return Either::B(e),
        };
        match NativeStdioPump::open(&server, wake) {
            Ok(p) => Either::A(p),
            Err(e) => Either::B(e),
        }
    }

    /// Bind `host:port` (port 0 picks a free port) and serve Streamable HTTP at `/mcp`;
    /// `options` is core's `HttpOptions` JSON shape. Resolves to the running listener or to
    /// `{error}`. `keepAlive` (never called) is held as a referenced threadsafe function by
    /// the listener until it is closed: the listener runs on core's threads, which Node's
    /// event loop does not see, and this reference is what keeps the process alive meanwhile.
    #[napi(
        ts_args_type = "host: string, port: number, options: any, keepAlive: () => void",
        ts_return_type = "Promise<NativeHttpHandle | { error: NativeError }>"
    )]
    pub async fn listen_http(
        &self,
        host: String,
        port: u32,
        options: Option<Value>,
        keep_alive: KeepAliveFn,
    ) -> napi::Result<Either<NativeHttpHandle, Value>> {
        let server = match self.server() {
            Ok(s) => s,
            Err(e) => return Ok(Either::B(e)),
        };
        let Ok(port) = u16::try_from(port) else {
            return Ok(Either::B(reply::err(
                ErrorKind::InvalidArgument,
                "port out of range",
            )));
        };
        let opts: HttpOptions = match patched(options.as_ref()) {
            Ok(o) => o,
            Err(e) => return Ok(Either::B(reply::err(ErrorKind::InvalidArgument, e))),
        };
        let addr = match mcpcore::transport::http::bind_address(&host, port).await {
            Ok(a) => a,
            Err(e) => {
                return Ok(Either::B(reply::err(
                    ErrorKind::InvalidArgument,
                    format!("host: {e}"),
                )))
            }
        };
        Ok(match server.serve_http(addr, opts).await {
            Ok(l) => Either::A(NativeHttpHandle {
                addr: l.local_addr(),
                url: l.url(),
                listener: Mutex::new(Some((l, keep_alive))),
            }),
            Err(e) => Either::B(reply::err(ErrorKind::Transport, e)),
        })
    }

    /// Tell connected clients the tool list changed; returns how many were told.
    #[napi]
    pub fn notify_tools_list_changed(&self) -> u32 {
        self.told(Server::notify_tools_list_changed)
    }

    /// Tell connected clients the prompt list changed; returns how many were told.
    #[napi]
    pub fn notify_prompts_list_changed(&self) -> u32 {
        self.told(Server::notify_prompts_list_changed)
    }

    /// Tell connected clients the resource list changed; returns how many were told.
    #[napi]
    pub fn notify_resources_list_changed(&self) -> u32 {
        self.told(Server::notify_resources_list_changed)
    }

    /// Tell the clients subscribed to `uri` (legacy `resources/subscribe`, 2026-07-28
    /// `subscriptions/listen`) that it changed; returns how many were told.
    #[napi]
    pub fn notify_resource_updated(&self, uri: String) -> u32 {
        self.told(|s| s.notify_resource_updated(&uri))
    }

    /// The server's metrics as a Prometheus text exposition (core's `metrics_text`; no series
    /// before it serves or when the `metrics` option is off).
    #[napi]
    pub fn metrics(&self) -> String {
        let built = self.built.lock().unwrap_or_else(|p| p.into_inner()).clone();
        match built {
            Some(s) => s.metrics_text(),
            None => Server::merged_metrics_text(&[]),
        }
    }
}

impl NativeServer {
    /// Run a notification on the built server (none before serving: nobody to tell).
    fn told(&self, f: impl FnOnce(&Server) -> usize) -> u32 {
        let built = self.built.lock().unwrap_or_else(|p| p.into_inner()).clone();
        built.map_or(0, |s| u32::try_from(f(&s)).unwrap_or(u32::MAX))
    }
}

/// A running Streamable HTTP listener (private: `lib/` wraps it).
#[napi]
pub struct NativeHttpHandle {
    addr: SocketAddr,
    url: String,
    /// The listener and the reference keeping the event loop alive, both dropped by `close`.
    listener: Mutex<Option<(HttpListener, KeepAliveFn)>>,
}

/// A referenced (not weak) threadsafe function that is never called: while one is alive, Node's
/// event loop stays alive.
pub type KeepAliveFn = ThreadsafeFunction<(), (), (), Status, false, false>;

#[napi]
impl NativeHttpHandle {
    /// The bound port.
    #[napi(getter)]
    pub fn port(&self) -> u32 {
        u32::from(self.addr.port())
    }

    /// The bound address.
    #[napi(getter)]
    pub fn host(&self) -> String {
        self.addr.ip().to_string()
    }

    /// The endpoint's URL, with the configured path (`http://127.0.0.1:PORT/mcp` by default).
    #[napi(getter)]
    pub fn url(&self) -> String {
        self.url.clone()
    }

    /// Graceful shutdown (answers in flight finish or are cancelled, then the socket closes);
    /// a second call does nothing.
    #[napi]
    pub async fn close(&self) -> napi::Result<()> {
        let l = self
            .listener
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some((l, keep_alive)) = l {
            l.shutdown().await;
            // Released after the shutdown: answers in flight still reach their clients.
            drop(keep_alive);
        }
        Ok(())
    }
}
