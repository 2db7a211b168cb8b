//! The Redis implementations of the backplane (feature `redis`).

pub(crate) mod bus;
pub mod conn;
pub(crate) mod keys;
pub(crate) mod replay;
pub(crate) mod sessions;
