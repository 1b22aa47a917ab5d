//! The whole-token table: the tokens whose own bytes, merged as one word, give exactly that token.
//!
//! Most words of ordinary text are whole tokens, so a word seen for the first time usually costs
//! one lookup here instead of a merge loop. Keys are packed into integers, so a lookup reads no
//! other memory: words of up to [`PACKED_WORD_MAX`] bytes (most words) as one `u64` in an
//! [`IntTable`], longer ones up to [`SHORT_WORD_MAX`] bytes as a [`ShortWord`].

use rustc_hash::FxHashMap;

use super::int_table::IntTable;

/// Words up to this many bytes can be whole tokens (the size of a [`ShortWord`]).
pub(super) const SHORT_WORD_MAX: usize = 16;
/// Words of up to this many bytes are keyed by one `u64` in the whole-token table.
const PACKED_WORD_MAX: usize = 7;

/// The whole-token table, in two parts so that most lookups read a small table: words of up to
/// [`PACKED_WORD_MAX`] bytes (most words) keyed by one integer, longer ones by a [`ShortWord`].
#[derive(Debug, Default)]
pub(super) struct WholeTokens {
    packed: IntTable,
    longer: FxHashMap<ShortWord, u32>,
}

impl WholeTokens {
    /// The whole token spelled `word`, if any.
    #[inline]
    pub(super) fn get(&self, word: &[u8]) -> Option<u32> {
        if let Some(key) = packed_word(word) {
            // Values are ids, which fit in u32.
            return self.packed.get(key).map(|id| id as u32);
        }
        self.longer.get(&ShortWord::new(word)?).copied()
    }

    /// The table of `tokens` (each word with its id); words over [`SHORT_WORD_MAX`] bytes are
    /// left out.
    pub(super) fn new<'a>(tokens: impl IntoIterator<Item = (&'a [u8], u32)>) -> Self {
        let mut packed = Vec::new();
        let mut longer = FxHashMap::default();
        for (word, id) in tokens {
            if let Some(key) = packed_word(word) {
                packed.push((key, u64::from(id)));
            } else if let Some(key) = ShortWord::new(word) {
                longer.insert(key, id);
            }
        }
        Self {
            packed: IntTable::new(packed),
            longer,
        }
    }

    /// The ids of every whole token.
    #[cfg(test)]
    pub(super) fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        let packed = self.packed.values().map(|id| id as u32);
        packed.chain(self.longer.values().copied())
    }
}

/// A word of at most [`PACKED_WORD_MAX`] bytes as one integer (little-endian bytes, its length in
/// the top byte), or `None` for a longer word. Built from two overlapping loads, not a copy.
#[inline]
fn packed_word(word: &[u8]) -> Option<u64> {
    let len = word.len();
    let bytes = match len {
        0 => 0,
        1 => u64::from(word[0]),
        2..=3 => {
            let head = u16::from_le_bytes([word[0], word[1]]);
            let tail = u16::from_le_bytes([word[len - 2], word[len - 1]]);
            u64::from(head) | u64::from(tail) << (8 * (len - 2))
        }
        4..=PACKED_WORD_MAX => {
            let head = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
            let tail =
                u32::from_le_bytes([word[len - 4], word[len - 3], word[len - 2], word[len - 1]]);
            u64::from(head) | u64::from(tail) << (8 * (len - 4))
        }
        _ => return None,
    };
    Some(bytes | (len as u64) << 56)
}

/// A word of at most [`SHORT_WORD_MAX`] bytes packed into integers: its bytes, zero-padded, and
/// its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct ShortWord {
    bytes: [u64; 2],
    len: u8,
}

impl ShortWord {
    /// The packed `word`, if it is short enough.
    #[inline]
    fn new(word: &[u8]) -> Option<Self> {
        let mut bytes = [0u8; SHORT_WORD_MAX];
        bytes.get_mut(..word.len())?.copy_from_slice(word);
        let (low, high) = bytes.split_at(8);
        let half = |half: &[u8]| u64::from_le_bytes(half.try_into().unwrap_or_default());
        Some(Self {
            bytes: [half(low), half(high)],
            // At most SHORT_WORD_MAX.
            len: word.len() as u8,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_token_keys_tell_every_length_apart() {
        let words: [&[u8]; 8] = [
            b"a\0",
            b"a\0\0",
            b"abcdefg",
            b"abcdefg\0",
            b"abcdefgh",
            b"abcdefghijklmnop",
            b"abcdefghijklmno",
            b"abcdefghijklmno\0",
        ];
        let too_long: &[u8] = b"abcdefghijklmnopq";
        let table = WholeTokens::new(
            words
                .iter()
                .enumerate()
                .map(|(id, &word)| (word, id as u32))
                .chain([(too_long, 99)]),
        );
        for (id, word) in words.iter().enumerate() {
            assert_eq!(table.get(word), Some(id as u32), "{word:?}");
        }
        assert_eq!(table.get(b"a"), None);
        assert_eq!(table.get(too_long), None);
        assert_eq!(table.ids().count(), words.len());
    }

    #[test]
    fn packed_words_are_their_bytes_and_length() {
        let bytes = [0xF0, 0x9F, 0x98, 0x80, b'a', 0, 0xFF, b'z'];
        for start in 0..bytes.len() {
            for end in start..=bytes.len() {
                let word = &bytes[start..end];
                let mut expected = [0u8; 8];
                expected[..word.len()].copy_from_slice(word);
                expected[7] = word.len() as u8;
                let expected =
                    (word.len() <= PACKED_WORD_MAX).then(|| u64::from_le_bytes(expected));
                assert_eq!(packed_word(word), expected, "{word:?}");
            }
        }
    }
}
