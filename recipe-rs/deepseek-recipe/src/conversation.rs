//! The protocol-neutral conversation: what every request converts into and every encoding renders.
//!
//! Field names and their JSON spellings follow the `conversation` object of the request vectors, so a
//! converted conversation can be compared with (and deserialised from) a vector directly.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::names::enum_names;

/// A whole conversation with the request-level settings that shape its prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Conversation {
    /// Whether the model thinks before answering.
    pub thinking_mode: bool,
    /// Resolved reasoning effort (`None` when thinking is off).
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Resolved tool choice (a named choice is resolved to `Required` with the tool list narrowed).
    pub tool_choice: ToolChoice,
    /// Requested output format.
    pub response_format: ResponseFormat,
    /// The JSON schema shown in the prompt for `ResponseFormat::JsonSchema`.
    pub response_schema: Option<Value>,
    /// The regular expression for `ResponseFormat::Regex`.
    pub response_regex: Option<String>,
    /// Declared function tools, in request order.
    pub tools: Vec<Tool>,
    /// The messages, in prompt order.
    pub messages: Vec<Message>,
}

/// How hard the model should think; the values the official API resolves requests to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningEffort {
    /// Brief reasoning.
    Low,
    /// The default effort.
    High,
    /// Extra-high effort.
    Xhigh,
    /// Maximum effort.
    Max,
}

/// Whether and how the model may call tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolChoice {
    /// The model decides.
    Auto,
    /// The model must not call tools.
    None,
    /// The model must call at least one tool.
    Required,
}

/// The output format a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResponseFormat {
    /// Free text.
    Text,
    /// Any JSON object.
    JsonObject,
    /// JSON matching `Conversation::response_schema`.
    JsonSchema,
    /// Text matching `Conversation::response_regex`.
    Regex,
}

/// A function tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    /// Function name.
    pub name: String,
    /// Human-readable description, if any.
    pub description: Option<String>,
    /// JSON schema of the arguments (normalised when `strict` is true).
    pub parameters: Value,
    /// Strict mode as requested (`None` when the request did not say).
    pub strict: Option<bool>,
    /// Whether the tool is loaded on demand (no prompt effect in the reference).
    pub defer_loading: bool,
}

/// One tool call made by the assistant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Call id, echoed by the matching tool result.
    pub id: String,
    /// Function name.
    pub name: String,
    /// Arguments as raw text (usually a JSON object).
    pub arguments: String,
}

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// System prompt text.
    System,
    /// User text.
    User,
    /// Model output from an earlier turn (or a prefix to continue).
    Assistant,
    /// A tool result.
    Tool,
    /// A latest-reminder block (Chat Completions only).
    LatestReminder,
}

/// One message of the conversation.
///
/// Role-specific fields are `None`/empty for the roles that do not use them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// The text, with image placeholders already spelled in at `images[i].span`.
    pub content: String,
    /// Assistant: reasoning to render in history (`None` = absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    /// Assistant: tool calls made in this turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCall>>,
    /// Assistant: whether this is a prefix for the model to continue.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prefix: bool,
    /// Tool: the id of the call this result answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Images attached to this message, in content order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImageRef>,
    /// System: tools made available mid-conversation (e.g. a Responses `tool_search_output`).
    ///
    /// Note for the converter: the encodings render a system message carrying tools as that
    /// message's content followed by a `### Updated Tool Schemas` section listing them (the
    /// JSON key is `tools`, as in the request vectors' conversations).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool>,
}

/// An image placed in a message's content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageRef {
    /// Byte range of the placeholder spelling inside `Message::content` (`None`: no placeholder).
    pub span: Option<(usize, usize)>,
    /// Where the image comes from.
    pub source: ImageSource,
}

/// Where an image comes from, as written in the request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageSource {
    /// `data_url` or `url`.
    pub kind: ImageSourceKind,
    /// Requested detail level.
    pub detail: ImageDetail,
    /// JSON path of the part in the request (for error messages), e.g. `.messages[0]`.
    pub path: String,
    /// The URL or data URL.
    pub location: String,
}

/// How an image source is addressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ImageSourceKind {
    /// A `data:` URL carrying the bytes.
    DataUrl,
    /// An `http(s)` URL to fetch.
    Url,
}

enum_names!(ImageSourceKind, "image source kind", [DataUrl => "data_url", Url => "url"]);

/// Requested image detail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ImageDetail {
    /// Shrunk to a small budget.
    Low,
    /// The default.
    High,
    /// Original resolution within the budget.
    Original,
    /// The server decides.
    Auto,
}

enum_names!(ImageDetail, "detail", [
    Low => "low",
    High => "high",
    Original => "original",
    Auto => "auto",
]);
