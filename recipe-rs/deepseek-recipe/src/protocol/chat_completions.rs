//! OpenAI Chat Completions request body (`POST /chat/completions`).

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::shared::{from_json, optional_f32, string_or_list, value_as};
use super::{ChatCompletionThinking, EffortParam};
use crate::error::Result;

/// A Chat Completions request as the official API reads it.
#[derive(Debug, Clone, Deserialize)]
pub struct ChatCompletionRequest {
    /// The conversation.
    pub messages: Vec<ChatCompletionRequestMessage>,
    /// Model name, matched exactly against the model table.
    pub model: String,
    /// Sampling temperature, [0, 2].
    #[serde(default, deserialize_with = "optional_f32")]
    pub temperature: Option<f32>,
    /// Nucleus sampling, (0, 1].
    #[serde(default, deserialize_with = "optional_f32")]
    pub top_p: Option<f32>,
    /// Completion budget.
    pub max_tokens: Option<u32>,
    /// Number of choices; only 1 is supported.
    pub n: Option<u8>,
    /// Whether to stream.
    pub stream: Option<bool>,
    /// Streaming options; only allowed with `stream: true`.
    pub stream_options: Option<ChatCompletionStreamOptions>,
    /// Stop sequences.
    pub stop: Option<StopParam>,
    /// Sampling seed, below 2^63.
    pub seed: Option<u64>,
    /// Whether to return log probabilities.
    pub logprobs: Option<bool>,
    /// Alternatives per position, [0, 20]; needs `logprobs: true`.
    pub top_logprobs: Option<u8>,
    /// Validated to [-2, 2], otherwise no effect.
    #[serde(default, deserialize_with = "optional_f32")]
    pub frequency_penalty: Option<f32>,
    /// Validated to [-2, 2], otherwise no effect.
    #[serde(default, deserialize_with = "optional_f32")]
    pub presence_penalty: Option<f32>,
    /// Output format.
    pub response_format: Option<ChatCompletionResponseFormat>,
    /// Declared tools.
    pub tools: Option<Vec<ChatCompletionTool>>,
    /// Tool choice.
    pub tool_choice: Option<ChatToolChoice>,
    /// Thinking switch.
    pub thinking: Option<ChatCompletionThinking>,
    /// Reasoning effort.
    pub reasoning_effort: Option<EffortParam>,
    /// Parsed (a boolean), no effect.
    pub parallel_tool_calls: Option<bool>,
}

/// Short names of the wire types (the long ones are the reference's, which its parse errors
/// spell: `expected struct ChatCompletionFunctionDefinition`).
pub type ChatMessage = ChatCompletionRequestMessage;
/// See [`ChatMessage`].
pub type ChatContentPart = ChatCompletionRequestContentBlock;
/// See [`ChatMessage`].
pub type ChatResponseFormat = ChatCompletionResponseFormat;
/// See [`ChatMessage`].
pub type StreamOptions = ChatCompletionStreamOptions;

impl ChatCompletionRequest {
    /// Parses a request body (JSON text), with the reference's error messages.
    pub fn from_json(body: &str) -> Result<Self> {
        from_json(body)
    }
}

/// `stream_options`; only `include_usage: true` has an effect.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct ChatCompletionStreamOptions {
    /// Every chunk carries a `usage` field (null until the final chunk) when `true`.
    pub include_usage: Option<bool>,
}

/// One message, tagged by `role`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum ChatCompletionRequestMessage {
    /// System prompt.
    System {
        /// Text and images.
        content: ChatContent,
        /// Participant name (checked, no effect).
        name: Option<String>,
    },
    /// User turn.
    User {
        /// Text and images.
        content: ChatContent,
        /// Participant name (checked, no effect).
        name: Option<String>,
    },
    /// Assistant turn from history, or a prefix to continue (fields in the reference's order,
    /// which serde's sequence form follows).
    Assistant {
        /// Text (`null` when only tool calls are given).
        content: Option<ChatContent>,
        /// Reasoning to pass back.
        reasoning_content: Option<String>,
        /// Participant name (checked, no effect).
        name: Option<String>,
        /// Tool calls made in this turn.
        tool_calls: Option<Vec<ChatCompletionRequestToolCall>>,
        /// Whether the model should continue this message.
        prefix: Option<bool>,
    },
    /// A tool result.
    Tool {
        /// Result text and images.
        content: ChatContent,
        /// The call this answers.
        tool_call_id: String,
    },
    /// A latest-reminder block (text only).
    LatestReminder {
        /// Reminder text.
        content: String,
    },
}

/// Message content: a string or a list of parts.
#[derive(Debug, Clone)]
pub enum ChatContent {
    /// Plain text.
    Text(String),
    /// Text, image and file parts.
    Parts(Vec<ChatCompletionRequestContentBlock>),
}

impl<'de> Deserialize<'de> for ChatContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        string_or_list(
            deserializer,
            "content should be a string or a list",
            Self::Text,
            Self::Parts,
        )
    }
}

/// One content part, tagged by `type`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ChatCompletionRequestContentBlock {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image by URL or data URL.
    ImageUrl {
        /// The image location.
        image_url: ChatCompletionImageUrl,
    },
    /// A file (never supported as input).
    File {
        /// Uploaded file id.
        file_id: Option<String>,
        /// Inline file data.
        file_data: Option<String>,
        /// File name.
        filename: Option<String>,
    },
}

/// `image_url` object of an image part.
#[derive(Debug, Clone, Deserialize)]
pub struct ChatCompletionImageUrl {
    /// `http(s)` URL or `data:` URL.
    pub url: String,
    /// Requested detail (`high` when absent; may be left out of the sequence form).
    #[serde(default)]
    pub detail: Option<ImageDetailParam>,
}

/// Requested image detail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ImageDetailParam {
    /// Low detail.
    Low,
    /// High detail.
    High,
    /// Original resolution.
    Original,
    /// Server decides.
    Auto,
}

/// One tool call in an assistant message.
#[derive(Debug, Clone, Deserialize)]
pub struct ChatCompletionRequestToolCall {
    /// Call id.
    pub id: String,
    /// Always `function`.
    #[serde(rename = "type")]
    pub kind: FunctionType,
    /// Name and arguments.
    pub function: ChatCompletionRequestFunctionCall,
}

/// The only tool type Chat Completions accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FunctionType {
    /// A function tool.
    Function,
}

/// Function name and raw arguments of a tool call.
#[derive(Debug, Clone, Deserialize)]
pub struct ChatCompletionRequestFunctionCall {
    /// Function name.
    pub name: String,
    /// Arguments as text (not validated).
    pub arguments: String,
}

/// A declared tool.
#[derive(Debug, Clone, Deserialize)]
pub struct ChatCompletionTool {
    /// Always `function`.
    #[serde(rename = "type")]
    pub kind: FunctionType,
    /// The function definition.
    pub function: ChatCompletionFunctionDefinition,
}

/// A function definition.
#[derive(Debug, Clone, Deserialize)]
pub struct ChatCompletionFunctionDefinition {
    /// Function name.
    pub name: String,
    /// Description.
    pub description: Option<String>,
    /// JSON schema of the arguments.
    pub parameters: Option<Value>,
    /// Strict mode.
    pub strict: Option<bool>,
}

/// `stop`: one string or a list.
#[derive(Debug, Clone)]
pub enum StopParam {
    /// A single stop string.
    One(String),
    /// A list of stop strings.
    Many(Vec<String>),
}

impl<'de> Deserialize<'de> for StopParam {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::String(stop) => Ok(Self::One(stop)),
            list @ Value::Array(_) => value_as::<_, D>(list).map(Self::Many),
            _ => Err(serde::de::Error::custom("expected a string or a list")),
        }
    }
}

/// `response_format`, tagged by `type`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ChatCompletionResponseFormat {
    /// Any JSON object.
    JsonObject,
    /// JSON matching a schema.
    JsonSchema {
        /// The schema and its settings.
        json_schema: ChatCompletionResponseFormatJsonSchema,
    },
    /// Text matching a regular expression.
    Regex {
        /// The pattern.
        regex: String,
    },
    /// Free text.
    Text,
}

/// The `json_schema` object of a schema response format (fields in the reference's order, which
/// serde's sequence form follows).
#[derive(Debug, Clone, Deserialize)]
pub struct ChatCompletionResponseFormatJsonSchema {
    /// The JSON schema.
    pub schema: Value,
    /// Schema name (no effect).
    pub name: Option<String>,
    /// Strict mode: the schema is normalised.
    pub strict: Option<bool>,
}

/// `tool_choice`: a mode string or a named function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChatToolChoice {
    /// `none`.
    None,
    /// `auto`.
    Auto,
    /// `required`.
    Required,
    /// `{"type": "function", "function": {"name": …}}`.
    Function(String),
}

/// `function` object of a named tool choice.
#[derive(Deserialize)]
struct ChatCompletionToolChoiceFunction {
    name: String,
}

impl<'de> Deserialize<'de> for ChatToolChoice {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        use serde::de::Error as _;
        let wrong = || D::Error::custom("expected one of `none`, `auto`, `required` or a tool");
        match Value::deserialize(deserializer)? {
            Value::String(mode) => match mode.as_str() {
                "none" => Ok(Self::None),
                "auto" => Ok(Self::Auto),
                "required" => Ok(Self::Required),
                _ => Err(wrong()),
            },
            Value::Object(mut object) => {
                // An object without `type` is no tool choice; otherwise each field is read,
                // its errors prefixed with the field name.
                let Some(kind) = object.remove("type") else {
                    return Err(wrong());
                };
                FunctionType::deserialize(kind)
                    .map_err(|err| D::Error::custom(format!("field `type`: {err}")))?;
                let function = object.remove("function").unwrap_or(Value::Null);
                let function = ChatCompletionToolChoiceFunction::deserialize(function)
                    .map_err(|err| D::Error::custom(format!("field `function`: {err}")))?;
                Ok(Self::Function(function.name))
            }
            _ => Err(wrong()),
        }
    }
}
