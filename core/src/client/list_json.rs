//! The four list methods as JSON, for bindings (C, Python, Node) that hand results to their
//! callers as JSON: the same calls as the typed ones, so what a listing teaches the client
//! (tools' `x-mcp-header` declarations and output schemas, HTTP-14, TOOL-06) is learnt, and the
//! items are the ones core kept. Bindings name the list by [`ListKind`], never by method or key.

use serde::Serialize;
use serde_json::{json, Map, Value};

use super::types::ListPage;
use super::{CallOptions, Client, ClientError};

/// Which list (REQUIREMENTS PAGE-01).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ListKind {
    /// `tools/list`.
    Tools,
    /// `prompts/list`.
    Prompts,
    /// `resources/list`.
    Resources,
    /// `resources/templates/list`.
    ResourceTemplates,
}

impl ListKind {
    /// The key of the result's item array.
    pub fn items_key(self) -> &'static str {
        match self {
            ListKind::Tools => "tools",
            ListKind::Prompts => "prompts",
            ListKind::Resources => "resources",
            ListKind::ResourceTemplates => "resourceTemplates",
        }
    }
}

/// The raw result with its item array replaced by the typed items core kept.
fn page_json<T: Serialize>(page: ListPage<T>, key: &str) -> Value {
    let mut raw = match page.raw {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    raw.insert(key.into(), json!(page.items));
    Value::Object(raw)
}

impl Client {
    /// One page of a list as its JSON result (`nextCursor` and `_meta` kept).
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn list_page_json(
        &self,
        kind: ListKind,
        cursor: Option<&str>,
        opts: CallOptions,
    ) -> Result<Value, ClientError> {
        let key = kind.items_key();
        Ok(match kind {
            ListKind::Tools => page_json(self.list_tools_with(cursor, opts).await?, key),
            ListKind::Prompts => page_json(self.list_prompts_with(cursor, opts).await?, key),
            ListKind::Resources => page_json(self.list_resources_with(cursor, opts).await?, key),
            ListKind::ResourceTemplates => {
                page_json(self.list_resource_templates_with(cursor, opts).await?, key)
            }
        })
    }

    /// A whole list, following cursors, as `{"<items key>": [...]}`.
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn list_all_json(
        &self,
        kind: ListKind,
        opts: CallOptions,
    ) -> Result<Value, ClientError> {
        let items = match kind {
            ListKind::Tools => json!(self.list_all_tools_with(opts).await?),
            ListKind::Prompts => json!(self.list_all_prompts_with(opts).await?),
            ListKind::Resources => json!(self.list_all_resources_with(opts).await?),
            ListKind::ResourceTemplates => {
                json!(self.list_all_resource_templates_with(opts).await?)
            }
        };
        Ok(json!({ kind.items_key(): items }))
    }
}
