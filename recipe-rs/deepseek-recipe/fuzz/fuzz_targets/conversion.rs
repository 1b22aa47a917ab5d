//! The properties every request body must satisfy, whatever its bytes, under the default options
//! and under the strict ones a host enforcing the official pass-back and web-search rules uses:
//!
//! * accepted ⇒ the conversation renders with well-formed special ranges; a V4 prompt encodes
//!   with the bundled V4 tokenizer (a V4.1 prompt may fail only because V4.1 special tokens are
//!   not in it), and encoded ids decode back to the prompt and equal the tokenizer's own
//!   special-range encoding of it (same count, same ids); the converted request survives its
//!   JSON form; a stream processor built for it answers a finished generation with a response
//!   that is one JSON object;
//! * rejected ⇒ a parse error with a message, or an error with a 4xx status whose body is the
//!   official `{"error": {"message", "type", "param", "code"}}` JSON;
//! * never a panic, and no other kind of error.

use deepseek_recipe::convert::{
    ConversionOptions, ConvertedRequest, ModelVersion, Protocol, ReasoningContentBehavior,
    WebSearchBehavior,
};
use deepseek_recipe::encoding::encode;
use deepseek_recipe::stream::ids::IdSource;
use deepseek_recipe::stream::{
    Accumulator, GeneratorConfig, InferenceChunk, InferenceFinishReason, PromptUsage,
    StreamProcessor,
};
use deepseek_recipe::{convert_json, ApiError, Error, Tokenizer};
use serde_json::Value;

/// Checks the properties for one request body of `protocol`.
pub fn check(protocol: Protocol, data: &[u8]) {
    let Ok(body) = std::str::from_utf8(data) else {
        return; // the server answers non-UTF-8 bodies before conversion
    };
    let strict = ConversionOptions::default()
        .with_default_thinking_mode(false)
        .with_reasoning_content_behavior(ReasoningContentBehavior::Reject)
        .with_responses_web_search(WebSearchBehavior::Reject)
        .with_messages_web_search(WebSearchBehavior::Reject);
    for options in [ConversionOptions::default(), strict] {
        match convert_json(protocol, body, &options) {
            Ok(converted) => check_accepted(&converted, &options),
            Err(Error::Parse(message)) => assert!(!message.is_empty(), "empty parse error"),
            Err(Error::Api(error)) => check_error_body(&error),
            Err(other) => panic!("conversion failed with a non-request error: {other:?}"),
        }
    }
}

fn check_accepted(converted: &ConvertedRequest, options: &ConversionOptions) {
    let json = serde_json::to_string(converted).expect("a converted request serialises");
    let back: ConvertedRequest = serde_json::from_str(&json).expect("and deserialises");
    assert_eq!(
        &back, converted,
        "the converted request changed through JSON"
    );
    check_answerable(converted);
    let rendered = options
        .encoding_for(converted.model_version)
        .render(&converted.conversation);
    let mut end = 0;
    for range in &rendered.special_ranges {
        assert!(
            end <= range.start && range.start < range.end,
            "special ranges out of order"
        );
        assert!(
            rendered.prompt.get(range.clone()).is_some(),
            "special range off the text"
        );
        end = range.end;
    }
    let tokenizer = Tokenizer::deepseek_v4();
    let ids = match encode(&rendered, tokenizer) {
        Ok(ids) => ids,
        Err(Error::Encode(_)) if converted.model_version == ModelVersion::DeepseekV41Flash => {
            return;
        }
        Err(error) => panic!("an accepted V4 request does not encode: {error}"),
    };
    let decoded = tokenizer.decode(&ids).expect("encoded ids decode");
    assert_eq!(decoded, rendered.prompt, "decode(encode(prompt)) != prompt");
    let by_ranges = tokenizer
        .encode_with_special_ranges(&rendered.prompt, &rendered.special_ranges)
        .expect("every special range spells a token");
    assert_eq!(by_ranges, ids, "the two encoders disagree");
}

/// A host can answer the request: a stream processor for it turns a short output and a stop
/// (or a stop sequence) into chunks that accumulate to one JSON object.
fn check_answerable(converted: &ConvertedRequest) {
    let config = GeneratorConfig::for_request(converted, "fuzz", &converted.request_model);
    let mut accumulator = Accumulator::for_config(&config, 0, PromptUsage::default());
    let mut processor = StreamProcessor::with_id_source(
        config,
        converted.parsing_options.clone(),
        None,
        IdSource::seeded(0),
    );
    for input in [
        InferenceChunk::text("ok", 1),
        InferenceChunk::finish(InferenceFinishReason::Stop),
    ] {
        if processor.finished() {
            break; // a stop sequence ended the answer
        }
        for chunk in processor
            .push(input)
            .expect("a live processor takes output")
        {
            accumulator.accumulate(&chunk);
        }
    }
    for chunk in processor.finish().expect("a stopped processor finishes") {
        accumulator.accumulate(&chunk);
    }
    let response: Value =
        serde_json::from_str(&accumulator.to_json()).expect("the response is JSON");
    assert!(response.is_object(), "the response is not a JSON object");
}

fn check_error_body(error: &ApiError) {
    assert!(
        (400..500).contains(&error.status_code),
        "status {}",
        error.status_code
    );
    let body: Value = serde_json::from_str(&error.body_json()).expect("the error body is JSON");
    let outer = body.as_object().expect("the error body is an object");
    assert_eq!(outer.len(), 1, "the error body has only `error`: {body}");
    let inner = outer["error"].as_object().expect("`error` is an object");
    let keys: Vec<&str> = inner.keys().map(String::as_str).collect();
    assert_eq!(keys, ["message", "type", "param", "code"], "{body}");
    assert!(
        inner["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{body}"
    );
    assert!(
        inner["type"].as_str().is_some_and(|t| !t.is_empty()),
        "{body}"
    );
    assert!(
        inner["param"].is_null() || inner["param"].is_string(),
        "{body}"
    );
    assert!(
        inner["code"].is_null() || inner["code"].is_string(),
        "{body}"
    );
}
