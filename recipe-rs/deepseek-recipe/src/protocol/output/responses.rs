//! OpenAI Responses output: the events of a stream and the complete `response` object, with
//! the compact JSON writer of the events.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::json_writer::{write_key, write_str, write_u64, write_usize, write_value};
use super::logprobs::LogprobEntry;

/// One Responses stream event: its `type`, then its fields in alphabetical order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResponsesEvent {
    /// The event type (also the SSE event name).
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Complete arguments (`function_call_arguments.done`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<String>,
    /// Content part index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_index: Option<u32>,
    /// Delta text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta: Option<String>,
    /// Complete custom tool input.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// The item.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<OutputItem>,
    /// The item id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item_id: Option<Arc<str>>,
    /// Token log probabilities (output text events).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<Vec<LogprobEntry>>,
    /// Output index of the item.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_index: Option<usize>,
    /// The content part.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub part: Option<ContentPart>,
    /// The response object (lifecycle events).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response: Option<Box<ResponseObject>>,
    /// Position of the event in the stream.
    pub sequence_number: u64,
    /// Complete text (`*_text.done`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

impl ResponsesEvent {
    /// An event of `kind` at `sequence_number` with every optional field absent.
    pub fn new(kind: &'static str, sequence_number: u64) -> Self {
        Self {
            kind,
            arguments: None,
            content_index: None,
            delta: None,
            input: None,
            item: None,
            item_id: None,
            logprobs: None,
            output_index: None,
            part: None,
            response: None,
            sequence_number,
            text: None,
        }
    }
}

impl ResponsesEvent {
    /// Appends the event's compact JSON: the flat fields written directly, nested objects
    /// (items, parts, the response, log probabilities) via serde.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"type\":");
        write_str(out, self.kind);
        if let Some(arguments) = &self.arguments {
            write_key(out, "arguments", false);
            write_str(out, arguments);
        }
        if let Some(content_index) = self.content_index {
            write_key(out, "content_index", false);
            write_u64(out, u64::from(content_index));
        }
        if let Some(delta) = &self.delta {
            write_key(out, "delta", false);
            write_str(out, delta);
        }
        if let Some(input) = &self.input {
            write_key(out, "input", false);
            write_str(out, input);
        }
        if let Some(item) = &self.item {
            write_key(out, "item", false);
            write_value(out, item);
        }
        if let Some(item_id) = &self.item_id {
            write_key(out, "item_id", false);
            write_str(out, item_id);
        }
        if let Some(logprobs) = &self.logprobs {
            write_key(out, "logprobs", false);
            if logprobs.is_empty() {
                out.extend_from_slice(b"[]");
            } else {
                write_value(out, logprobs);
            }
        }
        if let Some(output_index) = self.output_index {
            write_key(out, "output_index", false);
            write_usize(out, output_index);
        }
        if let Some(part) = &self.part {
            write_key(out, "part", false);
            write_value(out, part);
        }
        if let Some(response) = &self.response {
            write_key(out, "response", false);
            write_value(out, response);
        }
        write_key(out, "sequence_number", false);
        write_u64(out, self.sequence_number);
        if let Some(text) = &self.text {
            write_key(out, "text", false);
            write_str(out, text);
        }
        out.push(b'}');
    }
}

/// The `response` object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResponseObject {
    /// Response id.
    pub id: String,
    /// Always `response`.
    pub object: &'static str,
    /// Unix seconds when the stream started.
    pub created_at: u64,
    /// `in_progress`, `completed` or `incomplete`.
    pub status: &'static str,
    /// Always false.
    pub background: bool,
    /// Unix seconds when the stream ended.
    pub completed_at: Option<u64>,
    /// Always null.
    pub content_filters: Option<Value>,
    /// Always null.
    pub error: Option<Value>,
    /// Always 0.0.
    pub frequency_penalty: f32,
    /// Why the response is incomplete.
    pub incomplete_details: Option<IncompleteDetails>,
    /// Echoed instructions.
    pub instructions: Option<String>,
    /// Echoed output limit.
    pub max_output_tokens: Option<u32>,
    /// Always null.
    pub max_tool_calls: Option<u64>,
    /// Model name.
    pub model: String,
    /// Always null.
    pub moderation: Option<Value>,
    /// Output items.
    pub output: Vec<OutputItem>,
    /// Always true.
    pub parallel_tool_calls: bool,
    /// Always 0.0.
    pub presence_penalty: f32,
    /// Always null.
    pub previous_response_id: Option<String>,
    /// Always null.
    pub prompt_cache_key: Option<String>,
    /// Always null.
    pub prompt_cache_retention: Option<String>,
    /// Reasoning settings.
    pub reasoning: ReasoningSettings,
    /// Always null.
    pub safety_identifier: Option<String>,
    /// Always `default`.
    pub service_tier: &'static str,
    /// Always false.
    pub store: bool,
    /// Echoed temperature.
    pub temperature: f32,
    /// Text settings.
    pub text: Value,
    /// Tool choice.
    pub tool_choice: Value,
    /// Reported tools.
    pub tools: Vec<Value>,
    /// Echoed `top_logprobs`.
    pub top_logprobs: u8,
    /// Echoed `top_p`.
    pub top_p: f32,
    /// Always `disabled`.
    pub truncation: &'static str,
    /// Usage (at the end).
    pub usage: Option<ResponsesUsage>,
    /// Echoed user.
    pub user: Option<String>,
    /// Always `{}`.
    pub metadata: serde_json::Map<String, Value>,
}

/// An output item.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum OutputItem {
    /// Reasoning.
    Reasoning {
        /// `rs_{id}_{n}`.
        id: String,
        /// `in_progress`, `completed` or `incomplete`.
        status: &'static str,
        /// The reasoning text part.
        content: Vec<ContentPart>,
        /// Always empty.
        summary: Vec<Value>,
        /// `{id}-{n}`.
        encrypted_content: String,
    },
    /// An assistant message.
    Message {
        /// `msg_{id}_{n}`.
        id: String,
        /// Item status.
        status: &'static str,
        /// Always `assistant`.
        role: &'static str,
        /// `final_answer`, or `commentary` when a tool call follows.
        phase: &'static str,
        /// The output text part.
        content: Vec<ContentPart>,
    },
    /// A function call.
    FunctionCall {
        /// `fc_{id}_{n}`.
        id: String,
        /// Item status.
        status: &'static str,
        /// The tool-call id.
        call_id: String,
        /// Function name (local name for namespace tools).
        name: String,
        /// Namespace of a namespace tool.
        #[serde(skip_serializing_if = "Option::is_none")]
        namespace: Option<String>,
        /// Arguments JSON text.
        arguments: String,
    },
    /// A custom tool call (free-form input).
    CustomToolCall {
        /// `ctc_{id}_{n}`.
        id: String,
        /// Item status.
        status: &'static str,
        /// The tool-call id.
        call_id: String,
        /// Tool name.
        name: String,
        /// The raw input.
        input: String,
    },
}

impl OutputItem {
    /// Sets the item's `status`.
    pub fn set_status(&mut self, value: &'static str) {
        match self {
            Self::Reasoning { status, .. }
            | Self::Message { status, .. }
            | Self::FunctionCall { status, .. }
            | Self::CustomToolCall { status, .. } => *status = value,
        }
    }

    /// The item's `id`.
    pub fn id(&self) -> &str {
        match self {
            Self::Reasoning { id, .. }
            | Self::Message { id, .. }
            | Self::FunctionCall { id, .. }
            | Self::CustomToolCall { id, .. } => id,
        }
    }
}

/// A content part of a reasoning or message item.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentPart {
    /// Reasoning text.
    ReasoningText {
        /// The text.
        text: String,
    },
    /// Message text.
    OutputText {
        /// Always empty.
        annotations: Vec<Value>,
        /// Token log probabilities.
        logprobs: Vec<LogprobEntry>,
        /// The text.
        text: String,
    },
}

/// The `reasoning` object of the response.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReasoningSettings {
    /// Requested effort.
    pub effort: Option<String>,
    /// Requested summary mode.
    pub summary: Option<String>,
}

/// `incomplete_details`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IncompleteDetails {
    /// `max_output_tokens` or `content_filter`.
    pub reason: &'static str,
}

/// Usage of a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ResponsesUsage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Cached prompt tokens.
    pub input_tokens_details: InputTokensDetails,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Reasoning tokens.
    pub output_tokens_details: OutputTokensDetails,
    /// Prompt + completion tokens.
    pub total_tokens: u64,
}

/// `input_tokens_details`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct InputTokensDetails {
    /// Cached prompt tokens.
    pub cached_tokens: u64,
}

/// `output_tokens_details`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct OutputTokensDetails {
    /// Tokens of the reasoning text.
    pub reasoning_tokens: u64,
}
