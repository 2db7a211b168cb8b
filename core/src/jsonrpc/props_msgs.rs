//! Generators of valid MCP requests, notifications and untyped results of both eras for the
//! codec property tests (`props.rs`), built from the pieces in `props_gen.rs` and following the
//! official schema of each era (§0.2 envelope, MRTR-02/03 input requests and responses, SUB-03).

use proptest::collection::{btree_map, vec};
use proptest::option;
use proptest::prelude::*;
use serde_json::{json, Map, Value};

use super::props_gen::{
    any_json, ident, implementation, level, object, object_schema, progress_token, role, text, uri,
    Call, Era,
};
use crate::protocol::envelope::{
    KEY_CLIENT_CAPABILITIES, KEY_CLIENT_INFO, KEY_LOG_LEVEL, KEY_PROTOCOL_VERSION,
    KEY_SUBSCRIPTION_ID,
};

/// Client capabilities of the era.
fn client_capabilities(era: Era) -> impl Strategy<Value = Value> + Clone {
    (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()).prop_map(
        move |(roots, sampling, form, url)| {
            let mut c = json!({});
            if roots {
                c["roots"] = match era {
                    Era::Legacy => json!({"listChanged": true}),
                    Era::Modern => json!({}),
                };
            }
            if sampling {
                c["sampling"] = json!({});
            }
            if form || url {
                let mut e = json!({});
                if form {
                    e["form"] = json!({});
                }
                if url {
                    e["url"] = json!({});
                }
                c["elicitation"] = e;
            }
            c
        },
    )
}

/// The request `_meta` of the era: legacy an optional progress token, modern the per-request
/// envelope (version claim, capabilities, optional client info and log level; §0.2).
fn request_meta(era: Era) -> BoxedStrategy<Option<Value>> {
    match era {
        Era::Legacy => {
            option::of(progress_token().prop_map(|t| json!({"progressToken": t}))).boxed()
        }
        Era::Modern => (
            client_capabilities(era),
            option::of(implementation()),
            option::of(level()),
            option::of(progress_token()),
        )
            .prop_map(|(caps, info, lvl, token)| {
                let mut m =
                    json!({KEY_PROTOCOL_VERSION: "2026-07-28", KEY_CLIENT_CAPABILITIES: caps});
                if let Some(i) = info {
                    m[KEY_CLIENT_INFO] = json!(i);
                }
                if let Some(l) = lvl {
                    m[KEY_LOG_LEVEL] = json!(l);
                }
                if let Some(t) = token {
                    m["progressToken"] = t;
                }
                Some(m)
            })
            .boxed(),
    }
}

/// Params `fields` plus the era's request `_meta`; `None` when a legacy request carries neither.
fn with_meta(era: Era, fields: Value) -> BoxedStrategy<Option<Map<String, Value>>> {
    request_meta(era)
        .prop_map(move |meta| {
            let mut p = fields.as_object().cloned().unwrap_or_default();
            if let Some(m) = meta {
                p.insert("_meta".into(), m);
            }
            (!p.is_empty()).then_some(p)
        })
        .boxed()
}

/// A request with fields drawn from `fields`, checked against `def`.
fn request<S>(era: Era, def: &'static str, method: &'static str, fields: S) -> BoxedStrategy<Call>
where
    S: Strategy<Value = Value> + 'static,
{
    fields
        .prop_flat_map(move |f| with_meta(era, f))
        .prop_map(move |p| (def, method, p))
        .boxed()
}

fn cursor() -> impl Strategy<Value = Value> + Clone {
    option::of(text()).prop_map(|c| c.map_or_else(|| json!({}), |c| json!({"cursor": c})))
}

fn string_args() -> impl Strategy<Value = Value> + Clone {
    btree_map(ident(), text(), 0..3).prop_map(|m| json!(m))
}

/// A sampling request's params (no tools, no deprecated context).
fn sampling_params() -> impl Strategy<Value = Value> + Clone {
    (vec((role(), text()), 1..3), 1u32..4096, option::of(text())).prop_map(|(msgs, max, sys)| {
        let messages: Vec<Value> = msgs
            .into_iter()
            .map(|(r, t)| json!({"role": r, "content": {"type": "text", "text": t}}))
            .collect();
        let mut p = json!({"messages": messages, "maxTokens": max});
        if let Some(s) = sys {
            p["systemPrompt"] = Value::from(s);
        }
        p
    })
}

/// An elicitation request's params: a form, or (legacy also needs an id) a URL.
fn elicit_params(era: Era) -> impl Strategy<Value = Value> + Clone {
    prop_oneof![
        (text(), object_schema())
            .prop_map(|(m, s)| json!({"mode": "form", "message": m, "requestedSchema": s})),
        (text(), uri(), ident()).prop_map(move |(m, u, id)| {
            let mut p = json!({"mode": "url", "message": m, "url": u});
            if era == Era::Legacy {
                p["elicitationId"] = Value::from(id);
            }
            p
        }),
    ]
}

/// An `InputRequest` of the modern era (MRTR-02).
pub fn input_request() -> impl Strategy<Value = Value> + Clone {
    prop_oneof![
        sampling_params().prop_map(|p| json!({"method": "sampling/createMessage", "params": p})),
        Just(json!({"method": "roots/list"})),
        elicit_params(Era::Modern)
            .prop_map(|p| json!({"method": "elicitation/create", "params": p})),
    ]
}

/// A client's answer to an input request (`ElicitResult`, `CreateMessageResult`, `ListRootsResult`).
pub fn input_response() -> impl Strategy<Value = Value> + Clone {
    prop_oneof![
        (prop_oneof![Just("accept"), Just("decline"), Just("cancel")], btree_map(ident(), text(), 0..3))
            .prop_map(|(a, c)| json!({"action": a, "content": c})),
        (role(), text(), ident()).prop_map(|(r, t, model)| {
            json!({"role": r, "content": {"type": "text", "text": t}, "model": model, "stopReason": "endTurn"})
        }),
        vec((uri(), option::of(text())), 0..3).prop_map(|roots| {
            let roots: Vec<Value> = roots
                .into_iter()
                .map(|(u, n)| n.map_or_else(|| json!({"uri": u}), |n| json!({"uri": u, "name": n})))
                .collect();
            json!({"roots": roots})
        }),
    ]
}

/// `inputResponses` and/or `requestState` of a retried modern call (MRTR-03).
fn retry_fields() -> impl Strategy<Value = Value> + Clone {
    (
        option::of(btree_map(ident(), input_response(), 1..3)),
        option::of("v1\\.[A-Za-z0-9_-]{8,40}"),
    )
        .prop_map(|(responses, state)| {
            let mut f = json!({});
            if let Some(r) = responses {
                f["inputResponses"] = json!(r);
            }
            if let Some(s) = state {
                f["requestState"] = Value::from(s);
            }
            f
        })
}

fn merge(mut a: Value, b: Value) -> Value {
    if let (Some(a), Value::Object(b)) = (a.as_object_mut(), b) {
        a.extend(b);
    }
    a
}

fn filter() -> impl Strategy<Value = Value> + Clone {
    (any::<bool>(), any::<bool>(), vec(uri(), 0..3)).prop_map(|(tools, prompts, subs)| {
        json!({"toolsListChanged": tools, "promptsListChanged": prompts, "resourceSubscriptions": subs})
    })
}

/// Requests a client sends, per era.
pub fn client_request(era: Era) -> BoxedStrategy<Call> {
    let completion = (ident(), ident(), text(), string_args()).prop_map(|(p, a, v, ctx)| {
        json!({"ref": {"type": "ref/prompt", "name": p}, "argument": {"name": a, "value": v}, "context": {"arguments": ctx}})
    });
    let call = (ident(), option::of(object()));
    let common = vec![
        request(era, "ListToolsRequest", "tools/list", cursor()),
        request(era, "ListPromptsRequest", "prompts/list", cursor()),
        request(era, "ListResourcesRequest", "resources/list", cursor()),
        request(
            era,
            "ListResourceTemplatesRequest",
            "resources/templates/list",
            cursor(),
        ),
        request(era, "CompleteRequest", "completion/complete", completion),
    ];
    let per_era = match era {
        Era::Legacy => vec![
            request(
                era,
                "InitializeRequest",
                "initialize",
                (client_capabilities(era), implementation()).prop_map(|(c, i)| {
                    json!({"protocolVersion": "2025-11-25", "capabilities": c, "clientInfo": i})
                }),
            ),
            request(era, "PingRequest", "ping", Just(json!({}))),
            request(
                era,
                "CallToolRequest",
                "tools/call",
                call.prop_map(|(n, a)| a.map_or_else(|| json!({"name": n}), |a| json!({"name": n, "arguments": a}))),
            ),
            request(era, "GetPromptRequest", "prompts/get", (ident(), string_args()).prop_map(|(n, a)| json!({"name": n, "arguments": a}))),
            request(era, "ReadResourceRequest", "resources/read", uri().prop_map(|u| json!({"uri": u}))),
            request(era, "SubscribeRequest", "resources/subscribe", uri().prop_map(|u| json!({"uri": u}))),
            request(era, "UnsubscribeRequest", "resources/unsubscribe", uri().prop_map(|u| json!({"uri": u}))),
            request(era, "SetLevelRequest", "logging/setLevel", level().prop_map(|l| json!({"level": l}))),
        ],
        Era::Modern => vec![
            request(era, "DiscoverRequest", "server/discover", Just(json!({}))),
            request(
                era,
                "CallToolRequest",
                "tools/call",
                (call, retry_fields()).prop_map(|((n, a), r)| {
                    let base = a.map_or_else(|| json!({"name": n}), |a| json!({"name": n, "arguments": a}));
                    merge(base, r)
                }),
            ),
            request(
                era,
                "GetPromptRequest",
                "prompts/get",
                (ident(), string_args(), retry_fields()).prop_map(|(n, a, r)| merge(json!({"name": n, "arguments": a}), r)),
            ),
            request(era, "ReadResourceRequest", "resources/read", (uri(), retry_fields()).prop_map(|(u, r)| merge(json!({"uri": u}), r))),
            request(era, "SubscriptionsListenRequest", "subscriptions/listen", filter().prop_map(|f| json!({"notifications": f}))),
        ],
    };
    proptest::strategy::Union::new(common.into_iter().chain(per_era)).boxed()
}

/// Requests a legacy server sends to its client (sampling, elicitation, roots, ping).
pub fn server_request() -> BoxedStrategy<Call> {
    let era = Era::Legacy;
    proptest::strategy::Union::new(vec![
        request(
            era,
            "CreateMessageRequest",
            "sampling/createMessage",
            sampling_params(),
        ),
        request(
            era,
            "ElicitRequest",
            "elicitation/create",
            elicit_params(era),
        ),
        request(era, "ListRootsRequest", "roots/list", Just(json!({}))),
        request(era, "PingRequest", "ping", Just(json!({}))),
    ])
    .boxed()
}

fn note<S>(def: &'static str, method: &'static str, params: S) -> BoxedStrategy<Call>
where
    S: Strategy<Value = Option<Value>> + 'static,
{
    params
        .prop_map(move |p| (def, method, p.and_then(|p| p.as_object().cloned())))
        .boxed()
}

/// Notifications either side sends, per era.
pub fn notification(era: Era) -> BoxedStrategy<Call> {
    let id = prop_oneof![
        any::<i64>().prop_map(Value::from),
        text().prop_map(Value::from)
    ];
    let sub_meta = option::of(ident()).prop_map(move |s| match (era, s) {
        (Era::Modern, Some(s)) => json!({"_meta": {KEY_SUBSCRIPTION_ID: s}}),
        _ => json!({}),
    });
    let mut all = vec![
        note(
            "CancelledNotification",
            "notifications/cancelled",
            (id, option::of(text())).prop_map(|(i, r)| {
                Some(r.map_or_else(
                    || json!({"requestId": i}),
                    |r| json!({"requestId": i, "reason": r}),
                ))
            }),
        ),
        note(
            "ProgressNotification",
            "notifications/progress",
            (
                progress_token(),
                0u32..1000,
                option::of(1000u32..2000),
                option::of(text()),
            )
                .prop_map(|(t, p, total, m)| {
                    let mut v = json!({"progressToken": t, "progress": p});
                    if let Some(total) = total {
                        v["total"] = Value::from(total);
                    }
                    if let Some(m) = m {
                        v["message"] = Value::from(m);
                    }
                    Some(v)
                }),
        ),
        note(
            "LoggingMessageNotification",
            "notifications/message",
            (level(), any_json(), option::of(ident())).prop_map(|(l, d, logger)| {
                let mut v = json!({"level": l, "data": d});
                if let Some(lg) = logger {
                    v["logger"] = Value::from(lg);
                }
                Some(v)
            }),
        ),
        note(
            "ResourceUpdatedNotification",
            "notifications/resources/updated",
            (uri(), sub_meta.clone()).prop_map(|(u, m)| Some(merge(json!({"uri": u}), m))),
        ),
        note(
            "ToolListChangedNotification",
            "notifications/tools/list_changed",
            option::of(sub_meta.clone()),
        ),
        note(
            "PromptListChangedNotification",
            "notifications/prompts/list_changed",
            option::of(sub_meta),
        ),
    ];
    match era {
        Era::Legacy => {
            all.push(note(
                "InitializedNotification",
                "notifications/initialized",
                Just(None),
            ));
            all.push(note(
                "RootsListChangedNotification",
                "notifications/roots/list_changed",
                Just(None),
            ));
        }
        Era::Modern => all.push(note(
            "SubscriptionsAcknowledgedNotification",
            "notifications/subscriptions/acknowledged",
            filter().prop_map(|f| Some(json!({"notifications": f}))),
        )),
    }
    proptest::strategy::Union::new(all).boxed()
}

/// A modern result's extra fields: `resultType` plus, for a cacheable result, its cache hints.
pub fn modern_result(mut v: Value, cacheable: bool, ttl: u32, public: bool) -> Value {
    v["resultType"] = Value::from("complete");
    if cacheable {
        v["ttlMs"] = Value::from(ttl);
        v["cacheScope"] = Value::from(if public { "public" } else { "private" });
    }
    v
}

/// Untyped results of both eras: (definition, result).
pub fn other_result(era: Era) -> BoxedStrategy<(&'static str, Value)> {
    let completion = (vec(text(), 0..5), any::<bool>()).prop_map(|(values, more)| {
        json!({"completion": {"values": values, "total": values.len(), "hasMore": more}})
    });
    let server_caps = (any::<bool>(), any::<bool>()).prop_map(|(lc, sub)| {
        json!({"tools": {"listChanged": lc}, "prompts": {}, "resources": {"subscribe": sub}, "logging": {}, "completions": {}})
    });
    match era {
        Era::Legacy => proptest::strategy::Union::new(vec![
            completion.prop_map(|c| ("CompleteResult", c)).boxed(),
            Just(("EmptyResult", json!({}))).boxed(),
            (server_caps, implementation(), option::of(text()))
                .prop_map(|(c, i, ins)| {
                    let mut r = json!({"protocolVersion": "2025-11-25", "capabilities": c, "serverInfo": i});
                    if let Some(ins) = ins {
                        r["instructions"] = Value::from(ins);
                    }
                    ("InitializeResult", r)
                })
                .boxed(),
            input_response().prop_map(|r| ("ClientResult", r)).boxed(),
        ])
        .boxed(),
        Era::Modern => proptest::strategy::Union::new(vec![
            completion.prop_map(|c| ("CompleteResult", modern_result(c, false, 0, false))).boxed(),
            (server_caps, any::<u32>(), any::<bool>(), option::of(implementation()))
                .prop_map(|(c, ttl, public, info)| {
                    let mut r = json!({"supportedVersions": ["2026-07-28", "2025-11-25"], "capabilities": c});
                    if let Some(i) = info {
                        r["_meta"] = json!({"io.modelcontextprotocol/serverInfo": i});
                    }
                    ("DiscoverResult", modern_result(r, true, ttl, public))
                })
                .boxed(),
            (option::of(btree_map(ident(), input_request(), 1..3)), option::of("v1\\.[A-Za-z0-9_-]{8,40}"))
                .prop_filter("one of inputRequests/requestState", |(r, s)| r.is_some() || s.is_some())
                .prop_map(|(reqs, state)| {
                    let mut r = json!({"resultType": "input_required"});
                    if let Some(q) = reqs {
                        r["inputRequests"] = json!(q);
                    }
                    if let Some(s) = state {
                        r["requestState"] = Value::from(s);
                    }
                    ("InputRequiredResult", r)
                })
                .boxed(),
            ident()
                .prop_map(|id| ("SubscriptionsListenResult", json!({"resultType": "complete", "_meta": {KEY_SUBSCRIPTION_ID: id}})))
                .boxed(),
        ])
        .boxed(),
    }
}
