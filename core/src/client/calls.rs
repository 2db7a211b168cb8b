//! Typed calls on top of the JSON seam (REQUIREMENTS PAGE-01, TOOL-01, TOOL-06, PRM-01, RES-01,
//! CMP-01, LOG-03, SUB-07, HTTP-14; seed: single page + whole collection with cycle detection).

use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};
use std::collections::HashSet;

use super::types::{CompleteResult, Era, ListPage, PromptResult, ReadResult};
use super::{mrtr, CallOptions, Client, ClientError};
use crate::protocol::{CallToolResult, LoggingLevel, Prompt, Resource, ResourceTemplate, Tool};

/// Most pages `list_all_*` follows before giving up (a server that never ends its list).
const MAX_PAGES: usize = 10_000;

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

impl Client {
    /// A typed call: drive MRTR, turn an unfulfilled `input_required` into an error.
    async fn call_typed(
        &self,
        method: &str,
        params: Map<String, Value>,
        opts: &CallOptions,
    ) -> Result<Value, ClientError> {
        mrtr::drive(self, method, params, opts).await
    }

    /// `ping` (legacy only; the modern era removed it).
    ///
    /// # Errors
    /// [`ClientError::InvalidArgument`] on a modern connection; see [`ClientError`].
    pub async fn ping(&self) -> Result<(), ClientError> {
        self.ping_with(CallOptions::default()).await
    }

    /// [`Client::ping`] with per-call options: timeout, cancellation, progress, log level,
    /// extra `_meta`.
    ///
    /// # Errors
    /// As [`Client::ping`].
    pub async fn ping_with(&self, opts: CallOptions) -> Result<(), ClientError> {
        if self.is_modern() {
            return Err(ClientError::InvalidArgument(
                "ping does not exist in the modern era".into(),
            ));
        }
        self.request_once("ping", Map::new(), &opts)
            .await
            .map(|_| ())
    }

    /// A fresh `server/discover` (modern connections).
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn discover(&self) -> Result<Value, ClientError> {
        self.discover_with(CallOptions::default()).await
    }

    /// [`Client::discover`] with per-call options: timeout, cancellation, progress, log level,
    /// extra `_meta`.
    ///
    /// # Errors
    /// As [`Client::discover`].
    pub async fn discover_with(&self, opts: CallOptions) -> Result<Value, ClientError> {
        self.request_once("server/discover", Map::new(), &opts)
            .await
    }

    async fn list_page<T: DeserializeOwned>(
        &self,
        method: &str,
        key: &str,
        cursor: Option<&str>,
        opts: &CallOptions,
    ) -> Result<ListPage<T>, ClientError> {
        let mut p = Map::new();
        if let Some(c) = cursor {
            p.insert("cursor".into(), json!(c));
        }
        let raw = self.request_once(method, p, opts).await?;
        Ok(ListPage::parse(raw, key))
    }

    async fn list_all<T: DeserializeOwned>(
        &self,
        method: &str,
        key: &str,
        opts: &CallOptions,
    ) -> Result<Vec<T>, ClientError> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let page: ListPage<T> = self.list_page(method, key, cursor.as_deref(), opts).await?;
            out.extend(page.items);
            match page.next_cursor {
                None => return Ok(out),
                Some(c) => {
                    if !seen.insert(c.clone()) {
                        tracing::warn!(method, cursor = %c, "the server repeated a cursor; stopping");
                        return Ok(out);
                    }
                    cursor = Some(c);
                }
            }
        }
        Err(ClientError::Protocol(format!(
            "{method} did not end after {MAX_PAGES} pages"
        )))
    }

    /// One page of `tools/list`. Over HTTP, tools whose `x-mcp-header` annotations break the
    /// rules are dropped from the view with a warning (HTTP-14). Output schemas are remembered
    /// for validating `structuredContent`.
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn list_tools(&self, cursor: Option<&str>) -> Result<ListPage<Tool>, ClientError> {
        self.list_tools_with(cursor, CallOptions::default()).await
    }

    /// [`Client::list_tools`] with per-call options: timeout, cancellation, progress, log level,
    /// extra `_meta`.
    ///
    /// # Errors
    /// As [`Client::list_tools`].
    pub async fn list_tools_with(
        &self,
        cursor: Option<&str>,
        opts: CallOptions,
    ) -> Result<ListPage<Tool>, ClientError> {
        let mut page: ListPage<Tool> = self.list_page("tools/list", "tools", cursor, &opts).await?;
        page.items = self.learn_tools(page.items);
        Ok(page)
    }

    /// Every tool, following cursors (a repeated cursor ends the walk).
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn list_all_tools(&self) -> Result<Vec<Tool>, ClientError> {
        self.list_all_tools_with(CallOptions::default()).await
    }

    /// [`Client::list_all_tools`] with per-call options: timeout, cancellation, progress, log level,
    /// extra `_meta`.
    ///
    /// # Errors
    /// As [`Client::list_all_tools`].
    pub async fn list_all_tools_with(&self, opts: CallOptions) -> Result<Vec<Tool>, ClientError> {
        let tools = self.list_all("tools/list", "tools", &opts).await?;
        Ok(self.learn_tools(tools))
    }

    fn learn_tools(&self, tools: Vec<Tool>) -> Vec<Tool> {
        tools
            .into_iter()
            .filter(|t| self.learn_tool(&t.name, &t.input_schema, t.output_schema.as_ref()))
            .collect()
    }

    /// `tools/call`. `structuredContent` is validated against the tool's output schema when it
    /// is known from a listing (TOOL-06).
    ///
    /// # Errors
    /// [`ClientError::InputRequired`] when the server needs input no handler can give;
    /// [`ClientError::OutputValidation`]; see [`ClientError`].
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<CallToolResult, ClientError> {
        self.call_tool_with(name, arguments, CallOptions::default())
            .await
    }

    /// [`Client::call_tool`] with per-call options: timeout, cancellation, progress, log level,
    /// extra `_meta`.
    ///
    /// # Errors
    /// As [`Client::call_tool`].
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        opts: CallOptions,
    ) -> Result<CallToolResult, ClientError> {
        let mut p = Map::new();
        p.insert("name".into(), json!(name));
        if !arguments.is_null() {
            p.insert("arguments".into(), arguments);
        }
        let raw = self.call_typed("tools/call", p, &opts).await?;
        let result: CallToolResult = serde_json::from_value(raw)
            .map_err(|e| ClientError::Protocol(format!("invalid CallToolResult: {e}")))?;
        let is_error = result.is_error == Some(true);
        self.check_structured(name, is_error, result.structured_content.as_ref())?;
        Ok(result)
    }

    /// One page of `prompts/list`.
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn list_prompts(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListPage<Prompt>, ClientError> {
        self.list_prompts_with(cursor, CallOptions::default()).await
    }

    /// [`Client::list_prompts`] with per-call options: timeout, cancellation, progress, log level,
    /// extra `_meta`.
    ///
    /// # Errors
    /// As [`Client::list_prompts`].
    pub async fn list_prompts_with(
        &self,
        cursor: Option<&str>,
        opts: CallOptions,
    ) -> Result<ListPage<Prompt>, ClientError> {
        self.list_page("prompts/list", "prompts", cursor, &opts)
            .await
    }

    /// Every prompt, following cursors.
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn list_all_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.list_all_prompts_with(CallOptions::default()).await
    }

    /// [`Client::list_all_prompts`] with per-call options: timeout, cancellation, progress, log level,
    /// extra `_meta`.
    ///
    /// # Errors
    /// As [`Client::list_all_prompts`].
    pub async fn list_all_prompts_with(
        &self,
        opts: CallOptions,
    ) -> Result<Vec<Prompt>, ClientError> {
        self.list_all("prompts/list", "prompts", &opts).await
    }

    /// `prompts/get`.
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<PromptResult, ClientError> {
        self.get_prompt_with(name, arguments, CallOptions::default())
            .await
    }

    /// [`Client::get_prompt`] with per-call options: timeout, cancellation, progress, log level,
    /// extra `_meta`.
    ///
    /// # Errors
    /// As [`Client::get_prompt`].
    pub async fn get_prompt_with(
        &self,
        name: &str,
        arguments: Value,
        opts: CallOptions,
    ) -> Result<PromptResult, ClientError> {
        let mut p = Map::new();
        p.insert("name".into(), json!(name));
        if !arguments.is_null() {
            p.insert("arguments".into(), arguments);
        }
        let raw = self.call_typed("prompts/get", p, &opts).await?;
        Ok(PromptResult {
            description: raw
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned),
            messages: raw
                .get("messages")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            raw,
        })
    }

    /// One page of `resources/list`.
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn list_resources(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListPage<Resource>, ClientError> {
        self.list_resources_with(cursor, CallOptions::default())
            .await
    }

    /// [`Client::list_resources`] with per-call options: timeout, cancellation, progress, log level,
    /// extra `_meta`.
    ///
    /// # Errors
    /// As [`Client::list_resources`].
    pub async fn list_resources_with(
        &self,
        cursor: Option<&str>,
        opts: CallOptions,
    ) -> Result<ListPage<Resource>, ClientError> {
        self.list_page("resources/list", "resources", cursor, &opts)
            .await
    }

    /// Every resource, following cursors.
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn list_all_resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.list_all_resources_with(CallOptions::default()).await
    }

    /// [`Client::list_all_resources`] with per-call options: timeout, cancellation, progress, log level,
    /// extra `_meta`.
    ///
    /// # Errors
    /// As [`Client::list_all_resources`].
    pub async fn list_all_resources_with(
        &self,
        opts: CallOptions,
    ) -> Result<Vec<Resource>, ClientError> {
        self.list_all("resources/list", "resources", &opts).await
    }

    /// One page of `resources/templates/list`.
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn list_resource_templates(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListPage<ResourceTemplate>, ClientError> {
        self.list_resource_templates_with(cursor, CallOptions::default())
            .await
    }

    /// [`Client::list_resource_templates`] with per-call options: timeout, cancellation, progress, log level,
    /// extra `_meta`.
    ///
    /// # Errors
    /// As [`Client::list_resource_templates`].
    pub async fn list_resource_templates_with(
        &self,
        cursor: Option<&str>,
        opts: CallOptions,
    ) -> Result<ListPage<ResourceTemplate>, ClientError> {
        self.list_page(
            "resources/templates/list",
            "resourceTemplates",
            cursor,
            &opts,
        )
        .await
    }

    /// Every resource template, following cursors.
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        self.list_all_resource_templates_with(CallOptions::default())
            .await
    }

    /// [`Client::list_all_resource_templates`] with per-call options: timeout, cancellation, progress, log level,
    /// extra `_meta`.
    ///
    /// # Errors
    /// As [`Client::list_all_resource_templates`].
    pub async fn list_all_resource_templates_with(
        &self,
        opts: CallOptions,
    ) -> Result<Vec<ResourceTemplate>, ClientError> {
        self.list_all("resources/templates/list", "resourceTemplates", &opts)
            .await
    }

    /// `resources/read`.
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResult, ClientError> {
        self.read_resource_with(uri, CallOptions::default()).await
    }

    /// [`Client::read_resource`] with per-call options: timeout, cancellation, progress, log level,
    /// extra `_meta`.
    ///
    /// # Errors
    /// As [`Client::read_resource`].
    pub async fn read_resource_with(
        &self,
        uri: &str,
        opts: CallOptions,
    ) -> Result<ReadResult, ClientError> {
        let mut p = Map::new();
        p.insert("uri".into(), json!(uri));
        let raw = self.call_typed("resources/read", p, &opts).await?;
        Ok(ReadResult {
            contents: raw
                .get("contents")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            cache: super::types::ResultCacheHints::of(&raw),
            raw,
        })
    }

    /// `completion/complete` with `reference` (`{type:"ref/prompt",name}` or
    /// `{type:"ref/resource",uri}`), the argument being completed, and optional context
    /// arguments.
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn complete(
        &self,
        reference: Value,
        argument_name: &str,
        argument_value: &str,
        context: Option<Value>,
    ) -> Result<CompleteResult, ClientError> {
        self.complete_with(
            reference,
            argument_name,
            argument_value,
            context,
            CallOptions::default(),
        )
        .await
    }

    /// [`Client::complete`] with per-call options: timeout, cancellation, progress, log level,
    /// extra `_meta`.
    ///
    /// # Errors
    /// As [`Client::complete`].
    pub async fn complete_with(
        &self,
        reference: Value,
        argument_name: &str,
        argument_value: &str,
        context: Option<Value>,
        opts: CallOptions,
    ) -> Result<CompleteResult, ClientError> {
        let mut p = obj(json!({
            "ref": reference,
            "argument": {"name": argument_name, "value": argument_value},
        }));
        if let Some(c) = context {
            p.insert("context".into(), json!({"arguments": c}));
        }
        let raw = self.request_once("completion/complete", p, &opts).await?;
        let c = raw.get("completion").cloned().unwrap_or(Value::Null);
        Ok(CompleteResult {
            values: c
                .get("values")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
            total: c.get("total").and_then(Value::as_u64),
            has_more: c.get("hasMore").and_then(Value::as_bool),
            raw,
        })
    }

    /// Set the log level: `logging/setLevel` on legacy; on modern the level becomes the default
    /// per-request `logLevel` (logging is deprecated there; a warning is logged once).
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn set_log_level(&self, level: LoggingLevel) -> Result<(), ClientError> {
        self.set_log_level_with(level, CallOptions::default()).await
    }

    /// [`Client::set_log_level`] with per-call options: timeout, cancellation, progress, log level,
    /// extra `_meta`.
    ///
    /// # Errors
    /// As [`Client::set_log_level`].
    pub async fn set_log_level_with(
        &self,
        level: LoggingLevel,
        opts: CallOptions,
    ) -> Result<(), ClientError> {
        if self.era() == Some(Era::Modern) {
            self.use_modern_log_level(level);
            return Ok(());
        }
        self.request_once("logging/setLevel", obj(json!({"level": level})), &opts)
            .await
            .map(|_| ())
    }

    /// `resources/subscribe` (legacy; modern clients use [`Client::listen`]).
    ///
    /// # Errors
    /// [`ClientError::InvalidArgument`] on a modern connection; see [`ClientError`].
    pub async fn subscribe_resource(&self, uri: &str) -> Result<(), ClientError> {
        self.subscribe_resource_with(uri, CallOptions::default())
            .await
    }

    /// [`Client::subscribe_resource`] with per-call options: timeout, cancellation, progress, log level,
    /// extra `_meta`.
    ///
    /// # Errors
    /// As [`Client::subscribe_resource`].
    pub async fn subscribe_resource_with(
        &self,
        uri: &str,
        opts: CallOptions,
    ) -> Result<(), ClientError> {
        self.legacy_sub("resources/subscribe", uri, opts).await
    }

    /// `resources/unsubscribe` (legacy).
    ///
    /// # Errors
    /// As [`Client::subscribe_resource`].
    pub async fn unsubscribe_resource(&self, uri: &str) -> Result<(), ClientError> {
        self.unsubscribe_resource_with(uri, CallOptions::default())
            .await
    }

    /// [`Client::unsubscribe_resource`] with per-call options: timeout, cancellation, progress, log level,
    /// extra `_meta`.
    ///
    /// # Errors
    /// As [`Client::unsubscribe_resource`].
    pub async fn unsubscribe_resource_with(
        &self,
        uri: &str,
        opts: CallOptions,
    ) -> Result<(), ClientError> {
        self.legacy_sub("resources/unsubscribe", uri, opts).await
    }

    async fn legacy_sub(
        &self,
        method: &str,
        uri: &str,
        opts: CallOptions,
    ) -> Result<(), ClientError> {
        if self.is_modern() {
            return Err(ClientError::InvalidArgument(format!(
                "{method} does not exist in the modern era; use listen"
            )));
        }
        self.request_once(method, obj(json!({"uri": uri})), &opts)
            .await
            .map(|_| ())
    }
}
