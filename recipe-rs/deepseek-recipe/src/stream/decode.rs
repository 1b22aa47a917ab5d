//! Token input: incremental, UTF-8-safe decoding of token ids into parser pieces.

use std::borrow::Cow;

use super::inference::TokenLogprobs;
use super::logprobs::{token_display, LogprobEntry, TopLogprobEntry};
use super::parser::PieceKind;

/// Pending bytes beyond this are released lossily, so byte soup cannot grow memory without bound.
/// The reference holds any run whose text ends in an incomplete character, however long (a whole
/// chunk of ordinary tokens ending mid-character stays pending), so the bound is far above what
/// a backend sends in one chunk.
pub const MAX_PENDING_BYTES: usize = 1 << 20;
/// Pending ids beyond this lose their log probabilities (memory bound on runs of invalid ids).
pub const MAX_PENDING_LOGPROBS: usize = 1 << 16;

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
    /// The text of the piece being built (reused between chunks).
    text: String,
}

/// The pending bytes as text: borrowed when valid UTF-8, else decoded lossily.
fn pending_text(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

impl TokenDecoder {
    /// Whether the pending bytes decode to text that can be released: non-empty and not ending
    /// in an incomplete (or invalid) sequence, nor in U+FFFD itself. Only the last character is
    /// looked at: UTF-8 decoding resynchronises at every lead byte.
    fn text_complete(&self) -> bool {
        let bytes = &self.pending_bytes;
        let lead = bytes
            .iter()
            .rev()
            .take(4)
            .position(|byte| byte & 0xC0 != 0x80)
            .map(|back| bytes.len() - 1 - back);
        lead.is_some_and(|lead| {
            std::str::from_utf8(&bytes[lead..]).is_ok_and(|last| last != "\u{FFFD}")
        })
    }

    /// Moves everything pending (decoded lossily) into the current piece; returns the number
    /// of ids released.
    fn release(&mut self, logprobs: &mut Vec<LogprobEntry>) -> u64 {
        self.text.push_str(&pending_text(&self.pending_bytes));
        // Entries are reported only when every released id has one.
        if self.pending_logprobs.iter().all(Option::is_some) {
            logprobs.extend(self.pending_logprobs.drain(..).flatten());
        } else {
            self.pending_logprobs.clear();
        }
        self.pending_bytes.clear();
        std::mem::take(&mut self.pending_ids)
    }

    /// Decodes one chunk of ids (with optional logprobs, one per id, already validated) and
    /// hands every piece it completes, in order, to `emit` as `(text, logprobs, kind)`: a run of
    /// ordinary tokens is one piece, each special token another. `emit` returns whether to go on;
    /// once it says no (the output ended, e.g. at a stop sequence) the rest of the chunk is
    /// dropped. Returns the number of ids whose text was released (counted as completion
    /// tokens).
    pub fn decode_each(
        &mut self,
        tokenizer: &dyn TokenText,
        ids: &[u32],
        logprobs: Option<&[TokenLogprobs]>,
        mut emit: impl FnMut(&str, Vec<LogprobEntry>, PieceKind) -> bool,
    ) -> u64 {
        let mut released = 0;
        let mut current_logprobs = Vec::new();
        let mut has_current = false;
        self.text.clear();
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
                let mut carried = Some(Vec::new());
                if self.pending_ids > 0 {
                    let complete = self.pending_logprobs.iter().all(Option::is_some);
                    released += self.release(&mut current_logprobs);
                    has_current = true;
                    if self.text.is_empty() {
                        // Ids that decode to nothing (unknown ids) make no piece of their own:
                        // they join the special token's, log probabilities included.
                        carried = complete.then(|| std::mem::take(&mut current_logprobs));
                    }
                }
                if has_current && !self.text.is_empty() {
                    let logprobs = std::mem::take(&mut current_logprobs);
                    let go_on = emit(&self.text, logprobs, PieceKind::Tokens);
                    if !go_on {
                        return released;
                    }
                }
                current_logprobs.clear();
                self.text.clear();
                has_current = false;
                let logprobs = match (carried, entry) {
                    (Some(mut entries), Some(entry)) => {
                        entries.push(entry);
                        entries
                    }
                    _ => Vec::new(),
                };
                released += 1;
                if !emit(&pending_text(bytes), logprobs, PieceKind::SpecialToken) {
                    return released;
                }
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
                released += self.release(&mut current_logprobs);
                has_current = true;
            }
        }
        if has_current {
            emit(&self.text, current_logprobs, PieceKind::Tokens);
        }
        self.text.clear();
        released
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ids 0..=255 are the single bytes, 300 is a special token, anything else is unknown.
    struct Bytes;

    const SPECIAL: u32 = 300;

    impl TokenText for Bytes {
        fn token_bytes(&self, id: u32) -> Option<Cow<'_, [u8]>> {
            match id {
                0..=255 => Some(Cow::Owned(vec![u8::try_from(id).ok()?])),
                SPECIAL => Some(Cow::Borrowed(b"<special>")),
                _ => None,
            }
        }

        fn is_special(&self, id: u32) -> bool {
            id == SPECIAL
        }

        fn count_tokens(&self, text: &str) -> usize {
            text.len()
        }
    }

    fn decode(decoder: &mut TokenDecoder, ids: &[u32]) -> (Vec<(String, PieceKind)>, u64) {
        let mut pieces = Vec::new();
        let released = decoder.decode_each(&Bytes, ids, None, |text, _, kind| {
            pieces.push((text.to_owned(), kind));
            true
        });
        (pieces, released)
    }

    #[test]
    fn a_run_ending_mid_character_stays_pending_however_long() {
        let mut decoder = TokenDecoder::default();
        let mut ids: Vec<u32> = std::iter::repeat_n(u32::from(b'a'), 200).collect();
        ids.push(0xF0);
        assert_eq!(decode(&mut decoder, &ids), (Vec::new(), 0));
        let (pieces, released) = decode(&mut decoder, &[0x9F, 0x98, 0x80]);
        assert_eq!(released, 204);
        assert_eq!(
            pieces,
            [(format!("{}😀", "a".repeat(200)), PieceKind::Tokens)]
        );
    }

    #[test]
    fn text_ending_in_the_replacement_character_stays_pending() {
        let mut decoder = TokenDecoder::default();
        assert_eq!(decode(&mut decoder, &[0xEF, 0xBF, 0xBD]), (Vec::new(), 0));
        let (pieces, _) = decode(&mut decoder, &[u32::from(b'x')]);
        assert_eq!(pieces, [("\u{FFFD}x".to_owned(), PieceKind::Tokens)]);
    }

    #[test]
    fn unknown_ids_give_their_log_probabilities_to_the_special_token() {
        let mut decoder = TokenDecoder::default();
        let logprobs = [(-0.25, Vec::new()), (-0.5, Vec::new())];
        let mut pieces = Vec::new();
        decoder.decode_each(
            &Bytes,
            &[999, SPECIAL],
            Some(&logprobs),
            |text, entries, _| {
                pieces.push((text.to_owned(), entries.len()));
                true
            },
        );
        assert_eq!(pieces, [("<special>".to_owned(), 2)]);
    }

    #[test]
    fn unknown_ids_before_a_special_token_are_counted_without_a_piece() {
        let mut decoder = TokenDecoder::default();
        let (pieces, released) = decode(&mut decoder, &[999, SPECIAL]);
        assert_eq!(released, 2);
        assert_eq!(pieces, [("<special>".to_owned(), PieceKind::SpecialToken)]);
    }
}
