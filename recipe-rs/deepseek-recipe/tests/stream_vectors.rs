//! Golden stream vectors: every case of `streams/streams.jsonl`, byte-exact.
//!
//! Harness (see the vectors README): build the generator config from the case's `request` and
//! `generator` objects, a `StreamProcessor` with the effective `parsing_options`, push every
//! input, record chunks (`at`, SSE event, data), the error, `finished`, the accumulated
//! response; normalise random ids/timestamps in our output exactly like the recorder did.
//!
//! Test-side adapter (for the lead): the config is built from a handful of request fields
//! only, because request conversion lives on another branch:
//! * thinking mode = the converted parsing options have a thinking stage
//!   (`parsing_options_converted.thinking_initial_stage != null`);
//! * Messages: thinking mode = `generator.direct_thinking_mode` when set, signature =
//!   `generator.signature`;
//! * Chat: `content_continuation` = that stage is `ContentContinuation`;
//!   `usage_on_every_chunk` = `!request.stream || request.stream_options.include_usage`.

#![allow(clippy::print_stdout)] // the per-category pass/fail lines are this test's report

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use deepseek_recipe::stream::chat::{ChatConfig, ChatResponse};
use deepseek_recipe::stream::ids::IdSource;
use deepseek_recipe::stream::messages::{MessagesConfig, MessagesResponse};
use deepseek_recipe::stream::responses::{
    report_tools, ReasoningSettings, ResponsesConfig, ResponsesEcho, ResponsesResponse,
};
use deepseek_recipe::stream::{
    Accumulator, GeneratorConfig, InferenceChunk, ParsingOptions, PromptUsage, StreamProcessor,
    ThinkingInitialStage, TokenizerText,
};
use serde_json::Value;

fn vectors_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("RECIPE_VECTORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/vectors")
        });
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var("RECIPE_VECTORS_OPTIONAL").as_deref() == Ok("1"),
        "golden vectors not found at {} (set RECIPE_VECTORS, or RECIPE_VECTORS_OPTIONAL=1)",
        dir.display()
    );
    None
}

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

fn generator_config(case: &Value) -> GeneratorConfig {
    let request = &case["request"];
    let generator = &case["generator"];
    let converted_stage = &case["parsing_options_converted"]["thinking_initial_stage"];
    let thinking_mode = !converted_stage.is_null();
    let text = |value: &Value| value.as_str().unwrap_or_default().to_owned();
    match case["protocol"].as_str() {
        Some("chat_completions") => {
            let stream = request["stream"].as_bool().unwrap_or(false);
            let include_usage = request["stream_options"]["include_usage"]
                .as_bool()
                .unwrap_or(false);
            GeneratorConfig::Chat(ChatConfig {
                id: text(&generator["id"]),
                model: text(&generator["model"]),
                thinking_mode,
                content_continuation: converted_stage.as_str() == Some("ContentContinuation"),
                usage_on_every_chunk: !stream || include_usage,
                created: None,
            })
        }
        Some("messages") => GeneratorConfig::Messages(MessagesConfig {
            id: text(&generator["id"]),
            model: text(&generator["model"]),
            thinking_mode: generator["direct_thinking_mode"]
                .as_bool()
                .unwrap_or(thinking_mode),
            signature: generator["signature"].as_str().map(str::to_owned),
        }),
        Some("responses") => {
            GeneratorConfig::Responses(Box::new(responses_config(case, thinking_mode)))
        }
        other => panic!("unsupported protocol {other:?}"),
    }
}

/// Responses adapter: echo fields when `generator.echo`; `reasoning`, `text`, `tool_choice` and
/// `tools` from the request; the namespace map (`ns__f` for V4, `ns::f` for V4.1 models) when
/// `generator.namespace_tool_map`; custom tools by `type`.
fn responses_config(case: &Value, thinking_mode: bool) -> ResponsesConfig {
    let request = &case["request"];
    let generator = &case["generator"];
    let text = |value: &Value| value.as_str().map(str::to_owned);
    let float = |value: &Value| value.as_f64().map(|v| v as f32);
    let echo = if generator["echo"].as_bool() == Some(true) {
        ResponsesEcho {
            instructions: text(&request["instructions"]),
            max_output_tokens: request["max_output_tokens"].as_u64(),
            temperature: float(&request["temperature"]).unwrap_or(1.0),
            top_p: float(&request["top_p"]).unwrap_or(1.0),
            top_logprobs: request["top_logprobs"].as_u64().unwrap_or(0) as u32,
            user: text(&request["user"]),
        }
    } else {
        ResponsesEcho::default()
    };
    let tools = request["tools"].as_array().cloned().unwrap_or_default();
    let separator = if text(&generator["model"])
        .unwrap_or_default()
        .contains("V4.1")
    {
        "::"
    } else {
        "__"
    };
    let mut namespace_tools = BTreeMap::new();
    let mut custom_tools = BTreeSet::new();
    for tool in &tools {
        match tool["type"].as_str() {
            Some("custom") => {
                custom_tools.insert(text(&tool["name"]).unwrap_or_default());
            }
            Some("namespace") if generator["namespace_tool_map"].as_bool() == Some(true) => {
                let namespace = text(&tool["name"]).unwrap_or_default();
                for inner in tool["tools"].as_array().into_iter().flatten() {
                    let local = text(&inner["name"]).unwrap_or_default();
                    let key = format!("{namespace}{separator}{local}");
                    namespace_tools.insert(key, (namespace.clone(), local));
                }
            }
            _ => {}
        }
    }
    let format = match &request["text"]["format"] {
        Value::Null => serde_json::json!({"type": "text"}),
        format => format.clone(),
    };
    ResponsesConfig {
        id: text(&generator["id"]).unwrap_or_default(),
        model: text(&generator["model"]).unwrap_or_default(),
        thinking_mode,
        created_at: None,
        echo,
        reasoning: ReasoningSettings {
            effort: text(&request["reasoning"]["effort"]),
            summary: text(&request["reasoning"]["summary"]),
        },
        text: serde_json::json!({"format": format, "verbosity": request["text"]["verbosity"]}),
        tool_choice: match &request["tool_choice"] {
            Value::Null => Value::String("auto".into()),
            choice => choice.clone(),
        },
        tools: report_tools(&tools),
        namespace_tools,
        custom_tools,
    }
}

fn accumulator(case: &Value) -> Accumulator {
    let init = &case["response_init"];
    let id = init["id"].as_str().unwrap_or_default();
    let model = init["model"].as_str().unwrap_or_default();
    let created = init["created"].as_u64().unwrap_or_default();
    match case["protocol"].as_str() {
        Some("chat_completions") => Accumulator::Chat(ChatResponse::new(id, model, created)),
        Some("responses") => {
            let config = responses_config(case, false);
            Accumulator::Responses(Box::new(ResponsesResponse::new(&config, created)))
        }
        Some("messages") => {
            let prompt = PromptUsage {
                prompt_tokens: init["prompt_tokens"].as_u64().unwrap_or_default(),
                prompt_cache_hit_tokens: init["prompt_cache_hit_tokens"]
                    .as_u64()
                    .unwrap_or_default(),
            };
            Accumulator::Messages(MessagesResponse::new(id, model, prompt))
        }
        other => panic!("unsupported protocol {other:?}"),
    }
}

/// Runs one case; returns a description of the first difference.
fn run_case(
    case: &Value,
    tokenizer: Option<&dyn deepseek_recipe::stream::TokenText>,
) -> Result<(), String> {
    let protocol = case["protocol"].as_str().unwrap_or_default();
    let options: ParsingOptions = serde_json::from_value(case["parsing_options"].clone())
        .map_err(|err| format!("parsing options: {err}"))?;
    let _ = ThinkingInitialStage::ReasoningStart;
    let tokenizer = if case["tokenizer"].as_bool() == Some(true) {
        tokenizer
    } else {
        None
    };
    let mut processor = StreamProcessor::with_id_source(
        generator_config(case),
        options,
        tokenizer,
        IdSource::seeded(1),
    );
    let mut acc = accumulator(case);
    let mut normalizer = Normalizer::default();
    let mut chunks = Vec::new();
    let mut error = Value::Null;
    let inputs = case["inputs"].as_array().cloned().unwrap_or_default();
    let mut record = |at: Value,
                      produced: Vec<deepseek_recipe::stream::Chunk>,
                      acc: &mut Accumulator| {
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
    let done = acc
        .sse_done_data()
        .map_or(Value::Null, |d| Value::String(d.into()));
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
    let Some(dir) = vectors_dir() else { return };
    let text = std::fs::read_to_string(dir.join("streams/streams.jsonl")).expect("streams.jsonl");
    let filter = std::env::var("STREAM_FILTER").ok();
    let verbose = std::env::var("STREAM_VERBOSE").is_ok();
    let mut per_category: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    for line in text.lines().filter(|line| !line.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).expect("vector line is JSON");
        let id = case["id"].as_str().unwrap_or_default().to_owned();
        if filter
            .as_deref()
            .is_some_and(|f| !id.contains(f) && case["protocol"] != f)
        {
            continue;
        }
        let category = case["category"].as_str().unwrap_or_default().to_owned();
        let outcome =
            std::panic::catch_unwind(|| run_case(&case, Some(TokenizerText::deepseek_v4())))
                .unwrap_or_else(|_| Err("panicked".to_owned()));
        let entry = per_category.entry(category).or_default();
        match outcome {
            Ok(()) => entry.0 += 1,
            Err(message) => {
                entry.1 += 1;
                failures.push(format!("{id} ({}): {message}", case["protocol"]));
            }
        }
    }
    let shown = if verbose { failures.len() } else { 10 };
    for failure in failures.iter().take(shown) {
        println!("FAIL {failure}");
    }
    let (mut passed, mut failed) = (0, 0);
    for (category, (ok, bad)) in &per_category {
        println!("streams[{category}]: {ok} passed, {bad} failed");
        passed += ok;
        failed += bad;
    }
    println!("streams: {passed} passed, {failed} failed");
    assert_eq!(failed, 0, "{failed} stream vectors failed");
}
