//! Setting up the stream of a converted request: the caller's choices beyond the request (id
//! seed, timestamps, signature, parsing, usage seed, decoding), read by name from JSON.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::accumulator::Accumulator;
use super::config::{GeneratorConfig, StreamIdentity};
use super::ids::{unix_now, IdSource};
use super::inference::PromptUsage;
use super::processor::StreamProcessor;
use super::sse::SseStream;
use super::token_text::{SharedTokenText, TokenizerText};
use crate::converted::{ConvertedRequest, ParsingOptions, ResponseContext};
use crate::error::{Error, Result};

/// How the stream of a converted request is set up beyond its id and model. Every field is
/// optional: an absent one keeps the default. Read from JSON by [`Self::from_json`], which
/// refuses unknown keys, so a misspelt or reordered setting can never land in another one.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StreamOptions {
    /// Seed of the tool-call ids (`None`: random ids).
    pub seed: Option<u64>,
    /// Chat `created` / Responses `created_at` (`None`: the clock when the stream is set up).
    pub created: Option<u64>,
    /// Signature of the Messages thinking block (`None`: the response id).
    pub signature: Option<String>,
    /// Replaces the converted request's parsing options (e.g. extra stop sequences).
    pub parsing_options: Option<ParsingOptions>,
    /// Seeds the accumulated response's usage until the ready chunk reports it.
    pub prompt_usage: Option<PromptUsage>,
    /// The Messages generator's thinking mode instead of the request's (the reference harness
    /// drives its generator directly with one); ignored by the other protocols.
    pub thinking_mode: Option<bool>,
    /// Without a caller's tokenizer, whether the bundled V4 one decodes token input (`false`:
    /// text input only, and reasoning tokens are not counted).
    pub bundled_tokenizer: bool,
}

impl Default for StreamOptions {
    fn default() -> Self {
        Self {
            seed: None,
            created: None,
            signature: None,
            parsing_options: None,
            prompt_usage: None,
            thinking_mode: None,
            bundled_tokenizer: true,
        }
    }
}

impl StreamOptions {
    /// Reads options from a JSON object (never a positional array); an unknown key or a value
    /// of the wrong type is an [`Error::Parse`] naming it.
    pub fn from_json(json: &str) -> Result<Self> {
        let invalid =
            |err: serde_json::Error| Error::Parse(format!("invalid stream options: {err}"));
        let fields: Map<String, Value> = serde_json::from_str(json).map_err(invalid)?;
        Self::deserialize(Value::Object(fields)).map_err(invalid)
    }
}

impl SseStream {
    /// The stream answering `converted` as response `id` of `model`, set up by `options`;
    /// `tokenizer` decodes token input (`None`: as [`StreamOptions::bundled_tokenizer`] says).
    pub fn for_request(
        converted: &ConvertedRequest,
        id: String,
        model: String,
        tokenizer: Option<SharedTokenText>,
        options: StreamOptions,
    ) -> Self {
        let identity = StreamIdentity {
            id,
            model,
            created: options.created,
            signature: options.signature,
        };
        let mut config = GeneratorConfig::for_request(converted, identity);
        if let (ResponseContext::Messages, Some(thinking_mode)) =
            (&config.context, options.thinking_mode)
        {
            config.thinking_mode = thinking_mode;
        }
        let parsing = options
            .parsing_options
            .unwrap_or_else(|| converted.parsing_options.clone());
        let tokenizer =
            tokenizer.or_else(|| options.bundled_tokenizer.then(TokenizerText::deepseek_v4));
        let ids = options.seed.map_or_else(IdSource::random, IdSource::seeded);
        let created = options.created.unwrap_or_else(unix_now);
        let usage = options.prompt_usage.unwrap_or_default();
        let accumulator = Accumulator::for_config(&config, created, usage);
        let processor = StreamProcessor::with_id_source(config, parsing, tokenizer, ids);
        Self::new(processor, accumulator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::{convert_json, ConversionOptions, Protocol};

    fn converted(protocol: Protocol, body: &str) -> ConvertedRequest {
        convert_json(protocol, body, &ConversionOptions::default()).unwrap()
    }

    #[test]
    fn absent_keys_keep_the_defaults() {
        assert_eq!(
            StreamOptions::from_json("{}").unwrap(),
            StreamOptions::default()
        );
        let options =
            StreamOptions::from_json(r#"{"seed": 3, "prompt_usage": {"prompt_tokens": 5, "prompt_cache_hit_tokens": 1}, "bundled_tokenizer": false}"#)
                .unwrap();
        assert_eq!(options.seed, Some(3));
        assert_eq!(options.prompt_usage.unwrap().prompt_tokens, 5);
        assert!(!options.bundled_tokenizer && options.created.is_none());
    }

    #[test]
    fn unknown_keys_and_wrong_values_are_refused() {
        let err = StreamOptions::from_json(r#"{"sead": 3}"#).unwrap_err();
        assert!(err
            .to_string()
            .starts_with("invalid stream options: unknown field `sead`"));
        let err = StreamOptions::from_json("[7]").unwrap_err();
        assert!(err
            .to_string()
            .contains("invalid type: sequence, expected a map"));
        let err = StreamOptions::from_json(r#"{"seed": -1}"#).unwrap_err();
        assert!(err
            .to_string()
            .contains("invalid value: integer `-1`, expected u64"));
        assert!(matches!(err, Error::Parse(_)));
    }

    const CHAT: &str = r#"{"model": "DeepSeek-V4-Pro", "thinking": {"type": "disabled"},
        "messages": [{"role": "user", "content": "q"}]}"#;
    const MESSAGES: &str = r#"{"model": "DeepSeek-V4-Pro", "max_tokens": 8,
        "thinking": {"type": "disabled"}, "messages": [{"role": "user", "content": "q"}]}"#;

    /// The stream of `body` set up by `options`.
    fn stream(protocol: Protocol, body: &str, options: StreamOptions) -> SseStream {
        let request = converted(protocol, body);
        SseStream::for_request(&request, "id-1".into(), "m".into(), None, options)
    }

    /// The complete response after `text` and the end of the stream.
    fn response(mut stream: SseStream, text: &str) -> String {
        let mut out = Vec::new();
        stream.push_text(text, 1, &mut out).unwrap();
        stream.finish(&mut out).unwrap();
        stream.accumulator().to_json()
    }

    #[test]
    fn identity_and_clock_reach_the_chunks() {
        let options = StreamOptions {
            created: Some(7),
            ..StreamOptions::default()
        };
        let response = response(stream(Protocol::ChatCompletions, CHAT, options), "hi");
        assert!(response.contains(r#""created":7"#), "{response}");
        assert!(response.contains(r#""id":"id-1""#), "{response}");
    }

    #[test]
    fn without_the_bundled_tokenizer_only_text_is_read() {
        let mut out = Vec::new();
        let mut bundled = stream(Protocol::ChatCompletions, CHAT, StreamOptions::default());
        assert!(bundled.push_tokens(&[1], None, &mut out).is_ok());
        let options = StreamOptions {
            bundled_tokenizer: false,
            ..StreamOptions::default()
        };
        let mut textual = stream(Protocol::ChatCompletions, CHAT, options);
        assert!(textual.push_tokens(&[1], None, &mut out).is_err());
    }

    #[test]
    fn prompt_usage_seeds_the_response() {
        let options = StreamOptions {
            prompt_usage: Some(PromptUsage {
                prompt_tokens: 11,
                prompt_cache_hit_tokens: 2,
            }),
            ..StreamOptions::default()
        };
        let stream = stream(Protocol::Messages, MESSAGES, options);
        let response = stream.accumulator().to_json();
        assert!(response.contains(r#""input_tokens":9"#), "{response}");
        assert!(
            response.contains(r#""cache_read_input_tokens":2"#),
            "{response}"
        );
    }

    #[test]
    fn thinking_mode_replaces_the_messages_requests() {
        let with = |thinking_mode| {
            let options = StreamOptions {
                thinking_mode,
                ..StreamOptions::default()
            };
            response(stream(Protocol::Messages, MESSAGES, options), "a")
        };
        assert!(!with(None).contains(r#""type":"thinking""#));
        assert!(with(Some(true)).contains(r#""type":"thinking""#));
    }
}
