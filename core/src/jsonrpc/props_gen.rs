//! Generators of valid MCP wire messages of both eras for the codec property tests
//! (`props.rs`). Each generator follows the official schema of its era (`spec/<era>/schema.json`);
//! the properties check every generated message against that schema, so a generator that drifts
//! from the spec fails the suite instead of testing something the wire never carries.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use proptest::collection::{btree_map, vec};
use proptest::option;
use proptest::prelude::*;
use serde_json::{json, Map, Value};

use crate::protocol::{
    CallToolResult, GetPromptResult, Implementation, LoggingLevel, Prompt, PromptArgument,
    PromptMessage, ReadResourceResult, Resource, ResourceTemplate, Role, Tool,
};

/// Which schema a generated message belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Era {
    /// 2025-11-25.
    Legacy,
    /// 2026-07-28.
    Modern,
}

/// A request or notification: the schema definition it must satisfy, its method and params.
pub type Call = (&'static str, &'static str, Option<Map<String, Value>>);

/// Arbitrary Unicode text (control characters, astral planes and quotes included).
pub fn text() -> impl Strategy<Value = String> + Clone {
    vec(any::<char>(), 0..12).prop_map(|c| c.into_iter().collect())
}

pub(super) fn ident() -> impl Strategy<Value = String> + Clone {
    "[a-z][a-z0-9_]{0,8}"
}

pub(super) fn uri() -> impl Strategy<Value = String> + Clone {
    "(file|https|demo)://[a-z0-9]{1,8}(/[a-z0-9._~-]{1,8}){0,2}"
}

fn b64() -> impl Strategy<Value = String> + Clone {
    vec(any::<u8>(), 0..24).prop_map(|b| STANDARD.encode(b))
}

fn number() -> impl Strategy<Value = Value> + Clone {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        (-1.0e9f64..1.0e9).prop_map(Value::from),
    ]
}

pub(super) fn scalar() -> impl Strategy<Value = Value> + Clone {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        number(),
        text().prop_map(Value::from),
    ]
}

/// Arbitrary JSON, nested a few levels.
pub fn any_json() -> impl Strategy<Value = Value> + Clone {
    scalar().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            btree_map(text(), inner, 0..4).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// An arbitrary JSON object.
pub fn object() -> impl Strategy<Value = Map<String, Value>> + Clone {
    btree_map(text(), any_json(), 0..4).prop_map(|m| m.into_iter().collect())
}

/// A `_meta` object with prefixed keys (MetaObject naming rules).
pub(super) fn meta() -> impl Strategy<Value = Option<Value>> + Clone {
    option::of(
        btree_map(
            ident().prop_map(|k| format!("com.example/{k}")),
            scalar(),
            0..3,
        )
        .prop_map(|m| Value::Object(m.into_iter().collect())),
    )
}

pub(super) fn progress_token() -> impl Strategy<Value = Value> + Clone {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        text().prop_map(Value::from)
    ]
}

pub(super) fn level() -> impl Strategy<Value = LoggingLevel> + Clone {
    prop_oneof![
        Just(LoggingLevel::Debug),
        Just(LoggingLevel::Info),
        Just(LoggingLevel::Notice),
        Just(LoggingLevel::Warning),
        Just(LoggingLevel::Error),
        Just(LoggingLevel::Critical),
        Just(LoggingLevel::Alert),
        Just(LoggingLevel::Emergency),
    ]
}

pub(super) fn role() -> impl Strategy<Value = Role> + Clone {
    prop_oneof![Just(Role::User), Just(Role::Assistant)]
}

fn icons() -> impl Strategy<Value = Option<Value>> + Clone {
    option::of(
        vec(
            (uri(), option::of("image/(png|svg\\+xml)"), any::<bool>()).prop_map(
                |(src, mime, dark)| {
                    let mut o = json!({"src": src, "theme": if dark { "dark" } else { "light" }});
                    if let Some(m) = mime {
                        o["mimeType"] = Value::from(m);
                    }
                    o
                },
            ),
            0..3,
        )
        .prop_map(Value::Array),
    )
}

fn annotations() -> impl Strategy<Value = Option<Value>> + Clone {
    option::of((any::<bool>(), 0.0f64..=1.0).prop_map(
        |(user, p)| json!({"audience": [if user { "user" } else { "assistant" }], "priority": p}),
    ))
}

fn with_extras(mut block: Value, ann: Option<Value>, meta: Option<Value>) -> Value {
    if let Some(a) = ann {
        block["annotations"] = a;
    }
    if let Some(m) = meta {
        block["_meta"] = m;
    }
    block
}

/// Resource contents: text or blob.
pub(super) fn resource_contents() -> impl Strategy<Value = Value> + Clone {
    prop_oneof![
        (uri(), text()).prop_map(|(u, t)| json!({"uri": u, "mimeType": "text/plain", "text": t})),
        (uri(), b64()).prop_map(|(u, b)| json!({"uri": u, "blob": b})),
    ]
}

/// One `ContentBlock` (text, image, audio, resource link, embedded resource).
pub fn content_block() -> impl Strategy<Value = Value> + Clone {
    let block = prop_oneof![
        text().prop_map(|t| json!({"type": "text", "text": t})),
        b64().prop_map(|d| json!({"type": "image", "data": d, "mimeType": "image/png"})),
        b64().prop_map(|d| json!({"type": "audio", "data": d, "mimeType": "audio/wav"})),
        (uri(), text(), option::of(0u32..1_000_000)).prop_map(|(u, n, size)| {
            let mut b = json!({"type": "resource_link", "uri": u, "name": n});
            if let Some(s) = size {
                b["size"] = Value::from(s);
            }
            b
        }),
        resource_contents().prop_map(|r| json!({"type": "resource", "resource": r})),
    ];
    (block, annotations(), meta()).prop_map(|(b, a, m)| with_extras(b, a, m))
}

pub(super) fn object_schema() -> impl Strategy<Value = Value> + Clone {
    btree_map(
        ident(),
        prop_oneof![
            Just(json!({"type": "string"})),
            Just(json!({"type": "integer"})),
            Just(json!({"type": "number"})),
            Just(json!({"type": "boolean"})),
        ],
        0..4,
    )
    .prop_map(|props| {
        let required: Vec<&String> = props.keys().take(1).collect();
        json!({"type": "object", "properties": props, "required": required})
    })
}

/// A `Tool` definition.
pub fn tool() -> impl Strategy<Value = Tool> {
    (
        (ident(), option::of(text()), option::of(text())),
        (object_schema(), option::of(object_schema())),
        (any::<bool>(), any::<bool>(), icons(), meta()),
    )
        .prop_map(
            |((name, title, description), (input, output), (ro, hint, icons, meta))| Tool {
                name,
                title,
                description,
                input_schema: input,
                output_schema: output,
                annotations: hint.then(|| json!({"readOnlyHint": ro})),
                icons,
                execution: None,
                meta,
            },
        )
}

/// A `Prompt` definition.
pub fn prompt() -> impl Strategy<Value = Prompt> {
    let arg = (
        ident(),
        option::of(text()),
        option::of(text()),
        option::of(any::<bool>()),
    )
        .prop_map(|(name, title, description, required)| PromptArgument {
            name,
            title,
            description,
            required,
        });
    (
        ident(),
        option::of(text()),
        option::of(text()),
        option::of(vec(arg, 0..3)),
        icons(),
        meta(),
    )
        .prop_map(
            |(name, title, description, arguments, icons, meta)| Prompt {
                name,
                title,
                description,
                arguments,
                icons,
                meta,
            },
        )
}

/// A `Resource` definition.
pub fn resource() -> impl Strategy<Value = Resource> {
    (
        (uri(), text(), option::of(text()), option::of(text())),
        (
            option::of("text/(plain|markdown)"),
            option::of(0u64..1 << 40),
        ),
        (annotations(), icons(), meta()),
    )
        .prop_map(
            |((uri, name, title, description), (mime_type, size), (ann, icons, meta))| Resource {
                uri,
                name,
                title,
                description,
                mime_type,
                size,
                annotations: ann,
                icons,
                meta,
            },
        )
}

/// A `ResourceTemplate` definition.
pub fn resource_template() -> impl Strategy<Value = ResourceTemplate> {
    (
        (
            uri().prop_map(|u| format!("{u}/{{id}}")),
            text(),
            option::of(text()),
        ),
        (
            option::of(text()),
            option::of("text/plain"),
            annotations(),
            icons(),
            meta(),
        ),
    )
        .prop_map(
            |((uri_template, name, title), (description, mime_type, ann, icons, meta))| {
                ResourceTemplate {
                    uri_template,
                    name,
                    title,
                    description,
                    mime_type,
                    annotations: ann,
                    icons,
                    meta,
                }
            },
        )
}

/// An `Implementation` (client or server info).
pub fn implementation() -> impl Strategy<Value = Implementation> + Clone {
    (
        text(),
        "[0-9]{1,2}\\.[0-9]{1,2}\\.[0-9]{1,2}",
        option::of(text()),
        option::of(text()),
    )
        .prop_map(|(name, version, title, description)| Implementation {
            name,
            version,
            title,
            description,
            website_url: None,
            icons: None,
        })
}

/// A `CallToolResult`; legacy `structuredContent` is an object, modern any JSON (TOOL-01).
pub fn call_tool_result(era: Era) -> impl Strategy<Value = CallToolResult> {
    let structured = match era {
        Era::Legacy => object().prop_map(Value::Object).boxed(),
        Era::Modern => any_json()
            .prop_filter("null reads back as absent", |v| !v.is_null())
            .boxed(),
    };
    (
        vec(content_block(), 0..4),
        option::of(structured),
        option::of(any::<bool>()),
        meta(),
    )
        .prop_map(
            |(content, structured_content, is_error, meta)| CallToolResult {
                content,
                structured_content,
                is_error,
                meta,
            },
        )
}

/// A `GetPromptResult`.
pub fn get_prompt_result() -> impl Strategy<Value = GetPromptResult> {
    let msg = (role(), content_block()).prop_map(|(r, c)| PromptMessage::new(r, c));
    (option::of(text()), vec(msg, 0..4), meta()).prop_map(|(description, messages, meta)| {
        GetPromptResult {
            description,
            messages,
            meta,
        }
    })
}

/// A `ReadResourceResult`.
pub fn read_resource_result() -> impl Strategy<Value = ReadResourceResult> {
    (vec(resource_contents(), 0..4), meta())
        .prop_map(|(contents, meta)| ReadResourceResult { contents, meta })
}
