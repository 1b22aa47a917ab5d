//! Checks that a value is a usable JSON Schema, with the errors the reference reports.
//!
//! The reference compiles request schemas (tool parameters, `json_schema` response formats) with
//! the `jsonschema` crate: the schema is validated against its draft's meta-schema (draft
//! 2020-12 unless `$schema` names another), `pattern`s must be valid regular expressions and
//! every `$ref` must resolve inside the schema — nothing is ever fetched. The first error, in
//! document order, is reported.
//!
//! Compiling is most of the cost of converting a request with tools (an agent's 40 tools: about
//! half its conversion), and clients send the same tools with every turn. The outcome depends on
//! the schema alone (nothing is fetched), so each thread remembers it per schema, keyed by the
//! schema's exact JSON text (key order included: it decides which error is first).

use std::cell::RefCell;

use rustc_hash::FxHashMap;
use serde_json::Value;

/// The longest schema text whose outcome is remembered.
const CACHED_SCHEMA_BYTES: usize = 64 * 1024;
/// Schema bytes a thread remembers before it empties its cache.
const CACHE_BYTES: usize = 4 * 1024 * 1024;

/// A thread's compile outcomes by schema text, and the bytes of text it holds.
#[derive(Default)]
struct OutcomeCache {
    outcomes: FxHashMap<String, Option<String>>,
    bytes: usize,
}

thread_local! {
    static OUTCOMES: RefCell<OutcomeCache> = RefCell::new(OutcomeCache::default());
}

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

/// Returns the first error compiling `schema` as a JSON Schema, `None` when it compiles
/// (remembered per thread for schemas seen before).
pub(crate) fn meta_schema_error(schema: &Value) -> Option<String> {
    let key = serde_json::to_string(schema).expect("JSON values always serialise");
    if key.len() > CACHED_SCHEMA_BYTES {
        return compile_error(schema);
    }
    if let Some(outcome) = OUTCOMES.with_borrow(|cache| cache.outcomes.get(&key).cloned()) {
        return outcome;
    }
    let outcome = compile_error(schema);
    OUTCOMES.with_borrow_mut(|cache| {
        if cache.bytes + key.len() > CACHE_BYTES {
            *cache = OutcomeCache::default();
        }
        cache.bytes += key.len();
        cache.outcomes.insert(key, outcome.clone());
    });
    outcome
}

/// Compiles `schema` and returns its first error.
fn compile_error(schema: &Value) -> Option<String> {
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

    #[test]
    fn remembered_outcomes_are_the_compiled_ones() {
        let schemas = [
            json!({"type": "object", "properties": {"a": {"type": "bogus"}}}),
            json!({"properties": {"a": {"type": "bogus"}}, "type": "object"}),
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}}),
            json!({"type": "object", "required": ["a"]}),
            json!({"type": "object", "required": ["a"], "description": "x".repeat(CACHED_SCHEMA_BYTES)}),
        ];
        for _ in 0..2 {
            for schema in &schemas {
                assert_eq!(meta_schema_error(schema), compile_error(schema));
            }
        }
        OUTCOMES.with_borrow(|cache| {
            assert_eq!(cache.outcomes.len(), 4);
            assert_eq!(
                cache.bytes,
                cache.outcomes.keys().map(String::len).sum::<usize>()
            );
        });
    }
}
