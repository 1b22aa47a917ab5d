//! Anthropic Messages: stream events and the accumulated `message`.

use serde::Serialize;
use serde_json::Value;

use super::chunk::Emit;
use super::events::{OutputEvent, StreamEnd, StreamStart, StreamUsage};
use super::json_writer::{write_key, write_str, write_usize, write_value};

/// What the Messages generator needs from the request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MessagesConfig {
    /// The message id (`msg_…`).
    pub id: String,
    /// The model name.
    pub model: String,
    /// Thinking mode: a thinking block always opens the message.
    pub thinking_mode: bool,
    /// Signature of the thinking block; `None` = the message id.
    pub signature: Option<String>,
}

/// Usage of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MessagesUsage {
    /// Prompt tokens not served from the cache.
    pub input_tokens: u64,
    /// Always 0.
    pub cache_creation_input_tokens: u64,
    /// Prompt tokens served from the cache.
    pub cache_read_input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Always `standard`.
    pub service_tier: &'static str,
}

impl MessagesUsage {
    fn new(usage: &StreamUsage) -> Self {
        Self {
            input_tokens: usage.prompt.cache_miss_tokens(),
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: usage.prompt.prompt_cache_hit_tokens,
            output_tokens: usage.completion_tokens,
            service_tier: "standard",
        }
    }
}

/// A content block.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Reasoning.
    Thinking {
        /// Reasoning text.
        thinking: String,
        /// Signature.
        signature: String,
    },
    /// Content text.
    Text {
        /// The text.
        text: String,
    },
    /// A tool call.
    ToolUse {
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
        /// Arguments object.
        input: Value,
    },
}

/// A content block delta.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BlockDelta {
    /// Reasoning text.
    ThinkingDelta {
        /// The text.
        thinking: String,
    },
    /// Content text.
    TextDelta {
        /// The text.
        text: String,
    },
    /// A fragment of tool arguments JSON.
    InputJsonDelta {
        /// The fragment.
        partial_json: String,
    },
    /// The thinking block's signature.
    SignatureDelta {
        /// The signature.
        signature: String,
    },
}

/// `stop_reason` and `stop_sequence` of the `message_delta` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MessageDeltaBody {
    /// Why the message ended.
    pub stop_reason: &'static str,
    /// The matched stop sequence.
    pub stop_sequence: Option<String>,
}

/// The message object (in `message_start`, and as the accumulated response).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Message {
    /// Message id.
    pub id: String,
    /// Always `message`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Always `assistant`.
    pub role: &'static str,
    /// Model name.
    pub model: String,
    /// Content blocks.
    pub content: Vec<ContentBlock>,
    /// Why the message ended.
    pub stop_reason: Option<&'static str>,
    /// The matched stop sequence.
    pub stop_sequence: Option<String>,
    /// Usage.
    pub usage: MessagesUsage,
}

/// One Messages stream event.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum MessagesEvent {
    /// The message starts.
    MessageStart {
        /// The empty message.
        message: Message,
    },
    /// A content block starts.
    ContentBlockStart {
        /// Block index.
        index: usize,
        /// The empty block.
        content_block: ContentBlock,
    },
    /// Keep-alive.
    Ping,
    /// A block delta.
    ContentBlockDelta {
        /// Block index.
        index: usize,
        /// The delta.
        delta: BlockDelta,
    },
    /// A content block ends.
    ContentBlockStop {
        /// Block index.
        index: usize,
    },
    /// The message's stop reason and final usage.
    MessageDelta {
        /// Stop reason and sequence.
        delta: MessageDeltaBody,
        /// Final usage.
        usage: MessagesUsage,
    },
    /// The message ends.
    MessageStop,
}

impl MessagesEvent {
    /// The SSE event name (the event `type`).
    pub fn name(&self) -> &'static str {
        match self {
            Self::MessageStart { .. } => "message_start",
            Self::ContentBlockStart { .. } => "content_block_start",
            Self::Ping => "ping",
            Self::ContentBlockDelta { .. } => "content_block_delta",
            Self::ContentBlockStop { .. } => "content_block_stop",
            Self::MessageDelta { .. } => "message_delta",
            Self::MessageStop => "message_stop",
        }
    }
}

impl MessagesEvent {
    /// Appends the event's compact JSON (deltas written directly, other events via serde).
    pub fn write_json(&self, out: &mut Vec<u8>) {
        let Self::ContentBlockDelta { index, delta } = self else {
            write_value(out, self);
            return;
        };
        out.extend_from_slice(b"{\"type\":\"content_block_delta\",\"index\":");
        write_usize(out, *index);
        let (kind, key, text) = match delta {
            BlockDelta::ThinkingDelta { thinking } => ("thinking_delta", "thinking", thinking),
            BlockDelta::TextDelta { text } => ("text_delta", "text", text),
            BlockDelta::InputJsonDelta { partial_json } => {
                ("input_json_delta", "partial_json", partial_json)
            }
            BlockDelta::SignatureDelta { signature } => ("signature_delta", "signature", signature),
        };
        out.extend_from_slice(b",\"delta\":{\"type\":");
        write_str(out, kind);
        write_key(out, key, false);
        write_str(out, text);
        out.extend_from_slice(b"}}");
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
    config: MessagesConfig,
    open: Option<(usize, OpenBlock)>,
    next_index: usize,
    pinged: bool,
}

impl MessagesGenerator {
    /// A generator for one stream.
    pub fn new(config: MessagesConfig) -> Self {
        Self {
            config,
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
            id: self.config.id.clone(),
            kind: "message",
            role: "assistant",
            model: self.config.model.clone(),
            content: Vec::new(),
            stop_reason: None,
            stop_sequence: None,
            usage: MessagesUsage::new(&usage),
        };
        out.emit(MessagesEvent::MessageStart { message });
        if self.config.thinking_mode {
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
                let signature = self
                    .config
                    .signature
                    .clone()
                    .unwrap_or_else(|| self.config.id.clone());
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
            usage: MessagesUsage::new(usage),
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
    pub fn new(
        id: impl Into<String>,
        model: impl Into<String>,
        prompt: super::PromptUsage,
    ) -> Self {
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
                usage: MessagesUsage::new(&usage),
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
