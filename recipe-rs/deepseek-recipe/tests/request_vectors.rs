//! Golden request vectors: every case of `requests/{chat_completions,responses,messages}.jsonl`
//! is converted and compared with the reference's recorded outcome.
//!
//! Set `RECIPE_VECTORS` to the vectors folder (default `../shared/vectors` next to the repo);
//! `RECIPE_VECTORS_OPTIONAL=1` turns a missing folder into a skip. A failure names every failed
//! vector id; `RECIPE_VECTORS_VERBOSE=1` shows every mismatch.

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod common;
#[path = "support/failures.rs"]
mod failures;

use deepseek_recipe::conversation::Conversation;
use deepseek_recipe::protocol::ResponsesRequest;
use deepseek_recipe::{
    convert_json, encode, ConversionOptions, ConvertedRequest, Error, ModelVersion, Protocol,
    Tokenizer,
};
use failures::{assert_none_failed, Failure};
use serde_json::{json, Map, Value};

/// The request body as JSON text, as the vectors README prescribes.
fn body_text(case: &Value) -> String {
    match case.get("request_raw").and_then(Value::as_str) {
        Some(raw) => raw.to_owned(),
        None => serde_json::to_string(&case["request"]).expect("request serialises"),
    }
}

/// Our conversation in the vectors' JSON shape.
fn conversation_as_vector(conversation: &Conversation) -> Value {
    let mut value = serde_json::to_value(conversation).expect("conversation serialises");
    let messages = value["messages"].as_array_mut().expect("messages array");
    for (message, original) in messages.iter_mut().zip(&conversation.messages) {
        let object = message.as_object_mut().expect("message object");
        object.remove("images");
        if object.get("role") == Some(&json!("assistant")) {
            object.entry("reasoning_content").or_insert(Value::Null);
            object.entry("tool_calls").or_insert(Value::Null);
            object.insert("prefix".into(), Value::Bool(original.prefix));
        }
        if !original.images.is_empty() {
            let sources = original
                .images
                .iter()
                .map(|image| {
                    let source = &image.source;
                    let mut entry = Map::new();
                    entry.insert("kind".into(), serde_json::to_value(source.kind).unwrap());
                    entry.insert(
                        "detail".into(),
                        serde_json::to_value(source.detail).unwrap(),
                    );
                    entry.insert("path".into(), Value::String(source.path.clone()));
                    let key = serde_json::to_value(source.kind).unwrap();
                    entry.insert(
                        key.as_str().unwrap().to_owned(),
                        Value::String(source.location.clone()),
                    );
                    Value::Object(entry)
                })
                .collect();
            object.insert("image_sources".into(), Value::Array(sources));
        }
    }
    value
}

fn f32_matches(actual: f32, expected: &Value) -> bool {
    expected
        .as_f64()
        .is_some_and(|expected| expected as f32 == actual)
}

/// The JSON path of the first difference between two values, with both sides there.
fn first_difference(path: String, actual: &Value, expected: &Value) -> String {
    match (actual, expected) {
        (Value::Object(a), Value::Object(e)) => {
            for (key, expected_value) in e {
                match a.get(key) {
                    Some(actual_value) if actual_value != expected_value => {
                        return first_difference(
                            format!("{path}.{key}"),
                            actual_value,
                            expected_value,
                        );
                    }
                    None => return format!("{path}.{key}: missing, want {expected_value}"),
                    _ => {}
                }
            }
            let extra: Vec<&String> = a.keys().filter(|key| !e.contains_key(*key)).collect();
            format!("{path}: unexpected keys {extra:?}")
        }
        (Value::Array(a), Value::Array(e)) if a.len() == e.len() => {
            for (index, (actual_value, expected_value)) in a.iter().zip(e).enumerate() {
                if actual_value != expected_value {
                    return first_difference(
                        format!("{path}[{index}]"),
                        actual_value,
                        expected_value,
                    );
                }
            }
            format!("{path}: equal")
        }
        _ => {
            let clip = |value: &Value| value.to_string().chars().take(400).collect::<String>();
            format!("{path}: got {} want {}", clip(actual), clip(expected))
        }
    }
}

/// Compares a successful conversion with `expect`; returns the mismatching keys.
fn compare_success(converted: &ConvertedRequest, expect: &Value) -> Vec<String> {
    let mut mismatches = Vec::new();
    let mut check = |name: &str, actual: Value, expected: &Value| {
        if &actual != expected {
            mismatches.push(first_difference(name.to_owned(), &actual, expected));
        }
    };
    check(
        "request_model",
        json!(converted.request_model),
        &expect["request_model"],
    );
    check(
        "model_version",
        json!(converted.model_version),
        &expect["model_version"],
    );
    check(
        "thinking_mode",
        json!(converted.conversation.thinking_mode),
        &expect["thinking_mode"],
    );
    check("stream", json!(converted.stream), &expect["stream"]);
    let options = &converted.inference_options;
    let mut inference = serde_json::to_value(options).unwrap();
    let expected_inference = &expect["inference_options"];
    let temperature_ok = f32_matches(options.temperature, &expected_inference["temperature"]);
    let top_p_ok = f32_matches(options.top_p, &expected_inference["top_p"]);
    if temperature_ok && top_p_ok {
        inference["temperature"] = expected_inference["temperature"].clone();
        inference["top_p"] = expected_inference["top_p"].clone();
    }
    check("inference_options", inference, expected_inference);
    // The vectors list the five switches only; an overridden special-token table is checked
    // through the rendered prompt instead.
    let mut parsing = serde_json::to_value(&converted.parsing_options).unwrap();
    if expect["parsing_options"].get("special_tokens").is_none() {
        if let Some(fields) = parsing.as_object_mut() {
            fields.remove("special_tokens");
        }
    }
    check("parsing_options", parsing, &expect["parsing_options"]);
    check(
        "conversation",
        conversation_as_vector(&converted.conversation),
        &expect["conversation"],
    );
    if let Some(cases) = expect["resolve_max_tokens"].as_array() {
        for case in cases {
            let prompt_tokens = case[0].as_u64().unwrap();
            let context_limit = case[1].as_u64().unwrap();
            let actual = match converted.resolve_max_tokens(prompt_tokens, context_limit) {
                Ok(value) => json!(value),
                Err(err) => json!({"error": {"status_code": err.status_code, "body": err}}),
            };
            check(
                &format!("resolve_max_tokens({prompt_tokens}, {context_limit})"),
                actual,
                &case[2],
            );
        }
    }
    mismatches
}

/// Renders the converted conversation with the encoding of its model version (special-token
/// overrides from the options applied) and compares prompt, special ranges, image count and
/// the V4 token ids (or the encoding error).
fn compare_rendering(
    converted: &ConvertedRequest,
    options: &ConversionOptions,
    expect: &Value,
) -> Vec<String> {
    let rendered = options
        .encoding_for(converted.model_version)
        .render(&converted.conversation);
    let mut mismatches = Vec::new();
    if rendered.prompt != expect["prompt"].as_str().unwrap_or_default() {
        mismatches.push(first_difference(
            "prompt".into(),
            &json!(rendered.prompt),
            &expect["prompt"],
        ));
    }
    let ranges: Vec<[usize; 2]> = rendered
        .special_char_ranges()
        .into_iter()
        .map(|range| [range.start, range.end])
        .collect();
    if json!(ranges) != expect["special_ranges"] {
        mismatches.push(format!("special_ranges differ: got {}", json!(ranges)));
    }
    if json!(rendered.image_sources.len()) != expect["image_count"] {
        mismatches.push(format!("image_count: got {}", rendered.image_sources.len()));
    }
    if converted.model_version == ModelVersion::DeepseekV4Pro {
        match encode(&rendered, Tokenizer::deepseek_v4()) {
            Ok(ids) if json!(ids) == expect["token_ids"] => {}
            Ok(_) => mismatches.push("token_ids differ".to_owned()),
            Err(err) if expect["encode_error"]["message"] == json!(err.to_string()) => {}
            Err(err) => mismatches.push(format!("encode error: {err}")),
        }
    }
    mismatches
}

/// Compares the Responses extras (`echo()` and `namespace_tool_map()`, read before conversion).
fn compare_responses_extras(
    body: &str,
    options: &ConversionOptions,
    expect: &Value,
) -> Vec<String> {
    let request = match ResponsesRequest::from_json(body) {
        Ok(request) => request,
        Err(err) => return vec![format!("responses extras: parse failed: {err}")],
    };
    let mut mismatches = Vec::new();
    let echo = request.echo();
    let mut actual = serde_json::to_value(&echo).unwrap();
    let expected = &expect["responses_echo"];
    if f32_matches(echo.temperature, &expected["temperature"])
        && f32_matches(echo.top_p, &expected["top_p"])
    {
        actual["temperature"] = expected["temperature"].clone();
        actual["top_p"] = expected["top_p"].clone();
    }
    if &actual != expected {
        mismatches.push(format!("responses_echo: got {actual} want {expected}"));
    }
    let actual = match request.namespace_tool_map(options) {
        Ok(map) => serde_json::to_value(map).unwrap(),
        Err(err) => json!({"error": {"status_code": err.status_code, "body": err}}),
    };
    if actual != expect["namespace_tool_map"] {
        mismatches.push(format!(
            "namespace_tool_map: got {actual} want {}",
            expect["namespace_tool_map"]
        ));
    }
    mismatches
}

/// Compares a failed conversion with `expect.error`; returns the mismatches.
fn compare_error(error: &Error, expected: &Value) -> Vec<String> {
    let actual = match error {
        Error::Parse(message) => json!({"stage": "parse", "status_code": null, "body": message}),
        Error::Api(api) => json!({"stage": "convert", "status_code": api.status_code, "body": api}),
        other => json!({"stage": "other", "body": other.to_string()}),
    };
    let mut expected = expected.clone();
    if let Some(object) = expected.as_object_mut() {
        object.remove("exception");
    }
    if actual == expected {
        Vec::new()
    } else {
        vec![format!("error: got {actual} want {expected}")]
    }
}

struct Tally {
    passed: usize,
    failed: usize,
    parse_messages_matched: usize,
    parse_cases: usize,
}

/// The protocol a record names.
fn record_protocol(case: &Value) -> Protocol {
    serde_json::from_value(case["protocol"].clone()).expect("record names a known protocol")
}

/// Runs one file's cases; failed ones are added to `failures`.
fn run_file(dir: &std::path::Path, file: &str, failures: &mut Vec<Failure>) {
    let path = dir.join(format!("{file}.jsonl"));
    let mut tally = Tally {
        passed: 0,
        failed: 0,
        parse_messages_matched: 0,
        parse_cases: 0,
    };
    for case in common::read_records(&path) {
        let protocol = record_protocol(&case);
        let id = case["id"].as_str().unwrap_or("?");
        let options = ConversionOptions::from_json(&case["options"].to_string())
            .unwrap_or_else(|err| panic!("{id}: bad options: {err}"));
        let expect = &case["expect"];
        let body = body_text(&case);
        let result = convert_json(protocol, &body, &options);
        let expected_error = expect.get("error");
        let mismatches = match (&result, expected_error) {
            (Ok(converted), None) => {
                let mut mismatches = compare_success(converted, expect);
                mismatches.extend(compare_rendering(converted, &options, expect));
                if protocol == Protocol::Responses {
                    mismatches.extend(compare_responses_extras(&body, &options, expect));
                }
                mismatches
            }
            (Err(error), Some(expected)) => {
                let mismatches = compare_error(error, expected);
                if expected["stage"] == "parse" {
                    tally.parse_cases += 1;
                    if mismatches.is_empty() {
                        tally.parse_messages_matched += 1;
                    }
                }
                mismatches
            }
            (Ok(_), Some(expected)) => vec![format!("converted, but expected error {expected}")],
            (Err(error), None) => vec![format!("unexpected error: {error}")],
        };
        if mismatches.is_empty() {
            tally.passed += 1;
        } else {
            tally.failed += 1;
            failures.push(Failure {
                id: format!("{id} [{}]", case["category"].as_str().unwrap_or("")),
                mismatches,
            });
        }
    }
    let name = file.rsplit('/').next().unwrap_or(file);
    println!("{name}: {} passed, {} failed", tally.passed, tally.failed);
    println!(
        "  ({name}: parse-stage messages matched exactly: {}/{})",
        tally.parse_messages_matched, tally.parse_cases
    );
}

#[test]
fn request_vectors() {
    let Some(dir) = common::vectors_dir() else {
        return;
    };
    let files = [
        "requests/chat_completions",
        "requests/responses",
        "requests/messages",
        "images/image_requests",
    ];
    let mut failures = Vec::new();
    for file in files {
        run_file(&dir, file, &mut failures);
    }
    assert_none_failed("request vectors", &failures);
}
