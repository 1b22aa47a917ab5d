//! Token input: incremental, UTF-8-safe decoding of token ids into parser pieces.

use super::inference::TokenLogprobs;
use super::logprobs::{token_display, LogprobEntry, TopLogprobEntry};
use super::parser::Piece;

/// What the stream processor needs from a tokenizer.
pub trait TokenText {
    /// The bytes token `id` decodes to (special tokens: their literal spelling); `None` for
    /// ids outside the vocabulary.
    fn token_bytes(&self, id: u32) -> Option<&[u8]>;
    /// Whether `id` is a special (added-vocabulary) token.
    fn is_special(&self, id: u32) -> bool;
    /// Number of tokens `text` encodes to with the full vocabulary.
    fn count_tokens(&self, text: &str) -> usize;
}

/// Ids whose text is not complete yet (empty, or ending in an incomplete UTF-8 sequence).
#[derive(Debug, Clone, Default)]
pub struct TokenDecoder {
    pending_bytes: Vec<u8>,
    pending_logprobs: Vec<LogprobEntry>,
    pending_ids: u64,
}

/// The pieces one token chunk produced and the number of ids it released.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DecodedChunk {
    /// Pieces for the parser, in order.
    pub pieces: Vec<Piece>,
    /// Token ids whose text was released (counted as completion tokens).
    pub released_ids: u64,
}

impl TokenDecoder {
    /// Decodes one chunk of ids (with optional logprobs, one per id, already validated).
    pub fn decode(
        &mut self,
        tokenizer: &dyn TokenText,
        ids: &[u32],
        logprobs: Option<&[TokenLogprobs]>,
    ) -> DecodedChunk {
        let mut result = DecodedChunk::default();
        let mut current = Piece::default();
        let mut has_current = false;
        for (position, &id) in ids.iter().enumerate() {
            let bytes = tokenizer.token_bytes(id).unwrap_or_default();
            let entry = logprobs
                .and_then(|all| all.get(position))
                .map(|(logprob, top)| LogprobEntry {
                    token: token_display(bytes),
                    logprob: *logprob,
                    bytes: bytes.to_vec(),
                    top_logprobs: top
                        .iter()
                        .map(|(top_id, top_logprob)| {
                            let top_bytes = tokenizer.token_bytes(*top_id).unwrap_or_default();
                            TopLogprobEntry {
                                token: token_display(top_bytes),
                                logprob: *top_logprob,
                                bytes: top_bytes.to_vec(),
                            }
                        })
                        .collect(),
                });
            if tokenizer.is_special(id) {
                if self.pending_ids > 0 {
                    let text = String::from_utf8_lossy(&self.pending_bytes).into_owned();
                    current.text.push_str(&text);
                    current.logprobs.append(&mut self.pending_logprobs);
                    result.released_ids += self.pending_ids;
                    self.pending_bytes.clear();
                    self.pending_ids = 0;
                    has_current = true;
                }
                if has_current {
                    result.pieces.push(std::mem::take(&mut current));
                    has_current = false;
                }
                let special = Piece {
                    text: String::from_utf8_lossy(bytes).into_owned(),
                    logprobs: entry.into_iter().collect(),
                };
                result.pieces.push(special);
                result.released_ids += 1;
                continue;
            }
            self.pending_bytes.extend_from_slice(bytes);
            self.pending_logprobs.extend(entry);
            self.pending_ids += 1;
            let text = String::from_utf8_lossy(&self.pending_bytes);
            if !text.is_empty() && !text.ends_with('\u{FFFD}') {
                current.text.push_str(&text);
                current.logprobs.append(&mut self.pending_logprobs);
                result.released_ids += self.pending_ids;
                self.pending_bytes.clear();
                self.pending_ids = 0;
                has_current = true;
            }
        }
        if has_current {
            result.pieces.push(current);
        }
        result
    }
}
