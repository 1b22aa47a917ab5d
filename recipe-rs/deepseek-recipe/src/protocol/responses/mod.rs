//! OpenAI Responses request body (`POST /responses`): the request and its settings here, the
//! input items in `input`, the declared tools and the tool choice in `tools`.

mod input;
mod tools;

use serde::Deserialize;
use serde_json::Value;

pub use input::{
    CallOutput, InputItem, ItemContent, ItemRole, ResponsesContentBlock, ResponsesCustomToolCall,
    ResponsesCustomToolCallOutput, ResponsesFunctionCall, ResponsesFunctionCallOutput,
    ResponsesInput, ResponsesInputImage, ResponsesInputMessage, ResponsesReasoningContent,
    ResponsesReasoningItem, ResponsesToolCallOutputItem, ResponsesToolSearchCall,
    ResponsesToolSearchOutput,
};
pub use tools::{
    CustomTool, NamespaceMember, NamespaceTool, ResponsesFunctionTool, ResponsesTool,
    ResponsesToolChoice, ResponsesToolSearchTool, ResponsesUserLocation, ResponsesWebSearchTool,
    SearchContextSize, ToolSearchExecution,
};

use super::shared::{json_from_text, optional_f32, typed_from_value};
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
