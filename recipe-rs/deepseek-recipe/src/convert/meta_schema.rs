//! Checks that a value is a usable JSON Schema, with the errors the reference reports.
//!
//! The reference compiles request schemas (tool parameters, `json_schema` response formats) with
//! the `jsonschema` crate: the schema is validated against its draft's meta-schema (draft
//! 2020-12 unless `$schema` names another), `pattern`s must be valid regular expressions and
//! every `$ref` must resolve inside the schema — nothing is ever fetched. The first error, in
//! document order, is reported.

use serde_json::Value;

/// Refuses every external resource, with the reference's wording.
struct NoRetrieval;

impl jsonschema::Retrieve for NoRetrieval {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!("Retrieval is disabled, cannot fetch {}", uri.as_str()).into())
    }
}

/// Returns the first error compiling `schema` as a JSON Schema, `None` when it compiles.
pub(crate) fn meta_schema_error(schema: &Value) -> Option<String> {
    jsonschema::options()
        .with_retriever(NoRetrieval)
        .build(schema)
        .err()
        .map(|error| error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reports_bad_type_names_non_schemas_patterns_and_references() {
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
        assert_eq!(
            meta_schema_error(&json!({"pattern": "([0-9]+"})),
            Some("\"([0-9]+\" is not a \"regex\"".into())
        );
        assert_eq!(
            meta_schema_error(&json!({"properties": {"a": {"$ref": "#/$defs/A"}}})),
            Some("Pointer '/$defs/A' does not exist".into())
        );
        assert_eq!(
            meta_schema_error(&json!({"properties": {"a": {"$ref": "http://example.com/x"}}})),
            Some("Resource 'http://example.com/x' is not present in a registry and retrieving it failed: Retrieval is disabled, cannot fetch http://example.com/x".into())
        );
    }
}
