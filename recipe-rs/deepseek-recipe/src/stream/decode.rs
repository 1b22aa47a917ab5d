//! Token input: incremental, UTF-8-safe decoding of token ids into parser pieces.

use std::borrow::Cow;

use super::inference::TokenLogprobs;
use super::logprobs::{token_display, LogprobEntry, TopLogprobEntry};
use super::parser::Piece;

/// Pending bytes beyond this are released lossily (a UTF-8 character needs at most 4), so byte
/// soup cannot grow memory.
pub const MAX_PENDING_BYTES: usize = 64;
/// Pending ids beyond this lose their log probabilities (memory bound on runs of invalid ids).
pub const MAX_PENDING_LOGPROBS: usize = 4096;

/// What the stream processor needs from a tokenizer.
pub trait TokenText {
    /// The bytes token `id` decodes to (special tokens: their literal spelling); `None` for
    /// ids outside the vocabulary.
    fn token_bytes(&self, id: u32) -> Option<Cow<'_, [u8]>>;
    /// Whether `id` is a special (added-vocabulary) token.
    fn is_special(&self, id: u32) -> bool;
    /// Number of tokens `text` encodes to with the full vocabulary.
    fn count_tokens(&self, text: &str) -> usize;
}

/// Ids whose text is not complete yet (empty, or ending in an incomplete UTF-8 sequence).
#[derive(Debug, Clone, Default)]
pub struct TokenDecoder {
    pending_bytes: Vec<u8>,
    /// Log probability of each pending id (`None` when its chunk carried none).
    pending_logprobs: Vec<Option<LogprobEntry>>,
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
    /// Whether the pending bytes decode to text that can be released: non-empty and not ending
    /// in an incomplete (or invalid) sequence.
    fn text_complete(&self) -> bool {
        let text = String::from_utf8_lossy(&self.pending_bytes);
        !text.is_empty() && !text.ends_with('\u{FFFD}')
    }

    /// Moves everything pending (decoded lossily) into `piece`.
    fn release(&mut self, piece: &mut Piece, result: &mut DecodedChunk) {
        piece
            .text
            .push_str(&String::from_utf8_lossy(&self.pending_bytes));
        // Entries are reported only when every released id has one.
        let entries: Option<Vec<LogprobEntry>> = self.pending_logprobs.drain(..).collect();
        piece.logprobs.extend(entries.into_iter().flatten());
        result.released_ids += self.pending_ids;
        self.pending_bytes.clear();
        self.pending_ids = 0;
    }

    /// Decodes one chunk of ids (with optional logprobs, one per id, already validated).
    pub fn decode(
        &mut self,
        tokenizer: &dyn TokenText,
        ids: &[u32],
        logprobs: Option<&[TokenLogprobs]>,
    ) -> DecodedChunk {
        let mut result = DecodedChunk::default();
        let mut current = Piece {
            from_tokens: true,
            ..Piece::default()
        };
        let mut has_current = false;
        for (position, &id) in ids.iter().enumerate() {
            let bytes = tokenizer.token_bytes(id).unwrap_or_default();
            let bytes = bytes.as_ref();
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
                            let top_bytes = top_bytes.as_ref();
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
                    self.release(&mut current, &mut result);
                    has_current = true;
                }
                if has_current {
                    let empty = Piece {
                        from_tokens: true,
                        ..Piece::default()
                    };
                    result.pieces.push(std::mem::replace(&mut current, empty));
                    has_current = false;
                }
                let special = Piece {
                    text: String::from_utf8_lossy(bytes).into_owned(),
                    logprobs: entry.into_iter().collect(),
                    from_tokens: true,
                };
                result.pieces.push(special);
                result.released_ids += 1;
                continue;
            }
            self.pending_bytes.extend_from_slice(bytes);
            self.pending_logprobs.push(entry);
            if self.pending_logprobs.len() > MAX_PENDING_LOGPROBS {
                // Memory bound: such a long pending run reports no log probabilities.
                self.pending_logprobs.clear();
                self.pending_logprobs.push(None);
            }
            self.pending_ids += 1;
            let run_ends = ids
                .get(position + 1)
                .is_none_or(|&next| tokenizer.is_special(next));
            let overflow = self.pending_bytes.len() > MAX_PENDING_BYTES;
            if run_ends && (overflow || self.text_complete()) {
                self.release(&mut current, &mut result);
                has_current = true;
            }
        }
        if has_current {
            result.pieces.push(current);
        }
        result
    }
}
