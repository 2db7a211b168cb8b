//! Wire types only (serde), no behaviour. Field names match the 2025-11-25 and 2026-07-28 schemas
//! exactly (`shared/spec/*/schema.json`).
//!
//! This is the bottom of the protocol layers: `server` and `client` both build on it (and on
//! `jsonrpc`), and nothing here depends on either of them.

pub mod apps;
mod content;
mod definition;
pub mod envelope;
pub mod mcp_header;
mod results;
mod types;
pub mod version;

pub use content::{CallToolResult, Content};
pub use definition::DefinitionError;
pub use results::{GetPromptResult, PromptMessage, ReadResourceResult, Role};
pub use types::{
    Implementation, LoggingLevel, Prompt, PromptArgument, Resource, ResourceTemplate, Tool,
};
pub use version::Era;
