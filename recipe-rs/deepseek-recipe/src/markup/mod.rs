//! The markup vocabulary of the prompt formats: how each special token is spelled. The
//! renderer writes it, the output parser reads it and the tokenizer maps it to ids.

mod special_tokens;

pub use special_tokens::{SpecialTokenOverrides, SpecialTokens};
