//! Strict-mode schema normalisation (tools with `strict: true`, strict `json_schema` formats).
//!
//! The schema is read into the reference's typed model with serde (so parse errors have serde's
//! wording and come in document order), then written back with only the supported keywords:
//! objects get `additionalProperties: false` and `required` listing every property in order.
//! Strict schemas are not checked against the meta-schema. The semantic checks run per object:
//! no properties, then the properties themselves, then `required`, then `additionalProperties`.
//! A property-less object is allowed only at the tool-parameters root, which includes the
//! variants of a root `anyOf` (the top-level-object check comes after them).

use serde::de::{DeserializeOwned, Error as _, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Number, Value};

/// A strict-schema failure: `Parse` messages get the caller's prefix, `Semantic` ones do not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StrictSchemaError {
    /// The schema does not fit the typed model (serde-style message).
    Parse(String),
    /// The schema fits the model but breaks a strict-mode rule.
    Semantic(String),
}

/// Normalises `schema`. Tool parameters (`tool_parameters`) may be a property-less object
/// (written as `properties: {}`, `required: []`); the top level must be an object either way.
pub(crate) fn normalize_strict_schema(
    schema: &Value,
    tool_parameters: bool,
) -> Result<Value, StrictSchemaError> {
    let node = JsonSchema::deserialize(schema.clone())
        .map_err(|err| StrictSchemaError::Parse(err.to_string()))?;
    let written = node
        .write(tool_parameters)
        .map_err(StrictSchemaError::Semantic)?;
    if !matches!(node, JsonSchema::Typed(JsonSchemaType::Object { .. })) {
        return Err(StrictSchemaError::Semantic(
            if tool_parameters {
                "The top level of the function parameters schema must be an object."
            } else {
                "The top level of the json schema must be an object."
            }
            .to_owned(),
        ));
    }
    Ok(written)
}

/// A schema node: a typed node, a list of simple types, an `anyOf` or a `$ref`.
enum JsonSchema {
    Typed(JsonSchemaType),
    TypeList {
        types: Vec<SimpleJsonSchemaType>,
        description: Option<String>,
    },
    AnyOf {
        variants: Vec<JsonSchemaType>,
        description: Option<String>,
    },
    Ref(String),
}

/// A typed node, by `type`.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum JsonSchemaType {
    // The fields in the reference's order: a node given as a sequence reads them by position
    // (found by the differential harness).
    Object {
        properties: Option<Properties>,
        #[serde(rename = "additionalProperties")]
        additional_properties: Option<bool>,
        required: Option<Vec<String>>,
        description: Option<String>,
        /// Named sub-schemas (`$def`, singular, as the reference spells it), kept in the output.
        #[serde(rename = "$def")]
        definitions: Option<Properties>,
    },
    String {
        description: Option<String>,
        pattern: Option<String>,
        format: Option<StringFormat>,
        #[serde(rename = "enum")]
        values: Option<Vec<String>>,
    },
    Number {
        description: Option<String>,
        #[serde(rename = "const")]
        constant: Option<Number>,
        default: Option<Number>,
        minimum: Option<Number>,
        maximum: Option<Number>,
        #[serde(rename = "exclusiveMinimum")]
        exclusive_minimum: Option<Number>,
        #[serde(rename = "exclusiveMaximum")]
        exclusive_maximum: Option<Number>,
        #[serde(rename = "multipleOf")]
        multiple_of: Option<Number>,
    },
    Integer {
        description: Option<String>,
        #[serde(rename = "const")]
        constant: Option<i64>,
        default: Option<i64>,
        minimum: Option<i64>,
        maximum: Option<i64>,
        #[serde(rename = "exclusiveMinimum")]
        exclusive_minimum: Option<i64>,
        #[serde(rename = "exclusiveMaximum")]
        exclusive_maximum: Option<i64>,
        #[serde(rename = "multipleOf")]
        multiple_of: Option<i64>,
    },
    Boolean {
        description: Option<String>,
    },
    Array {
        items: Box<JsonSchema>,
        description: Option<String>,
    },
    Null {
        description: Option<String>,
    },
}

/// The type names a type list may hold.
#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum SimpleJsonSchemaType {
    String,
    Number,
    Integer,
    Boolean,
    Null,
}

impl SimpleJsonSchemaType {
    fn name(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Number => "number",
            Self::Integer => "integer",
            Self::Boolean => "boolean",
            Self::Null => "null",
        }
    }
}

/// The string formats strict schemas support.
#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum StringFormat {
    Email,
    Hostname,
    Ipv4,
    Ipv6,
    Uuid,
}

impl StringFormat {
    fn name(self) -> &'static str {
        match self {
            Self::Email => "email",
            Self::Hostname => "hostname",
            Self::Ipv4 => "ipv4",
            Self::Ipv6 => "ipv6",
            Self::Uuid => "uuid",
        }
    }
}

/// Named schemas (`properties`, `$def`), in document order.
struct Properties(Vec<(String, JsonSchema)>);

impl<'de> Deserialize<'de> for Properties {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PropertiesVisitor;
        impl<'de> Visitor<'de> for PropertiesVisitor {
            type Value = Properties;
            fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
                formatter.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Properties, A::Error> {
                let mut entries = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, JsonSchema>()? {
                    entries.push((key, value));
                }
                Ok(Properties(entries))
            }
        }
        deserializer.deserialize_map(PropertiesVisitor)
    }
}

/// Reads `key` of `object` as `T` (an absent key reads as `null`), its errors prefixed with the
/// field name.
fn field<T: DeserializeOwned, E: serde::de::Error>(
    object: &Map<String, Value>,
    key: &str,
) -> Result<T, E> {
    T::deserialize(object.get(key).cloned().unwrap_or(Value::Null))
        .map_err(|err| E::custom(format!("field `{key}`: {err}")))
}

impl<'de> Deserialize<'de> for JsonSchema {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let required = || D::Error::custom("one of `type`, `anyOf`, `$ref` field is required");
        let Value::Object(object) = &value else {
            return Err(required());
        };
        if let Some(kind) = object.get("type") {
            if kind.is_array() {
                let types = field::<Vec<SimpleJsonSchemaType>, D::Error>(object, "type")?;
                let description = field::<Option<String>, D::Error>(object, "description")?;
                return Ok(Self::TypeList { types, description });
            }
            return JsonSchemaType::deserialize(value)
                .map(Self::Typed)
                .map_err(D::Error::custom);
        }
        // `anyOf` and `$ref` may not be null.
        if object.contains_key("anyOf") {
            let variants = field::<Vec<JsonSchemaType>, D::Error>(object, "anyOf")?;
            let description = field::<Option<String>, D::Error>(object, "description")?;
            return Ok(Self::AnyOf {
                variants,
                description,
            });
        }
        if object.contains_key("$ref") {
            let reference = field::<String, D::Error>(object, "$ref")?;
            return Ok(Self::Ref(reference));
        }
        Err(required())
    }
}

fn put_description(out: &mut Map<String, Value>, description: &Option<String>) {
    if let Some(description) = description {
        out.insert("description".to_owned(), Value::String(description.clone()));
    }
}

fn put<T: Into<Value> + Clone>(out: &mut Map<String, Value>, key: &str, value: &Option<T>) {
    if let Some(value) = value {
        out.insert(key.to_owned(), value.clone().into());
    }
}

impl JsonSchema {
    fn write(&self, allow_empty_object: bool) -> Result<Value, String> {
        match self {
            Self::Typed(node) => node.write(allow_empty_object),
            Self::TypeList { types, description } => {
                let mut out = Map::new();
                out.insert(
                    "type".to_owned(),
                    types.iter().map(|kind| Value::from(kind.name())).collect(),
                );
                put_description(&mut out, description);
                Ok(Value::Object(out))
            }
            Self::AnyOf {
                variants,
                description,
            } => {
                let written = variants
                    .iter()
                    .map(|node| node.write(allow_empty_object))
                    .collect::<Result<_, _>>()?;
                let mut out = Map::new();
                out.insert("anyOf".to_owned(), Value::Array(written));
                put_description(&mut out, description);
                Ok(Value::Object(out))
            }
            Self::Ref(reference) => {
                let mut out = Map::new();
                out.insert("$ref".to_owned(), Value::String(reference.clone()));
                Ok(Value::Object(out))
            }
        }
    }
}

/// Named schemas (`properties`, `$def`) written in order; an object among them needs properties.
fn write_named(named: &[(String, JsonSchema)]) -> Result<Map<String, Value>, String> {
    let mut written = Map::new();
    for (key, node) in named {
        written.insert(key.clone(), node.write(false)?);
    }
    Ok(written)
}

impl JsonSchemaType {
    fn write(&self, allow_empty_object: bool) -> Result<Value, String> {
        let mut out = Map::new();
        match self {
            Self::Object {
                properties,
                additional_properties,
                required,
                description,
                definitions,
            } => {
                let properties: &[(String, JsonSchema)] =
                    properties.as_ref().map_or(&[], |properties| &properties.0);
                if properties.is_empty() && !allow_empty_object {
                    return Err("An object with no properties is not allowed.".to_owned());
                }
                let written = write_named(properties)?;
                let definitions = definitions
                    .as_ref()
                    .map(|definitions| write_named(&definitions.0))
                    .transpose()?;
                if let Some(required) = required {
                    let mut seen: Vec<&str> = Vec::new();
                    for name in required {
                        if seen.contains(&name.as_str()) {
                            return Err(format!("Duplicate required property '{name}'"));
                        }
                        if !properties.iter().any(|(key, _)| key == name) {
                            return Err(format!("Required property '{name}' not found in object"));
                        }
                        seen.push(name);
                    }
                    if seen.len() != properties.len() {
                        return Err(
                            "Required properties must match all properties in the object"
                                .to_owned(),
                        );
                    }
                }
                if *additional_properties == Some(true) {
                    return Err("additionalProperties should not be true".to_owned());
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
                if let Some(definitions) = definitions {
                    out.insert("$def".to_owned(), Value::Object(definitions));
                }
            }
            Self::String {
                description,
                pattern,
                format,
                values,
            } => {
                out.insert("type".to_owned(), Value::from("string"));
                put_description(&mut out, description);
                put(&mut out, "pattern", pattern);
                if let Some(format) = format {
                    out.insert("format".to_owned(), Value::from(format.name()));
                }
                if let Some(values) = values {
                    out.insert(
                        "enum".to_owned(),
                        values.iter().cloned().map(Value::String).collect(),
                    );
                }
            }
            Self::Number {
                description,
                constant,
                default,
                minimum,
                maximum,
                exclusive_minimum,
                exclusive_maximum,
                multiple_of,
            } => {
                out.insert("type".to_owned(), Value::from("number"));
                put_description(&mut out, description);
                put(&mut out, "const", constant);
                put(&mut out, "default", default);
                put(&mut out, "minimum", minimum);
                put(&mut out, "maximum", maximum);
                put(&mut out, "exclusiveMinimum", exclusive_minimum);
                put(&mut out, "exclusiveMaximum", exclusive_maximum);
                put(&mut out, "multipleOf", multiple_of);
            }
            Self::Integer {
                description,
                constant,
                default,
                minimum,
                maximum,
                exclusive_minimum,
                exclusive_maximum,
                multiple_of,
            } => {
                out.insert("type".to_owned(), Value::from("integer"));
                put_description(&mut out, description);
                put(&mut out, "const", constant);
                put(&mut out, "default", default);
                put(&mut out, "minimum", minimum);
                put(&mut out, "maximum", maximum);
                put(&mut out, "exclusiveMinimum", exclusive_minimum);
                put(&mut out, "exclusiveMaximum", exclusive_maximum);
                put(&mut out, "multipleOf", multiple_of);
            }
            Self::Boolean { description } => {
                out.insert("type".to_owned(), Value::from("boolean"));
                put_description(&mut out, description);
            }
            Self::Null { description } => {
                out.insert("type".to_owned(), Value::from("null"));
                put_description(&mut out, description);
            }
            Self::Array { items, description } => {
                out.insert("type".to_owned(), Value::from("array"));
                out.insert("items".to_owned(), items.write(false)?);
                put_description(&mut out, description);
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
                "An object with no properties is not allowed.".to_owned()
            ))
        );
    }

    #[test]
    fn root_any_of_variants_may_be_empty_objects() {
        let schema = json!({"anyOf": [{"type": "object"}]});
        assert_eq!(
            normalize_strict_schema(&schema, true),
            Err(StrictSchemaError::Semantic(
                "The top level of the function parameters schema must be an object.".to_owned()
            ))
        );
        assert_eq!(
            normalize_strict_schema(&schema, false),
            Err(StrictSchemaError::Semantic(
                "An object with no properties is not allowed.".to_owned()
            ))
        );
        let nested = json!({"anyOf": [{"type": "array", "items": {"type": "object"}}]});
        assert_eq!(
            normalize_strict_schema(&nested, true),
            Err(StrictSchemaError::Semantic(
                "An object with no properties is not allowed.".to_owned()
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

    #[test]
    fn definitions_are_normalised_in_order_after_the_description() {
        let schema = json!({"type": "object", "properties": {"d": {"type": "string"}}, "description": "x",
            "$def": {"b": {"type": "string", "title": "t"}, "a": {"type": "integer", "enum": [1]}}});
        let normalized = normalize_strict_schema(&schema, false).unwrap();
        assert_eq!(
            normalized.to_string(),
            r#"{"type":"object","properties":{"d":{"type":"string"}},"additionalProperties":false,"required":["d"],"description":"x","$def":{"b":{"type":"string"},"a":{"type":"integer"}}}"#
        );
        // A definition is checked after the properties and before `required`.
        let schema = json!({"type": "object", "properties": {"d": {"type": "string"}},
            "required": ["zz"], "$def": {"a": {"type": "object"}}});
        assert_eq!(
            normalize_strict_schema(&schema, true),
            Err(StrictSchemaError::Semantic(
                "An object with no properties is not allowed.".into()
            ))
        );
    }

    #[test]
    fn a_sequence_node_reads_the_object_fields_by_position() {
        let node = json!(["object", {"d": {"type": "string"}}, false, ["d"], "x", {"a": {"type": "null"}}]);
        let schema = json!({"type": "object", "properties": {"c": {"anyOf": [node]}}});
        assert!(normalize_strict_schema(&schema, false)
            .unwrap()
            .to_string()
            .contains(r#""description":"x","$def":{"a":{"type":"null"}}"#));
        let schema = json!({"type": "object", "properties": {"c": {"anyOf": [["object"]]}}});
        assert_eq!(
            normalize_strict_schema(&schema, false),
            Err(StrictSchemaError::Parse(
                "field `anyOf`: invalid length 0, expected struct variant JsonSchemaType::Object with 5 elements".into()
            ))
        );
    }
}
