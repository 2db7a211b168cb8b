//! One JSON shape for options, shared by the C ABI and the language bindings so none of them
//! maps fields by hand: camelCase keys, unknown keys refused, durations as whole milliseconds in
//! keys ending `Ms` (`Us` for microseconds). A JSON object is applied as a patch: keys it names
//! replace the current values, the others keep theirs (defaults, or what was set before). Nested
//! option objects (`limits` and `requestState` of the server options) are patches themselves.
//!
//! ```
//! use mcpcore::{options::apply_json, Limits};
//! let mut limits = Limits::default();
//! apply_json(&mut limits, &serde_json::json!({"maxInflight": 64, "shutdownGraceMs": 500}))?;
//! assert_eq!(limits.max_inflight, 64);
//! assert!(apply_json(&mut limits, &serde_json::json!({"maxInflite": 1})).is_err());
//! # Ok::<(), mcpcore::options::OptionsError>(())
//! ```

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// An options patch was refused. The message names the key.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum OptionsError {
    /// Not an object, an unknown key, or a value of the wrong type.
    #[error("{0}")]
    Shape(String),
    /// A value out of range (e.g. a zero limit).
    #[error("{0}")]
    Range(String),
}

/// Options that have the JSON shape described in [this module](self).
pub trait JsonOptions: Serialize + DeserializeOwned {
    /// Range checks run after a patch is applied.
    ///
    /// # Errors
    /// The first value out of range.
    fn check(&self) -> Result<(), OptionsError> {
        Ok(())
    }
    /// Copy from `from` the fields that have no JSON form (keys, shared stores), which a patch
    /// must keep.
    fn keep_unrepresented(&mut self, _from: &Self) {}
    /// Keys whose values are option objects themselves: a patch naming one patches that object
    /// key by key instead of replacing it.
    const NESTED: &'static [&'static str] = &[];
}

/// Apply the JSON object `patch` to `target` (see the [module docs](self)), then run its range
/// checks. On error `target` is unchanged.
///
/// # Errors
/// [`OptionsError`] naming the offending key.
pub fn apply_json<T: JsonOptions>(target: &mut T, patch: &Value) -> Result<(), OptionsError> {
    let next = patched(target, patch)?;
    next.check()?;
    *target = next;
    Ok(())
}

/// [`apply_json`] without the range checks, for callers that validate later as a whole (a
/// server builder reports out-of-range limits when it builds).
///
/// # Errors
/// [`OptionsError::Shape`], or [`OptionsError::Range`] for a value no field can hold (a
/// negative count, an unknown keyword).
pub fn merge_json<T: JsonOptions>(target: &mut T, patch: &Value) -> Result<(), OptionsError> {
    *target = patched(target, patch)?;
    Ok(())
}

fn patched<T: JsonOptions>(target: &T, patch: &Value) -> Result<T, OptionsError> {
    let Value::Object(patch) = patch else {
        return Err(OptionsError::Shape("options must be a JSON object".into()));
    };
    let mut current = match serde_json::to_value(target) {
        Ok(Value::Object(m)) => m,
        _ => {
            return Err(OptionsError::Shape(
                "options are not representable as JSON".into(),
            ))
        }
    };
    for (k, v) in patch {
        match (current.get_mut(k), v) {
            (Some(Value::Object(inner)), Value::Object(p)) if T::NESTED.contains(&k.as_str()) => {
                for (ik, iv) in p {
                    inner.insert(ik.clone(), iv.clone());
                }
            }
            _ => {
                current.insert(k.clone(), v.clone());
            }
        }
    }
    let mut next: T = serde_json::from_value(Value::Object(current)).map_err(|e| classify(&e))?;
    next.keep_unrepresented(target);
    Ok(next)
}

/// serde reports structural problems with fixed phrases; anything else (a custom message from a
/// field's own parser, an integer out of its type's range) is a bad value.
fn classify(e: &serde_json::Error) -> OptionsError {
    let msg = e.to_string();
    let structural = [
        "unknown field",
        "invalid type",
        "invalid length",
        "missing field",
    ];
    if structural.iter().any(|p| msg.starts_with(p)) {
        OptionsError::Shape(msg)
    } else {
        OptionsError::Range(msg)
    }
}

/// `Duration` ⇄ whole milliseconds.
pub(crate) mod millis {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub(crate) fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_millis)
    }
}

/// `Option<Duration>` ⇄ whole milliseconds, where `null` and `0` both mean off.
pub(crate) mod opt_millis {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub(crate) fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            None => s.serialize_none(),
        }
    }
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Duration>, D::Error> {
        let ms = Option::<u64>::deserialize(d)?;
        Ok(ms.filter(|&m| m > 0).map(Duration::from_millis))
    }
}

/// `Duration` ⇄ whole microseconds.
pub(crate) mod micros {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub(crate) fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
    }
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_micros)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Limits;
    use serde_json::json;
    use std::time::Duration;

    /// Every key round-trips, a patch keeps what it does not name, and refusals leave the target
    /// untouched.
    #[test]
    fn limits_patch_round_trip_and_refusals() {
        let mut l = Limits::default();
        let all = serde_json::to_value(&l).expect("serialize");
        apply_json(&mut l, &all).expect("the full shape applies");
        apply_json(
            &mut l,
            &json!({"maxInflight": 7, "peerRequestTimeoutMs": 1500}),
        )
        .expect("ok");
        apply_json(&mut l, &json!({"maxJsonDepth": 9})).expect("ok");
        assert_eq!(l.max_inflight, 7, "kept across patches");
        assert_eq!(l.max_json_depth, 9);
        assert_eq!(l.peer_request_timeout, Duration::from_millis(1500));
        for bad in [
            json!({"maxInflite": 1}),
            json!({"maxInflight": "many"}),
            json!({"maxInflight": -1}),
            json!({"shutdownGraceMs": "soon"}),
            json!({"maxInflight": 0}),
            json!([1]),
        ] {
            let e = apply_json(&mut l, &bad).expect_err("refused");
            assert!(!e.to_string().is_empty(), "{bad}");
        }
        assert_eq!(l.max_inflight, 7, "a refused patch changes nothing");
        let e = apply_json(&mut l, &json!({"maxInflite": 1})).expect_err("unknown");
        assert!(
            matches!(&e, OptionsError::Shape(m) if m.contains("maxInflite")),
            "{e}"
        );
        let e = apply_json(&mut l, &json!({"maxInflight": 0})).expect_err("range");
        assert!(
            matches!(&e, OptionsError::Range(m) if m.contains("max_inflight")),
            "{e}"
        );
    }
}
