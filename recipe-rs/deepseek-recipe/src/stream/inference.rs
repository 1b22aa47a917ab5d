//! Inference chunks: what a backend hands to the stream processor.

use serde::{Deserialize, Serialize};

/// Prompt token accounting reported by the backend when a stream starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PromptUsage {
    /// Number of prompt tokens.
    pub prompt_tokens: u64,
    /// Number of prompt tokens served from the prompt cache.
    pub prompt_cache_hit_tokens: u64,
}

impl PromptUsage {
    /// Prompt tokens not served from the cache (never negative).
    pub fn cache_miss_tokens(&self) -> u64 {
        self.prompt_tokens
            .saturating_sub(self.prompt_cache_hit_tokens)
    }
}

/// Why the backend stopped generating.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InferenceFinishReason {
    /// The model ended its output (end-of-sequence or a backend stop).
    Stop,
    /// The token limit was reached.
    Length,
    /// The output was filtered.
    ContentFilter,
}

/// The log probability of one candidate token: `(token_id, logprob)`. Log probabilities are
/// `f32`, the precision the official API reports them in.
pub type TopLogprob = (u32, f32);

/// The log probability of one generated token and its top alternatives.
pub type TokenLogprobs = (f32, Vec<TopLogprob>);

/// One unit of backend output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum InferenceChunk {
    /// The stream starts; carries prompt usage when the backend knows it.
    Ready {
        /// Prompt usage, absent when unknown (counts are then 0).
        #[serde(flatten)]
        prompt_usage: Option<PromptUsage>,
        /// The backend's fingerprint, reported in Chat chunks.
        #[serde(default)]
        system_fingerprint: Option<String>,
    },
    /// Decoded text: one piece, with the number of tokens it took.
    Text {
        /// The text.
        content: String,
        /// Tokens generated for it (added to completion tokens as is).
        token_count: u64,
    },
    /// Generated token ids, decoded incrementally through the tokenizer.
    Tokens {
        /// The token ids.
        token_ids: Vec<u32>,
        /// One entry per id when log probabilities were requested.
        #[serde(default)]
        logprobs: Option<Vec<TokenLogprobs>>,
    },
    /// The backend finished.
    Finish {
        /// Why it finished.
        finish_reason: InferenceFinishReason,
    },
}

impl InferenceChunk {
    /// Reads a chunk from its JSON form (`{"kind": "text", "content": …, "token_count": …}`, …).
    ///
    /// # Errors
    /// [`crate::Error::Parse`] when the JSON does not describe an inference chunk.
    pub fn from_json(json: &str) -> crate::Result<Self> {
        serde_json::from_str(json)
            .map_err(|err| crate::Error::Parse(format!("invalid inference chunk: {err}")))
    }

    /// A `ready` chunk.
    pub fn ready(prompt_usage: Option<PromptUsage>, system_fingerprint: Option<String>) -> Self {
        Self::Ready {
            prompt_usage,
            system_fingerprint,
        }
    }

    /// A `text` chunk.
    pub fn text(content: impl Into<String>, token_count: u64) -> Self {
        Self::Text {
            content: content.into(),
            token_count,
        }
    }

    /// A `tokens` chunk.
    pub fn tokens(token_ids: Vec<u32>, logprobs: Option<Vec<TokenLogprobs>>) -> Self {
        Self::Tokens {
            token_ids,
            logprobs,
        }
    }

    /// A `finish` chunk.
    pub fn finish(finish_reason: InferenceFinishReason) -> Self {
        Self::Finish { finish_reason }
    }
}
