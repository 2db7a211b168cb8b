//! The server a bridge stands in front of: one client connection to it, restarted with backoff
//! when it dies, and the downstream calls in flight on it, so the requests it makes while
//! serving one (elicitation, sampling, roots) reach the client that made the call, in that
//! client's era (`RequestContext::request_client`: a legacy server→client request, or an
//! `input_required` round on 2026-07-28). Calls go on the main connection or on one of the
//! extra connections [`crate::lane`] describes.

use mcpcore::client::{client_handler_fn, CallOptions, Client, ClientError};
use mcpcore::server::PeerError;
use mcpcore::{ErrorObject, HandlerError, InputRequired, LoggingLevel, Outcome, RequestContext};
use serde_json::{Map, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::connect::{self, Needs, Target};
use crate::lane::{self, lock, Key, Lane, Lanes, Policy};
use crate::ConnArgs;

/// JSON-RPC "internal error": the code a bridge answers with when the server behind it cannot.
const INTERNAL: i64 = -32603;
/// Backoff bounds of restarts.
const FIRST_RETRY: Duration = Duration::from_millis(250);
const LAST_RETRY: Duration = Duration::from_secs(30);

/// Rounds of `input_required` a bridge answers for a legacy caller before giving up.
const MAX_ROUNDS: usize = 10;

pub(crate) struct Upstream {
    target: Target,
    conn: ConnArgs,
    /// The main connection: lists, subscriptions, completions, and calls by default.
    main: Arc<Lane>,
    /// The canonical capabilities the main connection declares (see [`lane::canonical`]).
    main_sig: String,
    /// The extra connections, and when to open them.
    lanes: Lanes,
    policy: Policy,
    restarting: AtomicBool,
    /// Told of every [`Change`].
    on_change: Mutex<Option<OnChange>>,
    /// The resource subscriptions held upstream for the bridge's clients.
    pub subs: crate::subs::Subscriptions,
}

/// What changed upstream.
#[derive(Debug, Clone)]
pub(crate) enum Change {
    /// Connected again after a restart: every list may differ.
    Reconnected,
    /// The connection died: nothing can be served until it is back.
    Down,
    /// `notifications/{kind}/list_changed` (`tools`, `prompts`, `resources`).
    Listed(String),
    /// `notifications/resources/updated` of a URI subscribed upstream.
    Updated(String),
}

type OnChange = Arc<dyn Fn(Change) + Send + Sync>;

/// `tools` of `notifications/tools/list_changed`.
fn kind_of(method: &str) -> Option<String> {
    method
        .strip_prefix("notifications/")?
        .strip_suffix("/list_changed")
        .map(str::to_owned)
}

impl Upstream {
    /// Connect to `target`. With `must_connect` (a bridge) the first connection must work, so
    /// a bridge that cannot reach its server says so at once; otherwise (a gateway member) a
    /// failed start is retried in the background like a restart.
    pub async fn start(
        target: Target,
        mut conn: ConnArgs,
        must_connect: bool,
        policy: Policy,
    ) -> Result<Arc<Self>, ClientError> {
        // Most stdio servers speak only the handshake era; a discover probe would cost each start
        // a round trip, or a timeout with servers that ignore it.
        if conn.mode.is_none() && matches!(target, Target::Stdio(_)) {
            conn.mode = Some(crate::connect::Mode::Legacy);
        }
        let up = Arc::new(Self {
            target,
            conn,
            main: Lane::new(Key::Main, lane::main_caps(), None),
            main_sig: lane::canonical(&lane::main_caps()),
            lanes: Lanes::default(),
            policy,
            restarting: AtomicBool::new(false),
            on_change: Mutex::new(None),
            subs: crate::subs::Subscriptions::default(),
        });
        match up.connect(&up.main).await {
            Ok(client) => *lock(&up.main.client) = Some(client),
            Err(e) if must_connect => return Err(e),
            Err(e) => {
                eprintln!("mcpcore: cannot start {}: {e}", up.describe());
                up.restart();
            }
        }
        let watch = Arc::downgrade(&up);
        tokio::spawn(async move {
            // A dead connection (the process exited, the server went away) is noticed within a
            // second and restarted, not only when the next call fails on it.
            while let Some(up) = watch.upgrade() {
                if lock(&up.main.client)
                    .as_ref()
                    .is_some_and(Client::is_closed)
                {
                    up.restart();
                }
                for spent in up.lanes.sweep() {
                    tokio::spawn(close_lane(spent));
                }
                drop(up);
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        });
        Ok(up)
    }

    /// The command or URL, for messages.
    pub fn describe(&self) -> String {
        match &self.target {
            Target::Http(u) => u.clone(),
            Target::Stdio(cmd) => cmd.join(" "),
        }
    }

    /// Whether the connection is up.
    pub fn is_up(&self) -> bool {
        self.main.live().is_some()
    }

    /// What to do when the upstream's lists may have changed.
    pub fn on_change(&self, f: OnChange) {
        *lock(&self.on_change) = Some(f);
    }

    pub(crate) fn changed(&self, change: Change) {
        let f = lock(&self.on_change).clone();
        if let Some(f) = f {
            f(change);
        }
    }

    /// Open `lane`'s connection: it declares the lane's capabilities, and the upstream's
    /// requests on it reach the lane's callers.
    async fn connect(self: &Arc<Self>, lane: &Arc<Lane>) -> Result<Client, ClientError> {
        let (weak, lane_weak) = (Arc::downgrade(self), Arc::downgrade(lane));
        let mut b = connect::builder(&self.conn).on_notification(move |method, params| {
            if let Some(kind) = kind_of(method) {
                if let Some(up) = weak.upgrade() {
                    up.changed(Change::Listed(kind));
                }
            } else if method == "notifications/message" {
                if let Some(lane) = lane_weak.upgrade() {
                    log(&lane, params);
                }
            }
        });
        let caps = lane.caps.clone();
        b = b.configure(move |o| {
            if let Value::Object(m) = &caps {
                o.extra_capabilities.extend(m.clone());
            }
        });
        for kind in ["elicitation/create", "sampling/createMessage", "roots/list"] {
            let cap = kind.split('/').next().unwrap_or_default();
            if lane.caps.get(cap).is_none() {
                continue;
            }
            let weak = Arc::downgrade(lane);
            let h = client_handler_fn(move |params: Value| {
                let lane = weak.upgrade();
                async move {
                    match lane {
                        Some(lane) => ask_caller(&lane, kind, params).await,
                        None => Err(ErrorObject::new(INTERNAL, "the bridge is closing")),
                    }
                }
            });
            b = match kind {
                "elicitation/create" => b.on_elicitation(h),
                "sampling/createMessage" => b.on_sampling(h),
                _ => b.on_roots(h),
            };
        }
        let client = connect::open(b, &self.target, &self.conn, &Needs { stream: true }).await?;
        if client.is_modern() {
            if lane.key == Key::Main {
                self.follow(&client).await;
            }
        } else if client
            .negotiated()
            .is_some_and(|n| n.raw.pointer("/capabilities/logging").is_some())
        {
            // Every message comes here; each caller's own level filters what it is sent.
            let _ = client.set_log_level(LoggingLevel::Debug).await;
        }
        Ok(client)
    }

    /// A modern upstream announces list changes only on a `subscriptions/listen` stream.
    async fn follow(self: &Arc<Self>, client: &Client) {
        let filter = serde_json::json!({"toolsListChanged": true, "promptsListChanged": true,
            "resourcesListChanged": true});
        match client.listen(filter).await {
            Ok(mut sub) => {
                let weak = Arc::downgrade(self);
                tokio::spawn(async move {
                    while let Some(n) = sub.next().await {
                        let kind = n.get("method").and_then(Value::as_str).and_then(kind_of);
                        match (weak.upgrade(), kind) {
                            (Some(up), Some(kind)) => up.changed(Change::Listed(kind)),
                            (Some(_), None) => {}
                            (None, _) => break,
                        }
                    }
                });
            }
            Err(e) => eprintln!("mcpcore: the upstream's list changes will not be followed: {e}"),
        }
    }

    /// The connection, or a clear error while it is being restarted.
    pub fn client(&self) -> Result<Client, HandlerError> {
        lock(&self.main.client).clone().ok_or_else(|| {
            HandlerError::rpc(
                INTERNAL,
                "the server behind this bridge is not running; it is being restarted",
            )
        })
    }

    /// Reconnect in the background (once at a time), with exponential backoff.
    pub fn restart(self: &Arc<Self>) {
        if self.restarting.swap(true, Ordering::SeqCst) {
            return;
        }
        let old = lock(&self.main.client).take();
        self.changed(Change::Down);
        let up = self.clone();
        tokio::spawn(async move {
            if let Some(c) = old {
                c.close().await;
            }
            let mut wait = FIRST_RETRY;
            loop {
                eprintln!("mcpcore: {} is not running; starting it", up.describe());
                match up.connect(&up.main).await {
                    Ok(c) => {
                        *lock(&up.main.client) = Some(c);
                        up.restarting.store(false, Ordering::SeqCst);
                        up.changed(Change::Reconnected);
                        return;
                    }
                    Err(e) => {
                        eprintln!("mcpcore: restart failed ({e}); again in {wait:?}");
                        tokio::time::sleep(wait).await;
                        wait = (wait * 2).min(LAST_RETRY);
                    }
                }
            }
        });
    }

    /// Send `method` upstream for the downstream request `ctx` (its progress, cancellation,
    /// capabilities and log level pass through, and the upstream's requests reach it) and
    /// answer with the upstream's result, or its `input_required` round passed on.
    pub async fn forward(
        self: &Arc<Self>,
        ctx: RequestContext,
        method: &str,
        mut params: Value,
    ) -> Result<Outcome, HandlerError> {
        let (lane, client) = self.lane_for(&ctx, self.client()?).await?;
        let passthrough = client.is_modern() && ctx.is_modern();
        if passthrough {
            // A retry of a round passed on: the caller's answers under the upstream's keys,
            // and the upstream's own state (unsealed by the engine).
            if let Some(r) = ctx.input_responses() {
                params["inputResponses"] = Value::Object(r.clone());
            }
            if let Some(s) = ctx.request_state() {
                params["requestState"] = Value::String(s.to_owned());
            }
        }
        let (id, pending) = lane.enter(&ctx);
        let r = self.send(&client, &ctx, method, params).await;
        lane.leave(id);
        let p = std::mem::take(&mut *lock(&pending));
        if p.asked {
            // The engine answers `input_required` with what the run recorded; the retry runs
            // the call again and the upstream's question finds its answer.
            return Err(HandlerError::rpc(INTERNAL, "input required"));
        }
        match r {
            Ok(v) => Ok(Outcome::Complete(plain(v))),
            Err(ClientError::InputRequired(raw)) => Ok(Outcome::InputRequired(round(&raw))),
            Err(ClientError::Rpc(e)) => Err(e.into()),
            Err(ClientError::Cancelled) => Err(HandlerError::cancelled()),
            Err(ClientError::Timeout) => Err(HandlerError::rpc(
                INTERNAL,
                "the server behind this bridge did not answer in time",
            )),
            Err(e @ (ClientError::Closed(_) | ClientError::Transport(_))) => {
                if lane.key == Key::Main {
                    self.restart();
                } else {
                    // The next call of this client opens a fresh one.
                    self.lanes.remove(&lane);
                    tokio::spawn(close_lane(lane));
                }
                Err(HandlerError::rpc(
                    INTERNAL,
                    format!("the server behind this bridge failed ({e}); it is being restarted"),
                ))
            }
            Err(e) => Err(HandlerError::rpc(INTERNAL, e.to_string())),
        }
    }

    /// The connection `ctx`'s call goes on (see [`crate::lane`]) and its client, opened if need
    /// be; `main` is the main connection's client.
    async fn lane_for(
        self: &Arc<Self>,
        ctx: &RequestContext,
        main: Client,
    ) -> Result<(Arc<Lane>, Client), HandlerError> {
        let by_caps = self.policy.per_capabilities && !main.is_modern();
        if !self.policy.per_session && !by_caps {
            // The common case costs nothing per call.
            return Ok((self.main.clone(), main));
        }
        let caps = lane::asking(&ctx.client_capabilities());
        let (key, ended) = match ctx.legacy_session() {
            Some(s) if self.policy.per_session => (Key::Session(s.key), Some(s.ended)),
            _ if by_caps => match lane::canonical(&caps) {
                sig if sig == self.main_sig => return Ok((self.main.clone(), main)),
                sig => (Key::Caps(sig), None),
            },
            _ => return Ok((self.main.clone(), main)),
        };
        let open = |l: Arc<Lane>| l.live().map(|c| (l, c));
        if let Some(found) = self.lanes.get(&key).and_then(open) {
            return Ok(found);
        }
        let _turn = self.lanes.opening.lock().await;
        if let Some(l) = self.lanes.get(&key) {
            if let Some(found) = open(l.clone()) {
                return Ok(found);
            }
            self.lanes.remove(&l);
            tokio::spawn(close_lane(l));
        }
        match self.lanes.make_room(self.policy.max) {
            Ok(evicted) => {
                if let Some(l) = evicted {
                    tokio::spawn(close_lane(l));
                }
            }
            Err(()) => {
                return Err(HandlerError::rpc(
                    INTERNAL,
                    format!(
                        "the bridge already keeps {} connections to its server, all in use; \
                         try again later",
                        self.policy.max
                    ),
                ))
            }
        }
        let lane = Lane::new(key.clone(), caps, ended);
        let client = self.connect(&lane).await.map_err(|e| {
            HandlerError::rpc(
                INTERNAL,
                format!(
                    "the server behind this bridge is not running for this client (it could \
                     not be started: {e}); it is started again at the next call"
                ),
            )
        })?;
        *lock(&lane.client) = Some(client.clone());
        lock(&self.lanes.open).insert(key, lane.clone());
        Ok((lane, client))
    }

    /// The call upstream. A modern caller gets the upstream's `input_required` rounds as they
    /// are (their keys and state kept); for a legacy caller each round is asked of it here
    /// with real requests, and the upstream retried with the answers.
    async fn send(
        &self,
        client: &Client,
        ctx: &RequestContext,
        method: &str,
        mut params: Value,
    ) -> Result<Value, ClientError> {
        let progress = ctx.clone();
        let mut opts = CallOptions::new()
            .timeout(connect::timeout(&self.conn))
            .cancel(ctx.cancellation_token().clone())
            .client_capabilities(ctx.client_capabilities())
            .manual_input()
            .on_progress(move |p, total, message| {
                progress.progress(p, total, message.as_deref());
            });
        // A modern server sends the logs its caller wants, and none when it wants none.
        if let Some(l) = ctx.log_threshold() {
            opts = opts.log_level(l);
        }
        for _ in 0..MAX_ROUNDS {
            // The JSON seam hands an unanswered round back as a result: a round all the same.
            let r = match client
                .request_with(method, params.clone(), opts.clone())
                .await
            {
                Ok(v) if v.get("resultType").and_then(Value::as_str) == Some("input_required") => {
                    Err(ClientError::InputRequired(v))
                }
                other => other,
            };
            match r {
                Err(ClientError::InputRequired(raw)) if !ctx.is_modern() => {
                    let mut answers = Map::new();
                    let asks = raw.get("inputRequests").and_then(Value::as_object);
                    for (key, q) in asks.into_iter().flatten() {
                        let m = q.get("method").and_then(Value::as_str).unwrap_or_default();
                        let answer = ctx
                            .request_client(m, q.get("params").cloned())
                            .await
                            .map_err(|e| ClientError::Rpc(HandlerError::from(e).into_wire(m)))?;
                        answers.insert(key.clone(), answer);
                    }
                    params["inputResponses"] = Value::Object(answers);
                    match raw.get("requestState") {
                        Some(s) => params["requestState"] = s.clone(),
                        None => {
                            if let Some(m) = params.as_object_mut() {
                                m.remove("requestState");
                            }
                        }
                    }
                }
                other => return other,
            }
        }
        Err(ClientError::Protocol(format!(
            "{method} still required input after {MAX_ROUNDS} rounds"
        )))
    }

    pub async fn close(&self) {
        let c = lock(&self.main.client).take();
        if let Some(c) = c {
            c.close().await;
        }
        for l in self.lanes.drain() {
            close_lane(l).await;
        }
    }
}

/// Close an extra connection (its process exits, for a stdio server).
async fn close_lane(lane: Arc<Lane>) {
    let c = lock(&lane.client).take();
    if let Some(c) = c {
        c.close().await;
    }
}

/// The upstream's log message, to the one call it can belong to.
fn log(lane: &Lane, params: &Value) {
    let ctx = match lock(&lane.callers).as_slice() {
        [one] => Some(one.ctx.clone()),
        _ => None,
    };
    let level = params
        .get("level")
        .and_then(Value::as_str)
        .and_then(LoggingLevel::parse);
    match (ctx, level) {
        (Some(ctx), Some(level)) => {
            let logger = params.get("logger").and_then(Value::as_str);
            let data = params.get("data").cloned().unwrap_or(Value::Null);
            ctx.log(level, logger, data);
        }
        _ => eprintln!("upstream {}", crate::terminal::log_line(params)),
    }
}

/// The upstream asks its client (us) for `method`: ask the one downstream caller waiting.
async fn ask_caller(lane: &Lane, method: &str, params: Value) -> Result<Value, ErrorObject> {
    let (ctx, pending) = {
        let callers = lock(&lane.callers);
        match callers.as_slice() {
            [one] => (one.ctx.clone(), one.pending.clone()),
            [] => {
                return Err(ErrorObject::new(
                    INTERNAL,
                    format!("{method} outside any call cannot be passed on"),
                ))
            }
            _ => {
                return Err(ErrorObject::new(
                    INTERNAL,
                    format!("{method} while several calls are running cannot be passed on"),
                ))
            }
        }
    };
    match ctx.request_client(method, Some(params)).await {
        Ok(v) => Ok(v),
        Err(PeerError::InputRequired(_)) => {
            lock(&pending).asked = true;
            Err(ErrorObject::new(
                INTERNAL,
                "asked the client; the call will be retried",
            ))
        }
        // A capability the caller did not declare (-32021, SEP-2575): the upstream hears
        // the refusal and decides (it may well finish without what it asked for).
        Err(PeerError::Unavailable(e)) => Err(e),
        Err(PeerError::Rpc(e)) => Err(e),
        Err(e) => Err(ErrorObject::new(INTERNAL, e.to_string())),
    }
}

/// An upstream result as this bridge's own: the era fields the engine stamps itself
/// (`resultType`, cache hints, the upstream's server info) are left to it.
fn plain(mut v: Value) -> Value {
    if let Some(m) = v.as_object_mut() {
        for k in ["resultType", "ttlMs", "cacheScope"] {
            m.remove(k);
        }
        if let Some(meta) = m.get_mut("_meta").and_then(Value::as_object_mut) {
            meta.remove("io.modelcontextprotocol/serverInfo");
            if meta.is_empty() {
                m.remove("_meta");
            }
        }
    }
    v
}

/// An upstream `input_required` result as this server's own round: the same requests under the
/// same keys, and the upstream's state (the engine seals it on the way out).
fn round(raw: &Value) -> InputRequired {
    let mut r = InputRequired::new();
    if let Some(m) = raw.get("inputRequests").and_then(Value::as_object) {
        r.input_requests = m.clone();
    }
    r.request_state = raw
        .get("requestState")
        .and_then(Value::as_str)
        .map(str::to_owned);
    r
}
