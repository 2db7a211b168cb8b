//! Definitions given as JSON (by the C ABI and the language bindings): parsed here, once, so a
//! definition gets exactly the defaults the Rust constructors give, whatever door it came in by.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::types::default_input_schema;
use super::{Prompt, Resource, ResourceTemplate, Tool};

/// A JSON definition was refused: not an object, a required field missing, or a field of the
/// wrong type. The message names the field.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{what} definition: {reason}")]
pub struct DefinitionError {
    /// `"tool"`, `"prompt"`, `"resource"` or `"resource template"`.
    pub what: &'static str,
    /// Why.
    pub reason: String,
}

fn parse<T: DeserializeOwned>(what: &'static str, v: Value) -> Result<T, DefinitionError> {
    if !v.is_object() {
        return Err(DefinitionError {
            what,
            reason: "must be a JSON object".into(),
        });
    }
    serde_json::from_value(v).map_err(|e| DefinitionError {
        what,
        reason: e.to_string(),
    })
}

impl Tool {
    /// A tool from its `tools/list` JSON form. A missing `inputSchema` is the one
    /// [`Tool::new`] gives (no arguments).
    ///
    /// # Errors
    /// [`DefinitionError`] naming the offending field.
    pub fn from_json(mut v: Value) -> Result<Self, DefinitionError> {
        if let Some(o) = v.as_object_mut() {
            o.entry("inputSchema").or_insert_with(default_input_schema);
        }
        parse("tool", v)
    }
}

impl Prompt {
    /// A prompt from its `prompts/list` JSON form.
    ///
    /// # Errors
    /// [`DefinitionError`] naming the offending field.
    pub fn from_json(v: Value) -> Result<Self, DefinitionError> {
        parse("prompt", v)
    }
}

impl Resource {
    /// A resource from its `resources/list` JSON form (`uri` and `name` required).
    ///
    /// # Errors
    /// [`DefinitionError`] naming the offending field.
    pub fn from_json(v: Value) -> Result<Self, DefinitionError> {
        parse("resource", v)
    }
}

impl ResourceTemplate {
    /// A resource template from its `resources/templates/list` JSON form (`uriTemplate` and
    /// `name` required).
    ///
    /// # Errors
    /// [`DefinitionError`] naming the offending field.
    pub fn from_json(v: Value) -> Result<Self, DefinitionError> {
        parse("resource template", v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The JSON door gives the defaults of the Rust constructors (a C tool without
    /// `inputSchema` takes no arguments, exactly like `Tool::new`).
    #[test]
    fn json_definitions_get_the_constructor_defaults() {
        assert_eq!(
            Tool::from_json(json!({"name": "t"})).expect("tool"),
            Tool::new("t")
        );
        let t = Tool::from_json(json!({"name": "t", "description": "d",
            "inputSchema": {"type": "object"}}))
        .expect("tool");
        assert_eq!(
            t,
            Tool::new("t")
                .description("d")
                .input_schema(json!({"type": "object"}))
        );
        assert_eq!(
            Prompt::from_json(json!({"name": "p"})).expect("prompt"),
            Prompt::new("p")
        );
        assert_eq!(
            Resource::from_json(json!({"uri": "a://b", "name": "b"})).expect("resource"),
            Resource::new("a://b", "b")
        );
        assert_eq!(
            ResourceTemplate::from_json(json!({"uriTemplate": "a://{x}", "name": "x"}))
                .expect("template"),
            ResourceTemplate::new("a://{x}", "x")
        );
    }

    #[test]
    fn refusals_name_the_field() {
        let e = Tool::from_json(json!({"description": "no name"})).expect_err("no name");
        assert!(e.to_string().contains("name"), "{e}");
        let e = Tool::from_json(json!([1])).expect_err("array");
        assert!(e.to_string().contains("object"), "{e}");
        let e = Resource::from_json(json!({"uri": "a://b"})).expect_err("no name");
        assert!(e.to_string().starts_with("resource definition"), "{e}");
        assert!(Prompt::from_json(json!({"name": 3})).is_err());
    }
}
