//! `Mcp-Name` / `Mcp-Param-*` value decoding and the `x-mcp-header` declarations (HTTP-10,
//! HTTP-14…16, `protocol/mcp_header.rs`): header bytes straight from a peer, and tool schemas
//! a client reads from a server.
//!
//! Invariants: decode(encode(s)) == s for every string; a decoded value encodes to something
//! that decodes to it again; an encoded value is always a legal plain header value; every
//! declaration accepted is a non-empty token; every header a client would send for the
//! arguments decodes and mirrors its argument on the server's check.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpcore::protocol::mcp_header::{
    declarations, decode_value, encode_value, mirrors, param_headers,
};
use serde_json::Value;

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn check_encoding(s: &str) {
    let enc = encode_value(s);
    assert!(
        enc.bytes()
            .all(|b| b == b' ' || b == b'\t' || (0x21..=0x7e).contains(&b)),
        "encoded value is not a plain header value"
    );
    assert_eq!(
        decode_value(enc.as_bytes()).as_deref(),
        Ok(s),
        "decode(encode(s)) != s"
    );
}

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = decode_value(data) {
        check_encoding(&s);
    }
    check_encoding(&String::from_utf8_lossy(data));

    let Ok(v) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let Ok(decls) = declarations(&v) else {
        return;
    };
    for d in &decls {
        assert!(
            !d.name.is_empty() && d.name.bytes().all(is_tchar),
            "bad declaration {d:?}"
        );
    }
    // The client's headers for arguments taken from the same document, checked the way the
    // server checks them (decode, then mirror the argument).
    for args in [Some(&v), v.get("arguments"), v.get("default")] {
        for (name, value) in param_headers(&decls, args) {
            let decl = decls
                .iter()
                .find(|d| d.header_name() == name)
                .expect("a header for a declaration");
            let arg = decl
                .argument(args)
                .expect("a header for a present argument");
            let decoded = decode_value(value.as_bytes()).expect("the client's header decodes");
            assert!(
                mirrors(&decoded, arg),
                "{name}: {value:?} does not mirror {arg}"
            );
        }
    }
});
