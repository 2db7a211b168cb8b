//! The boxed future both seams return: the server's [`crate::Handler`] and the client's
//! [`crate::client::ClientHandler`] (and pluggable stores such as
//! [`crate::security::replay::ReplayGuard`]). It sits below `server` and `client` so neither
//! depends on the other for it.

use std::future::Future;
use std::pin::Pin;

/// A boxed, `Send` future.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;
