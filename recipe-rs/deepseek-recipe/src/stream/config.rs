//! What a stream's generator needs: who the stream answers as, and what the request asked of
//! the response.

use crate::converted::{ConvertedRequest, ResponseContext, ThinkingInitialStage};

/// Who a stream answers as: the id and model name every chunk reports, and the values the
/// generators otherwise take from the clock or the id.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StreamIdentity {
    /// The response id (`chatcmpl-…`, `resp_…`, `msg_…`).
    pub id: String,
    /// The model name the chunks report.
    pub model: String,
    /// Chat `created` / Responses `created_at`; `None` = the clock when the generator is made
    /// (Messages reports none).
    pub created: Option<u64>,
    /// Signature of the Messages thinking block; `None` = the response id (other protocols
    /// have none).
    pub signature: Option<String>,
}

impl StreamIdentity {
    /// The identity `id` of `model`, timestamped by the clock, signed with the id.
    pub fn new(id: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            model: model.into(),
            created: None,
            signature: None,
        }
    }
}

/// What a stream's generator needs: who it answers as, and the request's settings that shape
/// the response. The protocol is the one of [`Self::context`].
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratorConfig {
    /// Who the stream answers as.
    pub identity: StreamIdentity,
    /// The request is in thinking mode.
    pub thinking_mode: bool,
    /// The output continues a prefix whose reasoning is finished (parsing starts at
    /// [`ThinkingInitialStage::ContentContinuation`]).
    pub content_continuation: bool,
    /// The client asked for streaming.
    pub stream: bool,
    /// The protocol, and the request values its responses report.
    pub context: ResponseContext,
}

impl GeneratorConfig {
    /// A streamed, non-thinking config of the protocol of `context`, answering as `identity`.
    pub fn new(identity: StreamIdentity, context: ResponseContext) -> Self {
        Self {
            identity,
            thinking_mode: false,
            content_continuation: false,
            stream: true,
            context,
        }
    }

    /// The config of a converted request, answering as `identity`.
    pub fn for_request(converted: &ConvertedRequest, identity: StreamIdentity) -> Self {
        Self {
            identity,
            thinking_mode: converted.conversation.thinking_mode,
            content_continuation: converted.parsing_options.thinking_initial_stage
                == Some(ThinkingInitialStage::ContentContinuation),
            stream: converted.stream,
            context: converted.response_context.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::{convert_json, ConversionOptions, Protocol};

    fn config(protocol: Protocol, body: &str) -> GeneratorConfig {
        let converted = convert_json(protocol, body, &ConversionOptions::default()).unwrap();
        GeneratorConfig::for_request(&converted, StreamIdentity::new("id-1", "DeepSeek-V4-Pro"))
    }

    #[test]
    fn the_request_decides_thinking_streaming_and_continuation() {
        let body = r#"{"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "q"},
            {"role": "assistant", "content": "a", "reasoning_content": "r", "prefix": true}]}"#;
        let config = config(Protocol::ChatCompletions, body);
        assert!(config.thinking_mode && config.content_continuation && !config.stream);
        assert_eq!(
            config.identity,
            StreamIdentity::new("id-1", "DeepSeek-V4-Pro")
        );
    }

    #[test]
    fn the_context_is_the_converted_one() {
        let body = r#"{"model": "DeepSeek-V4-Pro", "input": "q", "max_output_tokens": 64,
            "tools": [{"type": "custom", "name": "apply_patch"}]}"#;
        let converted =
            convert_json(Protocol::Responses, body, &ConversionOptions::default()).unwrap();
        let config = config(Protocol::Responses, body);
        assert_eq!(config.context, converted.response_context);
        assert!(config.stream == converted.stream);
    }
}
