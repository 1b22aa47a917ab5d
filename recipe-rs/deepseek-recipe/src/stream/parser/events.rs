//! What the parser reads and what it recognises: pieces of model output in, reasoning and
//! content deltas, tool-call starts and argument fragments, stop sequences out.

use super::fragment::ArgumentFragment;
use crate::protocol::output::logprobs::LogprobEntry;

/// Where a piece's text came from, which decides what in it can be markup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PieceKind {
    /// A text chunk: markers are recognised in its text.
    #[default]
    Text,
    /// The decoded text of consecutive ordinary tokens: the thinking end and the DSML token count
    /// only as special tokens, so their spellings here are plain text.
    Tokens,
    /// One special token's spelling. Stop sequences never match inside it (nor across it).
    SpecialToken,
}

/// One piece of model output: a text chunk, the decoded text of consecutive ordinary tokens, or
/// one special token.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Piece {
    /// The piece's text.
    pub text: String,
    /// Log probabilities of the tokens that produced it (empty for text input).
    pub logprobs: Vec<LogprobEntry>,
    /// Where the text came from.
    pub kind: PieceKind,
}

impl Piece {
    /// A text piece without log probabilities.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            logprobs: Vec::new(),
            kind: PieceKind::Text,
        }
    }
}

/// A reasoning or content delta.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TextDelta {
    /// The delta text.
    pub text: String,
    /// Log probabilities of the tokens whose text it carries.
    pub logprobs: Vec<LogprobEntry>,
}

/// What the parser recognised in the output.
#[derive(Debug, Clone, PartialEq)]
pub enum ParserEvent {
    /// Reasoning text.
    Reasoning(TextDelta),
    /// Content text.
    Content(TextDelta),
    /// A tool call starts (its name is complete).
    ToolCallStart {
        /// Index of the call within the response.
        index: usize,
        /// The tool name as written.
        name: String,
    },
    /// A fragment of a tool call's arguments.
    ToolCallArguments {
        /// Index of the call within the response.
        index: usize,
        /// The fragment.
        fragment: ArgumentFragment,
    },
    /// A stop sequence matched in content: the output ends here.
    StopSequence(String),
}
