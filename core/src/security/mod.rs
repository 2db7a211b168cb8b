//! Security building blocks: sealing of `requestState` and its single use (REQUIREMENTS MRTR-06).

pub mod replay;
pub mod sealing;

pub use replay::{Claim, MemoryReplayGuard, ReplayGuard};
pub use sealing::{Claims, KeyError, KeyRing, Opened, SealError, SealKey, Sealer};
