//! Security building blocks: sealing of `requestState` (REQUIREMENTS MRTR-06).

pub mod sealing;

pub use sealing::{Claims, KeyError, KeyRing, SealError, SealKey, Sealer};
