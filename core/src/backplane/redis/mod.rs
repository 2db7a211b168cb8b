//! The Redis implementations of the backplane (feature `redis`).

pub(crate) mod bus;
pub mod conn;
pub(crate) mod events;
pub(crate) mod relay;
pub(crate) mod replay;
pub(crate) mod route;
pub(crate) mod sessions;
pub mod tasks;

pub use tasks::{RedisTaskOptions, RedisTaskStore};
