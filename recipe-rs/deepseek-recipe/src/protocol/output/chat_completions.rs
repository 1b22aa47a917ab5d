//! OpenAI Chat Completions output: the `chat.completion.chunk` objects of a stream and the
//! complete `chat.completion`, with the compact JSON writer of the hot chunk shape.

use std::sync::Arc;

use serde::Serialize;

use super::json_writer::{
    write_key, write_opt_str, write_str, write_u64, write_usize, write_value,
};
use super::logprobs::LogprobEntry;

/// A `chat.completion.chunk`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChatChunk {
    /// Completion id.
    pub id: Arc<str>,
    /// Always `chat.completion.chunk`.
    pub object: &'static str,
    /// Unix seconds, fixed for the stream.
    pub created: u64,
    /// Model name.
    pub model: Arc<str>,
    /// Backend fingerprint.
    pub system_fingerprint: Option<Arc<str>>,
    /// The one choice.
    pub choices: [ChatChunkChoice; 1],
    /// Usage: present on the final chunk, `null` on others when requested, else absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Option<ChatUsage>>,
}

/// The one choice of a chunk.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChatChunkChoice {
    /// Always 0.
    pub index: u32,
    /// The delta.
    pub delta: ChatDelta,
    /// Log probabilities of the delta's tokens.
    pub logprobs: Option<ChatLogprobs>,
    /// Set on the final chunk.
    pub finish_reason: Option<&'static str>,
}

/// The `delta` of a chunk; absent keys are skipped, `Some(None)` is `null`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ChatDelta {
    /// `assistant` in the first chunk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<&'static str>,
    /// Content text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<Option<String>>,
    /// Reasoning text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<Option<String>>,
    /// Tool-call header or argument fragment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ChatToolCallDelta>>,
}

/// A tool-call entry of a delta.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChatToolCallDelta {
    /// Index of the call.
    pub index: usize,
    /// Call id (header only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Always `function` (header only).
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    /// Name and argument fragment.
    pub function: ChatFunctionDelta,
}

/// The `function` object of a tool-call delta.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChatFunctionDelta {
    /// Tool name (header only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Argument text fragment.
    pub arguments: String,
}

/// Log probabilities of a chunk (or of the accumulated choice).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ChatLogprobs {
    /// Content tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<LogprobEntry>>,
    /// Reasoning tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<Vec<LogprobEntry>>,
}

impl ChatChunk {
    /// Appends the chunk's compact JSON (the bytes `serde_json` writes, without its overhead).
    pub fn write_json(&self, out: &mut Vec<u8>) {
        self.write_head(out);
        self.write_tail(out);
    }

    /// Appends the JSON of the chunk's fields before its choices, through `"choices":[`: the
    /// bytes every chunk of one stream starts with.
    fn write_head(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"id\":");
        write_str(out, &self.id);
        write_key(out, "object", false);
        write_str(out, self.object);
        write_key(out, "created", false);
        write_u64(out, self.created);
        write_key(out, "model", false);
        write_str(out, &self.model);
        write_key(out, "system_fingerprint", false);
        write_opt_str(out, self.system_fingerprint.as_deref());
        write_key(out, "choices", false);
        out.push(b'[');
    }

    /// Appends the rest of the chunk's JSON after [`Self::write_head`]: its choices and usage.
    fn write_tail(&self, out: &mut Vec<u8>) {
        for (position, choice) in self.choices.iter().enumerate() {
            if position > 0 {
                out.push(b',');
            }
            choice.write_json(out);
        }
        out.push(b']');
        if let Some(usage) = &self.usage {
            write_key(out, "usage", false);
            write_value(out, usage);
        }
        out.push(b'}');
    }
}

/// The head of a stream's chunks (the JSON of their id, object, created, model and
/// fingerprint), written once and copied into each chunk with the same fields, so a piece of
/// model output does not escape the same four strings again.
#[derive(Debug, Default)]
pub struct ChatChunkHead {
    /// The fields the bytes were written from.
    fields: Option<HeadFields>,
    bytes: Vec<u8>,
}

/// The fields of a chunk's head, compared by identity first (a stream shares them).
#[derive(Debug)]
struct HeadFields {
    id: Arc<str>,
    object: &'static str,
    created: u64,
    model: Arc<str>,
    system_fingerprint: Option<Arc<str>>,
}

impl HeadFields {
    fn of(chunk: &ChatChunk) -> Self {
        Self {
            id: Arc::clone(&chunk.id),
            object: chunk.object,
            created: chunk.created,
            model: Arc::clone(&chunk.model),
            system_fingerprint: chunk.system_fingerprint.clone(),
        }
    }

    fn matches(&self, chunk: &ChatChunk) -> bool {
        let same = |ours: &Arc<str>, theirs: &Arc<str>| Arc::ptr_eq(ours, theirs) || ours == theirs;
        self.created == chunk.created
            && self.object == chunk.object
            && same(&self.id, &chunk.id)
            && same(&self.model, &chunk.model)
            && match (&self.system_fingerprint, &chunk.system_fingerprint) {
                (None, None) => true,
                (Some(ours), Some(theirs)) => same(ours, theirs),
                _ => false,
            }
    }
}

impl ChatChunkHead {
    /// Appends `chunk`'s compact JSON (the bytes of [`ChatChunk::write_json`]), its head copied
    /// from the last chunk's when their fields are the same.
    pub fn write_json(&mut self, chunk: &ChatChunk, out: &mut Vec<u8>) {
        if !self
            .fields
            .as_ref()
            .is_some_and(|fields| fields.matches(chunk))
        {
            self.bytes.clear();
            chunk.write_head(&mut self.bytes);
            self.fields = Some(HeadFields::of(chunk));
        }
        out.extend_from_slice(&self.bytes);
        chunk.write_tail(out);
    }
}

impl ChatChunkChoice {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"index\":");
        write_u64(out, u64::from(self.index));
        write_key(out, "delta", false);
        self.delta.write_json(out);
        write_key(out, "logprobs", false);
        write_value(out, &self.logprobs);
        write_key(out, "finish_reason", false);
        write_opt_str(out, self.finish_reason);
        out.push(b'}');
    }
}

impl ChatDelta {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.push(b'{');
        let mut first = true;
        if let Some(role) = self.role {
            write_key(out, "role", first);
            write_str(out, role);
            first = false;
        }
        if let Some(content) = &self.content {
            write_key(out, "content", first);
            write_opt_str(out, content.as_deref());
            first = false;
        }
        if let Some(reasoning) = &self.reasoning_content {
            write_key(out, "reasoning_content", first);
            write_opt_str(out, reasoning.as_deref());
            first = false;
        }
        if let Some(calls) = &self.tool_calls {
            write_key(out, "tool_calls", first);
            out.push(b'[');
            for (position, call) in calls.iter().enumerate() {
                if position > 0 {
                    out.push(b',');
                }
                call.write_json(out);
            }
            out.push(b']');
        }
        out.push(b'}');
    }
}

impl ChatToolCallDelta {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"index\":");
        write_usize(out, self.index);
        if let Some(id) = &self.id {
            write_key(out, "id", false);
            write_str(out, id);
        }
        if let Some(kind) = self.kind {
            write_key(out, "type", false);
            write_str(out, kind);
        }
        write_key(out, "function", false);
        out.push(b'{');
        let mut first = true;
        if let Some(name) = &self.function.name {
            write_key(out, "name", true);
            write_str(out, name);
            first = false;
        }
        write_key(out, "arguments", first);
        write_str(out, &self.function.arguments);
        out.extend_from_slice(b"}}");
    }
}

/// A complete (non-streamed) `chat.completion`, accumulated from chunks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChatResponse {
    /// Completion id.
    pub id: String,
    /// Always `chat.completion`.
    pub object: &'static str,
    /// Unix seconds given at construction.
    pub created: u64,
    /// Model name.
    pub model: String,
    /// The choice (empty until a chunk arrived).
    pub choices: Vec<ChatChoice>,
    /// Usage from the final chunk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<ChatUsage>,
    /// Backend fingerprint.
    pub system_fingerprint: Option<String>,
}

impl ChatResponse {
    /// An empty response.
    pub fn new(id: impl Into<String>, model: impl Into<String>, created: u64) -> Self {
        Self {
            id: id.into(),
            object: "chat.completion",
            created,
            model: model.into(),
            choices: Vec::new(),
            usage: None,
            system_fingerprint: None,
        }
    }
}

/// The accumulated choice.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChatChoice {
    /// Always 0.
    pub index: u32,
    /// The message.
    pub message: ChatMessage,
    /// Accumulated log probabilities.
    pub logprobs: Option<ChatLogprobs>,
    /// Finish reason (from the final chunk).
    pub finish_reason: Option<&'static str>,
}

/// The accumulated message of a Chat completion.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChatMessage {
    /// Always `assistant`.
    pub role: &'static str,
    /// Content (`null` until a content delta arrived).
    pub content: Option<String>,
    /// Reasoning (present when any delta carried the key).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<Option<String>>,
    /// Tool calls (present when any was made).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ChatToolCall>>,
}

/// A complete tool call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChatToolCall {
    /// Index of the call.
    pub index: usize,
    /// Call id.
    pub id: String,
    /// Always `function`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Name and arguments.
    pub function: ChatFunction,
}

/// Name and complete arguments of a tool call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChatFunction {
    /// Tool name.
    pub name: String,
    /// Arguments JSON text.
    pub arguments: String,
}

/// Usage of a Chat completion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChatUsage {
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Prompt + completion tokens.
    pub total_tokens: u64,
    /// Cached prompt tokens.
    pub prompt_tokens_details: ChatPromptTokensDetails,
    /// Reasoning tokens (thinking requests with a tokenizer only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completion_tokens_details: Option<ChatCompletionTokensDetails>,
    /// Prompt tokens served from the cache.
    pub prompt_cache_hit_tokens: u64,
    /// Prompt tokens not served from the cache.
    pub prompt_cache_miss_tokens: u64,
}

/// `prompt_tokens_details`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChatPromptTokensDetails {
    /// Cached prompt tokens.
    pub cached_tokens: u64,
}

/// `completion_tokens_details`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChatCompletionTokensDetails {
    /// Tokens of the reasoning text.
    pub reasoning_tokens: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(id: &Arc<str>, model: &str, created: u64, fingerprint: Option<&str>) -> ChatChunk {
        ChatChunk {
            id: Arc::clone(id),
            object: "chat.completion.chunk",
            created,
            model: Arc::from(model),
            system_fingerprint: fingerprint.map(Arc::from),
            choices: [ChatChunkChoice {
                index: 0,
                delta: ChatDelta {
                    content: Some(Some(format!("piece of {model}"))),
                    ..ChatDelta::default()
                },
                logprobs: None,
                finish_reason: None,
            }],
            usage: Some(None),
        }
    }

    #[test]
    fn a_cached_head_writes_the_bytes_of_each_chunk_as_its_fields_change() {
        let id: Arc<str> = Arc::from("chatcmpl-\"quoted\"\n");
        let other_id: Arc<str> = Arc::from("chatcmpl-other");
        let chunks = [
            chunk(&id, "DeepSeek-V4-Pro", 1, None),
            chunk(&id, "DeepSeek-V4-Pro", 1, None),
            chunk(&id, "DeepSeek-V4-Pro", 1, Some("fp_1")),
            chunk(&id, "DeepSeek-V4-Pro", 1, Some("fp_1")),
            chunk(&id, "DeepSeek-V4-Pro", 1, Some("fp_2")),
            chunk(&id, "DeepSeek-V4-Pro", 2, Some("fp_2")),
            chunk(&id, "DeepSeek-V4.1-Flash", 2, Some("fp_2")),
            chunk(&other_id, "DeepSeek-V4.1-Flash", 2, Some("fp_2")),
            chunk(&other_id, "DeepSeek-V4.1-Flash", 2, None),
        ];
        let mut head = ChatChunkHead::default();
        for chunk in &chunks {
            let mut cached = Vec::new();
            head.write_json(chunk, &mut cached);
            let expected = serde_json::to_vec(chunk).expect("a chunk serialises");
            assert_eq!(String::from_utf8(cached), String::from_utf8(expected));
        }
    }
}
