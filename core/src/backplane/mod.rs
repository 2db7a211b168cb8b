//! The backplane: the state several server processes behind one load balancer share, so that
//! any worker can serve any request (modern era) and any legacy session (LHTTP-02) without
//! sticky routing. Each part is a trait with the in-process default used by a single process;
//! the Redis implementations (feature `redis`) share it through one Redis deployment.
//!
//! - the notification bus: list changes, resource updates and task changes raised on one
//!   worker reach the `subscriptions/listen` streams and legacy sessions of every worker;
//! - the legacy session store and the SSE event store (resumability, LHTTP-04);
//! - the task store ([`crate::tasks::TaskStore`]).

#[cfg(feature = "redis")]
pub mod redis;

pub mod sessions;
pub use sessions::{LocalSessionStore, SessionRecord, SessionStore, StoreUnavailable};
