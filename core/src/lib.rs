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
//! custom methods), the serving methods of [`Server`] ([`Server::serve_stdio`],
//! [`Server::serve_http`], [`Server::http_service`]) and [`client::Client`].
//!
//! ```no_run
//! use mcpcore::{handler_fn, schemars, GetPromptResult, Prompt, Server};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Deserialize, schemars::JsonSchema)]
//! struct AddArgs { a: f64, b: f64 }
//!
//! #[derive(Serialize, schemars::JsonSchema)]
//! struct AddOut { sum: f64 }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::builder("my-server", "1.0.0")
//!     // Schemas generated from the types; `AddOut` is the outputSchema and structuredContent.
//!     .typed_tool("add", "Add two numbers", |_ctx, args: AddArgs| async move {
//!         Ok(AddOut { sum: args.a + args.b })
//!     })
//!     .prompt(Prompt::new("hello"), handler_fn(|_ctx, _args| async move {
//!         Ok(GetPromptResult::new().user("Say hello."))
//!     }))
//!     .build()?;
//! server.serve_stdio().await?;
//! # Ok(()) }
//! ```
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used))]
// Every public item is documented (docs.rs is the Rust API reference).
#![deny(missing_docs)]

pub mod auth;
pub mod backplane;
pub mod client;
pub mod error;
mod error_kind;
mod future;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub(crate) mod jsonrpc;
pub mod limits;
pub mod options;
pub mod protocol;
pub mod runtime;
pub(crate) mod schema;
pub mod security;
pub mod server;
pub mod tasks;
pub mod telemetry;
pub mod transport;

pub use error::{ErrorKind, ErrorObject, HandlerError};
pub use future::BoxFuture;
pub use jsonrpc::Id;
pub use limits::Limits;
pub use protocol::{
    CallToolResult, Content, GetPromptResult, Implementation, LoggingLevel, Prompt, PromptArgument,
    PromptMessage, ReadResourceResult, Resource, ResourceTemplate, Role, Tool,
};
pub use server::{
    handler_fn, prompt_fn, schema_for, tool_fn, BuildError, Handler, InputRequired, Outcome,
    RequestContext, Server, ServerBuilder, ServerOptions, TaskOptions, TaskSupport, ToolOutput,
};

/// schemars, re-exported so typed tools can derive `JsonSchema` at the version mcpcore uses.
pub use schemars;
