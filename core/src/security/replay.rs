//! Single use of sealed `requestState` (REQUIREMENTS MRTR-06: "One-time semantics must be
//! enforced server-side"; SEP-2322).
//!
//! Sealing binds a state to its call, audience and expiry, but the same token could still be
//! presented again and again until it expires. After a state has opened and verified (never
//! before, so forged or mismatched tokens cannot occupy the cache), the server claims the seal's
//! nonce in a [`ReplayGuard`]; a nonce claimed before is refused with the same -32602 "Invalid
//! or expired requestState" as a tampered state.
//!
//! Consequence for clients: a retry that carried a state consumes it, whatever happens next. A
//! client whose retry was lost on the network and that re-sends the very same retry is refused;
//! it must start the request again without `requestState`/`inputResponses`. A retry answered by
//! another `input_required` carries a freshly sealed state (new nonce), so multi-round flows are
//! unaffected.
//!
//! [`MemoryReplayGuard`] is the in-process default: single use holds within one server process.
//! Workers behind a load balancer that share a key ring must share a store as well (for example
//! Redis `SET nonce 1 NX PXAT expires_at`), plugged in through [`ReplayGuard`].

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};
use std::fmt;
use std::sync::{Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use super::sealing::NONCE_LEN;
use crate::future::BoxFuture;

/// Default number of states the in-process cache remembers at once (about 5 MB when full).
pub const DEFAULT_CAPACITY: usize = 100_000;

/// The outcome of claiming a state's nonce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Claim {
    /// First presentation: the state may be used, and is now consumed.
    First,
    /// Claimed before: a replay.
    Replayed,
    /// The state's expiry has already passed by the store's clock.
    Expired,
    /// The store cannot record the claim (full, or a shared store unreachable). The engine fails
    /// closed: the state is refused but not consumed, so it may be presented again later.
    Unavailable,
    /// A shared store is unreachable right now: the state is refused but not consumed, and the
    /// peer is told to retry later (HTTP 503 with `Retry-After`) rather than that the state is
    /// bad.
    StoreUnreachable,
}

/// Remembers which sealed states were used, until each one expires.
///
/// Asynchronous because a store shared by several workers (Redis, a database) is network I/O:
/// a synchronous seam would make such an implementation block a runtime thread on every retry.
/// The in-process cache answers with a ready future. Implementations bound their own I/O (answer
/// [`Claim::Unavailable`] on timeout or error) and log their own failures; the engine logs each
/// refusal at debug level only, because clients drive them.
pub trait ReplayGuard: Send + Sync + fmt::Debug {
    /// Atomically record `nonce` until `expires_at`. [`Claim::First`] only when no earlier claim
    /// of `nonce` is remembered; an entry may be forgotten once `expires_at` has passed (the
    /// state then no longer opens anyway).
    fn claim(&self, nonce: [u8; NONCE_LEN], expires_at: SystemTime) -> BoxFuture<Claim>;
}

/// The in-process [`ReplayGuard`]: at most `capacity` unexpired states, each forgotten at its
/// expiry.
///
/// When every slot holds an unexpired state, new claims are refused ([`Claim::Unavailable`])
/// rather than evicting a live entry. Evicting would make single use hold only "until N other
/// states were claimed", which a client replaying its own state can arrange by itself; refusing
/// instead keeps the guarantee and bounds the cost: only retries carrying a state are refused,
/// only verified states (each a completed round) occupy slots, every slot frees itself at its
/// state's expiry, and a warning tells the operator to raise the capacity.
pub struct MemoryReplayGuard {
    capacity: usize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    seen: HashSet<[u8; NONCE_LEN]>,
    /// Min-heap by expiry over exactly the entries of `seen` (entries leave only by expiring).
    by_expiry: BinaryHeap<Reverse<(u64, [u8; NONCE_LEN])>>,
    /// The "full" warning was given and capacity has not freed up since.
    warned_full: bool,
}

impl fmt::Debug for MemoryReplayGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryReplayGuard")
            .field("capacity", &self.capacity)
            .field("len", &self.len())
            .finish()
    }
}

fn millis(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

impl MemoryReplayGuard {
    /// A cache of at most `capacity` states (a capacity of 0 is raised to 1).
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            inner: Mutex::new(Inner::default()),
        }
    }

    /// The bound on remembered states.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// States remembered now (expired ones are dropped on the next claim).
    pub fn len(&self) -> usize {
        self.lock().seen.len()
    }

    /// True when nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic elsewhere cannot leave the two collections disagreeing in a way that matters
        // here (every mutation below is complete before the guard drops), so keep serving.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn claim_at(&self, now: u64, nonce: [u8; NONCE_LEN], expires: u64) -> Claim {
        let mut g = self.lock();
        // Expired entries go first: their states no longer open, so they protect nothing.
        while let Some(Reverse((exp, old))) = g.by_expiry.peek().copied() {
            if exp > now {
                break;
            }
            g.by_expiry.pop();
            g.seen.remove(&old);
        }
        if g.seen.contains(&nonce) {
            return Claim::Replayed;
        }
        if expires <= now {
            return Claim::Expired;
        }
        if g.seen.len() >= self.capacity {
            if !g.warned_full {
                g.warned_full = true;
                tracing::warn!(
                    capacity = self.capacity,
                    "requestState replay cache is full of unexpired states; refusing retries \
                     until some expire (raise RequestStateOptions::replay_cache_capacity)"
                );
            }
            return Claim::Unavailable;
        }
        g.warned_full = false;
        g.seen.insert(nonce);
        g.by_expiry.push(Reverse((expires, nonce)));
        Claim::First
    }
}

impl ReplayGuard for MemoryReplayGuard {
    fn claim(&self, nonce: [u8; NONCE_LEN], expires_at: SystemTime) -> BoxFuture<Claim> {
        let claim = self.claim_at(millis(SystemTime::now()), nonce, millis(expires_at));
        Box::pin(std::future::ready(claim))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::security::sealing::{Claims, KeyRing, SealKey, Sealer, DEFAULT_TTL};
    use std::time::Duration;

    fn n(i: u8) -> [u8; NONCE_LEN] {
        [i; NONCE_LEN]
    }

    #[test]
    fn mrtr06_second_claim_is_a_replay() {
        let g = MemoryReplayGuard::new(4);
        assert_eq!(g.claim_at(0, n(1), 100), Claim::First);
        assert_eq!(g.claim_at(1, n(1), 100), Claim::Replayed);
        assert_eq!(g.claim_at(99, n(1), 100), Claim::Replayed);
        assert_eq!(g.claim_at(2, n(2), 100), Claim::First);
        assert_eq!(g.len(), 2);
    }

    #[test]
    fn entries_are_forgotten_at_their_expiry_and_already_expired_states_refused() {
        let g = MemoryReplayGuard::new(4);
        assert_eq!(g.claim_at(0, n(1), 100), Claim::First);
        assert_eq!(g.claim_at(0, n(2), 50), Claim::First);
        // At 50 only n(2) has expired.
        assert_eq!(g.claim_at(50, n(3), 200), Claim::First);
        assert_eq!(g.len(), 2);
        assert_eq!(g.claim_at(50, n(1), 100), Claim::Replayed);
        // A state whose expiry has passed is never recorded.
        assert_eq!(g.claim_at(60, n(4), 60), Claim::Expired);
        assert_eq!(g.claim_at(60, n(5), 10), Claim::Expired);
        assert_eq!(g.len(), 2);
        // Past every expiry the cache is empty again.
        assert_eq!(g.claim_at(200, n(9), 300), Claim::First);
        assert_eq!(g.len(), 1);
    }

    #[test]
    fn full_of_live_states_refuses_without_evicting_and_recovers_at_expiry() {
        let g = MemoryReplayGuard::new(3);
        for i in 0..3 {
            assert_eq!(g.claim_at(0, n(i), 100 + u64::from(i)), Claim::First);
        }
        // Full: a new state is refused and not recorded; the live entries all stay replays.
        assert_eq!(g.claim_at(10, n(7), 500), Claim::Unavailable);
        assert_eq!(g.claim_at(11, n(7), 500), Claim::Unavailable);
        for i in 0..3 {
            assert_eq!(g.claim_at(12, n(i), 100 + u64::from(i)), Claim::Replayed);
        }
        assert_eq!(g.len(), 3);
        // The earliest expiry frees exactly one slot, which the refused state (not consumed by
        // the refusal) may now take.
        assert_eq!(g.claim_at(100, n(7), 500), Claim::First);
        assert_eq!(g.claim_at(100, n(8), 500), Claim::Unavailable);
        assert_eq!(g.claim_at(100, n(0), 100), Claim::Expired);
        assert_eq!(MemoryReplayGuard::new(0).capacity(), 1);
    }

    #[tokio::test]
    async fn opened_nonce_names_the_seal_and_claims_through_the_trait() {
        let s = Sealer::new(
            KeyRing::new(SealKey::new("k", [3; 32]).unwrap()),
            DEFAULT_TTL,
        );
        let args = serde_json::json!({"a": 1});
        let c = Claims {
            method: "tools/call",
            target: "t",
            arguments: &args,
            audience: None,
        };
        let tok = s.seal_at(1_000, &c, "st").unwrap();
        let o = s.open_at(2_000, &tok, &c).unwrap();
        assert_eq!(o.state, "st");
        assert_eq!(o.expires_at, UNIX_EPOCH + Duration::from_millis(301_000));
        assert!(!format!("{o:?}").contains("st\""));
        let other = s.open_at(2_000, &s.seal_at(1_000, &c, "st").unwrap(), &c);
        assert_ne!(other.unwrap().nonce, o.nonce);
        let g: &dyn ReplayGuard = &MemoryReplayGuard::new(DEFAULT_CAPACITY);
        let live = SystemTime::now() + Duration::from_secs(60);
        assert_eq!(g.claim(o.nonce, live).await, Claim::First);
        assert_eq!(g.claim(o.nonce, live).await, Claim::Replayed);
        assert_eq!(g.claim(n(1), UNIX_EPOCH).await, Claim::Expired);
    }
}
