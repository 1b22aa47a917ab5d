//! The protocol-neutral middle of a conversion: what every protocol fills in, and the shared
//! final step that derives the constraint, sampling values and parsing options from it.

use serde_json::Value;

use super::history::thinking_initial_stage;
use super::meta_schema::meta_schema_error;
use super::sampling::{resolve_temperature, resolve_top_p};
use super::strict_schema::{normalize_strict_schema, StrictSchemaError};
use super::tools::{tool_constraint_schema, ResolvedTools};
use crate::conversation::{Conversation, Message, ReasoningEffort, ResponseFormat, ToolChoice};
use crate::converted::{
    ConvertedRequest, InferenceOptions, ModelVersion, OutputConstraint, OutputConstraintKind,
    ParsingOptions, ResponseContext,
};
use crate::error::ApiError;
use crate::markup::SpecialTokens;

/// A requested output format after validation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FormatChoice {
    /// Free text.
    Text,
    /// Any JSON object.
    JsonObject,
    /// JSON matching a schema: the prompt shows `shown`, decoding is constrained to `constraint`.
    JsonSchema {
        /// The schema as sent.
        shown: Value,
        /// The schema after strict normalisation (or as sent).
        constraint: Value,
    },
    /// Text matching a regular expression.
    Regex(String),
}

/// Validates a `json_schema` format: a strict schema is read into the strict model and
/// normalised; any other is compiled as a JSON Schema (any top-level type).
pub(crate) fn json_schema_format(schema: Value, strict: bool) -> Result<FormatChoice, ApiError> {
    let constraint = if strict {
        normalize_strict_schema(&schema, false).map_err(|err| match err {
            StrictSchemaError::Parse(detail) => {
                ApiError::invalid_request(format!("Invalid json schema: {detail}"))
            }
            StrictSchemaError::Semantic(message) => ApiError::invalid_request(message),
        })?
    } else {
        if let Some(detail) = meta_schema_error(&schema) {
            return Err(ApiError::invalid_request(format!(
                "Invalid json schema: {detail}"
            )));
        }
        schema.clone()
    };
    Ok(FormatChoice::JsonSchema {
        shown: schema,
        constraint,
    })
}

/// Everything a protocol conversion decided, before the shared derivations.
#[derive(Debug, Clone)]
pub(crate) struct Draft {
    /// `model` as sent.
    pub request_model: String,
    /// Resolved model version.
    pub model_version: ModelVersion,
    /// Streaming requested.
    pub stream: bool,
    /// Resolved thinking mode.
    pub thinking_mode: bool,
    /// Resolved effort.
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Resolved tools and choice.
    pub tools: ResolvedTools,
    /// Output format.
    pub format: FormatChoice,
    /// Converted messages.
    pub messages: Vec<Message>,
    /// Validated completion budget.
    pub max_tokens: Option<u32>,
    /// Requested temperature.
    pub temperature: Option<f32>,
    /// Requested top_p.
    pub top_p: Option<f32>,
    /// Log probabilities requested.
    pub logprobs: bool,
    /// Alternatives per position.
    pub top_logprobs: Option<u8>,
    /// Sampling seed.
    pub seed: Option<u64>,
    /// Stop sequences.
    pub stop_sequences: Vec<String>,
    /// Protocol-specific values for the response side.
    pub response_context: ResponseContext,
}

impl Draft {
    /// Derives the constraint, sampling values and parsing options and builds the result; the
    /// parser matches the prompt's `special_tokens`.
    pub fn finish(self, special_tokens: SpecialTokens) -> ConvertedRequest {
        let tools_active = self.tools.active();
        let required = self.tools.tool_choice == ToolChoice::Required;
        let output_constraint = if tools_active {
            Some(OutputConstraint {
                kind: if required {
                    OutputConstraintKind::ToolCallRequired
                } else {
                    OutputConstraintKind::ToolCall
                },
                schema: tool_constraint_schema(&self.tools.tools),
            })
        } else {
            match &self.format {
                FormatChoice::Text => None,
                FormatChoice::JsonObject => Some(OutputConstraint {
                    kind: OutputConstraintKind::Json,
                    schema: String::new(),
                }),
                FormatChoice::JsonSchema { constraint, .. } => Some(OutputConstraint {
                    kind: OutputConstraintKind::Json,
                    schema: serde_json::to_string(constraint).unwrap_or_default(),
                }),
                FormatChoice::Regex(pattern) => Some(OutputConstraint {
                    kind: OutputConstraintKind::Regex,
                    schema: pattern.clone(),
                }),
            }
        };
        let inference_options = InferenceOptions {
            max_tokens: self.max_tokens,
            temperature: resolve_temperature(self.thinking_mode, self.temperature),
            top_p: resolve_top_p(
                self.model_version,
                self.thinking_mode,
                tools_active,
                self.top_p,
            ),
            logprobs: self.logprobs,
            top_logprobs: self.top_logprobs,
            seed: self.seed,
            output_constraint,
        };
        let parsing_options = ParsingOptions {
            parse_tool_calls: tools_active,
            starts_in_tool_calls: tools_active && required,
            parse_json_output: self.format == FormatChoice::JsonObject,
            thinking_initial_stage: thinking_initial_stage(self.thinking_mode, &self.messages),
            stop_sequences: self.stop_sequences,
            special_tokens,
        };
        let (response_format, response_schema, response_regex) = match self.format {
            FormatChoice::Text => (ResponseFormat::Text, None, None),
            FormatChoice::JsonObject => (ResponseFormat::JsonObject, None, None),
            FormatChoice::JsonSchema { shown, .. } => {
                (ResponseFormat::JsonSchema, Some(shown), None)
            }
            FormatChoice::Regex(pattern) => (ResponseFormat::Regex, None, Some(pattern)),
        };
        ConvertedRequest {
            request_model: self.request_model,
            model_version: self.model_version,
            stream: self.stream,
            conversation: Conversation {
                thinking_mode: self.thinking_mode,
                reasoning_effort: self.reasoning_effort,
                tool_choice: self.tools.tool_choice,
                response_format,
                response_schema,
                response_regex,
                tools: self.tools.tools,
                messages: self.messages,
            },
            inference_options,
            parsing_options,
            response_context: self.response_context,
        }
    }
}
