//! OpenAI Responses request body (`POST /responses`).

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::chat_completions::ImageDetailParam;
use super::shared::{json_from_text, string_or_list, typed_from_value, value_as};
use super::EffortParam;
use crate::error::Result;

/// A Responses request as the official API reads it.
#[derive(Debug, Clone, Deserialize)]
pub struct ResponsesRequest {
    /// Model name, matched exactly against the model table.
    pub model: String,
    /// A user string or a list of input items.
    pub input: Option<ResponsesInput>,
    /// System instructions (the first system message).
    pub instructions: Option<String>,
    /// Completion budget.
    pub max_output_tokens: Option<u32>,
    /// Sampling temperature, [0, 2].
    pub temperature: Option<f32>,
    /// Nucleus sampling, (0, 1].
    pub top_p: Option<f32>,
    /// Alternatives per position, [0, 20]; turns log probabilities on.
    pub top_logprobs: Option<u8>,
    /// Declared tools.
    pub tools: Option<Vec<ResponsesTool>>,
    /// Tool choice.
    pub tool_choice: Option<ResponsesToolChoice>,
    /// Reasoning settings (only `effort` is used).
    pub reasoning: Option<ReasoningParam>,
    /// Text output settings.
    pub text: Option<TextParam>,
    /// Whether to stream.
    pub stream: Option<bool>,
    /// End-user id (echoed).
    pub user: Option<String>,
    /// The fields a response object reports verbatim, as sent (filled by [`Self::from_json`];
    /// empty when the request is deserialised otherwise).
    #[serde(skip)]
    pub reported: ReportedFields,
}

/// Request fields a Responses response object reports verbatim, kept as the JSON sent
/// (`None` when absent or null).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReportedFields {
    /// `tools`.
    pub tools: Option<Value>,
    /// `tool_choice`.
    pub tool_choice: Option<Value>,
    /// `reasoning`.
    pub reasoning: Option<Value>,
    /// `text`.
    pub text: Option<Value>,
}

impl ReportedFields {
    /// Picks the reported fields out of a request body.
    fn from_body(body: &Value) -> Self {
        let field = |key: &str| body.get(key).filter(|value| !value.is_null()).cloned();
        Self {
            tools: field("tools"),
            tool_choice: field("tool_choice"),
            reasoning: field("reasoning"),
            text: field("text"),
        }
    }
}

impl ResponsesRequest {
    /// Parses a request body (JSON text), with the reference's error messages.
    pub fn from_json(body: &str) -> Result<Self> {
        let value = json_from_text(body)?;
        let reported = ReportedFields::from_body(&value);
        let mut request: Self = typed_from_value(value)?;
        request.reported = reported;
        Ok(request)
    }
}

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
            Self::Items,
        )
    }
}

/// One input item, by `type` (a missing type means a message); unknown types are kept as
/// [`InputItem::Other`] and ignored by conversion.
#[derive(Debug, Clone)]
pub enum InputItem {
    /// A message.
    Message(MessageItem),
    /// Reasoning from an earlier turn.
    Reasoning(ReasoningItem),
    /// A function call from an earlier turn.
    FunctionCall(FunctionCallItem),
    /// The output of a function call.
    FunctionCallOutput(CallOutputItem),
    /// A custom tool call from an earlier turn.
    CustomToolCall(CustomToolCallItem),
    /// The output of a custom tool call.
    CustomToolCallOutput(CallOutputItem),
    /// A tool search call.
    ToolSearchCall(ToolSearchCallItem),
    /// The tools a tool search returned.
    ToolSearchOutput(ToolSearchOutputItem),
    /// Any other item (web search calls, item references, …).
    Other,
}

impl<'de> Deserialize<'de> for InputItem {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let kind = value.get("type").and_then(Value::as_str).map(str::to_owned);
        Ok(match kind.as_deref() {
            None | Some("message") => Self::Message(value_as::<_, D>(value)?),
            Some("reasoning") => Self::Reasoning(value_as::<_, D>(value)?),
            Some("function_call") => Self::FunctionCall(value_as::<_, D>(value)?),
            Some("function_call_output") => Self::FunctionCallOutput(value_as::<_, D>(value)?),
            Some("custom_tool_call") => Self::CustomToolCall(value_as::<_, D>(value)?),
            Some("custom_tool_call_output") => Self::CustomToolCallOutput(value_as::<_, D>(value)?),
            Some("tool_search_call") => Self::ToolSearchCall(value_as::<_, D>(value)?),
            Some("tool_search_output") => Self::ToolSearchOutput(value_as::<_, D>(value)?),
            Some(_) => Self::Other,
        })
    }
}

/// A message item.
#[derive(Debug, Clone, Deserialize)]
pub struct MessageItem {
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
    Parts(Vec<ContentPart>),
}

impl<'de> Deserialize<'de> for ItemContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        string_or_list(
            deserializer,
            "content should be a string or a list",
            Self::Text,
            Self::Parts,
        )
    }
}

/// A content part, tagged by `type`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentPart {
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
    InputImage {
        /// URL or data URL.
        image_url: Option<String>,
        /// Uploaded file id (not supported).
        file_id: Option<String>,
        /// Requested detail.
        detail: Option<ImageDetailParam>,
    },
    /// A file (shown as an "unsupported document" note).
    InputFile {},
}

/// A reasoning item.
#[derive(Debug, Clone, Deserialize)]
pub struct ReasoningItem {
    /// Reasoning texts.
    pub content: Option<Vec<ReasoningText>>,
}

/// One reasoning text.
#[derive(Debug, Clone, Deserialize)]
pub struct ReasoningText {
    /// The text.
    pub text: String,
}

/// A function call item.
#[derive(Debug, Clone, Deserialize)]
pub struct FunctionCallItem {
    /// Call id.
    pub call_id: String,
    /// Function name (local to `namespace` when given).
    pub name: String,
    /// Arguments text.
    pub arguments: String,
    /// Namespace of the function.
    pub namespace: Option<String>,
}

/// A custom tool call item.
#[derive(Debug, Clone, Deserialize)]
pub struct CustomToolCallItem {
    /// Call id.
    pub call_id: String,
    /// Tool name.
    pub name: String,
    /// Free-form input.
    pub input: String,
}

/// A (function or custom) call output item.
#[derive(Debug, Clone, Deserialize)]
pub struct CallOutputItem {
    /// The call this answers.
    pub call_id: String,
    /// The output.
    pub output: CallOutput,
}

/// Call output: a string or parts.
#[derive(Debug, Clone)]
pub enum CallOutput {
    /// Plain text.
    Text(String),
    /// Text, image and file parts.
    Parts(Vec<ContentPart>),
}

impl<'de> Deserialize<'de> for CallOutput {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        string_or_list(
            deserializer,
            "output should be a string or a list",
            Self::Text,
            Self::Parts,
        )
    }
}

/// Where a tool search ran (both are rendered alike, for V4.1 only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolSearchExecution {
    /// Run by the client.
    Client,
    /// Run by the server.
    Server,
}

/// A tool search call item.
#[derive(Debug, Clone, Deserialize)]
pub struct ToolSearchCallItem {
    /// Call id.
    pub call_id: String,
    /// Search arguments.
    pub arguments: serde_json::Map<String, Value>,
    /// Where the search ran.
    pub execution: Option<ToolSearchExecution>,
}

/// A tool search output item.
#[derive(Debug, Clone, Deserialize)]
pub struct ToolSearchOutputItem {
    /// The call this answers.
    pub call_id: String,
    /// Where the search ran.
    pub execution: Option<ToolSearchExecution>,
    /// The tools found.
    pub tools: Vec<ResponsesTool>,
}

/// A declared tool, by `type`; types the recipe does not serve are [`ResponsesTool::Other`].
#[derive(Debug, Clone)]
pub enum ResponsesTool {
    /// A function.
    Function(FunctionTool),
    /// A custom (free-form input) tool.
    Custom(CustomTool),
    /// A group of functions under a namespace.
    Namespace(NamespaceTool),
    /// The web search server tool.
    WebSearch(WebSearchTool),
    /// Any other tool type (silently dropped).
    Other,
}

impl<'de> Deserialize<'de> for ResponsesTool {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let kind = value.get("type").and_then(Value::as_str).map(str::to_owned);
        Ok(match kind.as_deref() {
            Some("function") => Self::Function(value_as::<_, D>(value)?),
            Some("custom") => Self::Custom(value_as::<_, D>(value)?),
            Some("namespace") => Self::Namespace(value_as::<_, D>(value)?),
            Some("web_search" | "web_search_2025_08_26") => {
                Self::WebSearch(value_as::<_, D>(value)?)
            }
            _ => Self::Other,
        })
    }
}

/// A function tool.
#[derive(Debug, Clone, Deserialize)]
pub struct FunctionTool {
    /// Function name.
    pub name: String,
    /// Description.
    pub description: Option<String>,
    /// JSON schema of the arguments.
    pub parameters: Option<Value>,
    /// Strict mode.
    pub strict: Option<bool>,
    /// Loaded on demand (kept for V4.1 only).
    pub defer_loading: Option<bool>,
}

/// The web search server tool's settings (only listed back in tool search results).
#[derive(Debug, Clone, Deserialize)]
pub struct WebSearchTool {
    /// Search context size.
    pub search_context_size: Option<Value>,
    /// Approximate user location.
    pub user_location: Option<Value>,
}

/// A custom tool (only `apply_patch` is served).
#[derive(Debug, Clone, Deserialize)]
pub struct CustomTool {
    /// Tool name.
    pub name: String,
}

/// A namespace of tools.
#[derive(Debug, Clone, Deserialize)]
pub struct NamespaceTool {
    /// Namespace name.
    pub name: String,
    /// Description (V4.1 puts it before each member's description).
    pub description: Option<String>,
    /// The member tools.
    pub tools: Vec<NamespaceMember>,
}

/// A tool inside a namespace.
#[derive(Debug, Clone)]
pub enum NamespaceMember {
    /// A function.
    Function(FunctionTool),
    /// A custom tool (not allowed inside namespaces).
    Custom(CustomTool),
    /// Any other tool type (ignored).
    Other,
}

impl<'de> Deserialize<'de> for NamespaceMember {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let kind = value.get("type").and_then(Value::as_str).map(str::to_owned);
        Ok(match kind.as_deref() {
            Some("function") => Self::Function(value_as::<_, D>(value)?),
            Some("custom") => Self::Custom(value_as::<_, D>(value)?),
            _ => Self::Other,
        })
    }
}

/// `tool_choice`: a mode string or a typed object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResponsesToolChoice {
    /// `none`.
    None,
    /// `auto`.
    Auto,
    /// `required`.
    Required,
    /// `{"type": "function", "name": …}`.
    Function(String),
    /// `{"type": "custom", "name": …}`.
    Custom(String),
    /// `{"type": "web_search"}` (a server tool).
    WebSearch,
}

/// The object form of a tool choice.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ToolChoiceObject {
    Function {
        name: String,
    },
    WebSearch {},
    #[serde(rename = "web_search_2025_08_26")]
    WebSearchDated {},
    Custom {
        name: String,
    },
}

impl<'de> Deserialize<'de> for ResponsesToolChoice {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let wrong = || {
            serde::de::Error::custom(
                "expected one of `none`, `auto`, `required` or a tool choice object",
            )
        };
        match Value::deserialize(deserializer)? {
            Value::String(mode) => match mode.as_str() {
                "none" => Ok(Self::None),
                "auto" => Ok(Self::Auto),
                "required" => Ok(Self::Required),
                _ => Err(wrong()),
            },
            object @ Value::Object(_) => Ok(match value_as::<ToolChoiceObject, D>(object)? {
                ToolChoiceObject::Function { name } => Self::Function(name),
                ToolChoiceObject::Custom { name } => Self::Custom(name),
                ToolChoiceObject::WebSearch {} | ToolChoiceObject::WebSearchDated {} => {
                    Self::WebSearch
                }
            }),
            _ => Err(wrong()),
        }
    }
}

/// `reasoning`.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct ReasoningParam {
    /// Requested effort (`none` turns thinking off).
    pub effort: Option<EffortParam>,
}

/// `text`.
#[derive(Debug, Clone, Deserialize)]
pub struct TextParam {
    /// Output format.
    pub format: Option<TextFormat>,
    /// Verbosity (checked, no effect).
    pub verbosity: Option<Verbosity>,
}

/// `text.verbosity`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verbosity {
    /// Low.
    Low,
    /// Medium.
    Medium,
    /// High.
    High,
}

/// `text.format`, tagged by `type`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TextFormat {
    /// Free text.
    Text,
    /// JSON matching a schema.
    JsonSchema {
        /// Schema name.
        name: String,
        /// The schema.
        schema: Value,
        /// Strict mode.
        strict: Option<bool>,
        /// Description (no effect).
        description: Option<String>,
    },
    /// Any JSON object.
    JsonObject,
}
