//! The markup vocabulary of the prompt formats: how each special token is spelled and which
//! DSML tags each format's tool-call markup uses. The renderer writes it, the output parser and
//! the constrained-decoding grammar read it, and the tokenizer maps its spellings to ids.

mod dsml;
mod special_tokens;
pub mod v4;
pub mod v41;

pub use dsml::DsmlTags;
pub use special_tokens::{SpecialTokenOverrides, SpecialTokens, Spelling};
