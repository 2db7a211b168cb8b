//! Sealed `requestState` (REQUIREMENTS MRTR-06, SEP-2322; seeds: request-state security).
//!
//! The `requestState` of an `input_required` result leaves the server, sits in the client's hands
//! and comes back as attacker-controlled input. It is therefore sealed with AES-256-GCM: the client
//! can neither read it nor alter it, and a state issued for one call cannot be replayed against
//! another.
//!
//! Token: `v1.<base64url(nonce ‖ ciphertext ‖ tag)>` (no padding), a random 96-bit nonce per seal,
//! the version prefix bound as associated data. The encrypted payload binds an expiry (default
//! 300 s, renewed every round because every round seals afresh), the method, the target (tool or
//! prompt name, or resource URI), a SHA-256 digest of the canonical arguments (object keys sorted
//! recursively), an optional audience, the id of the sealing key and the handler's own state.
//!
//! Keys live in a [`KeyRing`]: the first key seals, every key opens, so keys can be rotated
//! without breaking rounds in flight, and workers that share a ring accept each other's tokens.
//! Opening never panics on any input; every failure is one [`SealError`], which the server
//! answers as -32602 "Invalid or expired requestState".
//!
//! Sealing alone bounds *where* and *until when* a state is accepted, not *how often*: the nonce
//! of an opened state ([`Opened::nonce`]) is what [`super::replay`] claims to make each state
//! single use (MRTR-06).

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::fmt;
use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The token version prefix (also the associated data).
pub const TOKEN_PREFIX: &str = "v1.";
const AAD: &[u8] = b"v1";
/// Length of a seal's random nonce, which names one sealed state (see [`Opened::nonce`]).
pub const NONCE_LEN: usize = 12;
const TAG_LEN: usize = 16;
/// Default lifetime of a sealed state.
pub const DEFAULT_TTL: Duration = Duration::from_secs(300);
/// Most keys a ring may hold (opening tries each one).
pub const MAX_KEYS: usize = 16;

/// Why a key or ring could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The key text is not base64 of exactly 32 bytes.
    #[error("a request-state key must be 32 bytes, base64 or base64url encoded")]
    BadKey,
    /// The key id is empty or a ring holds the id twice.
    #[error("key ids must be non-empty and unique")]
    BadId,
    /// More than [`MAX_KEYS`] keys.
    #[error("a key ring holds at most {MAX_KEYS} keys")]
    TooMany,
    /// The operating system's random source failed.
    #[error("random source unavailable")]
    Random,
}

/// Why a token was refused (all answered as the same -32602 on the wire).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SealError {
    /// Not a `v1.` token, bad base64, too short, or an unreadable payload.
    #[error("malformed token")]
    Malformed,
    /// No key of the ring opens it (tampered, or sealed under an unknown key).
    #[error("token does not authenticate")]
    Unauthentic,
    /// Past its expiry.
    #[error("token expired")]
    Expired,
    /// Issued for another method, target, arguments or audience.
    #[error("token was issued for another {0}")]
    Mismatch(&'static str),
    /// Sealing failed (random source or encryption); never caused by peer input.
    #[error("sealing failed")]
    Seal,
}

/// One AES-256 key with an id (the id names it in configuration and logs).
#[derive(Clone)]
pub struct SealKey {
    id: String,
    cipher: Aes256Gcm,
}

impl fmt::Debug for SealKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print key material.
        f.debug_struct("SealKey")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl SealKey {
    /// A key from 32 raw bytes.
    ///
    /// # Errors
    /// [`KeyError::BadId`] for an empty id.
    pub fn new(id: impl Into<String>, bytes: [u8; 32]) -> Result<Self, KeyError> {
        let id = id.into();
        if id.is_empty() {
            return Err(KeyError::BadId);
        }
        let cipher = Aes256Gcm::new_from_slice(&bytes).map_err(|_| KeyError::BadKey)?;
        Ok(Self { id, cipher })
    }

    /// A key from its base64 or base64url text (padded or not), e.g. from an environment variable.
    ///
    /// # Errors
    /// [`KeyError::BadKey`] unless the text decodes to exactly 32 bytes.
    pub fn from_base64(id: impl Into<String>, text: &str) -> Result<Self, KeyError> {
        let text = text.trim();
        let bytes = [&URL_SAFE_NO_PAD, &URL_SAFE, &STANDARD_NO_PAD, &STANDARD]
            .iter()
            .find_map(|e| e.decode(text).ok())
            .ok_or(KeyError::BadKey)?;
        let arr: [u8; 32] = bytes.try_into().map_err(|_| KeyError::BadKey)?;
        Self::new(id, arr)
    }

    /// A fresh random key.
    ///
    /// # Errors
    /// [`KeyError::Random`] when the random source fails.
    pub fn generate(id: impl Into<String>) -> Result<Self, KeyError> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|_| KeyError::Random)?;
        Self::new(id, bytes)
    }

    /// The key id.
    pub fn id(&self) -> &str {
        &self.id
    }
}

/// The keys a server seals and opens with: the first seals, all open.
#[derive(Clone, Debug)]
pub struct KeyRing {
    keys: Vec<SealKey>,
}

impl KeyRing {
    /// A ring whose current (sealing) key is `current`.
    pub fn new(current: SealKey) -> Self {
        Self {
            keys: vec![current],
        }
    }

    /// A ring from `[ID:]BASE64` specs (the command-line and environment form of the keys), the
    /// first one current; an unnamed key is `k1`, `k2`, … by its place. `None` for no spec.
    /// Errors name the spec by its place and never echo it (a key is a secret).
    ///
    /// # Errors
    /// A key that is not 32 bytes of base64, a bad or duplicate id, more than [`MAX_KEYS`].
    pub fn from_specs<S: AsRef<str>>(specs: &[S]) -> Result<Option<Self>, String> {
        let key = |i: usize, spec: &str| {
            let (id, b64) = spec
                .split_once(':')
                .map_or((format!("k{}", i + 1), spec), |(id, k)| (id.to_owned(), k));
            SealKey::from_base64(id, b64).map_err(|e| format!("key #{}: {e}", i + 1))
        };
        let mut keys = specs.iter().enumerate().map(|(i, s)| key(i, s.as_ref()));
        let Some(current) = keys.next() else {
            return Ok(None);
        };
        let mut ring = Self::new(current?);
        for k in keys {
            ring = ring.with_previous(k?).map_err(|e| format!("keys: {e}"))?;
        }
        Ok(Some(ring))
    }

    /// Add an older key that still opens tokens (rotation).
    ///
    /// # Errors
    /// [`KeyError::BadId`] for a duplicate id, [`KeyError::TooMany`] past [`MAX_KEYS`].
    pub fn with_previous(mut self, key: SealKey) -> Result<Self, KeyError> {
        if self.keys.iter().any(|k| k.id == key.id) {
            return Err(KeyError::BadId);
        }
        if self.keys.len() >= MAX_KEYS {
            return Err(KeyError::TooMany);
        }
        self.keys.push(key);
        Ok(self)
    }

    /// The sealing key.
    pub fn current(&self) -> &SealKey {
        &self.keys[0]
    }

    /// Ids of every key, current first.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.keys.iter().map(|k| k.id.as_str())
    }

    /// The random key of this process, made once on first use (states then do not survive a
    /// restart and are not accepted by other processes).
    ///
    /// # Errors
    /// [`KeyError::Random`] when the random source fails.
    pub fn process_default() -> Result<Self, KeyError> {
        static RING: OnceLock<Result<KeyRing, KeyError>> = OnceLock::new();
        RING.get_or_init(|| SealKey::generate("process").map(KeyRing::new))
            .clone()
    }
}

/// What a sealed state is bound to.
#[derive(Debug, Clone, Copy)]
pub struct Claims<'a> {
    /// `tools/call`, `prompts/get` or `resources/read`.
    pub method: &'a str,
    /// Tool or prompt name, or resource URI.
    pub target: &'a str,
    /// The request's arguments (`{}` when absent).
    pub arguments: &'a Value,
    /// Optional audience (e.g. a deployment or principal).
    pub audience: Option<&'a str>,
}

#[derive(Serialize, Deserialize)]
struct Sealed {
    kid: String,
    exp: u64,
    m: String,
    t: String,
    d: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    aud: Option<String>,
    s: String,
}

/// A state that opened and verified against its claims.
#[derive(Clone, PartialEq, Eq)]
pub struct Opened {
    /// The handler's own state.
    pub state: String,
    /// The seal's random nonce. The tag authenticates it, so no one without a key can present
    /// another token under it: it names this one sealed state (the replay cache key, MRTR-06).
    pub nonce: [u8; NONCE_LEN],
    /// The instant the state stops opening.
    pub expires_at: SystemTime,
}

impl fmt::Debug for Opened {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The handler's state may hold answers the client gave; keep it out of logs.
        f.debug_struct("Opened")
            .field("nonce", &self.nonce)
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

/// Seals and opens request states with a key ring and a lifetime.
#[derive(Clone, Debug)]
pub struct Sealer {
    ring: KeyRing,
    ttl: Duration,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

impl Sealer {
    /// A sealer over `ring` whose tokens live `ttl`.
    pub fn new(ring: KeyRing, ttl: Duration) -> Self {
        Self { ring, ttl }
    }

    /// Seal `state` for the call described by `claims`.
    ///
    /// # Errors
    /// [`SealError::Seal`] when the random source or the cipher fails.
    pub fn seal(&self, claims: &Claims<'_>, state: &str) -> Result<String, SealError> {
        self.seal_at(now_ms(), claims, state)
    }

    /// Open `token` for the call described by `claims` and return the handler's state.
    #[cfg(test)]
    fn unseal(&self, token: &str, claims: &Claims<'_>) -> Result<String, SealError> {
        self.open(token, claims).map(|o| o.state)
    }

    /// Open `token` for the call described by `claims`: the handler's state, with the nonce and
    /// expiry that single use needs.
    ///
    /// # Errors
    /// See [`SealError`].
    pub fn open(&self, token: &str, claims: &Claims<'_>) -> Result<Opened, SealError> {
        self.open_at(now_ms(), token, claims)
    }

    pub(crate) fn seal_at(
        &self,
        now: u64,
        claims: &Claims<'_>,
        state: &str,
    ) -> Result<String, SealError> {
        let key = self.ring.current();
        let ttl = u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX);
        let payload = Sealed {
            kid: key.id.clone(),
            exp: now.saturating_add(ttl),
            m: claims.method.to_owned(),
            t: claims.target.to_owned(),
            d: arguments_digest(claims.arguments),
            aud: claims.audience.map(str::to_owned),
            s: state.to_owned(),
        };
        let plain = serde_json::to_vec(&payload).map_err(|_| SealError::Seal)?;
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce).map_err(|_| SealError::Seal)?;
        let ct = key
            .cipher
            .encrypt(
                Nonce::from_slice(&nonce),
                Payload {
                    msg: &plain,
                    aad: AAD,
                },
            )
            .map_err(|_| SealError::Seal)?;
        let mut raw = Vec::with_capacity(NONCE_LEN + ct.len());
        raw.extend_from_slice(&nonce);
        raw.extend_from_slice(&ct);
        Ok(format!("{TOKEN_PREFIX}{}", URL_SAFE_NO_PAD.encode(raw)))
    }

    #[cfg(test)]
    fn unseal_at(&self, now: u64, token: &str, claims: &Claims<'_>) -> Result<String, SealError> {
        self.open_at(now, token, claims).map(|o| o.state)
    }

    pub(crate) fn open_at(
        &self,
        now: u64,
        token: &str,
        claims: &Claims<'_>,
    ) -> Result<Opened, SealError> {
        let body = token
            .strip_prefix(TOKEN_PREFIX)
            .ok_or(SealError::Malformed)?;
        let raw = URL_SAFE_NO_PAD
            .decode(body)
            .map_err(|_| SealError::Malformed)?;
        if raw.len() < NONCE_LEN + TAG_LEN {
            return Err(SealError::Malformed);
        }
        let (nonce, ct) = raw.split_at(NONCE_LEN);
        let nonce_id: [u8; NONCE_LEN] = nonce.try_into().map_err(|_| SealError::Malformed)?;
        let (key, plain) = self
            .ring
            .keys
            .iter()
            .find_map(|k| {
                k.cipher
                    .decrypt(Nonce::from_slice(nonce), Payload { msg: ct, aad: AAD })
                    .ok()
                    .map(|p| (k, p))
            })
            .ok_or(SealError::Unauthentic)?;
        let sealed: Sealed = serde_json::from_slice(&plain).map_err(|_| SealError::Malformed)?;
        if sealed.kid != key.id {
            return Err(SealError::Unauthentic);
        }
        if now >= sealed.exp {
            return Err(SealError::Expired);
        }
        if sealed.m != claims.method {
            return Err(SealError::Mismatch("method"));
        }
        if sealed.t != claims.target {
            return Err(SealError::Mismatch("target"));
        }
        if sealed.d != arguments_digest(claims.arguments) {
            return Err(SealError::Mismatch("arguments"));
        }
        if sealed.aud.as_deref() != claims.audience {
            return Err(SealError::Mismatch("audience"));
        }
        Ok(Opened {
            state: sealed.s,
            nonce: nonce_id,
            expires_at: UNIX_EPOCH + Duration::from_millis(sealed.exp),
        })
    }
}

/// Hex SHA-256 of the canonical JSON of `args` (object keys sorted at every level), so equal JSON
/// digests equally whatever order its keys arrived in.
pub fn arguments_digest(args: &Value) -> String {
    let mut h = Sha256::new();
    canonical(args, &mut h);
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

fn canonical(v: &Value, h: &mut Sha256) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            h.update(b"{");
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    h.update(b",");
                }
                h.update(Value::String((*k).clone()).to_string().as_bytes());
                h.update(b":");
                if let Some(x) = m.get(k.as_str()) {
                    canonical(x, h);
                }
            }
            h.update(b"}");
        }
        Value::Array(a) => {
            h.update(b"[");
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    h.update(b",");
                }
                canonical(x, h);
            }
            h.update(b"]");
        }
        other => h.update(other.to_string().as_bytes()),
    }
}

#[cfg(test)]
#[path = "sealing_tests.rs"]
mod tests;
