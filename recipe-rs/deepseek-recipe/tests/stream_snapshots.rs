//! Snapshots (insta) of whole stream event traces: representative model outputs (plain content,
//! reasoning then content, parallel DSML tool calls, a malformed call, JSON mode, a stop
//! sequence, a length finish, token ids with log probabilities) pushed through an
//! [`SseStream`] for each protocol that has the feature. A trace is the request, then every
//! inference chunk followed by the exact SSE bytes it produced (until the stream finishes, as
//! a server stops feeding it), the end of the stream, and the accumulated response. Ids and timestamps come from the stream identity and a seeded id
//! source; only Responses' `completed_at` (the clock at the end) is masked.
//!
//! A changed trace fails the test; review it as docs/testing.md ("Snapshots") describes.

use deepseek_recipe::{
    convert_json, Accumulator, ConversionOptions, GeneratorConfig, IdSource, InferenceChunk,
    InferenceFinishReason, PromptUsage, Protocol, SseStream, StreamIdentity, StreamProcessor,
    TokenLogprobs, Tokenizer, TokenizerText,
};
use serde_json::{json, Map, Value};

const MODEL: &str = "DeepSeek-V4-Pro";
const CREATED: u64 = 1_700_000_000;
const USER_TEXT: &str = "What's the weather in Paris and Rome? Answer in JSON if asked.";

/// A request feature a case needs, spelled differently by each protocol.
#[derive(Clone, Copy, PartialEq)]
enum Feature {
    /// Thinking mode on (off when absent).
    Thinking,
    /// One function tool, `get_weather(city, days?)`.
    Tools,
    /// JSON output mode (Chat `response_format`, Responses `text.format`; Messages has none).
    JsonMode,
    /// The stop sequence `END` (Chat `stop`, Messages `stop_sequences`; Responses has none).
    Stop,
    /// Two top log probabilities per token (Chat and Responses; Messages reports none).
    Logprobs,
}

/// One piece of backend output.
enum Input {
    /// A text piece of one token.
    Text(&'static str),
    /// `text` encoded with the V4 tokenizer, pushed one token id per chunk with log
    /// probabilities derived from the position.
    Tokens(&'static str),
    /// The backend finished.
    Finish(InferenceFinishReason),
}

/// The function tool of [`Feature::Tools`] in the protocol's shape.
fn weather_tool(protocol: Protocol) -> Value {
    let schema = json!({
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"],
    });
    let description = "Get the weather of a city";
    match protocol {
        Protocol::ChatCompletions => json!({"type": "function", "function": {
            "name": "get_weather", "description": description, "parameters": schema}}),
        Protocol::Responses => json!({"type": "function", "name": "get_weather",
            "description": description, "parameters": schema}),
        Protocol::Messages => {
            json!({"name": "get_weather", "description": description, "input_schema": schema})
        }
    }
}

/// The streamed request of `protocol` with `features`; `None` when the protocol lacks one.
fn request(protocol: Protocol, features: &[Feature]) -> Option<Value> {
    let user = json!([{"role": "user", "content": USER_TEXT}]);
    let thinking = features.contains(&Feature::Thinking);
    let mut body = Map::new();
    body.insert("model".into(), MODEL.into());
    body.insert("stream".into(), true.into());
    match protocol {
        Protocol::ChatCompletions | Protocol::Messages => {
            body.insert("messages".into(), user);
            let kind = if thinking { "enabled" } else { "disabled" };
            body.insert("thinking".into(), json!({"type": kind}));
        }
        Protocol::Responses => {
            body.insert("input".into(), user);
            let effort = if thinking { "high" } else { "none" };
            body.insert("reasoning".into(), json!({"effort": effort}));
        }
    }
    if protocol == Protocol::Messages {
        body.insert("max_tokens".into(), 1024.into());
    }
    for feature in features {
        let (key, value) = match (feature, protocol) {
            (Feature::Thinking, _) | (Feature::Logprobs, Protocol::Messages) => continue,
            (Feature::Tools, _) => ("tools", json!([weather_tool(protocol)])),
            (Feature::JsonMode, Protocol::ChatCompletions) => {
                ("response_format", json!({"type": "json_object"}))
            }
            (Feature::JsonMode, Protocol::Responses) => {
                ("text", json!({"format": {"type": "json_object"}}))
            }
            (Feature::Stop, Protocol::ChatCompletions) => ("stop", json!(["END"])),
            (Feature::Stop, Protocol::Messages) => ("stop_sequences", json!(["END"])),
            (Feature::Logprobs, Protocol::ChatCompletions) => {
                body.insert("logprobs".into(), true.into());
                ("top_logprobs", json!(2))
            }
            (Feature::Logprobs, Protocol::Responses) => ("top_logprobs", json!(2)),
            (Feature::JsonMode, Protocol::Messages) | (Feature::Stop, Protocol::Responses) => {
                return None
            }
        };
        body.insert(key.into(), value);
    }
    Some(Value::Object(body))
}

/// The inference chunks of `inputs`, after a `ready` chunk with prompt usage.
fn inference_chunks(inputs: &[Input]) -> Vec<InferenceChunk> {
    let usage = PromptUsage {
        prompt_tokens: 42,
        prompt_cache_hit_tokens: 8,
    };
    let mut chunks = vec![InferenceChunk::ready(
        Some(usage),
        Some("fp_snapshot".to_owned()),
    )];
    for input in inputs {
        match input {
            Input::Text(text) => chunks.push(InferenceChunk::text(*text, 1)),
            Input::Tokens(text) => {
                let ids = Tokenizer::deepseek_v4().encode(text, false);
                for (position, &id) in ids.iter().enumerate() {
                    let logprob = -0.125 - 0.25 * position as f32;
                    let logprobs: TokenLogprobs = (logprob, vec![(id, logprob), (id + 1, -3.5)]);
                    chunks.push(InferenceChunk::tokens(vec![id], Some(vec![logprobs])));
                }
            }
            Input::Finish(reason) => chunks.push(InferenceChunk::finish(*reason)),
        }
    }
    chunks
}

/// `text` with every `"completed_at":<digits>` masked (the clock at the end of the stream).
fn mask_completed_at(text: &str) -> String {
    const KEY: &str = "\"completed_at\":";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(KEY) {
        let (before, after) = rest.split_at(at + KEY.len());
        out.push_str(before);
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 {
            out.push_str("\"<COMPLETED_AT>\"");
        }
        rest = &after[digits..];
    }
    out.push_str(rest);
    out
}

/// The trace of `inputs` streamed for `body` in `protocol`.
fn trace(protocol: Protocol, body: &Value, inputs: &[Input]) -> String {
    let converted = convert_json(protocol, &body.to_string(), &ConversionOptions::default())
        .unwrap_or_else(|err| panic!("the snapshot request converts: {err}"));
    let identity = StreamIdentity {
        created: Some(CREATED),
        ..StreamIdentity::new("snapshot-0001", MODEL)
    };
    let config = GeneratorConfig::for_request(&converted, identity);
    let accumulator = Accumulator::for_config(&config, CREATED, PromptUsage::default());
    let processor = StreamProcessor::with_id_source(
        config,
        converted.parsing_options.clone(),
        Some(TokenizerText::deepseek_v4()),
        IdSource::seeded(1),
    );
    let mut stream = SseStream::new(processor, accumulator);
    let mut trace = format!("request: {body}\n");
    for chunk in inference_chunks(inputs) {
        if stream.finished() {
            trace += "\n(the stream has finished: the rest of the output is not pushed)\n";
            break;
        }
        let input = serde_json::to_string(&chunk).expect("inference chunks serialise");
        let mut out = Vec::new();
        let outcome = match stream.push(chunk, &mut out) {
            Ok(()) => String::new(),
            Err(err) => format!("error: {err}\n"),
        };
        trace += &format!("\n> {input}\n{}{outcome}", String::from_utf8_lossy(&out));
    }
    let mut out = Vec::new();
    let outcome = match stream.finish(&mut out) {
        Ok(()) => String::new(),
        Err(err) => format!("error: {err}\n"),
    };
    trace += &format!("\n> end\n{}{outcome}", String::from_utf8_lossy(&out));
    trace += &format!("\nresponse: {}\n", stream.accumulator().to_json());
    mask_completed_at(&trace)
}

/// Snapshots the trace of `inputs` in every protocol that has `features`.
fn check(case: &str, features: &[Feature], inputs: &[Input]) {
    let protocols = [
        ("chat_completions", Protocol::ChatCompletions),
        ("responses", Protocol::Responses),
        ("messages", Protocol::Messages),
    ];
    for (name, protocol) in protocols {
        if let Some(body) = request(protocol, features) {
            insta::assert_snapshot!(format!("{case}__{name}"), trace(protocol, &body, inputs));
        }
    }
}

const CALLS_OPEN: &str = "<｜DSML｜tool_calls>\n";
const CALLS_CLOSE: &str = "</｜DSML｜tool_calls>";

#[test]
fn plain_content() {
    let inputs = [
        Input::Text("Hello"),
        Input::Text(", world!"),
        Input::Finish(InferenceFinishReason::Stop),
    ];
    check("plain_content", &[], &inputs);
}

#[test]
fn reasoning_then_content() {
    let inputs = [
        Input::Text("The user asks about "),
        Input::Text("two cities."),
        Input::Text("</think>"),
        Input::Text("Both are sunny."),
        Input::Finish(InferenceFinishReason::Stop),
    ];
    check("reasoning_then_content", &[Feature::Thinking], &inputs);
}

#[test]
fn parallel_tool_calls() {
    let inputs = [
        Input::Text("Checking both cities.\n\n"),
        Input::Text(CALLS_OPEN),
        Input::Text("<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"city\" string=\"true\">Pa"),
        Input::Text("ris</｜DSML｜parameter>\n<｜DSML｜parameter name=\"days\" string=\"false\">2</｜DSML｜parameter>\n</｜DSML｜invoke>\n"),
        Input::Text("<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"city\" string=\"true\">Rome</｜DSML｜parameter>\n</｜DSML｜invoke>\n"),
        Input::Text(CALLS_CLOSE),
        Input::Finish(InferenceFinishReason::Stop),
    ];
    check("parallel_tool_calls", &[Feature::Tools], &inputs);
}

#[test]
fn malformed_tool_call() {
    // The block never closes: the output ends inside a parameter.
    let inputs = [
        Input::Text(CALLS_OPEN),
        Input::Text("<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"city\" string=\"true\">Par"),
        Input::Finish(InferenceFinishReason::Stop),
    ];
    check("malformed_tool_call", &[Feature::Tools], &inputs);
}

#[test]
fn json_mode() {
    let inputs = [
        Input::Text("```json\n{\"city\": "),
        Input::Text("\"Paris\", \"sky\": \"clear\"}\n```"),
        Input::Finish(InferenceFinishReason::Stop),
    ];
    check("json_mode", &[Feature::JsonMode], &inputs);
}

#[test]
fn stop_sequence_hit() {
    // The stop sequence spans two pieces; what follows it is never sent.
    let inputs = [
        Input::Text("Sunny in Paris. EN"),
        Input::Text("D and more"),
        Input::Text("ignored"),
        Input::Finish(InferenceFinishReason::Stop),
    ];
    check("stop_sequence_hit", &[Feature::Stop], &inputs);
}

#[test]
fn length_finish() {
    // The token limit ends the output while it is still reasoning.
    let inputs = [
        Input::Text("Paris first, "),
        Input::Text("then Rome"),
        Input::Finish(InferenceFinishReason::Length),
    ];
    check("length_finish", &[Feature::Thinking], &inputs);
}

#[test]
fn token_ids_with_logprobs() {
    let inputs = [
        Input::Tokens("Sunny, 24°C."),
        Input::Finish(InferenceFinishReason::Stop),
    ];
    check("token_ids_with_logprobs", &[Feature::Logprobs], &inputs);
}

#[test]
fn completed_at_is_masked_and_nothing_else() {
    assert_eq!(
        mask_completed_at(
            r#"{"completed_at":1700000001,"created_at":1700000000,"completed_at":null}"#
        ),
        r#"{"completed_at":"<COMPLETED_AT>","created_at":1700000000,"completed_at":null}"#
    );
}
