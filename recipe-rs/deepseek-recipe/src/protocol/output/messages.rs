//! Anthropic Messages output: the events of a stream and the complete `message`, with the
//! compact JSON writer of the hot delta event.

use serde::Serialize;
use serde_json::Value;

use super::json_writer::{write_key, write_str, write_usize, write_value};

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
