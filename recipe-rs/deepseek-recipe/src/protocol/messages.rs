//! Anthropic Messages request body (`POST /v1/messages`).

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::shared::{from_json, optional_f32, string_or_list, value_as};
use super::{EffortParam, ThinkingType};
use crate::error::Result;
use crate::names::enum_names;

/// A Messages request as the official API reads it.
#[derive(Debug, Clone, Deserialize)]
pub struct MessagesRequest {
    /// Model name, matched exactly against the model table.
    pub model: String,
    /// The conversation.
    pub messages: Vec<MessagesMessage>,
    /// Completion budget (optional here; clamped to the configured bound).
    pub max_tokens: Option<u32>,
    /// System prompt: a string or text blocks.
    pub system: Option<SystemParam>,
    /// Thinking switch.
    pub thinking: Option<MessagesThinking>,
    /// Output settings (only `effort` is used).
    pub output_config: Option<MessagesOutputConfig>,
    /// Sampling temperature, [0, 2].
    #[serde(default, deserialize_with = "optional_f32")]
    pub temperature: Option<f32>,
    /// Nucleus sampling, (0, 1].
    #[serde(default, deserialize_with = "optional_f32")]
    pub top_p: Option<f32>,
    /// Stop sequences.
    pub stop_sequences: Option<Vec<String>>,
    /// Whether to stream.
    pub stream: Option<bool>,
    /// Declared tools.
    pub tools: Option<Vec<MessagesTool>>,
    /// Tool choice.
    pub tool_choice: Option<MessagesToolChoice>,
    /// Request metadata (checked, no effect).
    pub metadata: Option<MessagesMetadata>,
}

/// `metadata`.
#[derive(Debug, Clone, Deserialize)]
pub struct MessagesMetadata {
    /// End-user id.
    pub user_id: Option<String>,
}

impl MessagesRequest {
    /// Parses a request body (JSON text), with the reference's error messages.
    pub fn from_json(body: &str) -> Result<Self> {
        from_json(body)
    }
}

/// The thinking switch of a Messages request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct MessagesThinking {
    /// Whether thinking is requested.
    #[serde(rename = "type")]
    pub kind: ThinkingType,
    /// Accepted and ignored.
    pub budget_tokens: Option<u64>,
}

/// `output_config`.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct MessagesOutputConfig {
    /// Requested reasoning effort.
    pub effort: Option<EffortParam>,
}

/// `system`: a string or a list of text blocks.
#[derive(Debug, Clone)]
pub enum SystemParam {
    /// Plain text.
    Text(String),
    /// Text blocks.
    Blocks(Vec<MessagesSystemBlock>),
}

impl<'de> Deserialize<'de> for SystemParam {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        string_or_list(
            deserializer,
            "expected a string or a list",
            Self::Text,
            Self::Blocks,
        )
    }
}

/// A system block (text only).
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum MessagesSystemBlock {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
}

/// One message: `role` names the variant, `content` holds its data (adjacently tagged, as the
/// reference reads it).
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "role", content = "content", rename_all = "snake_case")]
pub enum MessagesMessage {
    /// User turn (text, images, documents, tool results).
    User(MessagesContent),
    /// Assistant turn (text, thinking, tool uses).
    Assistant(MessagesContent),
    /// A system note inside the conversation.
    System(MessagesContent),
}

/// Message content: a string or a list of blocks.
#[derive(Debug, Clone)]
pub enum MessagesContent {
    /// Plain text.
    Text(String),
    /// Content blocks.
    Blocks(Vec<MessagesContentBlock>),
}

impl<'de> Deserialize<'de> for MessagesContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        string_or_list(
            deserializer,
            "expected a string or a list",
            Self::Text,
            Self::Blocks,
        )
    }
}

/// The short name of [`MessagesContentBlock`] (the long one is the reference's, which its
/// parse errors spell).
pub type ContentBlock = MessagesContentBlock;
/// See [`ContentBlock`].
pub type SystemBlock = MessagesSystemBlock;
/// See [`ContentBlock`].
pub type ToolResultBlock = MessagesToolResultBlock;
/// See [`ContentBlock`].
pub type ToolReferenceParam = MessagesToolReference;

/// One content block, tagged by `type`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum MessagesContentBlock {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    Image {
        /// Where the image comes from.
        source: MessagesImageSource,
    },
    /// A document (shown as an "unsupported document" note).
    Document {
        /// The document source (only its `media_type` is read).
        source: MessagesDocumentSource,
    },
    /// Reasoning from an earlier assistant turn.
    Thinking {
        /// Signature (checked, not rendered; first, as the reference orders the fields).
        signature: Option<String>,
        /// The reasoning text.
        thinking: String,
    },
    /// A server tool call (web search), from history.
    ServerToolUse {
        /// Call id (checked).
        id: String,
        /// Server tool name (checked).
        name: String,
        /// Search arguments (required, not rendered).
        input: Value,
    },
    /// A tool call.
    ToolUse {
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
        /// Arguments.
        input: Value,
    },
    /// A tool result.
    ToolResult {
        /// The call this answers.
        tool_use_id: String,
        /// Result content.
        content: Option<ToolResultContent>,
        /// Whether the tool failed (checked, no effect).
        is_error: Option<bool>,
    },
    /// A server tool result (web search), from history.
    WebSearchToolResult {
        /// The server call this answers (checked).
        tool_use_id: String,
        /// The search results (required, not rendered).
        content: Value,
    },
    /// A declared tool made available mid-conversation (only in `system` messages).
    ToolAddition {
        /// The tool, by name.
        tool: MessagesToolReference,
    },
}

/// A reference to a declared tool, tagged by `type`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum MessagesToolReference {
    /// The tool of this name.
    ToolReference {
        /// The tool name.
        name: String,
    },
}

/// An image source, tagged by `type`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum MessagesImageSource {
    /// Inline base64 data.
    Base64 {
        /// Declared media type.
        media_type: ImageMediaType,
        /// Base64 data.
        data: String,
    },
    /// An external URL.
    Url {
        /// The URL.
        url: String,
    },
    /// An uploaded file (not supported).
    File {
        /// File id.
        file_id: String,
    },
}

/// A document block's source (only `media_type` is read).
#[derive(Debug, Clone, Deserialize)]
pub struct MessagesDocumentSource {
    /// Declared media type.
    pub media_type: Option<String>,
}

/// The media types an image block may declare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum ImageMediaType {
    /// JPEG.
    #[serde(rename = "image/jpeg")]
    Jpeg,
    /// JPEG, alternative spelling (written back as `image/jpeg`).
    #[serde(rename = "image/jpg")]
    Jpg,
    /// PNG.
    #[serde(rename = "image/png")]
    Png,
    /// GIF.
    #[serde(rename = "image/gif")]
    Gif,
    /// WebP.
    #[serde(rename = "image/webp")]
    Webp,
}

enum_names!(ImageMediaType, "media type", [
    Jpeg => "image/jpeg",
    Jpg => "image/jpg",
    Png => "image/png",
    Gif => "image/gif",
    Webp => "image/webp",
]);

impl ImageMediaType {
    /// The canonical MIME spelling.
    pub fn mime(self) -> &'static str {
        match self {
            Self::Jpeg | Self::Jpg => "image/jpeg",
            Self::Png => "image/png",
            Self::Gif => "image/gif",
            Self::Webp => "image/webp",
        }
    }

    /// The data URL the official converter makes of base64 `data` of this type (`image/jpg`
    /// written as `image/jpeg`).
    pub fn data_url(self, data: &str) -> String {
        format!("data:{};base64,{data}", self.mime())
    }
}

/// Tool result content: a string or blocks.
#[derive(Debug, Clone)]
pub enum ToolResultContent {
    /// Plain text.
    Text(String),
    /// Result blocks.
    Blocks(Vec<MessagesToolResultBlock>),
}

impl<'de> Deserialize<'de> for ToolResultContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        string_or_list(
            deserializer,
            "expected a string or a list",
            Self::Text,
            Self::Blocks,
        )
    }
}

/// A block inside a tool result.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum MessagesToolResultBlock {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    Image {
        /// Where the image comes from.
        source: MessagesImageSource,
    },
    /// A document (shown as an "unsupported document" note).
    Document {
        /// The document source.
        source: MessagesDocumentSource,
    },
    /// A reference to a declared tool (rendered as its name).
    ToolReference {
        /// The tool name.
        tool_name: String,
    },
}

/// A declared tool: any `type` marks a server tool.
#[derive(Debug, Clone)]
pub enum MessagesTool {
    /// A tool the client runs.
    Custom(MessagesCustomTool),
    /// A server tool (rejected, or dropped when it is a web search the options drop).
    Server(MessagesServerTool),
}

/// A tool the client runs.
#[derive(Debug, Clone)]
pub struct MessagesCustomTool {
    /// Tool name.
    pub name: String,
    /// Description.
    pub description: Option<String>,
    /// JSON schema of the input (required).
    pub input_schema: Option<Value>,
    /// Loaded on demand (kept for V4.1 only).
    pub defer_loading: Option<bool>,
}

/// A server tool declaration (`type` and `name`).
#[derive(Debug, Clone, Deserialize)]
pub struct MessagesServerTool {
    /// Server tool type (`web_search_20250305`, …).
    #[serde(rename = "type")]
    pub kind: String,
    /// Tool name, when given.
    pub name: Option<String>,
}

impl MessagesServerTool {
    /// Whether this is a web search tool (any `web_search…` type).
    pub fn is_web_search(&self) -> bool {
        self.kind.starts_with("web_search")
    }
}

impl<'de> Deserialize<'de> for MessagesTool {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        use serde::de::Error as _;
        let value = Value::deserialize(deserializer)?;
        if value.get("type").is_some() {
            return value_as::<_, D>(value).map(Self::Server);
        }
        // A custom tool: each field is read on its own, its errors prefixed with its name.
        let mut object = match value {
            Value::Object(object) => object,
            _ => serde_json::Map::new(),
        };
        fn field<'de, T: serde::de::DeserializeOwned, D: Deserializer<'de>>(
            object: &mut serde_json::Map<String, Value>,
            name: &str,
        ) -> std::result::Result<Option<T>, D::Error> {
            match object.remove(name) {
                None => Ok(None),
                Some(value) => T::deserialize(value)
                    .map(Some)
                    .map_err(|err| D::Error::custom(format!("field `{name}`: {err}"))),
            }
        }
        let name = field::<String, D>(&mut object, "name")?
            .ok_or_else(|| D::Error::custom("missing field `name`"))?;
        let description = field::<Option<String>, D>(&mut object, "description")?.flatten();
        let input_schema = object.remove("input_schema");
        let defer_loading = field::<Option<bool>, D>(&mut object, "defer_loading")?.flatten();
        Ok(Self::Custom(MessagesCustomTool {
            name,
            description,
            input_schema,
            defer_loading,
        }))
    }
}

/// `tool_choice`, tagged by `type`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum MessagesToolChoice {
    /// The model decides.
    Auto {
        /// Checked, no effect.
        disable_parallel_tool_use: Option<bool>,
    },
    /// Any tool (treated as `auto`).
    Any {
        /// Checked, no effect.
        disable_parallel_tool_use: Option<bool>,
    },
    /// A call of the named tool.
    Tool {
        /// The tool name.
        name: String,
        /// Checked, no effect.
        disable_parallel_tool_use: Option<bool>,
    },
    /// No tool calls.
    None {},
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_type_names_are_the_serde_names() {
        for &media_type in ImageMediaType::ALL {
            let read: ImageMediaType = serde_json::from_value(media_type.as_str().into()).unwrap();
            assert_eq!(read, media_type);
            assert_eq!(media_type.as_str().parse(), Ok(media_type));
        }
    }

    #[test]
    fn data_urls_spell_jpeg_one_way() {
        assert_eq!(
            ImageMediaType::Jpg.data_url("QQ=="),
            "data:image/jpeg;base64,QQ=="
        );
        assert_eq!(ImageMediaType::Webp.data_url(""), "data:image/webp;base64,");
        let err = "image/bmp".parse::<ImageMediaType>().unwrap_err();
        assert!(err
            .to_string()
            .starts_with("unknown media type \"image/bmp\"; expected"));
    }
}
