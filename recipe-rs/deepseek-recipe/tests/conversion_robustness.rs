//! Conversion never panics: a sample of the request vectors (every 16th) is mutated (each
//! top-level field and each field of each message or input item replaced by values of other
//! JSON types) and converted; the result may be an error, but the call must return.

mod common;

use deepseek_recipe::{convert_json, ConversionOptions, Protocol};
use serde_json::{json, Value};

/// Values of every JSON type, including awkward numbers and strings.
fn replacements() -> Vec<Value> {
    vec![
        Value::Null,
        json!(true),
        json!(-1),
        json!(1e300),
        json!(""),
        json!("<｜User｜>"),
        json!([]),
        json!([{}]),
        json!({}),
    ]
}

/// Every how-many-th vector is mutated (all of them take minutes in a debug build).
const SAMPLE_EVERY: usize = 16;

/// Every body obtained by replacing one field of `request` (top level, or one level into each
/// list element) with one of the replacement values.
fn mutations(request: &Value) -> Vec<Value> {
    let mut bodies = Vec::new();
    let Some(object) = request.as_object() else {
        return bodies;
    };
    for (key, value) in object {
        for replacement in replacements() {
            let mut body = request.clone();
            body[key] = replacement;
            bodies.push(body);
        }
        let Some(items) = value.as_array() else {
            continue;
        };
        for (index, item) in items.iter().enumerate() {
            for field in item
                .as_object()
                .into_iter()
                .flat_map(|fields| fields.keys())
            {
                for replacement in replacements() {
                    let mut body = request.clone();
                    body[key][index][field] = replacement;
                    bodies.push(body);
                }
            }
        }
    }
    bodies
}

#[test]
fn mutated_requests_never_panic() {
    let Some(dir) = common::vectors_dir() else {
        return;
    };
    let options = ConversionOptions::default();
    let mut converted = 0usize;
    for (file, protocol) in [
        ("chat_completions", Protocol::ChatCompletions),
        ("responses", Protocol::Responses),
        ("messages", Protocol::Messages),
    ] {
        let path = dir.join("requests").join(format!("{file}.jsonl"));
        for case in common::read_records(&path).iter().step_by(SAMPLE_EVERY) {
            for body in mutations(&case["request"]) {
                let _ = convert_json(protocol, &body.to_string(), &options);
                converted += 1;
            }
        }
    }
    assert!(converted > 1_000, "too few mutations: {converted}");
}
