//! # mcpcore
//!
//! One Model Context Protocol engine for both protocol eras:
//!
//! * the **legacy** handshake era (`initialize`, sessions; versions 2024-11-05 … 2025-11-25), and
//! * the **modern** stateless era (2026-07-28: `server/discover`, the per-request `_meta` envelope).
//!
//! All protocol behaviour lives here. Foreign bindings (C, Python, Node) implement one JSON-level
//! seam, [`Handler`], and never re-implement protocol logic. They share the rest of their
//! plumbing too: options as JSON in one shape ([`options`]), one error classification
//! ([`ErrorKind`], from every error type's `kind()`), and one owned runtime
//! ([`runtime::Runtime`]).
//!
//! The main entry points are [`ServerBuilder`] (register tools, prompts, resources, completion and
//! custom methods) and the transports in [`transport`].
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

pub mod client;
pub mod error;
mod error_kind;
pub mod jsonrpc;
pub mod limits;
pub mod options;
pub mod protocol;
pub mod runtime;
pub mod schema;
pub mod security;
pub mod server;
pub mod transport;

pub use error::{ErrorKind, ErrorObject, HandlerError};
pub use jsonrpc::Id;
pub use limits::Limits;
pub use protocol::{
    CallToolResult, Content, Implementation, LoggingLevel, Prompt, PromptArgument, Resource,
    ResourceTemplate, Tool,
};
pub use server::{
    handler_fn, BoxFuture, Handler, InputRequired, Outcome, RequestContext, Server, ServerBuilder,
    ServerOptions,
};
