//! How the output parser reads a model's output: the options request conversion derives.

use serde::{Deserialize, Serialize};

use crate::markup::SpecialTokens;

/// Where the model output starts relative to the thinking section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ThinkingInitialStage {
    /// A fresh reasoning section: leading newlines of the reasoning are dropped.
    ReasoningStart,
    /// A prefix continuation inside unfinished reasoning: leading newlines are kept.
    ReasoningContinuation,
    /// A prefix continuation after finished reasoning: output is content, leading newlines kept.
    ContentContinuation,
}

impl ThinkingInitialStage {
    /// Whether the output starts inside reasoning.
    pub fn starts_in_reasoning(self) -> bool {
        matches!(self, Self::ReasoningStart | Self::ReasoningContinuation)
    }
}

/// Options of the output parser, as produced by request conversion.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ParsingOptions {
    /// Recognise DSML tool-call blocks in reasoning and content.
    pub parse_tool_calls: bool,
    /// The prompt already opened a tool-call block: parsing starts inside it.
    pub starts_in_tool_calls: bool,
    /// JSON output mode: only the JSON document of the content is passed through.
    pub parse_json_output: bool,
    /// The thinking stage the output starts in; `None` = content without thinking.
    pub thinking_initial_stage: Option<ThinkingInitialStage>,
    /// Content strings that end the stream when generated (empty strings are ignored).
    pub stop_sequences: Vec<String>,
    /// The special-token spellings the parser matches (the thinking end, the DSML token), as
    /// conversion options set them for the prompt. Omitted from JSON while they are the defaults;
    /// a partial table fills the rest with the defaults.
    #[serde(default, skip_serializing_if = "SpecialTokens::is_default")]
    pub special_tokens: SpecialTokens,
}
