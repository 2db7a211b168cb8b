use super::*;
use serde_json::json;

#[test]
fn completion_over_the_cap_is_cut_with_total_and_has_more() {
    let values: Vec<Value> = (0..150).map(|i| json!(format!("v{i}"))).collect();
    let r = completion_result(Value::Array(values.clone()));
    let c = &r["completion"];
    assert_eq!(c["values"].as_array().map(Vec::len), Some(100));
    assert_eq!(c["total"], 150);
    assert_eq!(c["hasMore"], true);
    // A whole result over the cap keeps its own total and gets hasMore.
    let r = completion_result(json!({"completion": {"values": values, "total": 1000}}));
    assert_eq!(r["completion"]["total"], 1000);
    assert_eq!(r["completion"]["hasMore"], true);
    assert_eq!(r["completion"]["values"][99], "v99");
}

#[test]
fn completion_within_the_cap_is_kept() {
    let r = completion_result(json!(["a", 2]));
    assert_eq!(
        r,
        json!({"completion": {"values": ["a", "2"], "total": 2, "hasMore": false}})
    );
    let whole = json!({"completion": {"values": ["a"], "hasMore": true}});
    assert_eq!(completion_result(whole.clone()), whole);
}

#[test]
fn tool_values_take_one_shape() {
    assert_eq!(
        tool_result(json!("hi")),
        json!({"content": [{"type": "text", "text": "hi"}]})
    );
    assert_eq!(tool_result(Value::Null), json!({"content": []}));
    let blocks = json!([{"type": "text", "text": "a"}, {"type": "image", "data": "AA==", "mimeType": "image/png"}]);
    assert_eq!(tool_result(blocks.clone()), json!({"content": blocks}));
    let r = tool_result(json!({"n": 1}));
    assert_eq!(r["structuredContent"], json!({"n": 1}));
    assert_eq!(r["content"][0]["text"], "{\"n\":1}");
    let whole = json!({"content": [{"type": "text", "text": "x"}], "isError": true});
    assert_eq!(tool_result(whole.clone()), whole);
    assert_eq!(tool_result(json!([1, 2]))["content"][0]["text"], "[1,2]");
}

#[test]
fn media_goes_by_mime_prefix() {
    let b = media_block(b"\x89PNG", "image/png").expect("image");
    assert_eq!(b["type"], "image");
    assert_eq!(b["data"], "iVBORw==");
    assert_eq!(
        media_block(b"x", "Audio/wav").expect("audio")["type"],
        "audio"
    );
    assert!(media_block(b"x", "text/plain").is_err());
    assert!(media_block(b"x", "png").is_err());
}

#[test]
fn resources_get_the_definition_type_or_the_defaults() {
    let plain = ResultShape::of("resource", &json!({"uri": "a://b", "name": "b"}));
    let r = plain.apply(json!("t"), Some("a://b")).expect("text");
    assert_eq!(
        r,
        json!({"contents": [{"uri": "a://b", "mimeType": "text/plain", "text": "t"}]})
    );
    let r = plain.apply_bytes(b"x", None, Some("a://b")).expect("blob");
    assert_eq!(r["contents"][0]["mimeType"], "application/octet-stream");
    assert_eq!(r["contents"][0]["blob"], "eA==");
    let app = ResultShape::of("resource", &json!({"uri": "ui://w", "name": "w"}));
    let r = app.apply(json!("<p>"), Some("ui://w")).expect("html");
    assert_eq!(r["contents"][0]["mimeType"], APP_MIME_TYPE);
    let typed = ResultShape::of(
        "resource_template",
        &json!({"uriTemplate": "a://{x}", "mimeType": "text/csv"}),
    );
    assert_eq!(
        typed.apply(json!(3), Some("a://1")).expect("json")["contents"][0]["mimeType"],
        "text/csv"
    );
}

#[test]
fn prompts_and_tool_bytes() {
    let r = prompt_result(
        json!(["hi", {"role": "assistant", "content": {"type": "text", "text": "x"}}]),
    )
    .expect("messages");
    assert_eq!(r["messages"][0]["role"], "user");
    assert_eq!(r["messages"][1]["role"], "assistant");
    assert!(prompt_result(json!(3)).is_err());
    let r = ResultShape::Tool
        .apply_bytes(b"x", Some("audio/ogg"), None)
        .expect("media");
    assert_eq!(r["content"][0]["type"], "audio");
    assert!(ResultShape::Tool.apply_bytes(b"x", None, None).is_err());
}
