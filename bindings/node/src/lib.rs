//! The Node binding of mcpcore (N-API, through napi-rs). It implements core's
//! [`mcpcore::Handler`] and [`mcpcore::client::ClientHandler`] seams by calling JavaScript
//! functions, and exposes core's server and JSON-level client; all protocol logic stays in
//! `core/`. The public API is the thin JavaScript layer in `lib/` (`Server`, `Client`,
//! `McpError`); this addon is its private `NativeServer` / `NativeClient` / `NativeContext`.
//!
//! Values cross as plain JavaScript objects (napi's `serde-json` support), except a server
//! handler's arguments and reply, which cross as JSON text (see `lib/server.cjs`'s `encode`).
//! Native calls that can fail resolve to `{ok: value}` or `{error: {kind, message, code?,
//! data?}}` (the private `reply` module), so the JavaScript layer raises `McpError` with the
//! exact JSON-RPC code and data, or an `Error` whose `code` is core's [`mcpcore::ErrorKind`]
//! name.

mod auth;
mod cli;
mod client;
mod context;
mod embed;
mod handler;
mod listen;
mod registry;
mod reply;
mod server;
mod stdio;
mod telemetry;
