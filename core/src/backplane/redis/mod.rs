//! The Redis implementations of the backplane (feature `redis`).

pub mod sessions;
pub use sessions::{RedisConn, RedisSessionStore};
