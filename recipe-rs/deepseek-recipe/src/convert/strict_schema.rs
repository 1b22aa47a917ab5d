//! Strict-mode schema normalisation (tools with `strict: true`, strict `json_schema` formats).
//!
//! The schema is read into a small typed model (errors worded like serde's), then written back
//! with only the supported keywords: objects get `additionalProperties: false` and `required`
//! listing every property in order. Semantic checks run after the whole tree was read.

use serde_json::{Map, Value};

/// The type names strict schemas support, in the reference's order.
const TYPE_NAMES: [&str; 7] = [
    "object", "string", "number", "integer", "boolean", "array", "null",
];
/// The string formats strict schemas support.
const STRING_FORMATS: [&str; 5] = ["email", "hostname", "ipv4", "ipv6", "uuid"];
/// Numeric keywords kept on `number` / `integer` nodes, in output order.
const NUMBER_KEYWORDS: [&str; 5] = [
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
];

/// A strict-schema failure: `Parse` messages get the caller's prefix, `Semantic` ones do not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StrictSchemaError {
    /// The schema does not fit the typed model (serde-style message).
    Parse(String),
    /// The schema fits the model but breaks a strict-mode rule.
    Semantic(&'static str),
}

/// Normalises `schema`; `allow_empty_root` accepts a property-less top-level object
/// (tool parameters) and writes it as `properties: {}`, `required: []`.
pub(crate) fn normalize_strict_schema(
    schema: &Value,
    allow_empty_root: bool,
) -> Result<Value, StrictSchemaError> {
    let node = Node::read(schema).map_err(StrictSchemaError::Parse)?;
    node.write(allow_empty_root)
        .map_err(StrictSchemaError::Semantic)
}

/// One node of the typed model.
enum Node {
    Object {
        properties: Vec<(String, Node)>,
        has_properties: bool,
        required: Option<Vec<String>>,
        additional_properties: Option<bool>,
        description: Option<String>,
    },
    String {
        description: Option<String>,
        pattern: Option<String>,
        format: Option<String>,
        values: Option<Vec<String>>,
    },
    Number {
        type_name: &'static str,
        description: Option<String>,
        bounds: Vec<(&'static str, Value)>,
    },
    Plain {
        type_name: &'static str,
        description: Option<String>,
    },
    Array {
        items: Box<Node>,
        description: Option<String>,
    },
    TypeList {
        types: Vec<&'static str>,
        description: Option<String>,
    },
    AnyOf {
        variants: Vec<Node>,
        description: Option<String>,
    },
    Ref(String),
}

/// serde's description of an unexpected value.
pub(crate) fn unexpected(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(flag) => format!("boolean `{flag}`"),
        Value::Number(number) if number.is_f64() => format!("floating point `{number}`"),
        Value::Number(number) => format!("integer `{number}`"),
        Value::String(text) => format!("string {text:?}"),
        Value::Array(_) => "sequence".to_owned(),
        Value::Object(_) => "map".to_owned(),
    }
}

fn invalid_type(value: &Value, expected: &str) -> String {
    format!("invalid type: {}, expected {expected}", unexpected(value))
}

fn unknown_variant(value: &str, variants: &[&str]) -> String {
    let list: Vec<String> = variants.iter().map(|name| format!("`{name}`")).collect();
    format!(
        "unknown variant `{value}`, expected one of {}",
        list.join(", ")
    )
}

fn read_string(value: &Value) -> Result<String, String> {
    value
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| invalid_type(value, "a string"))
}

fn optional_string(keywords: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match keywords.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => read_string(value).map(Some),
    }
}

fn type_name(value: &Value) -> Result<&'static str, String> {
    let name = value
        .as_str()
        .ok_or_else(|| invalid_type(value, "a string"))?;
    TYPE_NAMES
        .iter()
        .find(|candidate| **candidate == name)
        .copied()
        .ok_or_else(|| unknown_variant(name, &TYPE_NAMES))
}

impl Node {
    fn read(value: &Value) -> Result<Self, String> {
        let Value::Object(keywords) = value else {
            return Err(invalid_type(value, "a JSON schema object"));
        };
        let description = optional_string(keywords, "description")?;
        if let Some(kind) = keywords.get("type").filter(|kind| !kind.is_null()) {
            if let Value::Array(names) = kind {
                let types = names.iter().map(type_name).collect::<Result<_, _>>()?;
                return Ok(Self::TypeList { types, description });
            }
            return Self::read_typed(type_name(kind)?, keywords, description);
        }
        if let Some(variants) = keywords.get("anyOf").filter(|variants| !variants.is_null()) {
            let Value::Array(variants) = variants else {
                return Err(invalid_type(variants, "a sequence"));
            };
            let variants = variants.iter().map(Self::read).collect::<Result<_, _>>()?;
            return Ok(Self::AnyOf {
                variants,
                description,
            });
        }
        if let Some(reference) = keywords
            .get("$ref")
            .filter(|reference| !reference.is_null())
        {
            return read_string(reference).map(Self::Ref);
        }
        Err("one of `type`, `anyOf`, `$ref` field is required".to_owned())
    }

    fn read_typed(
        name: &'static str,
        keywords: &Map<String, Value>,
        description: Option<String>,
    ) -> Result<Self, String> {
        Ok(match name {
            "object" => {
                let mut properties = Vec::new();
                let mut has_properties = false;
                match keywords.get("properties") {
                    None | Some(Value::Null) => {}
                    Some(Value::Object(map)) => {
                        has_properties = !map.is_empty();
                        for (key, schema) in map {
                            properties.push((key.clone(), Self::read(schema)?));
                        }
                    }
                    Some(other) => return Err(invalid_type(other, "a map")),
                }
                let required = match keywords.get("required") {
                    None | Some(Value::Null) => None,
                    Some(Value::Array(items)) => {
                        Some(items.iter().map(read_string).collect::<Result<_, _>>()?)
                    }
                    Some(other) => return Err(invalid_type(other, "a sequence")),
                };
                let additional_properties = match keywords.get("additionalProperties") {
                    None | Some(Value::Null) => None,
                    Some(Value::Bool(flag)) => Some(*flag),
                    Some(other) => return Err(invalid_type(other, "a boolean")),
                };
                Self::Object {
                    properties,
                    has_properties,
                    required,
                    additional_properties,
                    description,
                }
            }
            "string" => {
                let format = match keywords.get("format") {
                    None | Some(Value::Null) => None,
                    Some(value) => {
                        let format = read_string(value)?;
                        if !STRING_FORMATS.contains(&format.as_str()) {
                            return Err(unknown_variant(&format, &STRING_FORMATS));
                        }
                        Some(format)
                    }
                };
                let values = match keywords.get("enum") {
                    None | Some(Value::Null) => None,
                    Some(Value::Array(items)) => {
                        Some(items.iter().map(read_string).collect::<Result<_, _>>()?)
                    }
                    Some(other) => return Err(invalid_type(other, "a sequence")),
                };
                Self::String {
                    description,
                    pattern: optional_string(keywords, "pattern")?,
                    format,
                    values,
                }
            }
            "number" | "integer" => {
                let mut bounds = Vec::new();
                for key in NUMBER_KEYWORDS {
                    match keywords.get(key) {
                        None | Some(Value::Null) => {}
                        Some(value @ Value::Number(_)) => bounds.push((key, value.clone())),
                        Some(other) => return Err(invalid_type(other, "f64")),
                    }
                }
                Self::Number {
                    type_name: name,
                    description,
                    bounds,
                }
            }
            "array" => {
                let items = match keywords.get("items") {
                    None | Some(Value::Null) => return Err("missing field `items`".to_owned()),
                    Some(items) => Self::read(items)?,
                };
                Self::Array {
                    items: Box::new(items),
                    description,
                }
            }
            _ => Self::Plain {
                type_name: name,
                description,
            },
        })
    }

    fn write(&self, allow_empty_object: bool) -> Result<Value, &'static str> {
        let mut out = Map::new();
        let put_description = |out: &mut Map<String, Value>, description: &Option<String>| {
            if let Some(description) = description {
                out.insert("description".to_owned(), Value::String(description.clone()));
            }
        };
        match self {
            Self::Object {
                properties,
                has_properties,
                required,
                additional_properties,
                description,
            } => {
                if let Some(required) = required {
                    let mut given: Vec<&str> = required.iter().map(String::as_str).collect();
                    let mut names: Vec<&str> =
                        properties.iter().map(|(key, _)| key.as_str()).collect();
                    given.sort_unstable();
                    given.dedup();
                    names.sort_unstable();
                    if given != names || required.len() != names.len() {
                        return Err("Required properties must match all properties in the object");
                    }
                }
                if *additional_properties == Some(true) {
                    return Err("additionalProperties should not be true");
                }
                if !has_properties && !allow_empty_object {
                    return Err("An object with no properties is not allowed.");
                }
                let mut written = Map::new();
                for (key, node) in properties {
                    written.insert(key.clone(), node.write(false)?);
                }
                let names = properties
                    .iter()
                    .map(|(key, _)| Value::String(key.clone()))
                    .collect();
                out.insert("type".to_owned(), Value::from("object"));
                out.insert("properties".to_owned(), Value::Object(written));
                out.insert("additionalProperties".to_owned(), Value::Bool(false));
                out.insert("required".to_owned(), Value::Array(names));
                put_description(&mut out, description);
            }
            Self::String {
                description,
                pattern,
                format,
                values,
            } => {
                out.insert("type".to_owned(), Value::from("string"));
                put_description(&mut out, description);
                if let Some(pattern) = pattern {
                    out.insert("pattern".to_owned(), Value::String(pattern.clone()));
                }
                if let Some(format) = format {
                    out.insert("format".to_owned(), Value::String(format.clone()));
                }
                if let Some(values) = values {
                    out.insert(
                        "enum".to_owned(),
                        values.iter().cloned().map(Value::String).collect(),
                    );
                }
            }
            Self::Number {
                type_name,
                description,
                bounds,
            } => {
                out.insert("type".to_owned(), Value::from(*type_name));
                put_description(&mut out, description);
                for (key, value) in bounds {
                    out.insert((*key).to_owned(), value.clone());
                }
            }
            Self::Plain {
                type_name,
                description,
            } => {
                out.insert("type".to_owned(), Value::from(*type_name));
                put_description(&mut out, description);
            }
            Self::Array { items, description } => {
                out.insert("type".to_owned(), Value::from("array"));
                out.insert("items".to_owned(), items.write(false)?);
                put_description(&mut out, description);
            }
            Self::TypeList { types, description } => {
                out.insert(
                    "type".to_owned(),
                    types.iter().map(|name| Value::from(*name)).collect(),
                );
                put_description(&mut out, description);
            }
            Self::AnyOf {
                variants,
                description,
            } => {
                let written = variants
                    .iter()
                    .map(|node| node.write(false))
                    .collect::<Result<_, _>>()?;
                out.insert("anyOf".to_owned(), Value::Array(written));
                put_description(&mut out, description);
            }
            Self::Ref(reference) => {
                out.insert("$ref".to_owned(), Value::String(reference.clone()));
            }
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn objects_get_closed_and_fully_required() {
        let schema = json!({"type": "object", "title": "T", "properties": {"b": {"type": "string", "minLength": 1}, "a": {"type": "integer", "enum": [1]}}});
        let normalized = normalize_strict_schema(&schema, false).unwrap();
        assert_eq!(
            serde_json::to_string(&normalized).unwrap(),
            r#"{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"integer"}},"additionalProperties":false,"required":["b","a"]}"#
        );
    }

    #[test]
    fn empty_objects_only_at_the_tool_root() {
        let schema = json!({"type": "object"});
        assert!(normalize_strict_schema(&schema, true).is_ok());
        assert_eq!(
            normalize_strict_schema(&schema, false),
            Err(StrictSchemaError::Semantic(
                "An object with no properties is not allowed."
            ))
        );
    }

    #[test]
    fn parse_errors_use_serde_wording() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "array"}}});
        assert_eq!(
            normalize_strict_schema(&schema, false),
            Err(StrictSchemaError::Parse("missing field `items`".into()))
        );
    }
}
