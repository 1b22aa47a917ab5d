//! Anthropic Messages: the generator of stream events and the accumulation of events into the
//! complete `message`.

use serde_json::Value;

use super::config::GeneratorConfig;
use super::events::{Emit, OutputEvent, StreamEnd, StreamStart, StreamUsage};
use super::inference::PromptUsage;
use crate::protocol::output::messages::{
    BlockDelta, ContentBlock, Message, MessageDeltaBody, MessagesEvent, MessagesUsage,
};

/// The usage a Messages response reports for a stream's token accounting.
fn messages_usage(usage: &StreamUsage) -> MessagesUsage {
    MessagesUsage {
        input_tokens: usage.prompt.cache_miss_tokens(),
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: usage.prompt.prompt_cache_hit_tokens,
        output_tokens: usage.completion_tokens,
        service_tier: "standard",
    }
}

/// Kind of the open content block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OpenBlock {
    Thinking,
    Text,
    ToolUse,
}

/// Builds Messages events from processor events.
#[derive(Debug, Clone)]
pub struct MessagesGenerator {
    /// The message id.
    id: String,
    /// The model name.
    model: String,
    /// Thinking mode: a thinking block always opens the message.
    thinking_mode: bool,
    /// Signature of the thinking block.
    signature: String,
    open: Option<(usize, OpenBlock)>,
    next_index: usize,
    pinged: bool,
}

impl MessagesGenerator {
    /// A generator for one stream of `config`.
    pub fn new(config: &GeneratorConfig) -> Self {
        let identity = &config.identity;
        Self {
            id: identity.id.clone(),
            model: identity.model.clone(),
            thinking_mode: config.thinking_mode,
            signature: identity
                .signature
                .clone()
                .unwrap_or_else(|| identity.id.clone()),
            open: None,
            next_index: 0,
            pinged: false,
        }
    }

    /// `message_start` (and the thinking block in thinking mode).
    pub fn start(&mut self, start: &StreamStart, out: &mut impl Emit<MessagesEvent>) {
        let usage = StreamUsage {
            prompt: start.prompt_usage,
            ..StreamUsage::default()
        };
        let message = Message {
            id: self.id.clone(),
            kind: "message",
            role: "assistant",
            model: self.model.clone(),
            content: Vec::new(),
            stop_reason: None,
            stop_sequence: None,
            usage: messages_usage(&usage),
        };
        out.emit(MessagesEvent::MessageStart { message });
        if self.thinking_mode {
            self.open_block(OpenBlock::Thinking, String::new(), String::new(), out);
        }
    }

    fn open_block(
        &mut self,
        kind: OpenBlock,
        id: String,
        name: String,
        out: &mut impl Emit<MessagesEvent>,
    ) {
        self.close_block(out);
        let index = self.next_index;
        self.next_index += 1;
        let content_block = match kind {
            OpenBlock::Thinking => ContentBlock::Thinking {
                thinking: String::new(),
                signature: String::new(),
            },
            OpenBlock::Text => ContentBlock::Text {
                text: String::new(),
            },
            OpenBlock::ToolUse => ContentBlock::ToolUse {
                id,
                name,
                input: Value::Object(Default::default()),
            },
        };
        out.emit(MessagesEvent::ContentBlockStart {
            index,
            content_block,
        });
        if !self.pinged {
            self.pinged = true;
            out.emit(MessagesEvent::Ping);
        }
        self.open = Some((index, kind));
    }

    fn close_block(&mut self, out: &mut impl Emit<MessagesEvent>) {
        if let Some((index, kind)) = self.open.take() {
            if kind == OpenBlock::Thinking {
                let signature = self.signature.clone();
                out.emit(MessagesEvent::ContentBlockDelta {
                    index,
                    delta: BlockDelta::SignatureDelta { signature },
                });
            }
            out.emit(MessagesEvent::ContentBlockStop { index });
        }
    }

    fn delta(&mut self, kind: OpenBlock, delta: BlockDelta, out: &mut impl Emit<MessagesEvent>) {
        let index = match self.open {
            Some((index, open)) if open == kind => index,
            _ => {
                self.open_block(kind, String::new(), String::new(), out);
                self.next_index - 1
            }
        };
        out.emit(MessagesEvent::ContentBlockDelta { index, delta });
    }

    /// Events for one output event.
    pub fn event(&mut self, event: OutputEvent, out: &mut impl Emit<MessagesEvent>) {
        match event {
            OutputEvent::Reasoning(delta) => {
                self.delta(
                    OpenBlock::Thinking,
                    BlockDelta::ThinkingDelta {
                        thinking: delta.text,
                    },
                    out,
                );
            }
            OutputEvent::Content(delta) => {
                self.delta(
                    OpenBlock::Text,
                    BlockDelta::TextDelta { text: delta.text },
                    out,
                );
            }
            OutputEvent::ToolCallStart { id, name, .. } => {
                self.open_block(OpenBlock::ToolUse, id, name, out);
            }
            OutputEvent::ToolCallArguments { fragment, .. } => {
                let partial_json = fragment.json_text().into_owned();
                self.delta(
                    OpenBlock::ToolUse,
                    BlockDelta::InputJsonDelta { partial_json },
                    out,
                );
            }
        }
    }

    /// Closes the open block; `message_delta` and `message_stop`.
    pub fn finish(
        &mut self,
        end: &StreamEnd,
        usage: &StreamUsage,
        out: &mut impl Emit<MessagesEvent>,
    ) {
        self.close_block(out);
        let (stop_reason, stop_sequence) = match end {
            StreamEnd::Stop { tool_calls: true } => ("tool_use", None),
            StreamEnd::Stop { tool_calls: false } => ("end_turn", None),
            StreamEnd::StopSequence(sequence) => ("stop_sequence", Some(sequence.clone())),
            StreamEnd::Length => ("max_tokens", None),
            StreamEnd::ContentFilter => ("refusal", None),
        };
        out.emit(MessagesEvent::MessageDelta {
            delta: MessageDeltaBody {
                stop_reason,
                stop_sequence,
            },
            usage: messages_usage(usage),
        });
        out.emit(MessagesEvent::MessageStop);
    }
}

/// A complete (non-streamed) message, accumulated from events.
#[derive(Debug, Clone, PartialEq)]
pub struct MessagesResponse {
    message: Message,
    /// Concatenated argument text per content block (tool-use blocks only).
    arguments: Vec<String>,
}

impl MessagesResponse {
    /// An empty message with the given prompt usage.
    pub fn new(id: impl Into<String>, model: impl Into<String>, prompt: PromptUsage) -> Self {
        let usage = StreamUsage {
            prompt,
            ..StreamUsage::default()
        };
        Self {
            message: Message {
                id: id.into(),
                kind: "message",
                role: "assistant",
                model: model.into(),
                content: Vec::new(),
                stop_reason: None,
                stop_sequence: None,
                usage: messages_usage(&usage),
            },
            arguments: Vec::new(),
        }
    }

    /// Adds one event.
    pub fn accumulate(&mut self, event: &MessagesEvent) {
        match event {
            MessagesEvent::MessageStart { message } => {
                let arguments = std::mem::take(&mut self.arguments);
                self.message = message.clone();
                self.arguments = arguments;
                self.arguments
                    .resize(self.message.content.len(), String::new());
            }
            MessagesEvent::ContentBlockStart { content_block, .. } => {
                self.message.content.push(content_block.clone());
                self.arguments.push(String::new());
            }
            MessagesEvent::ContentBlockDelta { index, delta } => {
                let Some(block) = self.message.content.get_mut(*index) else {
                    return;
                };
                match (block, delta) {
                    (
                        ContentBlock::Thinking { thinking, .. },
                        BlockDelta::ThinkingDelta { thinking: more },
                    ) => {
                        thinking.push_str(more);
                    }
                    (
                        ContentBlock::Thinking { signature, .. },
                        BlockDelta::SignatureDelta { signature: value },
                    ) => {
                        signature.clone_from(value);
                    }
                    (ContentBlock::Text { text }, BlockDelta::TextDelta { text: more }) => {
                        text.push_str(more)
                    }
                    (ContentBlock::ToolUse { .. }, BlockDelta::InputJsonDelta { partial_json }) => {
                        if let Some(arguments) = self.arguments.get_mut(*index) {
                            arguments.push_str(partial_json);
                        }
                    }
                    _ => {}
                }
            }
            MessagesEvent::MessageDelta { delta, usage } => {
                self.message.stop_reason = Some(delta.stop_reason);
                self.message.stop_sequence.clone_from(&delta.stop_sequence);
                self.message.usage = *usage;
            }
            MessagesEvent::ContentBlockStop { index } => {
                // A tool's input is parsed when its block closes (`{}` unless an object); a
                // block never closed (the stream failed first) keeps the empty input.
                if let (Some(ContentBlock::ToolUse { input, .. }), Some(arguments)) = (
                    self.message.content.get_mut(*index),
                    self.arguments.get(*index),
                ) {
                    if let Ok(value @ Value::Object(_)) = serde_json::from_str::<Value>(arguments) {
                        *input = value;
                    }
                }
            }
            MessagesEvent::Ping | MessagesEvent::MessageStop => {}
        }
    }

    /// The message as accumulated so far.
    pub fn message(&self) -> Message {
        self.message.clone()
    }
}
