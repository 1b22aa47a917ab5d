//! Which protocol a stream generates, built from the converted request.

use super::chat::ChatConfig;
use super::messages::MessagesConfig;
use super::responses::ResponsesConfig;
use crate::converted::{ConvertedRequest, ResponseContext, ThinkingInitialStage};

/// Which protocol to generate, with what the generator needs from the request.
#[derive(Debug, Clone, PartialEq)]
pub enum GeneratorConfig {
    /// OpenAI Chat Completions chunks.
    Chat(ChatConfig),
    /// Anthropic Messages events.
    Messages(MessagesConfig),
    /// OpenAI Responses events.
    Responses(Box<ResponsesConfig>),
}

impl GeneratorConfig {
    /// The generator config for a converted request, reporting the response `id` and `model`.
    /// Timestamps default to the clock at generator creation and the Messages signature to the
    /// message id; override them with [`Self::set_created`] and [`Self::set_signature`].
    pub fn for_request(
        converted: &ConvertedRequest,
        id: impl Into<String>,
        model: impl Into<String>,
    ) -> Self {
        let (id, model) = (id.into(), model.into());
        let thinking_mode = converted.conversation.thinking_mode;
        match &converted.response_context {
            ResponseContext::ChatCompletions { include_usage } => Self::Chat(ChatConfig {
                id,
                model,
                thinking_mode,
                content_continuation: converted.parsing_options.thinking_initial_stage
                    == Some(ThinkingInitialStage::ContentContinuation),
                usage_on_every_chunk: !converted.stream || *include_usage,
                created: None,
            }),
            ResponseContext::Messages => Self::Messages(MessagesConfig {
                id,
                model,
                thinking_mode,
                signature: None,
            }),
            ResponseContext::Responses(context) => Self::Responses(Box::new(ResponsesConfig {
                id,
                model,
                thinking_mode,
                created_at: None,
                echo: context.echo.clone(),
                reasoning: context.reasoning.clone(),
                text: context.text.clone(),
                tool_choice: context.tool_choice.clone(),
                tools: context.tools.clone(),
                namespace_tools: context.namespace_tools.clone(),
                custom_tools: context.custom_tools.clone(),
            })),
        }
    }

    /// Whether the stream is in thinking mode.
    pub fn thinking_mode(&self) -> bool {
        match self {
            Self::Chat(config) => config.thinking_mode,
            Self::Messages(config) => config.thinking_mode,
            Self::Responses(config) => config.thinking_mode,
        }
    }

    /// The response id.
    pub fn id(&self) -> &str {
        match self {
            Self::Chat(config) => &config.id,
            Self::Messages(config) => &config.id,
            Self::Responses(config) => &config.id,
        }
    }

    /// The reported model name.
    pub fn model(&self) -> &str {
        match self {
            Self::Chat(config) => &config.model,
            Self::Messages(config) => &config.model,
            Self::Responses(config) => &config.model,
        }
    }

    /// Fixes the creation timestamp (Chat `created`, Responses `created_at`; Messages has none).
    pub fn set_created(&mut self, created: u64) {
        match self {
            Self::Chat(config) => config.created = Some(created),
            Self::Responses(config) => config.created_at = Some(created),
            Self::Messages(_) => {}
        }
    }

    /// Sets the signature of the Messages thinking block (other protocols have none).
    pub fn set_signature(&mut self, signature: impl Into<String>) {
        if let Self::Messages(config) = self {
            config.signature = Some(signature.into());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::{convert_json, ConversionOptions, Protocol};

    fn config(protocol: Protocol, body: &str) -> GeneratorConfig {
        let converted = convert_json(protocol, body, &ConversionOptions::default()).unwrap();
        GeneratorConfig::for_request(&converted, "id-1", "DeepSeek-V4-Pro")
    }

    #[test]
    fn chat_usage_on_every_chunk_follows_stream_options() {
        let streamed = r#"{"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "q"}], "stream": true}"#;
        let with_usage = r#"{"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "q"}], "stream": true, "stream_options": {"include_usage": true}}"#;
        let usage = |body| match config(Protocol::ChatCompletions, body) {
            GeneratorConfig::Chat(config) => config.usage_on_every_chunk,
            other => panic!("not a chat config: {other:?}"),
        };
        assert!(!usage(streamed));
        assert!(usage(with_usage));
    }

    #[test]
    fn responses_config_reports_the_request() {
        let body = r#"{"model": "DeepSeek-V4-Pro", "input": "q", "max_output_tokens": 64,
            "reasoning": {"effort": "low", "summary": "auto"}, "tool_choice": "none",
            "tools": [{"type": "namespace", "name": "ns", "description": "d",
                       "tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}}]},
                      {"type": "custom", "name": "apply_patch"}]}"#;
        let GeneratorConfig::Responses(config) = config(Protocol::Responses, body) else {
            panic!("not a responses config");
        };
        assert!(config.thinking_mode);
        assert_eq!(config.echo.max_output_tokens, Some(64));
        assert_eq!(config.reasoning.summary.as_deref(), Some("auto"));
        assert_eq!(config.tool_choice, "none");
        assert_eq!(config.tools.len(), 2);
        assert_eq!(
            config.namespace_tools.get("ns__f"),
            Some(&("ns".to_owned(), "f".to_owned()))
        );
        assert!(config.custom_tools.contains("apply_patch"));
        assert_eq!(config.text["format"]["type"], "text");
    }

    #[test]
    fn overrides_apply_to_the_matching_protocol() {
        let body = r#"{"model": "DeepSeek-V4-Pro", "max_tokens": 8, "messages": [{"role": "user", "content": "q"}]}"#;
        let mut config = config(Protocol::Messages, body);
        config.set_signature("sig");
        config.set_created(5);
        let GeneratorConfig::Messages(messages) = &config else {
            panic!("not a messages config");
        };
        assert_eq!(messages.signature.as_deref(), Some("sig"));
        assert_eq!((config.id(), config.model()), ("id-1", "DeepSeek-V4-Pro"));
    }
}
