//! Legacy sessions shared between workers (REQUIREMENTS LHTTP-02, LHTTP-09, LC-01) through a
//! [`SessionStore`](crate::backplane::SessionStore), without sticky routing: a request naming a
//! session this worker does not hold, but the store does, makes a local replica (a core
//! `Session` initialized from the record) and is served. State a request changes (log level,
//! subscriptions, the handshake flag) is written back before its answer is released, so the
//! client's next request, on whichever worker, sees it; a refresh from the store keeps what a
//! request here changed but has not written back yet, and a resource update is checked against
//! the stored subscriptions before a replica with a GET stream drops it. A session missing from
//! the store has ended: its replica is dropped and its streams close. With the in-process
//! default store none of this runs.

use http::StatusCode;
use std::sync::Arc;

use super::body::{self, Resp};
use super::server::Shared;
use super::sessions::{self, Entry};
use crate::backplane::{SessionRecord, StoreUnavailable};
use crate::jsonrpc::Id;
use crate::protocol::Era;
use crate::server::{lock, SessionKind};

/// 503 + `Retry-After` (and a JSON-RPC error naming no internals): the store cannot answer,
/// and serving from process-local state would split the session.
pub(crate) fn unavailable(id: Option<&Id>) -> Resp {
    body::retry_after(body::rpc_error(
        StatusCode::SERVICE_UNAVAILABLE,
        id,
        &crate::backplane::unavailable(),
    ))
}

pub(crate) fn is_shared(shared: &Shared) -> bool {
    shared.opts.legacy_stores.sessions.is_shared()
}

pub(crate) fn ttl_ms(shared: &Shared) -> u64 {
    shared
        .opts
        .session_idle_timeout
        .as_millis()
        .try_into()
        .unwrap_or(u64::MAX)
}

/// What the shared store keeps of one session's routed messages (LHTTP-08).
pub(crate) fn route_limits(shared: &Shared) -> crate::backplane::RouteLimits {
    crate::backplane::RouteLimits {
        ttl_ms: ttl_ms(shared),
        max_bytes: u64::try_from(shared.opts.max_routed_bytes).unwrap_or(u64::MAX),
    }
}

/// The shareable state of `entry`'s session as this worker sees it now.
pub(crate) fn snapshot(entry: &Entry) -> SessionRecord {
    let base = lock(&entry.baseline).clone();
    snapshot_with(entry, &base)
}

/// [`snapshot`] with the baseline already in hand (its lock held by the caller).
fn snapshot_with(entry: &Entry, base: &SessionRecord) -> SessionRecord {
    let s = &entry.session;
    let base = base.clone();
    let st = lock(&s.legacy).clone();
    SessionRecord {
        protocol_version: st.protocol_version,
        client_info: st
            .client_info
            .as_deref()
            .and_then(|text| serde_json::from_str(text).ok())
            .unwrap_or_default(),
        client_capabilities: st.client_capabilities,
        initialized: s.is_handshake_complete(),
        log_level: st.log_level,
        subscriptions: s.subscription_list(),
        ..base
    }
}

/// Bring `entry`'s session to `rec` (another worker may have changed it), keeping what a
/// request on this worker changed but has not written back yet: a field that differs from the
/// baseline is such a change, so `rec` does not overwrite it (and the next `sync` still finds it,
/// as `rec` becomes the baseline). Subscriptions merge per URI: this worker's unsynced
/// subscribes and unsubscribes applied to the stored list.
fn apply(entry: &Entry, rec: SessionRecord) {
    let s = &entry.session;
    let mut base = lock(&entry.baseline);
    let local = snapshot_with(entry, &base);
    let unsynced: Vec<&str> = local.changes(&base).into_iter().map(|(n, _)| n).collect();
    let keep = |name: &str| unsynced.contains(&name);
    {
        let mut st = lock(&s.legacy);
        if !keep("v") {
            st.protocol_version.clone_from(&rec.protocol_version);
        }
        if !keep("info") {
            st.client_info =
                (!rec.client_info.is_null()).then(|| rec.client_info.to_string().into_boxed_str());
        }
        if !keep("caps") {
            st.client_capabilities.clone_from(&rec.client_capabilities);
        }
        if !keep("level") {
            st.log_level = rec.log_level;
        }
    }
    let subs = merge_subscriptions(
        &base.subscriptions,
        &local.subscriptions,
        &rec.subscriptions,
    );
    s.replace_subscriptions(&subs);
    if rec.initialized {
        s.mark_handshake_complete();
    }
    *base = rec;
}

/// `stored` with the changes from `base` to `local` applied: URIs subscribed here since the
/// baseline added, URIs unsubscribed here removed.
fn merge_subscriptions(base: &[String], local: &[String], stored: &[String]) -> Vec<String> {
    let mut out: Vec<String> = stored
        .iter()
        .filter(|u| local.contains(u) || !base.contains(u))
        .cloned()
        .collect();
    for u in local {
        if !base.contains(u) && !out.contains(u) {
            out.push(u.clone());
        }
    }
    out.sort();
    out
}

/// Mirror `entry`'s POST streams to the shared event store, when there is one.
pub(crate) fn share_events(shared: &Shared, entry: &Entry) {
    let store = &shared.opts.legacy_stores.events;
    if store.is_shared() {
        let limits = crate::backplane::EventLimits {
            cap: shared.opts.replay_buffer,
            ttl_ms: ttl_ms(shared),
        };
        entry.share_events(store.clone(), limits);
        super::relay::enable(shared, entry);
    }
}

/// Record a session `initialize` just created on this worker. `Ok(false)`: the cap on
/// sessions, counted across workers, is reached.
pub(crate) async fn create(
    shared: &Shared,
    entry: &Entry,
    owner: Option<String>,
) -> Result<bool, StoreUnavailable> {
    let mut rec = snapshot(entry);
    rec.owner = owner;
    rec.created_ms = crate::backplane::sessions::unix_ms();
    let store = &shared.opts.legacy_stores.sessions;
    let sid: Arc<str> = Arc::from(entry.sid());
    let made = store
        .create(sid, rec.clone(), shared.opts.max_sessions, ttl_ms(shared))
        .await?;
    *lock(&entry.baseline) = rec;
    Ok(made == crate::backplane::sessions::Created::Yes)
}

/// The session `sid` for a request presented by `principal`: the local entry refreshed from
/// the store, or a new replica. `Ok(None)`: unknown everywhere (or ended), 404.
pub(crate) async fn resolve(
    shared: &Arc<Shared>,
    sid: &str,
    principal: Option<&crate::auth::Principal>,
) -> Result<Option<Arc<Entry>>, StoreUnavailable> {
    let store = &shared.opts.legacy_stores.sessions;
    let Some(rec) = store.load(Arc::from(sid), ttl_ms(shared)).await? else {
        if let Some(e) = shared.sessions.remove(sid) {
            e.close();
        }
        return Ok(None);
    };
    // AUTH-06: a session is bound to the principal that created it, on every worker and on
    // every request: a local replica existing already proves nothing about this request (it
    // may have passed the transport's gate before the replica was made).
    if rec.owner != principal.map(crate::auth::Principal::binding_key) {
        tracing::warn!("a shared legacy session id was presented by another principal");
        return Ok(None);
    }
    if let Some(e) = shared.sessions.get(sid) {
        apply(&e, rec);
        return Ok(Some(e));
    }
    let (standalone, sink) = sessions::standalone(shared.opts.replay_buffer);
    let session = shared.server.new_session(SessionKind::HttpLegacy, sink);
    // The owner's principal (this request's, whose binding key the record names), so the
    // replica's handlers see it (`RequestContext::principal`) and its tasks are the owner's.
    session.bind_principal(principal.map(|p| Arc::new(p.clone())));
    session.mark_initialized();
    session.lock_era(Era::Legacy);
    let entry = Entry::new(Arc::from(sid), session, standalone, shared.now_ms());
    share_events(shared, &entry);
    apply(&entry, rec);
    if !shared
        .sessions
        .insert(entry.clone(), shared.opts.max_sessions)
    {
        // Another request made the replica first, or this worker is full.
        return Ok(shared.sessions.get(sid));
    }
    shared.ensure_reaper();
    Ok(Some(entry))
}

/// Write back what this worker changed in the session since it last read the record. A
/// session that ended meanwhile loses its replica.
pub(crate) async fn sync(shared: &Shared, entry: &Entry) {
    if !is_shared(shared) {
        return;
    }
    let now = snapshot(entry);
    let changes = now.changes(&lock(&entry.baseline));
    if changes.is_empty() {
        return;
    }
    let written = changes.clone();
    let store = &shared.opts.legacy_stores.sessions;
    match store
        .update(Arc::from(entry.sid()), changes, ttl_ms(shared))
        .await
    {
        // Only the written fields: a record another request applied meanwhile stays the
        // baseline of the others.
        Ok(true) => {
            let mut base = lock(&entry.baseline);
            let fields = base.fields();
            let merged = fields.iter().map(|(n, v)| {
                let new = written.iter().find(|(w, _)| w == n).map(|(_, v)| v);
                (*n, new.unwrap_or(v).as_str())
            });
            *base = SessionRecord::from_fields(merged);
        }
        Ok(false) => {
            if let Some(e) = shared.sessions.remove(entry.sid()) {
                e.close();
            }
        }
        // Logged by the store; the next request on any worker reads the record again.
        Err(StoreUnavailable) => {}
    }
}

/// End `sid` for every worker.
pub(crate) async fn delete(shared: &Shared, sid: &str) -> Result<(), StoreUnavailable> {
    if !is_shared(shared) {
        return Ok(());
    }
    shared
        .opts
        .legacy_stores
        .sessions
        .delete(Arc::from(sid))
        .await
}

/// Drop replicas of sessions that ended elsewhere (DELETE on another worker, or expiry), so
/// their streams close here too; runs every [`super::LegacyStores::sweep`].
pub(crate) fn spawn_sweeper(shared: &Arc<Shared>) {
    watch_updates(shared);
    let every = shared.opts.legacy_stores.sweep;
    sessions::spawn_every(shared, every, |shared| async move {
        let sids = shared.sessions.sids();
        let store = shared.opts.legacy_stores.sessions.clone();
        let Ok(alive) = store.existing(sids.clone()).await else {
            return;
        };
        for (sid, alive) in sids.iter().zip(alive) {
            if !alive {
                if let Some(e) = shared.sessions.remove(sid) {
                    tracing::debug!(session = %sid, "a shared legacy session ended elsewhere");
                    e.close();
                }
            }
        }
    });
}

/// Resource updates for replicas whose subscription list may be stale (SUB-07 across
/// workers, LHTTP-02): a client may subscribe on one worker while its GET stream is held by
/// another, whose replica read the record before. Core delivers an update to the sessions
/// subscribed locally; this sink re-reads the record of each other replica with a GET stream
/// attached here and delivers the update when the stored list names the URI.
struct UpdateWatch {
    shared: std::sync::Weak<Shared>,
    runtime: tokio::runtime::Handle,
}

impl crate::server::ChangeSink for UpdateWatch {
    fn on_change(&self, change: crate::server::ServerChange<'_>) -> usize {
        let crate::server::ServerChange::ResourceUpdated(uri) = change else {
            return 0;
        };
        let Some(shared) = self.shared.upgrade() else {
            return 0;
        };
        let stale: Vec<Arc<Entry>> = shared
            .sessions
            .sids()
            .iter()
            .filter_map(|sid| shared.sessions.get(sid))
            .filter(|e| !e.session.is_subscribed(uri) && e.standalone().has_live())
            .collect();
        for entry in stale {
            let (shared, uri) = (shared.clone(), uri.to_owned());
            self.runtime.spawn(async move {
                let store = &shared.opts.legacy_stores.sessions;
                // Unreachable store: logged by the store; the update is lost for this stream
                // as for a stream whose queue is full.
                let Ok(Some(rec)) = store.load(Arc::from(entry.sid()), ttl_ms(&shared)).await
                else {
                    return;
                };
                apply(&entry, rec);
                if entry.session.is_subscribed(&uri) {
                    entry.session.notify_resource_updated(&uri);
                }
            });
        }
        // Delivered later, if at all: not counted as told.
        0
    }
}

/// Register [`UpdateWatch`] for as long as the service runs.
fn watch_updates(shared: &Arc<Shared>) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let watch: Arc<dyn crate::server::ChangeSink> = Arc::new(UpdateWatch {
        shared: Arc::downgrade(shared),
        runtime,
    });
    shared.server.add_change_sink(Arc::downgrade(&watch));
    let stop = shared.stopping.clone();
    // The server holds its sinks weakly: this task keeps the watch until the service stops.
    tokio::spawn(async move {
        stop.cancelled().await;
        drop(watch);
    });
}

/// Resume stream `stream` of `entry`'s session after `after` from the shared event store
/// (LHTTP-04 on a worker other than the one running the request): the stored events, then
/// new ones as they are stored, until the stream finishes or the client goes. `None`: the
/// store does not know the stream (the caller answers as for an unknown stream).
pub(crate) async fn resume_shared(
    shared: &Arc<Shared>,
    entry: &Entry,
    stream: u64,
    after: u64,
) -> Option<Resp> {
    let store = shared.opts.legacy_stores.events.clone();
    if !store.is_shared() {
        return None;
    }
    let key = crate::backplane::StreamKey {
        session: Arc::from(entry.sid()),
        stream,
    };
    let first = match store.replay(key.clone(), after).await {
        Ok(r) if r.known => r,
        Ok(_) => return None,
        Err(StoreUnavailable) => return Some(unavailable(None)),
    };
    let (tx, rx) = tokio::sync::mpsc::channel(shared.opts.replay_buffer + 8);
    let every = shared.opts.legacy_stores.poll;
    let stop = shared.stopping.clone();
    let idle = shared.opts.session_idle_timeout;
    tokio::spawn(async move {
        let mut last = after;
        let mut batch = first;
        let deadline = tokio::time::Instant::now() + idle;
        loop {
            for (seq, ev) in batch.events {
                if tx.send(ev).await.is_err() {
                    return;
                }
                last = seq;
            }
            if batch.finished || tokio::time::Instant::now() > deadline {
                return;
            }
            tokio::select! {
                () = tokio::time::sleep(every) => {}
                () = tx.closed() => return,
                () = stop.cancelled() => return,
            }
            batch = match store.replay(key.clone(), last).await {
                Ok(r) => r,
                // The client resumes again later; logged by the store.
                Err(StoreUnavailable) => return,
            };
        }
    });
    Some(body::sse(rx))
}

/// Route a client's response that no request on this worker waits for to the worker that sent
/// the request (LHTTP-08 across workers): the one whose claim `q:<id>` the shared store holds.
/// An id no worker claimed (unknown, finished, or forged) is ignored, as unknown ids are on
/// one worker, and never stored.
pub(crate) async fn route_response(
    shared: &Shared,
    entry: &Entry,
    id: &Id,
    outcome: Result<serde_json::Value, crate::error::ErrorObject>,
) -> Result<(), StoreUnavailable> {
    let (Id::Num(n), Some(&own)) = (id, entry.tag.get()) else {
        return Ok(());
    };
    // Ids carry the asking worker's tag (`Entry::share_events`): one below every worker's
    // range, or in this worker's own, was sent by nobody else.
    let tag = u64::try_from(*n).unwrap_or(0) >> 20;
    if !is_shared(shared) || tag == 0 || tag == own {
        tracing::debug!(%id, "ignoring a response to an unknown or finished request");
        return Ok(());
    }
    let msg = match outcome {
        Ok(v) => crate::jsonrpc::encode_result(id, &v),
        Err(e) => crate::jsonrpc::encode_error(Some(id), &e),
    };
    let msg = String::from_utf8_lossy(&msg).into_owned();
    let store = &shared.opts.legacy_stores.sessions;
    let field = super::relay::answer_field(id);
    let sid = Arc::from(entry.sid());
    if !store
        .route_to(sid, field, own, msg, route_limits(shared))
        .await?
    {
        tracing::debug!(%id, "ignoring a response to a request no worker waits for");
    }
    Ok(())
}

/// Deliver what other workers routed to this worker's replicas (responses to waiting handlers,
/// cancels, standalone-stream frames; see [`super::relay`]), every
/// [`super::LegacyStores::poll`], for replicas that may expect some.
pub(crate) fn spawn_router(shared: &Arc<Shared>) {
    let every = shared.opts.legacy_stores.poll;
    sessions::spawn_every(shared, every, |shared| async move {
        for sid in shared.sessions.sids() {
            let Some(e) = shared.sessions.get(&sid) else {
                continue;
            };
            let Some(tag) = e.tag.get().copied() else {
                continue;
            };
            if !super::relay::expects(&shared, &e).await {
                continue;
            }
            let store = &shared.opts.legacy_stores.sessions;
            let Ok(msgs) = store.take_routed(sid.clone(), tag).await else {
                continue;
            };
            for m in msgs {
                super::relay::deliver(&e, &m);
            }
        }
    });
}

#[cfg(test)]
mod owner_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::{NullOutbound, Outbound};
    use crate::LoggingLevel;
    use serde_json::json;

    fn replica() -> Arc<Entry> {
        let server = crate::Server::builder("t", "1").build().expect("server");
        let sink: Arc<dyn Outbound> = Arc::new(NullOutbound);
        let session = server.new_session(SessionKind::HttpLegacy, sink);
        let (standalone, _) = sessions::standalone(4);
        Entry::new(Arc::from("s"), session, standalone, 0)
    }

    fn record(subs: &[&str]) -> SessionRecord {
        SessionRecord {
            protocol_version: Some("2025-11-25".into()),
            client_capabilities: json!({}),
            initialized: true,
            subscriptions: subs.iter().map(|u| (*u).to_owned()).collect(),
            ..SessionRecord::default()
        }
    }

    /// A refresh from the store while a request on this worker changed the level and the
    /// subscriptions but has not synced keeps those changes, takes the other worker's, and the
    /// next sync still writes ours (LHTTP-02).
    #[test]
    fn lhttp02_apply_keeps_unsynced_local_changes() {
        let e = replica();
        apply(&e, record(&["a", "x"]));
        lock(&e.session.legacy).log_level = Some(LoggingLevel::Error);
        e.session.subscribe("b");
        e.session.unsubscribe("a");
        // Meanwhile another worker declared nothing new but subscribed to c and dropped x.
        let mut other = record(&["a", "c"]);
        other.client_capabilities = json!({"roots": {}});
        apply(&e, other.clone());
        assert_eq!(e.session.log_level(), Some(LoggingLevel::Error));
        assert_eq!(e.session.subscription_list(), ["b", "c"]);
        assert_eq!(
            lock(&e.session.legacy).client_capabilities,
            json!({"roots": {}})
        );
        let now = snapshot(&e);
        let changed: Vec<&str> = now.changes(&other).into_iter().map(|(n, _)| n).collect();
        assert_eq!(changed, ["level", "subs"]);
        // Once written back, a refresh from the store changes nothing.
        apply(&e, now.clone());
        assert!(snapshot(&e).changes(&now).is_empty());
    }

    /// Without local changes a refresh takes the stored record as it is.
    #[test]
    fn lhttp02_apply_takes_the_store_when_nothing_is_pending() {
        let e = replica();
        apply(&e, record(&["a"]));
        let mut other = record(&[]);
        other.log_level = Some(LoggingLevel::Debug);
        apply(&e, other.clone());
        assert_eq!(e.session.log_level(), Some(LoggingLevel::Debug));
        assert!(e.session.subscription_list().is_empty());
        assert!(snapshot(&e).changes(&other).is_empty());
    }
}
