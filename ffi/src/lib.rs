//! # mcpcore C ABI
//!
//! The C face of [`mcpcore`]: opaque handles, C callback handlers with async completion, detailed
//! errors without thread-local state, and a cbindgen-generated header (`include/mcpcore.h`). It
//! adds no protocol logic: [`trampoline::CHandler`] implements core's one handler seam by calling
//! a C function, and everything else is marshalling, ownership and threading
//! (STYLE.md "C ABI handle model").
//!
//! Every `extern "C"` function runs inside the panic guard ([`guard`]), checks every pointer, and
//! validates UTF-8 and JSON before use. Out-parameters are written only on `MCP_STATUS_OK`.
#![allow(non_camel_case_types)]
// The doc comments of the `extern "C"` items are the C header's (cbindgen copies them), where
// `[value]` gives an option's default; rustdoc would read each as a link.
#![allow(rustdoc::broken_intra_doc_links)]
// This crate's Rust docs are read by its contributors (`cargo doc --document-private-items`,
// as `scripts/test.sh` builds them), where links to private items resolve.
#![allow(rustdoc::private_intra_doc_links)]
// Entry points take raw pointers from C: each one checks NULL and its pointer contract is part of
// the header's documentation. Marking them `unsafe` would change nothing for C callers.
#![allow(clippy::not_unsafe_ptr_arg_deref)]
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

pub mod auth;
#[cfg(test)]
mod bench;
pub mod builder;
pub mod client;
pub mod client_auth;
pub mod client_builder;
pub mod client_calls;
pub mod client_ops;
pub mod client_ops_content;
pub mod client_responder;
mod client_task_args;
pub mod client_tasks;
pub mod connection;
pub mod embed_http;
#[cfg(test)]
mod embed_tests;
pub mod error;
mod guard;
mod handle;
#[cfg(test)]
mod limit_tests;
pub mod request;
pub mod responder;
pub mod runtime;
pub mod server;
pub mod server_dynamic;
pub mod status;
pub mod string;
pub mod telemetry;
#[cfg(test)]
mod telemetry_tests;
pub mod trampoline;
pub mod transport;

pub use auth::mcp_token_verdict_t;
pub use builder::mcp_server_builder_t;
pub use client::mcp_client_t;
pub use client_builder::{mcp_client_builder_t, mcp_connect_mode, mcp_connect_mode_t};
pub use client_calls::{mcp_call_options_t, mcp_cancel_token_t, mcp_list_kind, mcp_list_kind_t};
pub use client_responder::mcp_client_responder_t;
pub use connection::mcp_connection_t;
pub use embed_http::{
    mcp_exchange_callbacks_t, mcp_http_endpoint_t, mcp_http_exchange_t, mcp_http_header_t,
};
pub use error::mcp_error_t;
pub use request::mcp_request_t;
pub use responder::{mcp_log_level, mcp_log_level_t, mcp_responder_t};
pub use runtime::mcp_runtime_t;
pub use server::mcp_server_t;
pub use status::{mcp_status, mcp_status_t};
pub use transport::mcp_listener_t;
