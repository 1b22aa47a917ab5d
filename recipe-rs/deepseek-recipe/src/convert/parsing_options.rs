//! How the output parser should read the model's reply to a converted request.

use serde::{Deserialize, Serialize};

/// Where the model's output starts, when thinking is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ThinkingInitialStage {
    /// The prompt ends with `<think>`: output starts inside fresh reasoning.
    ReasoningStart,
    /// A prefix with reasoning only: output continues that reasoning.
    ReasoningContinuation,
    /// A prefix with content: output continues the content.
    ContentContinuation,
}

/// Output-parsing settings derived from a request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ParsingOptions {
    /// Whether DSML tool calls are parsed (tools are active).
    pub parse_tool_calls: bool,
    /// Whether output starts inside a tool-call block (required or named tool choice).
    pub starts_in_tool_calls: bool,
    /// Whether content is parsed as a JSON object (`json_object` response format).
    pub parse_json_output: bool,
    /// `None` when thinking is off.
    pub thinking_initial_stage: Option<ThinkingInitialStage>,
    /// Client stop sequences.
    pub stop_sequences: Vec<String>,
}
