//! Legacy sessions shared between workers (REQUIREMENTS LHTTP-02, LHTTP-09, LC-01) through a
//! [`SessionStore`](crate::backplane::SessionStore), without sticky routing: a request naming a
//! session this worker does not hold, but the store does, makes a local replica (a core
//! `Session` initialized from the record) and is served. State a request changes (log level,
//! subscriptions, the handshake flag) is written back before its answer is released, so the
//! client's next request, on whichever worker, sees it. A session missing from the store has
//! ended: its replica is dropped and its streams close. With the in-process default store none
//! of this runs.

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

fn ttl_ms(shared: &Shared) -> u64 {
    shared
        .opts
        .session_idle_timeout
        .as_millis()
        .try_into()
        .unwrap_or(u64::MAX)
}

/// The shareable state of `entry`'s session as this worker sees it now.
pub(crate) fn snapshot(entry: &Entry) -> SessionRecord {
    let s = &entry.session;
    let base = lock(&entry.baseline).clone();
    let st = lock(&s.legacy).clone();
    SessionRecord {
        protocol_version: st.protocol_version,
        client_info: st.client_info,
        client_capabilities: st.client_capabilities,
        initialized: s.is_handshake_complete(),
        log_level: st.log_level,
        subscriptions: s.subscription_list(),
        ..base
    }
}

/// Bring `entry`'s session to `rec` (another worker may have changed it).
fn apply(entry: &Entry, rec: SessionRecord) {
    let s = &entry.session;
    {
        let mut st = lock(&s.legacy);
        st.protocol_version.clone_from(&rec.protocol_version);
        st.client_info.clone_from(&rec.client_info);
        st.client_capabilities.clone_from(&rec.client_capabilities);
        st.log_level = rec.log_level;
    }
    s.replace_subscriptions(&rec.subscriptions);
    if rec.initialized {
        s.mark_handshake_complete();
    }
    *lock(&entry.baseline) = rec;
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
    if let Some(e) = shared.sessions.get(sid) {
        apply(&e, rec);
        return Ok(Some(e));
    }
    // AUTH-06: a session is bound to the principal that created it, on every worker.
    if rec.owner != principal.map(crate::auth::Principal::binding_key) {
        tracing::warn!("a shared legacy session id was presented by another principal");
        return Ok(None);
    }
    let (standalone, sink) = sessions::standalone(shared.opts.replay_buffer);
    let session = shared.server.new_session(SessionKind::HttpLegacy, sink);
    session.mark_initialized();
    session.lock_era(Era::Legacy);
    let entry = Entry::new(Arc::from(sid), session, standalone, shared.now_ms());
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
    let store = &shared.opts.legacy_stores.sessions;
    match store
        .update(Arc::from(entry.sid()), changes, ttl_ms(shared))
        .await
    {
        Ok(true) => *lock(&entry.baseline) = now,
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
    let weak = Arc::downgrade(shared);
    let every = shared.opts.legacy_stores.sweep;
    let stop = shared.stopping.clone();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = tokio::time::sleep(every) => {}
                () = stop.cancelled() => return,
            }
            let Some(shared) = weak.upgrade() else {
                return;
            };
            let sids = shared.sessions.sids();
            let store = shared.opts.legacy_stores.sessions.clone();
            let Ok(alive) = store.existing(sids.clone()).await else {
                continue;
            };
            for (sid, alive) in sids.iter().zip(alive) {
                if !alive {
                    if let Some(e) = shared.sessions.remove(sid) {
                        tracing::debug!(session = %sid, "a shared legacy session ended elsewhere");
                        e.close();
                    }
                }
            }
        }
    });
}
