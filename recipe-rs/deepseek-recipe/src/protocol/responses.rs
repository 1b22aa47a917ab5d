//! OpenAI Responses request body (`POST /responses`).

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::chat_completions::ImageDetailParam;
use super::shared::{json_from_text, optional_f32, string_or_list, typed_from_value, value_as};
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
    #[serde(default, deserialize_with = "optional_f32")]
    pub temperature: Option<f32>,
    /// Nucleus sampling, (0, 1].
    #[serde(default, deserialize_with = "optional_f32")]
    pub top_p: Option<f32>,
    /// Alternatives per position, [0, 20]; turns log probabilities on.
    pub top_logprobs: Option<u8>,
    /// Declared tools.
    pub tools: Option<Vec<ResponsesTool>>,
    /// Tool choice.
    pub tool_choice: Option<ResponsesToolChoice>,
    /// Reasoning settings (only `effort` is used).
    pub reasoning: Option<ResponsesReasoningConfig>,
    /// Text output settings.
    pub text: Option<ResponsesTextConfig>,
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

/// Where a tool search ran (both are rendered alike, for V4.1 only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolSearchExecution {
    /// Run by the client.
    Client,
    /// Run by the server.
    Server,
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

/// A declared tool, by `type`; types the recipe does not serve are [`ResponsesTool::Other`].
#[derive(Debug, Clone, Deserialize)]
#[serde(from = "reference::ResponsesTool")]
pub enum ResponsesTool {
    /// A function.
    Function(ResponsesFunctionTool),
    /// A custom (free-form input) tool.
    Custom(CustomTool),
    /// A group of functions under a namespace.
    Namespace(NamespaceTool),
    /// The web search server tool.
    WebSearch(ResponsesWebSearchTool),
    /// The tool search tool (nothing to declare; listed back in tool search results).
    ToolSearch(ResponsesToolSearchTool),
    /// Any other tool type (silently dropped).
    Other,
}

/// The tool search tool's settings.
#[derive(Debug, Clone, Deserialize)]
pub struct ResponsesToolSearchTool {
    /// Where searches run.
    pub execution: Option<ToolSearchExecution>,
    /// Description.
    pub description: Option<String>,
    /// JSON schema of the search arguments.
    pub parameters: Option<Value>,
}

impl From<reference::ResponsesTool> for ResponsesTool {
    fn from(tool: reference::ResponsesTool) -> Self {
        use reference::ResponsesTool as Wire;
        let web_search = |kind: &str, tool: ResponsesWebSearchTool| {
            Self::WebSearch(ResponsesWebSearchTool {
                kind: kind.to_owned(),
                ..tool
            })
        };
        match tool {
            Wire::Function(function) => Self::Function(function),
            Wire::WebSearch(tool) => web_search("web_search", tool),
            Wire::WebSearch20250826(tool) => web_search("web_search_2025_08_26", tool),
            Wire::Namespace {
                name,
                description,
                tools,
            } => Self::Namespace(NamespaceTool {
                name,
                description,
                tools,
            }),
            Wire::Custom { name } => Self::Custom(CustomTool { name }),
            Wire::ToolSearch {
                execution,
                description,
                parameters,
            } => Self::ToolSearch(ResponsesToolSearchTool {
                execution,
                description,
                parameters,
            }),
            Wire::Unsupported => Self::Other,
        }
    }
}

/// Deserialisation shapes named and ordered as the reference's (serde's messages quote the type
/// and variant names, a `type` given as an index picks a variant by position, and the sequence
/// form of a struct follows its field order).
mod reference {
    use super::{Deserialize, ToolSearchExecution, Value};
    use super::{NamespaceMember, ResponsesFunctionTool, ResponsesWebSearchTool};

    /// A declared tool, by `type`.
    #[derive(Deserialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    pub(super) enum ResponsesTool {
        Function(ResponsesFunctionTool),
        WebSearch(ResponsesWebSearchTool),
        #[serde(rename = "web_search_2025_08_26")]
        WebSearch20250826(ResponsesWebSearchTool),
        Namespace {
            name: String,
            description: Option<String>,
            tools: Vec<NamespaceMember>,
        },
        Custom {
            name: String,
        },
        ToolSearch {
            execution: Option<ToolSearchExecution>,
            description: Option<String>,
            parameters: Option<Value>,
        },
        #[serde(other)]
        Unsupported,
    }

    /// A tool inside a namespace, by `type`.
    #[derive(Deserialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    pub(super) enum ResponsesNamespaceTool {
        Function(ResponsesFunctionTool),
        Custom { name: String },
    }
}

/// A function tool.
#[derive(Debug, Clone, Deserialize)]
pub struct ResponsesFunctionTool {
    /// Function name.
    pub name: String,
    /// Description.
    pub description: Option<String>,
    /// JSON schema of the arguments.
    pub parameters: Option<Value>,
    /// Strict mode.
    pub strict: Option<bool>,
}

/// The web search server tool's settings (only listed back in tool search results).
#[derive(Debug, Clone, Deserialize)]
pub struct ResponsesWebSearchTool {
    /// The tool's `type` (`web_search` or `web_search_2025_08_26`).
    #[serde(skip)]
    pub kind: String,
    /// Search context size.
    pub search_context_size: Option<SearchContextSize>,
    /// Approximate user location.
    pub user_location: Option<ResponsesUserLocation>,
}

/// `search_context_size` of the web search tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchContextSize {
    /// Low.
    Low,
    /// Medium.
    Medium,
    /// High.
    High,
}

/// `user_location` of the web search tool.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
pub struct ResponsesUserLocation {
    /// City.
    pub city: Option<String>,
    /// Country code.
    pub country: Option<String>,
    /// Region.
    pub region: Option<String>,
    /// Time zone.
    pub timezone: Option<String>,
}

/// A custom tool (only `apply_patch` is served).
#[derive(Debug, Clone)]
pub struct CustomTool {
    /// Tool name.
    pub name: String,
}

/// A namespace of tools.
#[derive(Debug, Clone)]
pub struct NamespaceTool {
    /// Namespace name.
    pub name: String,
    /// Description (V4.1 puts it before each member's description).
    pub description: Option<String>,
    /// The member tools.
    pub tools: Vec<NamespaceMember>,
}

/// A tool inside a namespace, by `type` (only functions and custom tools).
#[derive(Debug, Clone, Deserialize)]
#[serde(from = "reference::ResponsesNamespaceTool")]
pub enum NamespaceMember {
    /// A function.
    Function(ResponsesFunctionTool),
    /// A custom tool (not allowed inside namespaces).
    Custom(CustomTool),
}

impl From<reference::ResponsesNamespaceTool> for NamespaceMember {
    fn from(tool: reference::ResponsesNamespaceTool) -> Self {
        match tool {
            reference::ResponsesNamespaceTool::Function(function) => Self::Function(function),
            reference::ResponsesNamespaceTool::Custom { name } => Self::Custom(CustomTool { name }),
        }
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
enum ResponsesNamedToolChoice {
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
            object @ Value::Object(_) if object.get("type").is_none() => Err(wrong()),
            object @ Value::Object(_) => {
                Ok(match value_as::<ResponsesNamedToolChoice, D>(object)? {
                    ResponsesNamedToolChoice::Function { name } => Self::Function(name),
                    ResponsesNamedToolChoice::Custom { name } => Self::Custom(name),
                    ResponsesNamedToolChoice::WebSearch {}
                    | ResponsesNamedToolChoice::WebSearchDated {} => Self::WebSearch,
                })
            }
            _ => Err(wrong()),
        }
    }
}

/// `reasoning`.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct ResponsesReasoningConfig {
    /// Requested effort (`none` turns thinking off).
    pub effort: Option<EffortParam>,
    /// Summary setting (checked, no effect).
    pub summary: Option<ReasoningSummary>,
    /// Older spelling of `summary` (checked, no effect).
    pub generate_summary: Option<ReasoningSummary>,
}

/// `reasoning.summary`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase", rename = "ResponsesReasoningSummary")]
pub enum ReasoningSummary {
    /// Auto.
    Auto,
    /// Concise.
    Concise,
    /// Detailed.
    Detailed,
}

/// `text`.
#[derive(Debug, Clone, Deserialize)]
pub struct ResponsesTextConfig {
    /// Output format (absent: text; `null` is refused).
    #[serde(default)]
    pub format: ResponsesTextFormat,
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
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResponsesTextFormat {
    /// Free text.
    #[default]
    Text,
    /// JSON matching a schema.
    JsonSchema {
        /// Schema name.
        name: String,
        /// The schema.
        schema: Value,
        /// Description (no effect).
        description: Option<String>,
        /// Strict mode.
        strict: Option<bool>,
    },
    /// Any JSON object.
    JsonObject,
}
