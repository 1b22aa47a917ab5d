//! The input items of a Responses request: messages and their content parts, reasoning,
//! calls and call outputs, tool search calls and outputs.

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::tools::{ResponsesTool, ToolSearchExecution};
use crate::protocol::chat_completions::ImageDetailParam;
use crate::protocol::shared::{string_or_list, value_as};

/// `input`: a string or a list of items.
#[derive(Debug, Clone)]
pub enum ResponsesInput {
    /// One user message.
    Text(String),
    /// Input items.
    Items(Vec<InputItem>),
}

impl<'de> Deserialize<'de> for ResponsesInput {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        string_or_list(
            deserializer,
            "input should be a string or a list of input items",
            Self::Text,
            |entries: Vec<InputEntry>| {
                Self::Items(entries.into_iter().map(|entry| entry.0).collect())
            },
        )
    }
}

/// One input item, by `type` (a missing type means a message); unknown types are kept as
/// [`InputItem::Other`] and ignored by conversion.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum InputItem {
    /// A message.
    Message(ResponsesInputMessage),
    /// Reasoning from an earlier turn.
    Reasoning(ResponsesReasoningItem),
    /// A function call from an earlier turn.
    FunctionCall(ResponsesFunctionCall),
    /// The output of a function call.
    FunctionCallOutput(ResponsesFunctionCallOutput),
    /// A custom tool call from an earlier turn.
    CustomToolCall(ResponsesCustomToolCall),
    /// The output of a custom tool call.
    CustomToolCallOutput(ResponsesCustomToolCallOutput),
    /// A tool search call.
    ToolSearchCall(ResponsesToolSearchCall),
    /// The tools a tool search returned.
    ToolSearchOutput(ResponsesToolSearchOutput),
    /// A web search call (dropped; it ends an open run of calls).
    WebSearchCall,
    /// Any other item (item references, unknown types, …).
    #[serde(other)]
    Other,
}

/// An entry of `input`: an object with a `type` is a typed item (serde reads its body from
/// buffered content, as the reference does); one without is a message when it has a `role`;
/// anything else is no input item.
struct InputEntry(InputItem);

impl<'de> Deserialize<'de> for InputEntry {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let Some(object) = value.as_object() else {
            return Err(serde::de::Error::custom("invalid input item"));
        };
        match object.get("type") {
            Some(_) => value_as::<_, D>(value).map(Self),
            None if object.contains_key("role") => {
                value_as::<_, D>(value).map(|message| Self(InputItem::Message(message)))
            }
            None => Err(serde::de::Error::custom("invalid input item")),
        }
    }
}

/// A message item.
#[derive(Debug, Clone, Deserialize)]
pub struct ResponsesInputMessage {
    /// Who wrote it.
    pub role: ItemRole,
    /// Its content.
    pub content: ItemContent,
}

/// Roles a message item may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ItemRole {
    /// User.
    User,
    /// Assistant.
    Assistant,
    /// System (after `instructions`).
    System,
    /// Developer (a user message for V4, a system message for V4.1).
    Developer,
}

/// Message item content: a string or parts.
#[derive(Debug, Clone)]
pub enum ItemContent {
    /// Plain text.
    Text(String),
    /// Content parts.
    Parts(Vec<ResponsesContentBlock>),
}

impl<'de> Deserialize<'de> for ItemContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        string_or_list(
            deserializer,
            "content should be a string or a list of content blocks",
            Self::Text,
            Self::Parts,
        )
    }
}

/// A content part, tagged by `type`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResponsesContentBlock {
    /// Input text.
    InputText {
        /// The text.
        text: String,
    },
    /// Output text (from an earlier assistant turn).
    OutputText {
        /// The text.
        text: String,
    },
    /// An image.
    InputImage(ResponsesInputImage),
    /// A file (shown as an "unsupported document" note).
    InputFile {},
}

/// An image part.
#[derive(Debug, Clone, Deserialize)]
pub struct ResponsesInputImage {
    /// URL or data URL.
    pub image_url: Option<String>,
    /// Requested detail (may be left out of the sequence form).
    #[serde(default)]
    pub detail: Option<ImageDetailParam>,
    /// Uploaded file id (not supported).
    pub file_id: Option<String>,
}

/// A reasoning item.
#[derive(Debug, Clone, Deserialize)]
pub struct ResponsesReasoningItem {
    /// Reasoning texts.
    pub content: Option<Vec<ResponsesReasoningContent>>,
    /// Opaque reasoning (checked, not rendered).
    pub encrypted_content: Option<String>,
}

/// One reasoning text.
#[derive(Debug, Clone, Deserialize)]
pub struct ResponsesReasoningContent {
    /// The text.
    pub text: String,
}

/// A function call item.
#[derive(Debug, Clone, Deserialize)]
pub struct ResponsesFunctionCall {
    /// Arguments text.
    pub arguments: String,
    /// Call id.
    pub call_id: String,
    /// Function name (local to `namespace` when given).
    pub name: String,
    /// Namespace of the function.
    pub namespace: Option<String>,
}

/// A custom tool call item.
#[derive(Debug, Clone, Deserialize)]
pub struct ResponsesCustomToolCall {
    /// Call id.
    pub call_id: String,
    /// Tool name.
    pub name: String,
    /// Free-form input.
    pub input: String,
}

/// A function call output item (without `call_id` it is a tool message answering no call).
#[derive(Debug, Clone, Deserialize)]
pub struct ResponsesFunctionCallOutput {
    /// The output.
    pub output: CallOutput,
    /// The call this answers.
    pub call_id: Option<String>,
}

/// A custom tool call output item.
#[derive(Debug, Clone, Deserialize)]
pub struct ResponsesCustomToolCallOutput {
    /// The call this answers.
    pub call_id: String,
    /// The output (absent or `null`: empty).
    pub output: Option<CallOutput>,
}

/// Call output: a string or parts.
#[derive(Debug, Clone)]
pub enum CallOutput {
    /// Plain text.
    Text(String),
    /// Text, image and file parts.
    Parts(Vec<ResponsesToolCallOutputItem>),
}

/// A part of a call output, tagged by `type`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResponsesToolCallOutputItem {
    /// Text.
    InputText {
        /// The text.
        text: String,
    },
    /// An image.
    InputImage(ResponsesInputImage),
    /// A file (shown as an "unsupported document" note).
    InputFile {},
}

impl From<ResponsesToolCallOutputItem> for ResponsesContentBlock {
    fn from(part: ResponsesToolCallOutputItem) -> Self {
        match part {
            ResponsesToolCallOutputItem::InputText { text } => Self::InputText { text },
            ResponsesToolCallOutputItem::InputImage(image) => Self::InputImage(image),
            ResponsesToolCallOutputItem::InputFile {} => Self::InputFile {},
        }
    }
}

impl<'de> Deserialize<'de> for CallOutput {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        string_or_list(
            deserializer,
            "output should be a string or a list of output content parts",
            Self::Text,
            Self::Parts,
        )
    }
}

/// A tool search call item.
#[derive(Debug, Clone, Deserialize)]
pub struct ResponsesToolSearchCall {
    /// Call id.
    pub call_id: String,
    /// Search arguments.
    pub arguments: serde_json::Map<String, Value>,
    /// Where the search ran.
    pub execution: Option<ToolSearchExecution>,
}

/// A tool search output item.
#[derive(Debug, Clone, Deserialize)]
pub struct ResponsesToolSearchOutput {
    /// The call this answers.
    pub call_id: String,
    /// Where the search ran.
    pub execution: Option<ToolSearchExecution>,
    /// The tools found.
    pub tools: Vec<ResponsesTool>,
}
