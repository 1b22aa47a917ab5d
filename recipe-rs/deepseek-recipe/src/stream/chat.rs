//! OpenAI Chat Completions: `chat.completion.chunk` objects and the accumulated `chat.completion`.

use std::sync::Arc;

use serde::Serialize;

use super::chunk::Emit;
use super::events::{OutputEvent, StreamEnd, StreamStart, StreamUsage};
use super::json_writer::{
    write_key, write_opt_str, write_str, write_u64, write_usize, write_value,
};
use super::logprobs::LogprobEntry;

/// What the Chat generator needs from the request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChatConfig {
    /// The completion id (`chatcmpl-…`).
    pub id: String,
    /// The model name reported in chunks.
    pub model: String,
    /// The request is in thinking mode (chunks carry `reasoning_content`).
    pub thinking_mode: bool,
    /// The converted request continues a prefix whose reasoning is finished
    /// (stage `ContentContinuation`): the role chunk reports `reasoning_content: null`.
    pub content_continuation: bool,
    /// Every non-final chunk carries `"usage": null` (non-streaming request or
    /// `stream_options.include_usage`).
    pub usage_on_every_chunk: bool,
    /// `created` timestamp; `None` = the clock at generator creation.
    pub created: Option<u64>,
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

impl ChatUsage {
    fn new(usage: &StreamUsage) -> Self {
        Self {
            prompt_tokens: usage.prompt.prompt_tokens,
            completion_tokens: usage.completion_tokens,
            total_tokens: usage.total_tokens(),
            prompt_tokens_details: ChatPromptTokensDetails {
                cached_tokens: usage.prompt.prompt_cache_hit_tokens,
            },
            completion_tokens_details: usage
                .reasoning_tokens
                .map(|reasoning_tokens| ChatCompletionTokensDetails { reasoning_tokens }),
            prompt_cache_hit_tokens: usage.prompt.prompt_cache_hit_tokens,
            prompt_cache_miss_tokens: usage.prompt.cache_miss_tokens(),
        }
    }
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

impl ChatChunk {
    /// Appends the chunk's compact JSON (the bytes `serde_json` writes, without its overhead).
    pub fn write_json(&self, out: &mut Vec<u8>) {
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

/// Builds Chat chunks from processor events.
#[derive(Debug, Clone)]
pub struct ChatGenerator {
    config: ChatConfig,
    created: u64,
    system_fingerprint: Option<Arc<str>>,
    /// The completion id and model name, shared by every chunk.
    id: Arc<str>,
    model: Arc<str>,
}

impl ChatGenerator {
    /// A generator for one stream.
    pub fn new(config: ChatConfig) -> Self {
        let created = config.created.unwrap_or_else(super::ids::unix_now);
        Self {
            id: Arc::from(config.id.as_str()),
            model: Arc::from(config.model.as_str()),
            config,
            created,
            system_fingerprint: None,
        }
    }

    fn chunk(&self, delta: ChatDelta, logprobs: Option<ChatLogprobs>) -> ChatChunk {
        self.chunk_with(delta, logprobs, None, None)
    }

    fn chunk_with(
        &self,
        delta: ChatDelta,
        logprobs: Option<ChatLogprobs>,
        finish_reason: Option<&'static str>,
        usage: Option<ChatUsage>,
    ) -> ChatChunk {
        let usage = match usage {
            Some(usage) => Some(Some(usage)),
            None if self.config.usage_on_every_chunk => Some(None),
            None => None,
        };
        ChatChunk {
            id: Arc::clone(&self.id),
            object: "chat.completion.chunk",
            created: self.created,
            model: Arc::clone(&self.model),
            system_fingerprint: self.system_fingerprint.clone(),
            choices: [ChatChunkChoice {
                index: 0,
                delta,
                logprobs,
                finish_reason,
            }],
            usage,
        }
    }

    /// The role chunk.
    pub fn start(&mut self, start: &StreamStart, out: &mut impl Emit<ChatChunk>) {
        self.system_fingerprint = start.system_fingerprint.as_deref().map(Arc::from);
        let delta = if !self.config.thinking_mode {
            ChatDelta {
                role: Some("assistant"),
                content: Some(Some(String::new())),
                ..ChatDelta::default()
            }
        } else if self.config.content_continuation {
            ChatDelta {
                role: Some("assistant"),
                content: Some(Some(String::new())),
                reasoning_content: Some(None),
                ..ChatDelta::default()
            }
        } else {
            ChatDelta {
                role: Some("assistant"),
                content: Some(None),
                reasoning_content: Some(Some(String::new())),
                ..ChatDelta::default()
            }
        };
        out.emit(self.chunk(delta, None));
    }

    /// Chunks for one output event.
    pub fn event(&mut self, event: OutputEvent, out: &mut impl Emit<ChatChunk>) {
        match event {
            OutputEvent::Reasoning(delta) => {
                let logprobs = (!delta.logprobs.is_empty()).then_some(ChatLogprobs {
                    reasoning_content: Some(delta.logprobs),
                    content: None,
                });
                let delta = ChatDelta {
                    content: Some(None),
                    reasoning_content: Some(Some(delta.text)),
                    ..ChatDelta::default()
                };
                out.emit(self.chunk(delta, logprobs));
            }
            OutputEvent::Content(delta) => {
                let logprobs = (!delta.logprobs.is_empty()).then_some(ChatLogprobs {
                    content: Some(delta.logprobs),
                    reasoning_content: None,
                });
                out.emit(self.chunk(self.content_delta(delta.text), logprobs));
            }
            OutputEvent::ToolCallStart { index, id, name } => {
                let call = ChatToolCallDelta {
                    index,
                    id: Some(id),
                    kind: Some("function"),
                    function: ChatFunctionDelta {
                        name: Some(name),
                        arguments: String::new(),
                    },
                };
                let delta = ChatDelta {
                    tool_calls: Some(vec![call]),
                    ..ChatDelta::default()
                };
                out.emit(self.chunk(delta, None));
            }
            OutputEvent::ToolCallArguments { index, fragment } => {
                let call = ChatToolCallDelta {
                    index,
                    id: None,
                    kind: None,
                    function: ChatFunctionDelta {
                        name: None,
                        arguments: fragment.json_text().into_owned(),
                    },
                };
                let delta = ChatDelta {
                    tool_calls: Some(vec![call]),
                    ..ChatDelta::default()
                };
                out.emit(self.chunk(delta, None));
            }
        }
    }

    fn content_delta(&self, text: String) -> ChatDelta {
        ChatDelta {
            content: Some(Some(text)),
            reasoning_content: self.config.thinking_mode.then_some(None),
            ..ChatDelta::default()
        }
    }

    /// The final chunk.
    pub fn finish(&mut self, end: &StreamEnd, usage: &StreamUsage, out: &mut impl Emit<ChatChunk>) {
        let finish_reason = match end {
            StreamEnd::Stop { tool_calls: true } => "tool_calls",
            StreamEnd::Stop { tool_calls: false } | StreamEnd::StopSequence(_) => "stop",
            StreamEnd::Length => "length",
            StreamEnd::ContentFilter => "content_filter",
        };
        let mut usage = *usage;
        if !self.config.thinking_mode {
            usage.reasoning_tokens = None;
        }
        let delta = self.content_delta(String::new());
        out.emit(self.chunk_with(
            delta,
            None,
            Some(finish_reason),
            Some(ChatUsage::new(&usage)),
        ));
    }
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

    /// Adds one chunk (tool calls are kept in the order of their indices).
    pub fn accumulate(&mut self, chunk: &ChatChunk) {
        match (&mut self.system_fingerprint, &chunk.system_fingerprint) {
            (Some(ours), Some(theirs)) if **ours == **theirs => {}
            (ours, theirs) => *ours = theirs.as_deref().map(str::to_owned),
        }
        if let Some(Some(usage)) = &chunk.usage {
            self.usage = Some(usage.clone());
        }
        for choice in &chunk.choices {
            if self.choices.is_empty() {
                self.choices.push(ChatChoice {
                    index: 0,
                    message: ChatMessage {
                        role: "assistant",
                        content: None,
                        reasoning_content: None,
                        tool_calls: None,
                    },
                    logprobs: None,
                    finish_reason: None,
                });
            }
            let target = &mut self.choices[0];
            let delta = &choice.delta;
            if let Some(Some(text)) = &delta.content {
                target
                    .message
                    .content
                    .get_or_insert_with(String::new)
                    .push_str(text);
            }
            if let Some(Some(text)) = &delta.reasoning_content {
                match &mut target.message.reasoning_content {
                    Some(Some(existing)) => existing.push_str(text),
                    slot => *slot = Some(Some(text.clone())),
                }
            }
            for call in delta.tool_calls.iter().flatten() {
                let calls = target.message.tool_calls.get_or_insert_with(Vec::new);
                match call_slot(calls, call.index) {
                    Ok(position) => calls[position]
                        .function
                        .arguments
                        .push_str(&call.function.arguments),
                    Err(position) => calls.insert(
                        position,
                        ChatToolCall {
                            index: call.index,
                            id: call.id.clone().unwrap_or_default(),
                            kind: "function",
                            function: ChatFunction {
                                name: call.function.name.clone().unwrap_or_default(),
                                arguments: call.function.arguments.clone(),
                            },
                        },
                    ),
                }
            }
            if let Some(logprobs) = &choice.logprobs {
                let total = target.logprobs.get_or_insert_with(ChatLogprobs::default);
                if let Some(entries) = &logprobs.content {
                    total
                        .content
                        .get_or_insert_with(Vec::new)
                        .extend(entries.iter().cloned());
                }
                if let Some(entries) = &logprobs.reasoning_content {
                    total
                        .reasoning_content
                        .get_or_insert_with(Vec::new)
                        .extend(entries.iter().cloned());
                }
            }
            if choice.finish_reason.is_some() {
                target.finish_reason = choice.finish_reason;
            }
        }
    }
}

/// Where the accumulated call with `index` is (`Ok`), or where it goes (`Err`): calls are kept
/// in index order, and a stream's calls arrive in that order with index = position, so a
/// fragment or a new call costs constant time (logarithmic at worst), never a scan.
fn call_slot(calls: &[ChatToolCall], index: usize) -> Result<usize, usize> {
    match calls.get(index) {
        Some(call) if call.index == index => Ok(index),
        _ => calls.binary_search_by_key(&index, |call| call.index),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::parser::ArgumentFragment;

    fn generator() -> ChatGenerator {
        ChatGenerator::new(ChatConfig {
            id: "chatcmpl-test".into(),
            model: "DeepSeek-V4-Pro".into(),
            created: Some(1),
            ..ChatConfig::default()
        })
    }

    fn call_chunks(
        generator: &mut ChatGenerator,
        index: usize,
        name: &str,
        args: &[&str],
    ) -> Vec<ChatChunk> {
        let mut chunks = Vec::new();
        generator.event(
            OutputEvent::ToolCallStart {
                index,
                id: format!("call_{index}"),
                name: name.into(),
            },
            &mut chunks,
        );
        for fragment in args {
            let fragment = ArgumentFragment::Key((*fragment).into());
            generator.event(
                OutputEvent::ToolCallArguments { index, fragment },
                &mut chunks,
            );
        }
        chunks
    }

    #[test]
    fn many_calls_accumulate_each_fragment_into_its_own_call() {
        let mut generator = generator();
        let mut response = ChatResponse::new("chatcmpl-test", "DeepSeek-V4-Pro", 1);
        for index in 0..5000 {
            let name = format!("f{index}");
            for chunk in call_chunks(&mut generator, index, &name, &["a", "b"]) {
                response.accumulate(&chunk);
            }
        }
        let calls = response.choices[0]
            .message
            .tool_calls
            .as_ref()
            .expect("calls");
        assert_eq!(calls.len(), 5000);
        for (position, call) in calls.iter().enumerate() {
            assert_eq!(
                (call.index, call.function.name.as_str()),
                (position, format!("f{position}").as_str())
            );
            assert_eq!(call.id, format!("call_{position}"));
        }
    }

    #[test]
    fn calls_arriving_out_of_order_are_kept_in_index_order() {
        let mut generator = generator();
        let mut response = ChatResponse::new("chatcmpl-test", "DeepSeek-V4-Pro", 1);
        let mut late = Vec::new();
        for index in [3, 0, 7] {
            let mut chunks = call_chunks(&mut generator, index, "f", &["x"]);
            late.push(chunks.pop().expect("an argument chunk"));
            chunks.iter().for_each(|chunk| response.accumulate(chunk));
        }
        late.iter().for_each(|chunk| response.accumulate(chunk));
        let calls = response.choices[0]
            .message
            .tool_calls
            .as_ref()
            .expect("calls");
        let seen: Vec<_> = calls
            .iter()
            .map(|call| (call.index, call.function.arguments.as_str()))
            .collect();
        assert_eq!(seen, [(0, "x"), (3, "x"), (7, "x")]);
    }
}
