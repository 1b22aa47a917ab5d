//! Sampling settings and the constrained-decoding target resolved from a request.

use serde::{Deserialize, Serialize};

/// Sampling settings resolved from a request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InferenceOptions {
    /// Requested completion budget (`None`: decided by
    /// [`ConvertedRequest::resolve_max_tokens`](super::ConvertedRequest::resolve_max_tokens)).
    pub max_tokens: Option<u32>,
    /// Resolved temperature.
    pub temperature: f32,
    /// Resolved nucleus-sampling mass.
    pub top_p: f32,
    /// Whether log probabilities are returned.
    pub logprobs: bool,
    /// Alternatives per position.
    pub top_logprobs: Option<u8>,
    /// Sampling seed.
    pub seed: Option<u64>,
    /// Constrained-decoding target, if any.
    pub output_constraint: Option<OutputConstraint>,
}

/// What constrained decoding should enforce.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputConstraint {
    /// The kind of constraint.
    pub kind: OutputConstraintKind,
    /// Compact JSON schema, regex pattern, tool list JSON, or empty (any JSON object).
    pub schema: String,
}

/// Kinds of output constraint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputConstraintKind {
    /// JSON (an object, or matching `schema` when it is not empty).
    Json,
    /// Text matching the regular expression in `schema`.
    Regex,
    /// Free text or calls of the tools in `schema`.
    ToolCall,
    /// At least one call of the tools in `schema`.
    ToolCallRequired,
}
