//! The defaults the C header documents are core's defaults, and every key of core's options
//! shapes is documented: the test serializes the `Default` of each options type and looks for
//! "`key` [default" in the doc block of the function that takes those options, so the header
//! cannot drift from the engine (a changed default, a new key or a renamed one fails here).

use serde_json::{json, Map, Value};
use std::path::PathBuf;

fn header() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../include/mcpcore.h");
    std::fs::read_to_string(path).expect("read include/mcpcore.h")
}

/// The doc block just before `func`'s declaration, as one line of text.
fn doc_of(header: &str, func: &str) -> String {
    let decl = header
        .find(&format!(" {func}("))
        .unwrap_or_else(|| panic!("{func} is not declared"));
    let start = header[..decl]
        .rfind("/**")
        .unwrap_or_else(|| panic!("{func} has no doc block"));
    header[start..decl]
        .lines()
        .map(|l| {
            l.trim()
                .trim_start_matches("/**")
                .trim_start_matches('*')
                .trim()
        })
        .filter(|l| !l.is_empty() && *l != "/")
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every key of `defaults` (recursing into `nested`) documented as "`key` [value]" (or followed
/// by `;` or `:` and a note); the misses are collected.
fn check(doc: &str, defaults: &Map<String, Value>, nested: &[&str], misses: &mut Vec<String>) {
    for (k, v) in defaults {
        match v {
            Value::Object(inner) if nested.contains(&k.as_str()) => {
                if !doc.contains(&format!("`{k}`")) {
                    misses.push(format!("`{k}`"));
                }
                check(doc, inner, nested, misses);
            }
            _ => {
                let val = serde_json::to_string(v).expect("serialize");
                let head = format!("`{k}` [{val}");
                let found = [']', ';', ':']
                    .iter()
                    .any(|end| doc.contains(&format!("{head}{end}")));
                if !found {
                    misses.push(format!("{head}]"));
                }
            }
        }
    }
}

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

#[test]
fn every_option_default_is_documented_once_in_the_header() {
    let h = header();
    let mut misses = Vec::new();

    let server_doc = doc_of(&h, "mcp_server_builder_options_json");
    let mut server =
        object(serde_json::to_value(mcpcore::ServerOptions::new("n", "v")).expect("serialize"));
    // The identity comes from mcp_server_builder_new; it has no default of its own.
    for k in ["name", "version"] {
        assert!(server.remove(k).is_some(), "{k} is a key");
        if !server_doc.contains(&format!("`{k}`")) {
            misses.push(format!("`{k}`"));
        }
    }
    check(
        &server_doc,
        &server,
        &["limits", "requestState"],
        &mut misses,
    );
    // The nested shapes are the standalone types' defaults.
    assert_eq!(
        server["limits"],
        serde_json::to_value(mcpcore::Limits::default()).expect("serialize")
    );
    assert_eq!(
        server["requestState"],
        serde_json::to_value(mcpcore::server::RequestStateOptions::default()).expect("serialize")
    );
    // Tasks are off by default (`null`); their keys are documented with TaskOptions' defaults.
    assert_eq!(server["tasks"], Value::Null);
    check(
        &server_doc,
        &object(serde_json::to_value(mcpcore::TaskOptions::default()).expect("serialize")),
        &[],
        &mut misses,
    );

    let http =
        serde_json::to_value(mcpcore::transport::http::HttpOptions::default()).expect("serialize");
    check(
        &doc_of(&h, "mcp_server_listen_http"),
        &object(http),
        &[],
        &mut misses,
    );

    // The stdio spawn options are ffi's JSON over core's StdioCommand fields.
    let cmd = mcpcore::client::StdioCommand::new("x");
    let spawn = json!({
        "closeGraceMs": u64::try_from(cmd.close_grace.as_millis()).expect("ms"),
        "termGraceMs": u64::try_from(cmd.term_grace.as_millis()).expect("ms"),
    });
    check(
        &doc_of(&h, "mcp_client_connect_stdio"),
        &object(spawn),
        &[],
        &mut misses,
    );

    assert!(
        misses.is_empty(),
        "include/mcpcore.h does not document these defaults (fix the doc comment in ffi/src, \
         then UPDATE_HEADER=1 cargo test -p mcpcore-ffi --test header):\n{}",
        misses.join("\n")
    );
}
