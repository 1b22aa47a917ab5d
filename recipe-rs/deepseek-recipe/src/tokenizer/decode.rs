//! Turning ids back into text, in one piece or streaming.
//!
//! Each id contributes its bytes (see [`Tokenizer::decode`]); the concatenated bytes are read as
//! UTF-8 and every maximal invalid subsequence becomes one U+FFFD, as the reference's lossy
//! conversion does.

use super::Tokenizer;
use crate::error::Result;

/// Appends the longest prefix of `bytes` that is decided to `out`: valid UTF-8 as is, each invalid
/// sequence as U+FFFD; returns how many bytes were consumed. An incomplete character at the end
/// (a valid prefix of a UTF-8 sequence) is left unconsumed.
pub(super) fn decode_complete(bytes: &[u8], out: &mut String) -> usize {
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(valid) => {
                out.push_str(valid);
                return bytes.len();
            }
            Err(err) => {
                let (valid, after) = rest.split_at(err.valid_up_to());
                // `valid` is exactly the checked prefix.
                out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                match err.error_len() {
                    Some(len) => {
                        out.push(char::REPLACEMENT_CHARACTER);
                        rest = &after[len..];
                    }
                    None => return bytes.len() - after.len(),
                }
            }
        }
    }
}

/// Streaming decoder: push ids as they are generated, get back the text that is complete.
///
/// Bytes of a character split across tokens are held until the character is complete. Pushing
/// ids one at a time, in any grouping, and then calling [`finish`](Self::finish) yields exactly
/// the text [`Tokenizer::decode`] gives for all ids at once.
#[derive(Debug, Clone)]
pub struct IncrementalDecoder {
    tokenizer: Tokenizer,
    pending: Vec<u8>,
}

impl IncrementalDecoder {
    /// A decoder with nothing pending.
    pub fn new(tokenizer: Tokenizer) -> Self {
        Self {
            tokenizer,
            pending: Vec::new(),
        }
    }

    /// Adds `ids` and returns the newly complete text (possibly empty). Invalid byte sequences
    /// come out as U+FFFD as soon as they are known to be invalid.
    ///
    /// # Errors
    /// [`crate::Error::Tokenizer`] for an unknown id; then nothing of `ids` is consumed.
    pub fn push(&mut self, ids: &[u32]) -> Result<String> {
        let start = self.pending.len();
        for &id in ids {
            match self.tokenizer.token_bytes(id) {
                Ok(bytes) => self.pending.extend_from_slice(bytes),
                Err(err) => {
                    self.pending.truncate(start);
                    return Err(err);
                }
            }
        }
        let mut text = String::new();
        let consumed = decode_complete(&self.pending, &mut text);
        self.pending.drain(..consumed);
        Ok(text)
    }

    /// Ends the stream: a dangling incomplete character becomes one U+FFFD (as in
    /// [`Tokenizer::decode`]); returns that or the empty string. The decoder is then empty and can
    /// be reused.
    pub fn finish(&mut self) -> String {
        let text = if self.pending.is_empty() {
            String::new()
        } else {
            char::REPLACEMENT_CHARACTER.to_string()
        };
        self.pending.clear();
        text
    }

    /// Whether bytes of an incomplete character are held.
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_incomplete_characters_only() {
        let mut out = String::new();
        assert_eq!(decode_complete("a€".as_bytes(), &mut out), 4);
        assert_eq!(out, "a€");
        out.clear();
        assert_eq!(decode_complete(b"a\xE2\x82", &mut out), 1);
        assert_eq!(out, "a");
        out.clear();
        assert_eq!(decode_complete(b"\xFFb\xE2\x82c", &mut out), 5);
        assert_eq!(out, "\u{FFFD}b\u{FFFD}c");
    }
}
