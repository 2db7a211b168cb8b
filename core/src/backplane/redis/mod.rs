//! The Redis implementations of the backplane (feature `redis`).
