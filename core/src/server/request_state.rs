//! How `requestState` is protected on the modern wire (MRTR-06, SEP-2322): the options (JSON
//! shape included, `keys` for rotation without downtime), and the sealer and replay guard they
//! ask for, a Redis backplane's shared replay guard included.

use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;

use crate::security::replay::{self, MemoryReplayGuard, ReplayGuard};
use crate::security::sealing::{self, KeyRing, Sealer};

/// How `requestState` is protected on the modern wire.
///
/// JSON shape (see [`crate::options`]): `seal`, `ttlMs`, `audience`, `singleUse`,
/// `replayCacheCapacity`, and `keys`: `[{"id": "k2", "key": "<base64 of 32 bytes>"}, …]`, the
/// first sealing and opening, the rest only opening (rotation without downtime). Keys are never
/// serialized back out; a patch without `keys` keeps the ring, as it keeps a shared replay store
/// (which has no JSON form).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
#[non_exhaustive]
pub struct RequestStateOptions {
    /// Seal states (default `true`). When `false` the state crosses the wire exactly as the
    /// handler wrote it and the handler must treat the echo as untrusted input.
    pub seal: bool,
    /// Keys shared by every worker of a deployment (current key first). `None`: a random key of
    /// this process, so states do not survive a restart; refused with a Redis backplane.
    #[serde(skip_serializing, deserialize_with = "key_ring")]
    pub keys: Option<KeyRing>,
    /// Lifetime of a sealed state (default 300 s; renewed every round).
    #[serde(rename = "ttlMs", with = "crate::options::millis")]
    pub ttl: Duration,
    /// Optional audience bound into every state (e.g. a deployment name).
    pub audience: Option<String>,
    /// Accept each sealed state once (default `true`; MRTR-06 one-time semantics): a state
    /// presented again is refused like a tampered one, so a client re-sending a lost retry must
    /// start the request over. Needs `seal` (an unsealed state has no nonce to claim).
    pub single_use: bool,
    /// Most unexpired states the in-process replay cache remembers (default 100 000, about
    /// 5 MB). When full, retries carrying a new state are refused until entries expire; size it
    /// above the peak of retries per second × `ttl`. Unused when `replay_guard` is set.
    pub replay_cache_capacity: usize,
    /// A replay store shared by every worker (e.g. Redis); `None`: the in-process cache, so single
    /// use holds per process only.
    #[serde(skip)]
    pub replay_guard: Option<Arc<dyn ReplayGuard>>,
}

impl crate::options::JsonOptions for RequestStateOptions {
    fn check(&self) -> Result<(), crate::options::OptionsError> {
        let range = |m: &str| Err(crate::options::OptionsError::Range(m.into()));
        if self.ttl.is_zero() {
            return range("requestState ttlMs must be positive");
        }
        if self.replay_cache_capacity == 0 {
            return range("requestState replayCacheCapacity must be positive");
        }
        Ok(())
    }
    fn keep_unrepresented(&mut self, from: &Self) {
        if self.keys.is_none() {
            self.keys = from.keys.clone();
        }
        self.replay_guard = from.replay_guard.clone();
    }
}

/// One entry of `requestState.keys`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct KeySpec {
    id: String,
    key: String,
}

/// `keys`: a non-empty list, current key first. Errors name the entry, never the key text.
fn key_ring<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<KeyRing>, D::Error> {
    use serde::de::Error;
    let Some(specs) = Option::<Vec<KeySpec>>::deserialize(d)? else {
        return Ok(None);
    };
    let mut keys = specs.into_iter().enumerate().map(|(i, k)| {
        sealing::SealKey::from_base64(k.id, &k.key)
            .map_err(|e| D::Error::custom(format!("requestState keys[{i}]: {e}")))
    });
    let Some(current) = keys.next() else {
        return Err(D::Error::custom(
            "requestState keys must hold at least one key (the current one first)",
        ));
    };
    let mut ring = KeyRing::new(current?);
    for k in keys {
        ring = ring
            .with_previous(k?)
            .map_err(|e| D::Error::custom(format!("requestState keys: {e}")))?;
    }
    Ok(Some(ring))
}

impl Default for RequestStateOptions {
    fn default() -> Self {
        Self {
            seal: true,
            keys: None,
            ttl: sealing::DEFAULT_TTL,
            audience: None,
            single_use: true,
            replay_cache_capacity: replay::DEFAULT_CAPACITY,
            replay_guard: None,
        }
    }
}

/// The sealer the options ask for (`None` when sealing is off).
///
/// With a Redis backplane the workers must share a configured key ring: a key generated into
/// Redis would let anyone who can read Redis forge states (MRTR-06), and a random key per
/// process would make every round crossing workers fail, so that combination is refused here.
pub(crate) fn build_sealer(
    o: &RequestStateOptions,
    backplane: &crate::backplane::Backplane,
) -> Result<Option<Sealer>, String> {
    if !o.seal {
        return Ok(None);
    }
    let ring = match &o.keys {
        Some(r) => r.clone(),
        None if backplane.is_redis() => return Err(MISSING_SHARED_KEYS.into()),
        None => KeyRing::process_default().map_err(|e| e.to_string())?,
    };
    Ok(Some(Sealer::new(ring, o.ttl)))
}

/// Why a Redis-backed server without request-state keys is refused (names both doors' option).
pub(crate) const MISSING_SHARED_KEYS: &str = "a Redis backplane needs request-state keys shared \
by every worker: set ServerBuilder::request_state_keys (JSON requestState.keys), or turn \
sealing off (seal_request_state(false), JSON requestState.seal = false)";

/// The replay guard the options ask for (`None` when states are not sealed or not single use).
pub(crate) fn build_replay_guard(
    o: &RequestStateOptions,
) -> Result<Option<Arc<dyn ReplayGuard>>, String> {
    if !o.seal || !o.single_use {
        return Ok(None);
    }
    if let Some(g) = &o.replay_guard {
        return Ok(Some(g.clone()));
    }
    if o.replay_cache_capacity == 0 {
        return Err("request_state.replay_cache_capacity must be positive".into());
    }
    Ok(Some(Arc::new(MemoryReplayGuard::new(
        o.replay_cache_capacity,
    ))))
}
