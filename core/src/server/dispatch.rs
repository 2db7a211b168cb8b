//! Era-aware request dispatch (REQUIREMENTS §0.2, §0.4, LC-*, JR-*; seeds: era lock, in-flight ids).
//!
//! Order for a request: notification-method-with-id → -32601; in-flight id collision → -32600;
//! then the request's own `_meta` decides the era path. A modern request is checked against the
//! connection's era, its envelope validated (-32602 / -32022), removed methods refused (-32601),
//! then dispatched; success locks the connection modern. A legacy request on a modern connection
//! is refused; otherwise `initialize`/`ping` are served and everything else needs a finished
//! handshake.
//!
//! For `tools/call`, `prompts/get` and `resources/read` on the modern era the echoed
//! `requestState` is opened before any handler runs, and an `input_required` outcome is gated,
//! sealed and answered by [`super::mrtr`]; on the legacy era the shim fulfils it. Complete
//! results are stamped here (`resultType`, cache hints; JR-04, CACHE-01, MRTR-08), and every
//! modern result carries `_meta["io.modelcontextprotocol/serverInfo"]` unless turned off (META-02).

use serde_json::{json, Map, Value};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::ask;
use super::context::{CtxInner, RequestContext};
use super::era::{self, Envelope};
use super::handler::Outcome;
use super::methods;
use super::mrtr;
use super::payload::Payload;
use super::session::Session;
use super::Outbound;
use crate::error::ErrorObject;
use crate::jsonrpc::Id;
use crate::protocol::Era;

/// The answer to one request, with where it was decided (transports map this to HTTP statuses).
#[derive(Debug, Clone)]
pub struct Reply {
    /// The result object (a tree, or a handler's JSON text passed through) or the error.
    pub result: Result<Payload, ErrorObject>,
    /// True when the error was raised before any handler ran (envelope, era, routing, the
    /// `inputResponses` / `requestState` gate of a retried MRTR request).
    pub pre_dispatch: bool,
}

impl Reply {
    fn pre(e: ErrorObject) -> Self {
        Self {
            result: Err(e),
            pre_dispatch: true,
        }
    }
}

/// Releases the in-flight claim even if the request future is dropped mid-way.
struct InflightGuard<'a> {
    session: &'a Session,
    id: &'a Id,
    seq: u64,
}

impl Drop for InflightGuard<'_> {
    fn drop(&mut self) {
        self.session.unregister_inflight(self.id, self.seq);
    }
}

tokio::task_local! {
    /// The trace context of the server span a request runs in, for its handler's context.
    pub(crate) static TRACE: crate::telemetry::TraceContext;
}

/// The client's cancellation of a request (CAN-01).
const CANCELLED: &str = "notifications/cancelled";

/// Whether `method` names a client's cancellation: a transport that runs one session on several
/// workers routes it to the worker running the request (the rule itself stays here, in
/// [`Session::handle_notification`]).
pub(crate) fn is_cancel(method: &str) -> bool {
    method == CANCELLED
}

/// A cancellation with `params` as a frame, for the worker running the request.
pub(crate) fn encode_cancel(params: Option<&Value>) -> Vec<u8> {
    crate::jsonrpc::encode_notification(CANCELLED, params)
}

/// Serialize a reply as a JSON-RPC response frame.
pub fn encode_reply(id: &Id, reply: &Reply) -> Vec<u8> {
    match &reply.result {
        Ok(v) => crate::jsonrpc::encode_result(id, v),
        Err(e) => crate::jsonrpc::encode_error(Some(id), e),
    }
}

/// Methods whose modern results are cacheable (CACHE-01).
pub(super) const CACHEABLE: &[&str] = &[
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "server/discover",
];

impl Session {
    /// Start one request. The synchronous part runs now, in arrival order: a notification method
    /// sent with an id is refused (-32601) and the id is claimed as in flight (a duplicate gets
    /// -32600 while the first keeps its routing). `Err` is an immediate answer; `Ok` is the future
    /// that serves the request and yields `None` when it was cancelled (no response is sent).
    /// `sink` receives request-related messages (progress, logs, server→client requests).
    pub(crate) fn start_request(
        self: &Arc<Self>,
        id: Id,
        method: String,
        params: Option<Map<String, Value>>,
        sink: Arc<dyn Outbound>,
    ) -> Result<impl std::future::Future<Output = Option<Reply>> + Send + 'static, Reply> {
        self.start_request_checked(id, method, params, sink, None)
    }

    /// [`Session::start_request`] for a modern request whose transport found its headers at
    /// odds with the body (`Mcp-Name` / `Mcp-Param-*`, HTTP-10, HTTP-15: -32020). §0.7 answers
    /// the envelope (-32602 / -32022) and a removed method (-32601) first, so `header_mismatch`
    /// is answered after those checks, before any handler runs.
    pub(crate) fn start_request_checked(
        self: &Arc<Self>,
        id: Id,
        method: String,
        params: Option<Map<String, Value>>,
        sink: Arc<dyn Outbound>,
        header_mismatch: Option<ErrorObject>,
    ) -> Result<impl std::future::Future<Output = Option<Reply>> + Send + 'static, Reply> {
        if method.starts_with("notifications/") {
            return Err(Reply::pre(ErrorObject::method_not_found(&method)));
        }
        let (seq, token) = match self.register_inflight(&id) {
            Ok(claim) => claim,
            Err(super::session::Refused::Duplicate) => {
                return Err(Reply::pre(ErrorObject::invalid_request(format!(
                    "request id {id} is already in flight"
                ))))
            }
            Err(super::session::Refused::Busy(cap)) => {
                self.server
                    .inner
                    .metrics
                    .refused(crate::telemetry::Refusal::Busy);
                return Err(Reply::pre(ErrorObject::server_busy(cap)));
            }
        };
        let traced = self.request_span(&id, &method, params.as_ref(), sink.as_ref());
        let measured = self.server.inner.metrics.on().then(|| {
            let target = crate::telemetry::span::target(&method, params.as_ref());
            (method.clone(), target.map(str::to_owned), Instant::now())
        });
        // `initialize` is never cancellable (LC-05): its answer always goes out.
        let cancellable = method != "initialize";
        let listening = method == "subscriptions/listen";
        let this = self.clone();
        let (span, trace) = traced.unzip();
        let outer = span.clone().unwrap_or_else(tracing::Span::none);
        let run = async move {
            let guard = InflightGuard {
                session: &this,
                id: &id,
                seq,
            };
            let metrics = &this.server.inner.metrics;
            let in_flight = metrics.start();
            let limits = &this.server.inner.options.limits;
            // A listen subscription lasts as long as the client wants: no handler timeout.
            let timeout = limits.handler_timeout.filter(|_| !listening);
            let grace = limits.shutdown_grace;
            let (session, rid, rtoken) = (this.clone(), id.clone(), token.clone());
            // The request's future is made where it is polled (pinned in place, or boxed for a
            // timeout), never kept as a local of this block: a local lives on across the await
            // below even once moved, and would double this future (moved per request). Boxing
            // it always measured slower than the moves it saves.
            let routed = move || session.route(rid, method, params, sink, rtoken, header_mismatch);
            let done = match (trace, timeout) {
                (Some(tc), None) => {
                    let routed = std::pin::pin!(TRACE.scope(tc, routed()));
                    super::guard::in_place(routed, &token, cancellable, grace).await
                }
                (None, None) => {
                    let routed = std::pin::pin!(routed());
                    super::guard::in_place(routed, &token, cancellable, grace).await
                }
                (trace, Some(limit)) => {
                    let boxed: std::pin::Pin<Box<dyn std::future::Future<Output = Reply> + Send>> =
                        match trace {
                            Some(tc) => Box::pin(TRACE.scope(tc, routed())),
                            None => Box::pin(routed()),
                        };
                    let t = token.clone();
                    super::guard::with_timeout(boxed, t, cancellable, limit, grace).await
                }
            };
            drop(guard);
            drop(in_flight);
            if done.timed_out {
                metrics.refused(crate::telemetry::Refusal::Timeout);
            }
            // A token the engine fired for the handler timeout still owes the peer its answer.
            let cancelled = cancellable && token.is_cancelled() && !done.timed_out;
            // `error.type` is read only for a metric or a span: none is made when both are off.
            let error = if measured.is_none() && span.is_none() {
                None
            } else if cancelled {
                Some("cancelled".to_owned())
            } else {
                crate::telemetry::span::error_type(&done.reply.result)
            };
            if let Some((method, target, t0)) = measured {
                metrics.operation(&method, target.as_deref(), error.as_deref(), t0.elapsed());
            }
            if let Some(span) = &span {
                let code = done.reply.result.as_ref().err().map(|e| e.code);
                crate::telemetry::span::finish(span, error.as_deref(), code);
            }
            (!cancelled).then_some(done.reply)
        };
        Ok(tracing::Instrument::instrument(run, outer))
    }

    /// Run one request and return its answer; `None` when it was cancelled (no response is sent,
    /// CAN-01). A notification method sent with an id is refused (-32601), and an id already in
    /// flight gets -32600 while the first keeps its routing. `sink` receives request-related
    /// messages (progress, logs, server→client requests).
    ///
    /// The started future is bound by a `let` whose `match` ends before it is awaited: awaited
    /// inside the `match` (or kept as its scrutinee) it would be held twice, doubling this
    /// future — which the HTTP path copies into its box per request. The request still starts
    /// on the first poll, not before.
    pub fn handle_request(
        self: &Arc<Self>,
        id: Id,
        method: String,
        params: Option<Map<String, Value>>,
        sink: Arc<dyn Outbound>,
    ) -> impl std::future::Future<Output = Option<Reply>> + Send + 'static {
        let this = self.clone();
        async move {
            let fut = match this.start_request(id, method, params, sink) {
                Ok(fut) => fut,
                Err(r) => return Some(r),
            };
            fut.await
        }
    }

    /// Handle one notification from the peer.
    pub fn handle_notification(&self, method: &str, params: Option<&Map<String, Value>>) {
        let transport = self.network_transport();
        let _span = crate::telemetry::span::server_notification(method, transport).entered();
        match method {
            CANCELLED => {
                if let Some(id) = params
                    .and_then(|p| p.get("requestId"))
                    .and_then(Id::from_value)
                {
                    // Unknown, finished and duplicate cancels are no-ops (CAN-01); a cancelled
                    // `initialize` is still answered (see `start_request`).
                    self.cancel_request(&id);
                }
            }
            // LC-01: the client's half of the handshake.
            "notifications/initialized" => self.mark_handshake_complete(),
            "notifications/roots/list_changed" | "notifications/progress" => {}
            other => tracing::debug!(method = other, "ignoring notification"),
        }
    }

    /// Owns its session, so `start_request` can make this future directly (an `async` block
    /// around it would hold the arguments a second time).
    async fn route(
        self: Arc<Self>,
        id: Id,
        method: String,
        params: Option<Map<String, Value>>,
        sink: Arc<dyn Outbound>,
        token: tokio_util::sync::CancellationToken,
        header_mismatch: Option<ErrorObject>,
    ) -> Reply {
        if era::has_claim(params.as_ref()) {
            if self.era() == Some(Era::Legacy) {
                return Reply::pre(ErrorObject::invalid_request(
                    "a 2026-07-28 envelope on a connection that completed the initialize handshake",
                ));
            }
            let env = match era::parse_envelope(params.as_ref()) {
                Ok(e) => e,
                Err(e) => return Reply::pre(e),
            };
            if era::REMOVED_IN_MODERN.contains(&method.as_str()) {
                return Reply::pre(ErrorObject::method_not_found(&method));
            }
            if let Some(e) = header_mismatch {
                return Reply::pre(e);
            }
            let mut reply = self
                .dispatch(id, method, params, sink, token, Some(Arc::new(env)))
                .await;
            if let Ok(payload) = &mut reply.result {
                self.lock_era(Era::Modern);
                let opts = &self.server.inner.options;
                // A JSON-text result was stamped when it was completed (`stamp_complete_json`).
                if let (Payload::Value(v), true) = (payload, opts.stamp_server_info) {
                    era::stamp_server_info(v, &self.server.inner.server_info);
                }
            }
            return reply;
        }
        if self.era() == Some(Era::Modern) {
            if method == "initialize" {
                return Reply::pre(ErrorObject::method_not_found(&method));
            }
            return Reply::pre(era::missing_envelope());
        }
        match method.as_str() {
            "initialize" => Reply {
                result: methods::initialize(&self, params.as_ref()).map(Payload::Value),
                pre_dispatch: false,
            },
            "ping" => Reply {
                result: Ok(json!({}).into()),
                pre_dispatch: false,
            },
            "server/discover" | "subscriptions/listen" => Reply::pre(era::missing_envelope()),
            _ if !self.is_legacy_initialized() => Reply::pre(ErrorObject::invalid_request(
                "server not initialized; send initialize first",
            )),
            _ => self.dispatch(id, method, params, sink, token, None).await,
        }
    }

    async fn dispatch(
        self: &Arc<Self>,
        id: Id,
        method: String,
        params: Option<Map<String, Value>>,
        sink: Arc<dyn Outbound>,
        token: tokio_util::sync::CancellationToken,
        envelope: Option<Arc<Envelope>>,
    ) -> Reply {
        let modern = envelope.is_some();
        let p = params.as_ref();
        let mrtr_method = self.is_mrtr_method(&method);
        // Only modern requests carry MRTR fields on the wire; the legacy shim supplies them
        // in-process, so a legacy client can never inject an unsealed state. A refusal here is
        // the engine refusing the request before any handler runs, like the envelope check, so
        // it is pre-dispatch: over HTTP a refused `requestState` is 400, not an in-band 200.
        // Boxed and only when the request carries a round's fields: its future (unsealing the
        // state) would otherwise size every request's future.
        let carries = |k: &str| p.is_some_and(|p| p.get(k).is_some_and(|v| !v.is_null()));
        let (retry, asks) =
            if modern && mrtr_method && (carries("inputResponses") || carries("requestState")) {
                match Box::pin(self.read_mrtr_retry(&method, p)).await {
                    Ok(r) => r,
                    Err(e) => return Reply::pre(e),
                }
            } else {
                Default::default()
            };
        let retried = retry.input_responses.is_some() || retry.request_state.is_some();
        let ctx = RequestContext {
            inner: Arc::new(CtxInner {
                id,
                method,
                params,
                cancel: token,
                sink,
                session: self.clone(),
                envelope,
                input_responses: retry.input_responses,
                request_state: retry.request_state,
                last_progress: Mutex::new(None),
                asks: Mutex::new(asks),
                task_id: None,
                trace: super::context::trace_slot(),
            }),
        };
        let p = ctx.params();
        let outcome = match self.run_method(&ctx, ctx.method(), p, modern).await {
            Ok(outcome) => outcome,
            Err(refused) => return refused,
        };
        let result = self
            .finish_outcome(&ctx, p, outcome, modern, mrtr_method, retried)
            .await;
        Reply {
            result,
            pre_dispatch: false,
        }
    }

    /// Whether the server advertises capability `cap`.
    fn has_capability(&self, cap: &str) -> bool {
        self.server.inner.capabilities.get(cap).is_some()
    }

    /// Whether `method` is one that may answer `input_required` (and so carries MRTR fields),
    /// given the capabilities this server advertises.
    fn is_mrtr_method(&self, method: &str) -> bool {
        match method {
            "tools/call" => self.has_capability("tools"),
            "prompts/get" => self.has_capability("prompts"),
            "resources/read" => self.has_capability("resources"),
            _ => false,
        }
    }

    /// Open the echoed `inputResponses` / `requestState` of a modern MRTR request.
    async fn read_mrtr_retry(
        &self,
        method: &str,
        p: Option<&Map<String, Value>>,
    ) -> Result<(mrtr::Retry, ask::Asks), ErrorObject> {
        // `request_client` answers carried from earlier rounds come out of the state here.
        mrtr::read_retry(
            &self.server.inner,
            method,
            p,
            self.principal().map(|p| &**p),
        )
        .await
        .and_then(|mut r| ask::from_retry(&mut r).map(|a| (r, a)))
    }

    /// Route `method` to its handler and run it. `Err` is the answer for a method this server
    /// does not serve (refused before any handler runs).
    async fn run_method(
        self: &Arc<Self>,
        ctx: &RequestContext,
        method: &str,
        p: Option<&Map<String, Value>>,
        modern: bool,
    ) -> Result<Result<Outcome, ErrorObject>, Reply> {
        let reg = self.server.inner.registry.load();
        let has = |cap: &str| self.has_capability(cap);
        Ok(match method {
            "server/discover" if modern => Ok(Outcome::Complete(methods::discover(self))),
            "tools/list" if has("tools") => methods::list_tools(self, p),
            "tools/call" if has("tools") => super::tasks::call_tool(ctx.clone(), p).await,
            "prompts/list" if has("prompts") => methods::list_prompts(self, p),
            "prompts/get" if has("prompts") => methods::get_prompt(ctx.clone(), p).await,
            "resources/list" if has("resources") => methods::list_resources(self, p),
            "resources/templates/list" if has("resources") => methods::list_templates(self, p),
            "resources/read" if has("resources") => methods::read_resource(ctx.clone(), p).await,
            "resources/subscribe" if has("resources") => {
                methods::subscribe(ctx.clone(), p, true).await
            }
            "resources/unsubscribe" if has("resources") => {
                methods::subscribe(ctx.clone(), p, false).await
            }
            "completion/complete" if has("completions") => methods::complete(ctx.clone(), p).await,
            "logging/setLevel" if has("logging") => methods::set_level(self, p),
            // Over HTTP the transport serves listen streams; on stdio they share the connection.
            "subscriptions/listen" if modern && self.kind() == super::SessionKind::Stdio => {
                // Boxed: one per subscription, and its future is large.
                Box::pin(super::listen::in_flow(ctx, p)).await
            }
            other if other.starts_with("tasks/") && self.server.inner.tasks.is_some() => {
                let engine = self.server.inner.tasks.clone();
                match engine {
                    // Boxed: the tasks methods' future is the largest here, and every
                    // request's future would otherwise be sized (and moved) for it.
                    Some(e) => match Box::pin(super::tasks::handle(&e, ctx, other, p)).await {
                        Some(r) => r,
                        None => return Err(Reply::pre(ErrorObject::method_not_found(other))),
                    },
                    None => return Err(Reply::pre(ErrorObject::method_not_found(other))),
                }
            }
            other => match reg.custom.get(other) {
                Some(h) => h
                    .call(ctx.clone(), Value::Object(p.cloned().unwrap_or_default()))
                    .await
                    .map_err(|e| e.into_wire(other)),
                None => return Err(Reply::pre(ErrorObject::method_not_found(other))),
            },
        })
    }

    /// Turn a handler's outcome into the result sent: complete results are stamped, an
    /// `input_required` outcome is served by MRTR (modern) or fulfilled by the shim (legacy).
    async fn finish_outcome(
        self: &Arc<Self>,
        ctx: &RequestContext,
        p: Option<&Map<String, Value>>,
        outcome: Result<Outcome, ErrorObject>,
        modern: bool,
        mrtr_method: bool,
        retried: bool,
    ) -> Result<Payload, ErrorObject> {
        let method = ctx.method();
        match outcome {
            Err(e) => Err(e),
            Ok(Outcome::Complete(v)) => Ok(self.stamp_complete(method, v, modern, retried).into()),
            Ok(Outcome::CompleteJson(raw)) => {
                Ok(self.stamp_complete_json(method, raw, modern, retried))
            }
            Ok(Outcome::InputRequired(_)) if !mrtr_method => {
                tracing::error!(
                    method,
                    "input_required is only allowed for tools/call, prompts/get, resources/read"
                );
                Err(ErrorObject::internal())
            }
            Ok(Outcome::InputRequired(ir)) if modern => {
                mrtr::modern_result(&self.server.inner, ctx, p, ask::finish(ctx, ir))
                    .map(Payload::Value)
            }
            // Boxed: the legacy shim's rounds are rare, and their future is large.
            Ok(Outcome::InputRequired(ir)) => Box::pin(mrtr::legacy_shim(self, ctx, p, ir))
                .await
                .map(|v| self.stamp_complete(method, v, false, false).into()),
        }
    }

    /// Stamp `resultType` (modern) and cache hints (modern cacheable, or legacy when opted in).
    /// Retried MRTR results are never cacheable (MRTR-08): they get `ttlMs: 0`, `private`.
    /// Legacy results of built-in methods lose any `resultType` and, unless hints are opted in,
    /// any `ttlMs`/`cacheScope` a handler put there (pre-2026 shapes).
    pub(super) fn stamp_complete(
        &self,
        method: &str,
        mut v: Value,
        modern: bool,
        retried: bool,
    ) -> Value {
        // (`stamp_complete_json` keeps a JSON-text result as text when none of this applies.)
        let opts = &self.server.inner.options;
        let Some(obj) = v.as_object_mut() else {
            return v;
        };
        let cacheable = (modern || opts.legacy_cache_hints) && CACHEABLE.contains(&method);
        if modern {
            obj.entry("resultType").or_insert_with(|| json!("complete"));
        } else if methods::BUILT_IN.contains(&method) {
            // One pass over the keys (results rarely carry these): cheaper than a search each.
            let stale =
                |k: &str| k == "resultType" || (!cacheable && matches!(k, "ttlMs" | "cacheScope"));
            if obj.keys().any(|k| stale(k)) {
                obj.retain(|k, _| !stale(k));
            }
        }
        if cacheable {
            if retried {
                obj.insert("ttlMs".into(), json!(0));
                obj.insert("cacheScope".into(), json!("private"));
            } else {
                obj.entry("ttlMs")
                    .or_insert_with(|| json!(opts.cache_hints.ttl_ms));
                obj.entry("cacheScope")
                    .or_insert_with(|| json!(opts.cache_hints.scope));
            }
        }
        v
    }
}

impl Session {
    /// The server span of one request and its trace context, when a subscriber wants the span.
    fn request_span(
        &self,
        id: &Id,
        method: &str,
        params: Option<&Map<String, Value>>,
        sink: &dyn Outbound,
    ) -> Option<(tracing::Span, crate::telemetry::TraceContext)> {
        crate::telemetry::span::server_request(
            method,
            id,
            params,
            self.network_transport(),
            sink.http_headers(),
            &|| self.negotiated_version(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::NullOutbound;
    use serde_json::json;

    /// LC-05, deterministic: a cancel processed after `initialize` was claimed but before it ran
    /// still lets it answer.
    #[tokio::test]
    async fn lc05_initialize_cancelled_before_running_still_answers() {
        let server = crate::Server::builder("s", "1").build().expect("build");
        let session = server.new_session(super::super::SessionKind::Stdio, Arc::new(NullOutbound));
        let params = json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"}});
        let fut = session
            .start_request(
                Id::Num(1),
                "initialize".into(),
                params.as_object().cloned(),
                Arc::new(NullOutbound),
            )
            .unwrap_or_else(|_| panic!("initialize refused"));
        let cancel = json!({"requestId": 1});
        session.handle_notification("notifications/cancelled", cancel.as_object());
        let reply = fut.await.expect("initialize is never cancelled");
        assert_eq!(
            reply.result.expect("ok").into_value()["protocolVersion"],
            "2025-11-25"
        );
        assert!(session.is_legacy_initialized());
    }

    /// `handle_request` starts the request on its first poll: a future dropped unpolled leaves
    /// nothing in flight, so the same id can be used again (and a polled one answers).
    #[tokio::test]
    async fn handle_request_starts_on_first_poll() {
        let server = crate::Server::builder("s", "1").build().expect("build");
        let session = server.new_session(super::super::SessionKind::Stdio, Arc::new(NullOutbound));
        let sink: Arc<dyn Outbound> = Arc::new(NullOutbound);
        let unpolled = session.handle_request(Id::Num(7), "ping".into(), None, sink.clone());
        assert!(
            !session.is_inflight(&Id::Num(7)),
            "not started before it is polled"
        );
        drop(unpolled);
        assert!(!session.is_inflight(&Id::Num(7)));
        let reply = session
            .handle_request(Id::Num(7), "ping".into(), None, sink)
            .await
            .expect("answered");
        assert!(reply.result.is_ok(), "the id is free: {:?}", reply.result);
        assert!(!session.is_inflight(&Id::Num(7)), "finished requests leave");
    }

    /// `handle_request`'s future holds the started request once: its size is the started
    /// future's plus the arguments it keeps until the first poll, not twice the started one
    /// (which an `async` block awaiting its scrutinee or a captured future would be).
    #[tokio::test]
    async fn handle_request_holds_the_started_future_once() {
        let server = crate::Server::builder("s", "1").build().expect("build");
        let session = server.new_session(super::super::SessionKind::Stdio, Arc::new(NullOutbound));
        let sink: Arc<dyn Outbound> = Arc::new(NullOutbound);
        let started = session
            .start_request(Id::Num(1), "ping".into(), None, sink.clone())
            .unwrap_or_else(|_| panic!("ping refused"));
        let lazy = session.handle_request(Id::Num(2), "ping".into(), None, sink);
        let (one, whole) = (size_of_val(&started), size_of_val(&lazy));
        assert!(
            whole < one + one / 4,
            "handle_request's future is {whole} bytes for a started future of {one}"
        );
        assert!(started.await.is_some() && lazy.await.is_some());
    }

    /// Legacy results of built-in methods lose a handler's `resultType`, and its cache hints
    /// unless they are opted in and the method is cacheable; custom methods keep everything;
    /// modern results get `resultType` (CACHE-01).
    #[test]
    fn stamp_complete_per_era_and_method() {
        let stamped = |legacy_hints: bool, method: &str, modern: bool| {
            let server = crate::Server::builder("s", "1")
                .options(|o| o.legacy_cache_hints = legacy_hints)
                .build()
                .expect("build");
            let session =
                server.new_session(super::super::SessionKind::Stdio, Arc::new(NullOutbound));
            let v = json!({"content": [], "resultType": "complete", "ttlMs": 5,
                "cacheScope": "public", "_meta": {"k": 1}});
            session.stamp_complete(method, v, modern, false)
        };
        let keys = |v: &Value| {
            let mut k: Vec<String> = v.as_object().map(|o| o.keys().cloned().collect()).unwrap();
            k.sort();
            k
        };
        assert_eq!(
            keys(&stamped(false, "tools/call", false)),
            ["_meta", "content"]
        );
        assert_eq!(
            keys(&stamped(true, "tools/list", false)),
            ["_meta", "cacheScope", "content", "ttlMs"]
        );
        assert_eq!(
            keys(&stamped(true, "tools/call", false)),
            ["_meta", "content"],
            "not a cacheable method"
        );
        assert_eq!(keys(&stamped(false, "x/custom", false)).len(), 5);
        let modern = stamped(false, "tools/call", true);
        assert_eq!(modern["resultType"], "complete");
        assert_eq!(
            modern["ttlMs"], 5,
            "a handler's own hints stay on modern results"
        );
    }
}
