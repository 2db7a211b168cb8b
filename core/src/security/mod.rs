//! Security building blocks: sealing of `requestState` and its single use (REQUIREMENTS MRTR-06).

pub(crate) mod replay;
#[cfg(test)]
mod seal_props;
pub(crate) mod sealing;

pub use replay::{Claim, MemoryReplayGuard, ReplayGuard};
pub(crate) use sealing::Sealer;
pub use sealing::{KeyError, KeyRing, SealKey, MAX_KEYS};
