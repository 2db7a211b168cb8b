//! Opaque cursors for list methods (REQUIREMENTS PAGE-01). A cursor encodes an offset; anything
//! that does not decode to an offset inside the list is -32602.
//!
//! Lists may change while serving (`dynamic`): an offset stays meaningful as items are appended
//! or replaced in place; a removal ahead of it shifts the rest by one, and an offset past the
//! end of a list that shrank is refused like a forged one (clients re-list on `list_changed`).

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::{Map, Value};

use crate::error::ErrorObject;

const PREFIX: &str = "mcpc1:";

pub(crate) fn encode(offset: usize) -> String {
    URL_SAFE_NO_PAD.encode(format!("{PREFIX}{offset}"))
}

fn decode(cursor: &str) -> Option<usize> {
    let raw = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    let s = std::str::from_utf8(&raw).ok()?;
    s.strip_prefix(PREFIX)?.parse::<usize>().ok()
}

/// One page of `items` per the request's `cursor` and the page size.
///
/// # Errors
/// -32602 for a non-string, malformed, negative or out-of-range cursor.
pub(crate) fn page<'a>(
    items: &'a [Value],
    params: Option<&Map<String, Value>>,
    page_size: Option<usize>,
) -> Result<(&'a [Value], Option<String>), ErrorObject> {
    let start = match params.and_then(|p| p.get("cursor")) {
        None | Some(Value::Null) => 0,
        Some(Value::String(c)) => match decode(c) {
            Some(o) if o < items.len() || o == 0 => o,
            _ => {
                return Err(ErrorObject::invalid_params(format!(
                    "invalid cursor: {c:?}"
                )))
            }
        },
        Some(_) => return Err(ErrorObject::invalid_params("cursor must be a string")),
    };
    let size = page_size.unwrap_or(usize::MAX);
    let end = start.saturating_add(size).min(items.len());
    let next = (end < items.len()).then(|| encode(end));
    Ok((&items[start..end], next))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn page01_cursors() {
        let items: Vec<Value> = (0..5).map(|i| json!(i)).collect();
        let (p, next) = page(&items, None, Some(2)).unwrap();
        assert_eq!(p.len(), 2);
        let params = json!({"cursor": next.unwrap()});
        let (p, next) = page(&items, params.as_object(), Some(2)).unwrap();
        assert_eq!(p[0], json!(2));
        let params = json!({"cursor": next.unwrap()});
        let (p, next) = page(&items, params.as_object(), Some(2)).unwrap();
        assert_eq!((p.len(), next), (1, None));
        for bad in [
            json!({"cursor": 5}),
            json!({"cursor": "zz"}),
            json!({"cursor": encode(99)}),
            json!({"cursor": URL_SAFE_NO_PAD.encode("mcpc1:-1")}),
        ] {
            assert_eq!(
                page(&items, bad.as_object(), Some(2)).unwrap_err().code,
                -32602,
                "{bad}"
            );
        }
    }
}
