//! Checks that a value is a well-formed JSON Schema (the keyword shapes of the draft 2020-12
//! meta-schema), with the validator wording the reference reports.
//!
//! Only keyword *shapes* are checked (e.g. `type` must name simple types, `properties` must map
//! to schemas, `required` must list strings); formats and references are not resolved.

use serde_json::{Map, Value};

/// The simple type names `type` may use.
const SIMPLE_TYPES: [&str; 7] = [
    "array", "boolean", "integer", "null", "number", "object", "string",
];

/// Returns the first meta-schema violation of `schema`, in document order.
pub(crate) fn meta_schema_error(schema: &Value) -> Option<String> {
    check_schema(schema).err()
}

type Check = Result<(), String>;

fn compact(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

fn not_of_type(value: &Value, name: &str) -> String {
    format!("{} is not of type \"{name}\"", compact(value))
}

fn check_schema(schema: &Value) -> Check {
    match schema {
        Value::Bool(_) => Ok(()),
        Value::Object(keywords) => check_keywords(keywords),
        other => Err(format!(
            "{} is not of types \"boolean\", \"object\"",
            compact(other)
        )),
    }
}

fn check_keywords(keywords: &Map<String, Value>) -> Check {
    for (keyword, value) in keywords {
        match keyword.as_str() {
            "type" => check_type_keyword(value)?,
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                check_schema_map(value)?
            }
            "items"
            | "additionalProperties"
            | "contains"
            | "propertyNames"
            | "if"
            | "then"
            | "else"
            | "not"
            | "unevaluatedItems"
            | "unevaluatedProperties"
            | "contentSchema"
            | "additionalItems" => check_schema(value)?,
            "allOf" | "anyOf" | "oneOf" | "prefixItems" => check_schema_array(value)?,
            "required" => check_string_array(value)?,
            "enum" => expect_type(value, "array", Value::is_array)?,
            "multipleOf" => {
                expect_type(value, "number", Value::is_number)?;
                if value.as_f64().is_some_and(|number| number <= 0.0) {
                    return Err(format!(
                        "{} is less than or equal to the minimum of 0",
                        compact(value)
                    ));
                }
            }
            "maximum" | "minimum" | "exclusiveMaximum" | "exclusiveMinimum" => {
                expect_type(value, "number", Value::is_number)?
            }
            "maxLength" | "minLength" | "maxItems" | "minItems" | "maxProperties"
            | "minProperties" | "maxContains" | "minContains" => check_non_negative_integer(value)?,
            "uniqueItems" | "deprecated" | "readOnly" | "writeOnly" => {
                expect_type(value, "boolean", Value::is_boolean)?
            }
            "title" | "description" | "pattern" | "format" | "$comment" | "$id" | "$schema"
            | "$ref" | "$anchor" | "$dynamicRef" | "$dynamicAnchor" | "contentEncoding"
            | "contentMediaType" => expect_type(value, "string", Value::is_string)?,
            "examples" => expect_type(value, "array", Value::is_array)?,
            "dependentRequired" => {
                expect_type(value, "object", Value::is_object)?;
                for item in value.as_object().into_iter().flat_map(Map::values) {
                    check_string_array(item)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn expect_type(value: &Value, name: &str, matches: fn(&Value) -> bool) -> Check {
    if matches(value) {
        Ok(())
    } else {
        Err(not_of_type(value, name))
    }
}

fn check_type_keyword(value: &Value) -> Check {
    let is_simple = |item: &Value| {
        item.as_str()
            .is_some_and(|name| SIMPLE_TYPES.contains(&name))
    };
    let valid = match value {
        Value::String(_) => is_simple(value),
        Value::Array(items) => {
            !items.is_empty() && items.iter().all(is_simple) && all_unique(items)
        }
        _ => false,
    };
    if valid {
        Ok(())
    } else {
        Err(format!(
            "{} is not valid under any of the schemas listed in the 'anyOf' keyword",
            compact(value)
        ))
    }
}

fn all_unique(items: &[Value]) -> bool {
    items
        .iter()
        .enumerate()
        .all(|(index, item)| !items[..index].contains(item))
}

fn check_schema_map(value: &Value) -> Check {
    expect_type(value, "object", Value::is_object)?;
    value
        .as_object()
        .into_iter()
        .flat_map(Map::values)
        .try_for_each(check_schema)
}

fn check_schema_array(value: &Value) -> Check {
    let Value::Array(items) = value else {
        return Err(not_of_type(value, "array"));
    };
    if items.is_empty() {
        return Err(format!("{} has less than 1 item", compact(value)));
    }
    items.iter().try_for_each(check_schema)
}

fn check_string_array(value: &Value) -> Check {
    let Value::Array(items) = value else {
        return Err(not_of_type(value, "array"));
    };
    for item in items {
        expect_type(item, "string", Value::is_string)?;
    }
    if !all_unique(items) {
        return Err(format!("{} has non-unique elements", compact(value)));
    }
    Ok(())
}

fn check_non_negative_integer(value: &Value) -> Check {
    let is_integer = value.is_i64()
        || value.is_u64()
        || value.as_f64().is_some_and(|number| number.fract() == 0.0);
    if !is_integer {
        return Err(not_of_type(value, "integer"));
    }
    if value.as_f64().is_some_and(|number| number < 0.0) {
        return Err(format!("{} is less than the minimum of 0", compact(value)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reports_bad_type_names_and_non_schemas() {
        assert_eq!(
            meta_schema_error(&json!({"type": "object", "properties": {"a": {"type": "bogus"}}})),
            Some(
                "\"bogus\" is not valid under any of the schemas listed in the 'anyOf' keyword"
                    .into()
            )
        );
        assert_eq!(
            meta_schema_error(&Value::Null),
            Some("null is not of types \"boolean\", \"object\"".into())
        );
        assert_eq!(
            meta_schema_error(&json!({"type": ["string", "null"]})),
            None
        );
    }
}
