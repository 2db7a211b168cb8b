//! Property tests of the codec (REQUIREMENTS JR-01…JR-03, STDIO-01): arbitrary valid messages of
//! both eras, encoded by core, are valid against the official schema of their era
//! (`spec/<era>/schema.json`), decode back to what was encoded (typed results into the same core
//! type), re-encode to the same bytes, and survive newline framing read in chunks of any size.

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use super::codec::FrameReader;
use super::props_gen::{self as gen, Call, Era};
use super::props_msgs as msgs;
use super::{
    classify, encode_error, encode_notification, encode_request, encode_result, parse_frame, Id,
    Incoming, ParsedFrame,
};
use crate::error::ErrorObject;

type Cache = Mutex<HashMap<(Era, String), Arc<jsonschema::Validator>>>;

/// The compiled validator of `$defs/<def>` in the era's vendored official schema.
fn validator(era: Era, def: &str) -> Arc<jsonschema::Validator> {
    static DOCS: OnceLock<HashMap<Era, Value>> = OnceLock::new();
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let docs = DOCS.get_or_init(|| {
        [(Era::Legacy, "2025-11-25"), (Era::Modern, "2026-07-28")]
            .into_iter()
            .map(|(era, dir)| {
                let path = format!("{}/../spec/{dir}/schema.json", env!("CARGO_MANIFEST_DIR"));
                let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
                (era, serde_json::from_str(&text).expect("schema JSON"))
            })
            .collect()
    });
    let mut cache = CACHE
        .get_or_init(Cache::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    cache
        .entry((era, def.to_owned()))
        .or_insert_with(|| {
            let defs = &docs[&era]["$defs"];
            assert!(defs.get(def).is_some(), "no $defs/{def} in {era:?}");
            let schema = json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "$ref": format!("#/$defs/{def}"),
                "$defs": defs,
            });
            Arc::new(jsonschema::validator_for(&schema).expect("schema compiles"))
        })
        .clone()
}

fn conforms(era: Era, def: &str, v: &Value) -> Result<(), TestCaseError> {
    let val = validator(era, def);
    if val.is_valid(v) {
        return Ok(());
    }
    let why: Vec<String> = val
        .iter_errors(v)
        .take(3)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    Err(TestCaseError::fail(format!(
        "{era:?} {def}: {} in {v}",
        why.join("; ")
    )))
}

/// Decode one encoded message the way every transport does: frame parse, then classify.
fn decode(bytes: &[u8]) -> Incoming {
    match parse_frame(bytes, 64) {
        ParsedFrame::Single(v) => classify(v),
        other => panic!("not a single message: {other:?}"),
    }
}

fn wire(era: Era, def: &str, bytes: &[u8]) -> Result<Value, TestCaseError> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
    conforms(era, "JSONRPCMessage", &v)?;
    conforms(era, def, &v)?;
    Ok(v)
}

fn id() -> impl Strategy<Value = Id> {
    prop_oneof![
        any::<i64>().prop_map(Id::Num),
        gen::text().prop_map(|s| Id::from(s.as_str()))
    ]
}

fn request_round_trip(era: Era, id: Id, (def, method, params): Call) -> Result<(), TestCaseError> {
    let bytes = encode_request(&id, method, params.as_ref());
    wire(era, def, &bytes)?;
    let Incoming::Request {
        id: id2,
        method: m2,
        params: p2,
    } = decode(&bytes)
    else {
        return Err(TestCaseError::fail("not decoded as a request"));
    };
    prop_assert_eq!((&id2, m2.as_str(), &p2), (&id, method, &params));
    prop_assert_eq!(encode_request(&id2, &m2, p2.as_ref()), bytes);
    Ok(())
}

fn notification_round_trip(era: Era, (def, method, params): Call) -> Result<(), TestCaseError> {
    let bytes = encode_notification(method, params.as_ref());
    wire(era, def, &bytes)?;
    let Incoming::Notification {
        method: m2,
        params: p2,
    } = decode(&bytes)
    else {
        return Err(TestCaseError::fail("not decoded as a notification"));
    };
    prop_assert_eq!((m2.as_str(), &p2), (method, &params));
    Ok(())
}

/// A result as core's type: `wrap` adds what the era's result object carries beside the type
/// (list key, `resultType`, cache hints), `unwrap` takes the type's part back out.
fn typed_round_trip<T>(
    era: Era,
    def: &str,
    id: &Id,
    typed: &T,
    wrap: impl Fn(Value) -> Value,
    unwrap: impl Fn(Value) -> Value,
) -> Result<(), TestCaseError>
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
{
    let result = wrap(serde_json::to_value(typed).map_err(|e| TestCaseError::fail(e.to_string()))?);
    let bytes = encode_result(id, &result);
    let v = wire(era, "JSONRPCResultResponse", &bytes)?;
    conforms(era, def, &v["result"])?;
    let Incoming::Response {
        id: id2,
        outcome: Ok(got),
    } = decode(&bytes)
    else {
        return Err(TestCaseError::fail("not decoded as a result"));
    };
    prop_assert_eq!(&id2, id);
    prop_assert_eq!(&got, &result);
    let back: T =
        serde_json::from_value(unwrap(got)).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&back, typed);
    Ok(())
}

/// Wrap a list as the era's list result: `{key: items}`, modern with `resultType` and cache hints.
fn list(era: Era, key: &'static str, ttl: u32, public: bool) -> impl Fn(Value) -> Value {
    move |items| {
        let v = json!({ key: items, "nextCursor": "c" });
        match era {
            Era::Legacy => v,
            Era::Modern => msgs::modern_result(v, true, ttl, public),
        }
    }
}

fn take(key: &'static str) -> impl Fn(Value) -> Value {
    move |mut v| v[key].take()
}

fn plain(era: Era, cacheable: bool) -> impl Fn(Value) -> Value {
    move |v| match era {
        Era::Legacy => v,
        Era::Modern => msgs::modern_result(v, cacheable, 1_000, false),
    }
}

fn era() -> impl Strategy<Value = Era> {
    prop_oneof![Just(Era::Legacy), Just(Era::Modern)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn legacy_client_requests_round_trip(id in id(), call in msgs::client_request(Era::Legacy)) {
        request_round_trip(Era::Legacy, id, call)?;
    }

    #[test]
    fn modern_client_requests_round_trip(id in id(), call in msgs::client_request(Era::Modern)) {
        request_round_trip(Era::Modern, id, call)?;
    }

    #[test]
    fn legacy_server_requests_round_trip(id in id(), call in msgs::server_request()) {
        request_round_trip(Era::Legacy, id, call)?;
    }

    #[test]
    fn notifications_round_trip((era, call) in era().prop_flat_map(|e| (Just(e), msgs::notification(e)))) {
        notification_round_trip(era, call)?;
    }

    #[test]
    fn call_tool_results_round_trip(
        id in id(), (era, r) in era().prop_flat_map(|e| (Just(e), gen::call_tool_result(e)))
    ) {
        typed_round_trip(era, "CallToolResult", &id, &r, plain(era, false), |v| v)?;
    }

    #[test]
    fn prompt_and_resource_results_round_trip(
        id in id(), era in era(), p in gen::get_prompt_result(), r in gen::read_resource_result()
    ) {
        typed_round_trip(era, "GetPromptResult", &id, &p, plain(era, false), |v| v)?;
        typed_round_trip(era, "ReadResourceResult", &id, &r, plain(era, true), |v| v)?;
    }

    #[test]
    fn list_results_round_trip(
        id in id(), era in era(), ttl in any::<u32>(), public in any::<bool>(),
        tools in proptest::collection::vec(gen::tool(), 0..3),
        prompts in proptest::collection::vec(gen::prompt(), 0..3),
        resources in proptest::collection::vec(gen::resource(), 0..3),
        templates in proptest::collection::vec(gen::resource_template(), 0..3),
    ) {
        typed_round_trip(era, "ListToolsResult", &id, &tools, list(era, "tools", ttl, public), take("tools"))?;
        typed_round_trip(era, "ListPromptsResult", &id, &prompts, list(era, "prompts", ttl, public), take("prompts"))?;
        typed_round_trip(era, "ListResourcesResult", &id, &resources, list(era, "resources", ttl, public), take("resources"))?;
        typed_round_trip(
            era, "ListResourceTemplatesResult", &id, &templates,
            list(era, "resourceTemplates", ttl, public), take("resourceTemplates"),
        )?;
    }

    #[test]
    fn other_results_round_trip(
        id in id(), (era, (def, result)) in era().prop_flat_map(|e| (Just(e), msgs::other_result(e)))
    ) {
        typed_round_trip(era, def, &id, &result, |v| v, |v| v)?;
    }

    #[test]
    fn errors_round_trip(
        id in id(), era in era(), code in any::<i64>(), message in gen::text(),
        data in proptest::option::of(gen::any_json().prop_filter("null reads back as absent", |d| !d.is_null())),
    ) {
        let err = ErrorObject { code, message, data };
        let bytes = encode_error(Some(&id), &err);
        wire(era, "JSONRPCErrorResponse", &bytes)?;
        let Incoming::Response { id: id2, outcome: Err(got) } = decode(&bytes) else {
            return Err(TestCaseError::fail("not decoded as an error"));
        };
        prop_assert_eq!((&id2, &got), (&id, &err));
    }

    /// STDIO-01: any sequence of messages, newline framed, reads back frame by frame whatever
    /// size the reads come in.
    #[test]
    fn framing_round_trips_in_any_chunking(
        id in id(), calls in proptest::collection::vec(msgs::client_request(Era::Modern), 1..6),
        chunk in 1usize..64,
    ) {
        let frames: Vec<Vec<u8>> = calls.iter().map(|(_, m, p)| encode_request(&id, m, p.as_ref())).collect();
        let stream: Vec<u8> = frames.iter().flat_map(|f| f.iter().copied().chain([b'\n'])).collect();
        let limit = frames.iter().map(Vec::len).max().unwrap_or(1);
        let read = tokio::runtime::Builder::new_current_thread().build()?.block_on(async {
            let mut r = FrameReader::new(tokio::io::BufReader::with_capacity(chunk, &stream[..]), limit)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let mut out = Vec::new();
            while let Some(f) = r.next_frame().await.map_err(|e| TestCaseError::fail(e.to_string()))? {
                out.push(f.to_vec());
            }
            Ok::<_, TestCaseError>(out)
        })?;
        prop_assert_eq!(read, frames);
    }
}
