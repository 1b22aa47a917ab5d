//! Prompt rendering for DeepSeek V4 and V4.1: a [`Conversation`] becomes prompt text with the
//! positions of its special tokens and the images it references; [`encode`] turns that into
//! token ids.
//!
//! The markup is specified in `docs/format.md`. Text that comes from the request is never turned
//! into special tokens, except the grounding tokens inside assistant content and reasoning.

mod dialect;
mod dsml;
mod encode;
mod json;
mod prompt;
mod render;
mod response_format;
mod tools;
mod v4;
mod v41;

pub use encode::encode;
pub(crate) use json::{to_prompt_json, write_string as write_json_string, NumberStyle};
pub use prompt::RenderedPrompt;

use crate::conversation::Conversation;
use crate::markup::{DsmlTags, SpecialTokens};
use dialect::Dialect;

/// The prompt formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PromptFormat {
    /// DeepSeek V4 (`DeepSeek-V4-Pro`).
    V4,
    /// DeepSeek V4.1 (`DeepSeek-V4.1-Flash`).
    V41,
}

/// Renders conversations in one prompt format with one special-token spelling table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Encoding {
    format: PromptFormat,
    special_tokens: SpecialTokens,
}

impl Encoding {
    /// The encoding of `format` with the default spellings.
    pub fn new(format: PromptFormat) -> Self {
        Self {
            format,
            special_tokens: SpecialTokens::default(),
        }
    }

    /// The DeepSeek V4 encoding.
    pub fn v4() -> Self {
        Self::new(PromptFormat::V4)
    }

    /// The DeepSeek V4.1 encoding.
    pub fn v41() -> Self {
        Self::new(PromptFormat::V41)
    }

    /// This encoding with other special-token spellings.
    pub fn with_special_tokens(mut self, special_tokens: SpecialTokens) -> Self {
        self.special_tokens = special_tokens;
        self
    }

    /// The prompt format.
    pub fn format(&self) -> PromptFormat {
        self.format
    }

    /// The special-token spellings.
    pub fn special_tokens(&self) -> &SpecialTokens {
        &self.special_tokens
    }

    /// The DSML tags of the format's tool-call markup.
    pub fn dsml_tags(&self) -> DsmlTags {
        self.dialect().dsml
    }

    /// Renders `conversation` into prompt text, special ranges and image sources.
    pub fn render(&self, conversation: &Conversation) -> RenderedPrompt {
        render::render(self.dialect(), &self.special_tokens, conversation)
    }

    fn dialect(&self) -> &'static Dialect {
        match self.format {
            PromptFormat::V4 => &v4::DIALECT,
            PromptFormat::V41 => &v41::DIALECT,
        }
    }
}
