//! Log probability entries as the protocols report them.

use serde::Serialize;

/// One alternative token with its log probability.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TopLogprobEntry {
    /// The token text (or `\xNN` escapes when its bytes are not valid UTF-8).
    pub token: String,
    /// Its log probability.
    pub logprob: f32,
    /// The token's raw bytes.
    pub bytes: Vec<u8>,
}

/// One generated token with its log probability and top alternatives.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LogprobEntry {
    /// The token text (or `\xNN` escapes when its bytes are not valid UTF-8).
    pub token: String,
    /// Its log probability.
    pub logprob: f32,
    /// The token's raw bytes.
    pub bytes: Vec<u8>,
    /// The most likely alternatives.
    pub top_logprobs: Vec<TopLogprobEntry>,
}

/// The display text of a token's bytes: the text when valid UTF-8, else every byte as `\xNN`.
pub fn token_display(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        Err(_) => bytes.iter().map(|byte| format!("\\x{byte:02x}")).collect(),
    }
}
