//! What the stream processor tells a protocol generator, and where generators put what they make.

use super::inference::{InferenceFinishReason, PromptUsage};
use super::parser::{ArgumentFragment, TextDelta};

/// Where a generator or processor puts the chunks it makes, in order: a `Vec` collects them, a
/// writer (see [`super::SseStream`]) frames each as it is made.
pub trait Emit<T> {
    /// Takes the next chunk.
    fn emit(&mut self, chunk: T);
}

impl<T> Emit<T> for Vec<T> {
    fn emit(&mut self, chunk: T) {
        self.push(chunk);
    }
}

/// Start-of-stream information (from the first `ready` chunk, or defaults).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StreamStart {
    /// Prompt usage (zeros when the backend did not report it).
    pub prompt_usage: PromptUsage,
    /// The backend fingerprint.
    pub system_fingerprint: Option<String>,
}

/// One parsed output event, with tool-call ids assigned.
#[derive(Debug, Clone, PartialEq)]
pub enum OutputEvent {
    /// Reasoning text.
    Reasoning(TextDelta),
    /// Content text.
    Content(TextDelta),
    /// A tool call starts.
    ToolCallStart {
        /// Index of the call.
        index: usize,
        /// Its id (`call_…`).
        id: String,
        /// The tool name.
        name: String,
    },
    /// A fragment of a tool call's arguments.
    ToolCallArguments {
        /// Index of the call.
        index: usize,
        /// The fragment.
        fragment: ArgumentFragment,
    },
}

/// Why the stream ended, as the protocols map it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEnd {
    /// The backend finished with `Stop` (`tool_calls` is whether calls map to a tool finish).
    Stop {
        /// A `finish(Stop)` chunk arrived and at least one tool call was parsed.
        tool_calls: bool,
    },
    /// A stop sequence matched.
    StopSequence(String),
    /// The token limit was reached.
    Length,
    /// The output was filtered.
    ContentFilter,
}

impl StreamEnd {
    /// The end for a backend finish reason.
    pub fn from_finish(reason: InferenceFinishReason, tool_calls: bool) -> Self {
        match reason {
            InferenceFinishReason::Stop => Self::Stop { tool_calls },
            InferenceFinishReason::Length => Self::Length,
            InferenceFinishReason::ContentFilter => Self::ContentFilter,
        }
    }
}

/// Token accounting at the end of the stream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamUsage {
    /// Prompt usage.
    pub prompt: PromptUsage,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Tokens of the reasoning text, when a tokenizer counted them.
    pub reasoning_tokens: Option<u64>,
}

impl StreamUsage {
    /// Prompt plus completion tokens. Counts saturate at `u64::MAX` (only a backend reporting
    /// absurd token counts gets there; the reference wraps around instead).
    pub fn total_tokens(&self) -> u64 {
        self.prompt
            .prompt_tokens
            .saturating_add(self.completion_tokens)
    }
}
