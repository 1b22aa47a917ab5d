//! [`TokenText`] over the crate's [`Tokenizer`]: token bytes, special tokens, reasoning counts.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};

use super::decode::TokenText;
use crate::tokenizer::Tokenizer;

/// Memo states of the special-token check.
const UNKNOWN: u8 = 0;
const NORMAL: u8 = 1;
const SPECIAL: u8 = 2;

/// A shared, thread-safe token-text source, as a [`StreamProcessor`](super::StreamProcessor)
/// holds it.
pub type SharedTokenText = Arc<dyn TokenText + Send + Sync>;

/// A tokenizer seen as [`TokenText`]. Whether an id is an added (special) token is decided on
/// first sight and remembered, so share one instance (see [`SharedTokenText`]) across streams.
#[derive(Debug)]
pub struct TokenizerText {
    tokenizer: Tokenizer,
    special: Vec<AtomicU8>,
    /// Every token's byte-level bytes, built on first use.
    bytes: OnceLock<ByteTable>,
}

/// The bytes of every token, concatenated: token `id` is `bytes[ends[id - 1]..ends[id]]`, so
/// looking a token up is two loads and no allocation.
#[derive(Debug)]
struct ByteTable {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl ByteTable {
    /// Maps every spelling of `tokenizer` through the byte-level alphabet (spellings with a
    /// character outside it, such as added tokens, stay as their UTF-8 bytes).
    fn new(tokenizer: &Tokenizer) -> Self {
        let byte_of = byte_level_table();
        let mut table = Self {
            bytes: Vec::new(),
            ends: Vec::with_capacity(tokenizer.vocab_size()),
        };
        for id in 0..tokenizer.vocab_size() {
            let spelling = u32::try_from(id)
                .ok()
                .and_then(|id| tokenizer.id_to_token(id))
                .unwrap_or_default();
            let start = table.bytes.len();
            for ch in spelling.chars() {
                match byte_of.get(ch as usize).copied().flatten() {
                    Some(byte) => table.bytes.push(byte),
                    None => {
                        table.bytes.truncate(start);
                        table.bytes.extend_from_slice(spelling.as_bytes());
                        break;
                    }
                }
            }
            table.ends.push(table.bytes.len());
        }
        table
    }

    fn get(&self, id: usize) -> &[u8] {
        let start = if id == 0 { 0 } else { self.ends[id - 1] };
        &self.bytes[start..self.ends[id]]
    }
}

/// The byte each GPT-2 byte-level alphabet character (all below U+0144) stands for.
fn byte_level_table() -> Vec<Option<u8>> {
    (0u32..0x144)
        .map(|code| char::from_u32(code).and_then(byte_level_byte))
        .collect()
}

impl TokenizerText {
    /// Wraps `tokenizer` (a cheap handle; clone it to share).
    pub fn new(tokenizer: Tokenizer) -> Self {
        let special = (0..tokenizer.vocab_size())
            .map(|_| AtomicU8::new(UNKNOWN))
            .collect();
        Self {
            tokenizer,
            special,
            bytes: OnceLock::new(),
        }
    }

    /// Wraps `tokenizer` as a [`SharedTokenText`].
    pub fn shared(tokenizer: Tokenizer) -> SharedTokenText {
        Arc::new(Self::new(tokenizer))
    }

    /// The bundled DeepSeek V4 tokenizer, one instance shared by every stream.
    pub fn deepseek_v4() -> SharedTokenText {
        static TEXT: OnceLock<SharedTokenText> = OnceLock::new();
        TEXT.get_or_init(|| Self::shared(Tokenizer::deepseek_v4().clone()))
            .clone()
    }
}

/// The byte a GPT-2 byte-level alphabet character stands for.
fn byte_level_byte(ch: char) -> Option<u8> {
    let code = ch as u32;
    let printable = |b: u32| {
        (0x21..=0x7E).contains(&b) || (0xA1..=0xAC).contains(&b) || (0xAE..=0xFF).contains(&b)
    };
    if printable(code) {
        return u8::try_from(code).ok();
    }
    // The other 68 bytes map, in byte order, to U+0100 onwards.
    let index = code.checked_sub(0x100)?;
    (0u32..=255)
        .filter(|b| !printable(*b))
        .nth(index as usize)
        .and_then(|b| u8::try_from(b).ok())
}

impl TokenText for TokenizerText {
    fn token_bytes(&self, id: u32) -> Option<Cow<'_, [u8]>> {
        let spelling = self.tokenizer.id_to_token(id)?;
        if self.is_special(id) {
            return Some(Cow::Borrowed(spelling.as_bytes()));
        }
        let table = self.bytes.get_or_init(|| ByteTable::new(&self.tokenizer));
        Some(Cow::Borrowed(table.get(id as usize)))
    }

    fn is_special(&self, id: u32) -> bool {
        let Some(memo) = self.special.get(id as usize) else {
            return false;
        };
        match memo.load(Ordering::Relaxed) {
            NORMAL => false,
            SPECIAL => true,
            _ => {
                let special = self.tokenizer.id_to_token(id).is_some_and(|spelling| {
                    self.tokenizer.encode(spelling, true) == [id]
                        && self.tokenizer.encode(spelling, false) != [id]
                });
                memo.store(if special { SPECIAL } else { NORMAL }, Ordering::Relaxed);
                special
            }
        }
    }

    fn count_tokens(&self, text: &str) -> usize {
        self.tokenizer.count(text, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_and_special_tokens() {
        let text = TokenizerText::deepseek_v4();
        let think_end = Tokenizer::deepseek_v4()
            .token_to_id("</think>")
            .expect("</think> exists");
        assert!(text.is_special(think_end));
        assert_eq!(
            text.token_bytes(think_end).as_deref(),
            Some(&b"</think>"[..])
        );
        let space_the = Tokenizer::deepseek_v4()
            .token_to_id("\u{120}the")
            .expect("Ġthe exists");
        assert!(!text.is_special(space_the));
        assert_eq!(text.token_bytes(space_the).as_deref(), Some(&b" the"[..]));
        assert_eq!(text.token_bytes(99_999_999), None);
        assert_eq!(byte_level_byte('\u{100}'), Some(0));
        assert_eq!(byte_level_byte('\u{143}'), Some(0xAD));
    }
}
