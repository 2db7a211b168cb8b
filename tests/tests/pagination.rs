//! Pagination of the four list methods over real stdio pipes (REQUIREMENTS PAGE-01): a
//! configurable page size (default: one page), opaque string cursors, and -32602 for
//! a non-string, malformed, negative or out-of-range cursor.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use mcpcore_tests::StdioPeer;
use serde_json::{json, Value};

const LISTS: [(&str, &str, &str); 4] = [
    ("tools/list", "tools", "name"),
    ("prompts/list", "prompts", "name"),
    ("resources/list", "resources", "uri"),
    (
        "resources/templates/list",
        "resourceTemplates",
        "uriTemplate",
    ),
];

/// Walk every page; returns the keys in order and the number of pages.
async fn walk(p: &mut StdioPeer, method: &str, key: &str, field: &str) -> (Vec<String>, usize) {
    let mut out = Vec::new();
    let mut cursor: Option<Value> = None;
    for pages in 1..=100 {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let r = p.request(method, params).await;
        let items = r["result"][key].as_array().unwrap_or_else(|| panic!("{r}"));
        out.extend(
            items
                .iter()
                .map(|i| i[field].as_str().unwrap_or_default().to_owned()),
        );
        match r["result"].get("nextCursor") {
            Some(c) => {
                assert!(c.is_string(), "cursors are strings: {c}");
                assert!(!items.is_empty(), "a page before the end is not empty");
                cursor = Some(c.clone());
            }
            None => return (out, pages),
        }
    }
    panic!("{method}: more than 100 pages");
}

/// PAGE-01: the default page size is "everything in one page".
#[tokio::test]
async fn page01_default_is_one_page() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    for (method, key, field) in LISTS {
        let (items, pages) = walk(&mut p, method, key, field).await;
        assert_eq!(pages, 1, "{method}");
        assert!(!items.is_empty());
    }
}

/// PAGE-01: with a page size of 2 every list pages through all its items exactly once, in
/// the same order as the unpaged list.
#[tokio::test]
async fn page01_configured_page_size_walks_everything() {
    let mut whole = StdioPeer::wire_ready(&[], json!({})).await;
    let mut paged = StdioPeer::wire_ready(&["--page-size", "2"], json!({})).await;
    for (method, key, field) in LISTS {
        let (all, _) = walk(&mut whole, method, key, field).await;
        let (items, pages) = walk(&mut paged, method, key, field).await;
        assert_eq!(items, all, "{method}");
        assert_eq!(pages, all.len().div_ceil(2), "{method}");
    }
}

/// PAGE-01: bad cursors → -32602 on every list method.
#[tokio::test]
async fn page01_bad_cursors_rejected() {
    let mut p = StdioPeer::wire_ready(&["--page-size", "1"], json!({})).await;
    // A real cursor from a long list, replayed on a shorter one, is out of range there.
    let r = p.request("tools/list", json!({})).await;
    let mut tools_cursor = r["result"]["nextCursor"].clone();
    for _ in 0..6 {
        let r = p
            .request("tools/list", json!({"cursor": tools_cursor}))
            .await;
        tools_cursor = r["result"]["nextCursor"].clone();
    }
    assert!(tools_cursor.is_string(), "tools has more than 7 entries");
    let r = p
        .request("resources/templates/list", json!({"cursor": tools_cursor}))
        .await;
    assert_eq!(r["error"]["code"], -32602, "out-of-range cursor: {r}");

    // The cursor format is private to the server; these forge its shape to reach the
    // negative and far-out-of-range branches.
    let forged = |s: &str| json!(URL_SAFE_NO_PAD.encode(s));
    let bad = [
        json!(5),
        json!(true),
        json!({"offset": 1}),
        json!(["c"]),
        json!("not a cursor"),
        json!(""),
        json!("%%%"),
        forged("mcpc1:-1"),
        forged("mcpc1:99999999999999999999999"),
        forged("mcpc1:1000"),
    ];
    for (method, _, _) in LISTS {
        for c in &bad {
            let r = p.request(method, json!({"cursor": c})).await;
            assert_eq!(r["error"]["code"], -32602, "{method} cursor {c}: {r}");
        }
        let r = p.request(method, json!({"cursor": null})).await;
        assert!(r.get("result").is_some(), "a null cursor is the first page");
    }
}
