//! Inference chunks: what a backend hands to the stream processor.

use serde::{Deserialize, Serialize};

use crate::names::enum_names;

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

enum_names!(InferenceFinishReason, "finish reason", [
    Stop => "stop",
    Length => "length",
    ContentFilter => "content_filter",
]);

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
        /// Prompt usage, absent when unknown (counts are then 0). Read from `prompt_tokens`
        /// (cache hits default to 0); without `prompt_tokens` there is none.
        #[serde(flatten, deserialize_with = "prompt_usage_fields")]
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

/// The prompt counts of a `ready` chunk as written in its JSON form, each optional.
#[derive(Deserialize)]
struct PromptUsageFields {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    prompt_cache_hit_tokens: Option<u64>,
}

/// Reads a `ready` chunk's usage strictly: a count of the wrong type is an error (serde's own
/// flattened `Option` would drop it silently), and `prompt_tokens` alone is usage with no cache
/// hits, as the typed Python `ReadyChunk` reads it.
fn prompt_usage_fields<'de, D>(deserializer: D) -> Result<Option<PromptUsage>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let fields = PromptUsageFields::deserialize(deserializer)?;
    Ok(fields.prompt_tokens.map(|prompt_tokens| PromptUsage {
        prompt_tokens,
        prompt_cache_hit_tokens: fields.prompt_cache_hit_tokens.unwrap_or(0),
    }))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ready_usage(json: &str) -> crate::Result<Option<PromptUsage>> {
        match InferenceChunk::from_json(json)? {
            InferenceChunk::Ready { prompt_usage, .. } => Ok(prompt_usage),
            other => panic!("not a ready chunk: {other:?}"),
        }
    }

    #[test]
    fn ready_usage_is_read_from_prompt_tokens() {
        let both = r#"{"kind":"ready","prompt_tokens":7,"prompt_cache_hit_tokens":3}"#;
        assert_eq!(
            ready_usage(both).unwrap(),
            Some(PromptUsage {
                prompt_tokens: 7,
                prompt_cache_hit_tokens: 3
            })
        );
        assert_eq!(
            ready_usage(r#"{"kind":"ready","prompt_tokens":7}"#).unwrap(),
            Some(PromptUsage {
                prompt_tokens: 7,
                prompt_cache_hit_tokens: 0
            })
        );
        assert_eq!(ready_usage(r#"{"kind":"ready"}"#).unwrap(), None);
        let hits_only = r#"{"kind":"ready","prompt_cache_hit_tokens":3,"x":1}"#;
        assert_eq!(ready_usage(hits_only).unwrap(), None);
        assert_eq!(
            ready_usage(r#"{"kind":"ready","prompt_tokens":null}"#).unwrap(),
            None
        );
    }

    #[test]
    fn ready_usage_of_the_wrong_type_is_an_error() {
        for json in [
            r#"{"kind":"ready","prompt_tokens":"7"}"#,
            r#"{"kind":"ready","prompt_tokens":-1}"#,
            r#"{"kind":"ready","prompt_tokens":7,"prompt_cache_hit_tokens":1.5}"#,
            r#"{"kind":"ready","prompt_cache_hit_tokens":true}"#,
        ] {
            assert!(ready_usage(json).is_err(), "{json}");
        }
    }

    #[test]
    fn a_ready_chunk_round_trips_through_json() {
        let chunk = InferenceChunk::ready(
            Some(PromptUsage {
                prompt_tokens: 9,
                prompt_cache_hit_tokens: 4,
            }),
            Some("fp".into()),
        );
        let json = serde_json::to_string(&chunk).unwrap();
        assert_eq!(InferenceChunk::from_json(&json).unwrap(), chunk);
        let bare = InferenceChunk::ready(None, None);
        let json = serde_json::to_string(&bare).unwrap();
        assert_eq!(InferenceChunk::from_json(&json).unwrap(), bare);
    }
}
