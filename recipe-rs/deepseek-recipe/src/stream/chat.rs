//! OpenAI Chat Completions: the generator of `chat.completion.chunk` objects and the
//! accumulation of chunks into the complete `chat.completion`.

use std::sync::Arc;

use super::config::GeneratorConfig;
use super::events::{Emit, OutputEvent, StreamEnd, StreamStart, StreamUsage};
use super::ids::unix_now;
use crate::protocol::output::chat_completions::{
    ChatChoice, ChatChunk, ChatChunkChoice, ChatCompletionTokensDetails, ChatDelta, ChatFunction,
    ChatFunctionDelta, ChatLogprobs, ChatMessage, ChatPromptTokensDetails, ChatResponse,
    ChatToolCall, ChatToolCallDelta, ChatUsage,
};

/// The usage a Chat response reports for a stream's token accounting.
fn chat_usage(usage: &StreamUsage) -> ChatUsage {
    ChatUsage {
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

/// Builds Chat chunks from processor events.
#[derive(Debug, Clone)]
pub struct ChatGenerator {
    /// The request is in thinking mode (chunks carry `reasoning_content`).
    thinking_mode: bool,
    /// The output continues finished reasoning: the role chunk reports `reasoning_content: null`.
    content_continuation: bool,
    /// Every non-final chunk carries `"usage": null`.
    usage_on_every_chunk: bool,
    created: u64,
    system_fingerprint: Option<Arc<str>>,
    /// The completion id and model name, shared by every chunk.
    id: Arc<str>,
    model: Arc<str>,
}

impl ChatGenerator {
    /// A generator for one stream of `config`, whose request set
    /// `stream_options.include_usage` to `include_usage`. Every non-final chunk carries
    /// `"usage": null` when the request is not streamed or asked for usage.
    pub fn new(config: &GeneratorConfig, include_usage: bool) -> Self {
        let identity = &config.identity;
        Self {
            thinking_mode: config.thinking_mode,
            content_continuation: config.content_continuation,
            usage_on_every_chunk: !config.stream || include_usage,
            created: identity.created.unwrap_or_else(unix_now),
            system_fingerprint: None,
            id: Arc::from(identity.id.as_str()),
            model: Arc::from(identity.model.as_str()),
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
            None if self.usage_on_every_chunk => Some(None),
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
        let delta = if !self.thinking_mode {
            ChatDelta {
                role: Some("assistant"),
                content: Some(Some(String::new())),
                ..ChatDelta::default()
            }
        } else if self.content_continuation {
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
            reasoning_content: self.thinking_mode.then_some(None),
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
        if !self.thinking_mode {
            usage.reasoning_tokens = None;
        }
        let delta = self.content_delta(String::new());
        out.emit(self.chunk_with(delta, None, Some(finish_reason), Some(chat_usage(&usage))));
    }
}

impl ChatResponse {
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
    use crate::converted::ResponseContext;
    use crate::stream::config::StreamIdentity;
    use crate::stream::parser::ArgumentFragment;

    fn role_chunk(stream: bool, include_usage: bool) -> ChatChunk {
        let context = ResponseContext::ChatCompletions { include_usage };
        let config = GeneratorConfig {
            stream,
            ..GeneratorConfig::new(StreamIdentity::new("id", "m"), context)
        };
        let mut out = Vec::new();
        ChatGenerator::new(&config, include_usage).start(&StreamStart::default(), &mut out);
        out.remove(0)
    }

    #[test]
    fn usage_is_on_every_chunk_unless_streamed_without_include_usage() {
        assert_eq!(role_chunk(true, false).usage, None);
        assert_eq!(role_chunk(true, true).usage, Some(None));
        assert_eq!(role_chunk(false, false).usage, Some(None));
    }

    fn generator() -> ChatGenerator {
        let identity = StreamIdentity {
            created: Some(1),
            ..StreamIdentity::new("chatcmpl-test", "DeepSeek-V4-Pro")
        };
        let context = ResponseContext::ChatCompletions {
            include_usage: false,
        };
        ChatGenerator::new(&GeneratorConfig::new(identity, context), false)
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
