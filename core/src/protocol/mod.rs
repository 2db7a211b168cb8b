//! Wire types only (serde), no behaviour. Field names match the 2025-11-25 and 2026-07-28 schemas
//! exactly (`shared/spec/*/schema.json`).

mod content;
mod definition;
mod types;
pub mod version;

pub use content::{CallToolResult, Content};
pub use definition::DefinitionError;
pub use types::{
    Implementation, LoggingLevel, Prompt, PromptArgument, Resource, ResourceTemplate, Tool,
};
