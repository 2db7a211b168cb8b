//! Resource URI template matching (RES-01, RFC 6570 level 1 plus `{+var}`;
//! `server/uri_template.rs`): the template is the server's, the URI the client's.
//!
//! Input: `template \n uri`. Invariants: a template without variables matches exactly itself;
//! a match yields a string for each variable of the template and nothing else; a trailing
//! simple `{var}` never takes a raw `/`.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpcore::fuzzing::UriTemplate;

fn names(template: &str) -> Vec<String> {
    template
        .split('{')
        .skip(1)
        .filter_map(|s| {
            s.split_once('}')
                .map(|(e, _)| e.trim_start_matches('+').to_owned())
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (template, uri) = text.split_once('\n').unwrap_or((text, ""));
    let Ok(t) = UriTemplate::parse(template) else {
        return;
    };
    if !template.contains('{') {
        assert_eq!(
            t.matches(uri).is_some(),
            uri == template,
            "a literal template"
        );
        return;
    }
    let Some(vars) = t.matches(uri) else {
        return;
    };
    let mut want = names(template);
    want.sort();
    want.dedup();
    let mut got: Vec<String> = vars.keys().cloned().collect();
    got.sort();
    assert_eq!(got, want, "matched variables differ from the template's");
    assert!(vars.values().all(serde_json::Value::is_string));
    // A template ending in a simple `{var}`: that variable takes the URI's tail, so a `/`
    // appended to a matching URI must make it fail (a `{var}` never spans a raw `/`).
    if !template.contains('+') && !uri.is_empty() && !template.is_empty() {
        let last = template.as_bytes()[template.len() - 1];
        if last == b'}' {
            assert!(
                t.matches(&format!("{uri}/")).is_none(),
                "a simple variable took a '/'"
            );
        }
    }
});
