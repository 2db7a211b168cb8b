//! Wire types only (serde), no behaviour. Field names match the 2025-11-25 and 2026-07-28 schemas
//! exactly (`shared/spec/*/schema.json`).

mod content;
mod results;
mod types;
pub mod version;

pub use content::{CallToolResult, Content};
pub use results::{GetPromptResult, PromptMessage, ReadResourceResult, Role};
pub use types::{
    Implementation, LoggingLevel, Prompt, PromptArgument, Resource, ResourceTemplate, Tool,
};
