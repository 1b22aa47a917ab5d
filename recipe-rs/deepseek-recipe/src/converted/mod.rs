//! The hand-offs between the stages: what request conversion produces and every later stage
//! (rendering, sampling, output parsing, the response generators) reads.
//!
//! This module is a leaf of the core's module graph: it names the conversation, the error type
//! and the few wire values a response repeats, and nothing of `convert` or `stream`, so neither
//! stage depends on the other.

mod inference;
mod parsing;
mod response;

pub use inference::{InferenceOptions, OutputConstraint, OutputConstraintKind};
pub use parsing::{ParsingOptions, ThinkingInitialStage};
pub use response::{NamespaceToolMap, ResponseContext, ResponsesContext, ResponsesEcho};

use serde::{Deserialize, Serialize};

use crate::conversation::{Conversation, ReasoningEffort};
use crate::error::{ApiError, Error};
use crate::names::enum_names;

/// The model families the recipe can render for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ModelVersion {
    /// DeepSeek V4 Pro (V4 encoding, V4 tokenizer, no images).
    DeepseekV4Pro,
    /// DeepSeek V4.1 Flash (V4.1 encoding, images).
    DeepseekV41Flash,
}

enum_names!(ModelVersion, "model version", [
    DeepseekV4Pro => "DeepseekV4Pro",
    DeepseekV41Flash => "DeepseekV41Flash",
]);

impl ModelVersion {
    /// Checks that prompts of this version can be encoded with the bundled tokenizer: it is
    /// V4's; no official V4.1 `tokenizer.json` is public, so V4.1 prompts need one the caller
    /// gives.
    ///
    /// # Errors
    /// [`Error::Tokenizer`] for V4.1.
    pub fn check_bundled_tokenizer(self) -> Result<(), Error> {
        match self {
            Self::DeepseekV4Pro => Ok(()),
            Self::DeepseekV41Flash => Err(Error::Tokenizer(
                "V4.1 prompts need a tokenizer: pass tokenizer=Tokenizer.from_file(...)".to_owned(),
            )),
        }
    }
}

/// A converted request: what to render, how to sample and how to parse the output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConvertedRequest {
    /// The `model` field as the client sent it.
    pub request_model: String,
    /// The model version the name resolved to.
    pub model_version: ModelVersion,
    /// Whether the client asked for streaming.
    pub stream: bool,
    /// The conversation to render.
    pub conversation: Conversation,
    /// Sampling settings.
    pub inference_options: InferenceOptions,
    /// Output-parsing settings.
    pub parsing_options: ParsingOptions,
    /// Protocol-specific values the response generators need.
    pub response_context: ResponseContext,
}

/// Default completion budget without thinking.
const DEFAULT_MAX_TOKENS_NON_THINKING: u64 = 8192;
/// Default completion budget with thinking at `max` effort.
const DEFAULT_MAX_TOKENS_MAX_EFFORT: u64 = 131_072;
/// Default completion budget with thinking otherwise.
const DEFAULT_MAX_TOKENS_THINKING: u64 = 65_536;

impl ConvertedRequest {
    /// The completion budget for a prompt of `prompt_tokens` in a context of `context_limit`
    /// tokens: the requested `max_tokens` if it fits, else a default that depends on thinking
    /// mode and effort, capped by the room left (at least 1).
    pub fn resolve_max_tokens(
        &self,
        prompt_tokens: u64,
        context_limit: u64,
    ) -> Result<u32, ApiError> {
        let requested = self.inference_options.max_tokens.map(u64::from);
        let completion = requested.unwrap_or(0);
        let too_long = match requested {
            Some(max_tokens) => prompt_tokens.saturating_add(max_tokens) > context_limit,
            None => prompt_tokens > context_limit,
        };
        if too_long {
            return Err(ApiError::invalid_request(format!(
                "This model's maximum context length is {context_limit} tokens. However, you requested {} tokens ({prompt_tokens} in the messages, {completion} in the completion). Please reduce the length of the messages or completion.",
                prompt_tokens.saturating_add(completion)
            )));
        }
        if let Some(max_tokens) = self.inference_options.max_tokens {
            return Ok(max_tokens);
        }
        let default = match (
            self.conversation.thinking_mode,
            self.conversation.reasoning_effort,
        ) {
            (false, _) => DEFAULT_MAX_TOKENS_NON_THINKING,
            (true, Some(ReasoningEffort::Max)) => DEFAULT_MAX_TOKENS_MAX_EFFORT,
            (true, _) => DEFAULT_MAX_TOKENS_THINKING,
        };
        let room = context_limit - prompt_tokens;
        let resolved = default.min(room).max(1);
        Ok(u32::try_from(resolved).unwrap_or(u32::MAX))
    }
}

#[cfg(test)]
mod tests {
    use crate::convert::{convert_json, ConversionOptions, Protocol};

    fn converted(body: &str) -> super::ConvertedRequest {
        convert_json(
            Protocol::ChatCompletions,
            body,
            &ConversionOptions::default(),
        )
        .unwrap()
    }

    #[test]
    fn requested_budget_must_fit() {
        let request = converted(
            r#"{"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "q"}], "max_tokens": 100}"#,
        );
        assert_eq!(request.resolve_max_tokens(10, 110).unwrap(), 100);
        let err = request.resolve_max_tokens(11, 110).unwrap_err();
        assert!(err
            .error
            .message
            .contains("you requested 111 tokens (11 in the messages, 100 in the completion)"));
    }

    #[test]
    fn default_budget_depends_on_thinking_and_effort() {
        let off = converted(
            r#"{"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "q"}], "thinking": {"type": "disabled"}}"#,
        );
        assert_eq!(off.resolve_max_tokens(0, 1 << 20).unwrap(), 8192);
        let max = converted(
            r#"{"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "q"}], "reasoning_effort": "ultra"}"#,
        );
        assert_eq!(max.resolve_max_tokens(0, 1 << 20).unwrap(), 131_072);
        assert_eq!(max.resolve_max_tokens(100, 100).unwrap(), 1);
        assert!(max.resolve_max_tokens(101, 100).is_err());
    }
}
