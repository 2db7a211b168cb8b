//! The frozen registry: definitions pre-serialized, schemas pre-compiled, lookups by index.

use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

use super::handler::Handler;
use super::uri_template::UriTemplate;
use crate::protocol::mcp_header::ParamHeader;
use crate::schema::Validator;

pub(crate) struct ToolEntry {
    pub def: Value,
    /// The legacy (≤ 2025-11-25) view when it differs: a non-object `outputSchema` is omitted,
    /// since legacy schemas require `type: "object"` at its root (TOOL-05).
    pub legacy_def: Option<Value>,
    pub input: Validator,
    pub output: Option<Validator>,
    /// The `x-mcp-header` declarations of `inputSchema`, checked at registration (HTTP-14).
    pub param_headers: Vec<ParamHeader>,
    pub handler: Arc<dyn Handler>,
    /// Whether it may run as a task (TASK-L01 `execution.taskSupport`).
    pub task_support: super::tasks::TaskSupport,
    /// Runs on the request before a task is created (MRTR rounds first, SEP-2663).
    pub gate: Option<Arc<dyn Handler>>,
}

pub(crate) struct PromptEntry {
    pub def: Value,
    pub required: Vec<String>,
    pub handler: Arc<dyn Handler>,
}

pub(crate) struct ResourceEntry {
    pub def: Value,
    pub handler: Arc<dyn Handler>,
}

pub(crate) struct TemplateEntry {
    pub def: Value,
    pub template: UriTemplate,
    pub handler: Arc<dyn Handler>,
}

#[derive(Default)]
pub(crate) struct Registry {
    pub tools: Vec<ToolEntry>,
    pub tool_index: HashMap<String, usize>,
    pub prompts: Vec<PromptEntry>,
    pub prompt_index: HashMap<String, usize>,
    pub resources: Vec<ResourceEntry>,
    pub resource_index: HashMap<String, usize>,
    pub templates: Vec<TemplateEntry>,
    pub completion: Option<Arc<dyn Handler>>,
    pub subscribe: Option<Arc<dyn Handler>>,
    pub unsubscribe: Option<Arc<dyn Handler>>,
    pub custom: HashMap<String, Arc<dyn Handler>>,
}

impl Registry {
    pub fn tool(&self, name: &str) -> Option<&ToolEntry> {
        self.tool_index.get(name).and_then(|&i| self.tools.get(i))
    }
    pub fn prompt(&self, name: &str) -> Option<&PromptEntry> {
        self.prompt_index
            .get(name)
            .and_then(|&i| self.prompts.get(i))
    }
    pub fn resource(&self, uri: &str) -> Option<&ResourceEntry> {
        self.resource_index
            .get(uri)
            .and_then(|&i| self.resources.get(i))
    }
}
