//! The Redis implementations of the backplane (feature `redis`).

pub mod tasks;

pub use tasks::{RedisTaskOptions, RedisTaskStore};
