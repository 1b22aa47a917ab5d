//! Golden stream vectors: every case of `streams/streams.jsonl`, byte-exact; and the stream
//! regressions of the differential harness (`tests/differential/regressions/streams/*.json`, one
//! record each in the same layout, recorded from the reference).
//!
//! Harness (see the vectors README): convert the case's `request` with its `options` (default
//! options where it has none: the vectors never have them), build
//! the generator config from the converted request (`GeneratorConfig::for_request`) plus the
//! `generator` knobs, a `StreamProcessor` with the effective `parsing_options`, push every
//! input, record chunks (`at`, SSE event, data), the error, `finished`, the accumulated
//! response; normalise random ids/timestamps in our output exactly like the recorder did.

#![allow(clippy::print_stdout)] // the per-category pass/fail lines are this test's report

mod common;
#[path = "support/failures.rs"]
mod failures;

use std::collections::BTreeMap;

use deepseek_recipe::{
    convert_json, Accumulator, ConversionOptions, ConvertedRequest, GeneratorConfig, IdSource,
    InferenceChunk, ParsingOptions, PromptUsage, Protocol, ResponseContext, StreamIdentity,
    StreamProcessor, TokenizerText,
};
use failures::{assert_none_failed, Failure};
use serde_json::Value;

/// Replaces random values the way the recorder did.
#[derive(Default)]
struct Normalizer {
    ids: BTreeMap<String, String>,
}

impl Normalizer {
    fn tool_call_placeholder(&mut self, text: &str) -> Option<String> {
        let rest = text.strip_prefix("call_")?;
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits < 2 || rest.as_bytes().get(digits) != Some(&b'_') {
            return None;
        }
        let number = &rest[..digits];
        let mut tail = &rest[digits + 1..];
        let marker = if let Some(after) = tail.strip_prefix("ET_") {
            tail = after;
            "ET_"
        } else {
            ""
        };
        let shaped = tail.len() == 24
            && tail[..20].bytes().all(|b| b.is_ascii_alphanumeric())
            && tail[20..].bytes().all(|b| b.is_ascii_digit());
        if !shaped {
            return None;
        }
        let next = self.ids.len();
        let key = self
            .ids
            .entry(text.to_owned())
            .or_insert_with(|| format!("<R{next}>"));
        Some(format!("call_{number}_{marker}{key}"))
    }

    fn walk(&mut self, value: &mut Value, responses: bool) {
        match value {
            Value::String(text) => {
                if let Some(placeholder) = self.tool_call_placeholder(text) {
                    *text = placeholder;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| self.walk(item, responses)),
            Value::Object(map) => {
                for (key, item) in map.iter_mut() {
                    if responses && key == "created_at" && item.is_u64() {
                        *item = Value::String("<CREATED_AT>".into());
                    } else if responses && key == "completed_at" && item.is_u64() {
                        *item = Value::String("<COMPLETED_AT>".into());
                    } else {
                        self.walk(item, responses);
                    }
                }
            }
            _ => {}
        }
    }

    fn chunk(&mut self, protocol: &str, json: &str) -> Value {
        let mut value: Value = serde_json::from_str(json).expect("our chunk is JSON");
        assert_eq!(
            serde_json::to_string(&value).unwrap(),
            json,
            "chunk JSON is not canonical"
        );
        if protocol == "chat_completions" {
            if let Some(created) = value.get_mut("created") {
                *created = Value::String("<CREATED>".into());
            }
        }
        self.walk(&mut value, protocol == "responses");
        value
    }
}

/// The generator config from the converted request, with the harness's explicit knobs applied:
/// `generator.signature` and `generator.direct_thinking_mode` set the Messages signature and
/// thinking mode. `generator.echo` and `generator.namespace_tool_map` change nothing: the
/// converted request already carries what the reference's `with_echo` and
/// `with_namespace_tool_map` would add.
fn generator_config(case: &Value, converted: &ConvertedRequest) -> GeneratorConfig {
    let generator = &case["generator"];
    let text = |value: &Value| value.as_str().unwrap_or_default().to_owned();
    let identity = StreamIdentity {
        signature: generator["signature"].as_str().map(str::to_owned),
        ..StreamIdentity::new(text(&generator["id"]), text(&generator["model"]))
    };
    let mut config = GeneratorConfig::for_request(converted, identity);
    if let (ResponseContext::Messages, Some(thinking_mode)) =
        (&config.context, generator["direct_thinking_mode"].as_bool())
    {
        config.thinking_mode = thinking_mode;
    }
    config
}

/// The accumulator the harness starts from (`response_init`).
fn accumulator(case: &Value, config: &GeneratorConfig) -> Accumulator {
    let init = &case["response_init"];
    let prompt = PromptUsage {
        prompt_tokens: init["prompt_tokens"].as_u64().unwrap_or_default(),
        prompt_cache_hit_tokens: init["prompt_cache_hit_tokens"].as_u64().unwrap_or_default(),
    };
    Accumulator::for_config(config, init["created"].as_u64().unwrap_or_default(), prompt)
}

/// Runs one case; returns a description of the first difference.
fn run_case(case: &Value) -> Result<(), String> {
    let protocol = case["protocol"].as_str().unwrap_or_default();
    let request_protocol = match protocol {
        "chat_completions" => Protocol::ChatCompletions,
        "responses" => Protocol::Responses,
        "messages" => Protocol::Messages,
        other => return Err(format!("unsupported protocol {other:?}")),
    };
    let body = serde_json::to_string(&case["request"]).map_err(|err| err.to_string())?;
    let options = match case.get("options") {
        Some(options) => ConversionOptions::from_json(&options.to_string())
            .map_err(|err| format!("options: {err}"))?,
        None => ConversionOptions::default(),
    };
    let converted = convert_json(request_protocol, &body, &options)
        .map_err(|err| format!("conversion: {err}"))?;
    let converted_options = serde_json::to_value(&converted.parsing_options).unwrap();
    if converted_options != case["parsing_options_converted"] {
        return Err(format!(
            "converted parsing options: ours {converted_options} theirs {}",
            case["parsing_options_converted"]
        ));
    }
    let options: ParsingOptions = serde_json::from_value(case["parsing_options"].clone())
        .map_err(|err| format!("parsing options: {err}"))?;
    let tokenizer = (case["tokenizer"] == true).then(TokenizerText::deepseek_v4);
    let config = generator_config(case, &converted);
    let mut acc = accumulator(case, &config);
    let mut processor =
        StreamProcessor::with_id_source(config, options, tokenizer, IdSource::seeded(1));
    let mut normalizer = Normalizer::default();
    let mut chunks = Vec::new();
    let mut error = Value::Null;
    let inputs = case["inputs"].as_array().cloned().unwrap_or_default();
    let mut record = |at: Value, produced: Vec<deepseek_recipe::Chunk>, acc: &mut Accumulator| {
        for chunk in produced {
            let data = normalizer.chunk(protocol, &chunk.to_json());
            let event = chunk
                .sse_event()
                .map_or(Value::Null, |name| Value::String(name.into()));
            chunks.push(serde_json::json!({"at": at.clone(), "sse_event": event, "data": data}));
            acc.accumulate(&chunk);
        }
    };
    for (index, input) in inputs.iter().enumerate() {
        let chunk: InferenceChunk =
            serde_json::from_value(input.clone()).map_err(|err| format!("input {index}: {err}"))?;
        match processor.push(chunk) {
            Ok(produced) => record(Value::from(index), produced, &mut acc),
            Err(err) => {
                error = serde_json::json!({"type": "RuntimeError", "message": err.to_string(), "at": index});
                break;
            }
        }
    }
    if error.is_null() {
        match processor.finish() {
            Ok(produced) => record(Value::from("finish"), produced, &mut acc),
            Err(err) => {
                error = serde_json::json!({"type": "RuntimeError", "message": err.to_string(), "at": "finish"});
            }
        }
    }
    let expect = &case["expect"];
    let expected_chunks = expect["chunks"].as_array().cloned().unwrap_or_default();
    for (index, (ours, theirs)) in chunks.iter().zip(&expected_chunks).enumerate() {
        let ours = serde_json::to_string(ours).unwrap();
        let theirs = serde_json::to_string(theirs).unwrap();
        if ours != theirs {
            return Err(format!(
                "chunk {index}:\n  ours:   {ours}\n  theirs: {theirs}"
            ));
        }
    }
    if chunks.len() != expected_chunks.len() {
        let extra = chunks
            .get(expected_chunks.len())
            .or(expected_chunks.get(chunks.len()));
        return Err(format!(
            "chunk count: ours {} theirs {}; first extra: {}",
            chunks.len(),
            expected_chunks.len(),
            extra.map(|v| v.to_string()).unwrap_or_default()
        ));
    }
    if error != expect["error"] {
        return Err(format!("error: ours {error} theirs {}", expect["error"]));
    }
    if Value::Bool(processor.finished()) != expect["finished"] {
        return Err(format!("finished: ours {}", processor.finished()));
    }
    let done =
        deepseek_recipe::sse_done_data(&acc).map_or(Value::Null, |d| Value::String(d.into()));
    if done != expect["done_data"] {
        return Err(format!("done_data: ours {done}"));
    }
    let response_json = acc.to_json();
    let mut response: Value = serde_json::from_str(&response_json).unwrap();
    normalizer.walk(&mut response, protocol == "responses");
    let ours = serde_json::to_string(&response).unwrap();
    let theirs = serde_json::to_string(&expect["response"]).unwrap();
    if ours != theirs {
        return Err(format!("response:\n  ours:   {ours}\n  theirs: {theirs}"));
    }
    Ok(())
}

#[test]
fn stream_vectors() {
    let Some(dir) = common::vectors_dir() else {
        return;
    };
    let filter = std::env::var("STREAM_FILTER").ok();
    let mut per_category: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    for case in common::read_records(&dir.join("streams/streams.jsonl")) {
        let id = case["id"].as_str().unwrap_or_default().to_owned();
        if filter
            .as_deref()
            .is_some_and(|f| !id.contains(f) && case["protocol"] != f)
        {
            continue;
        }
        let category = case["category"].as_str().unwrap_or_default().to_owned();
        let outcome = std::panic::catch_unwind(|| run_case(&case))
            .unwrap_or_else(|_| Err("panicked".to_owned()));
        let entry = per_category.entry(category).or_default();
        match outcome {
            Ok(()) => entry.0 += 1,
            Err(message) => {
                entry.1 += 1;
                failures.push(Failure {
                    id: format!("{id} ({})", case["protocol"].as_str().unwrap_or("?")),
                    mismatches: vec![message],
                });
            }
        }
    }
    let (mut passed, mut failed) = (0, 0);
    for (category, (ok, bad)) in &per_category {
        println!("streams[{category}]: {ok} passed, {bad} failed");
        passed += ok;
        failed += bad;
    }
    println!("streams: {passed} passed, {failed} failed");
    assert_none_failed("stream vectors", &failures);
}

#[test]
fn stream_regressions() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/differential/regressions/streams");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|err| panic!("cannot read {}: {err}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();
    assert!(
        !paths.is_empty(),
        "no stream regressions in {}",
        dir.display()
    );
    let failures: Vec<String> = paths
        .iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(path).expect("regression file is readable");
            let case: Value = serde_json::from_str(&text).expect("regression file is JSON");
            run_case(&case)
                .err()
                .map(|message| format!("{}: {message}", path.display()))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
