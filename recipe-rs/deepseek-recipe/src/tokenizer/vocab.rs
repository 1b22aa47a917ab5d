//! The vocabulary: each id's spelling and the bytes it decodes to, and the id of each spelling.
//!
//! Held in a few flat allocations (every spelling in one string, every token's bytes in one
//! buffer, each indexed by end offsets, and the ids sorted by spelling) rather than three small
//! allocations per token: for DeepSeek V4's 129,280 tokens about 3.5 MB in a few blocks instead
//! of 13 MB in 389K blocks (a loaded tokenizer: 12.5 MB of live heap instead of 22.8 MB).

use rustc_hash::FxHashMap;

use super::bytelevel::char_byte;
use crate::{Error, Result};

/// The spellings and bytes of every token id, and the id of every spelling.
#[derive(Debug, Default)]
pub(super) struct Vocab {
    /// Every id's spelling, in id order (an id without a token adds nothing).
    spellings: Box<str>,
    /// Where each id's spelling ends in `spellings`; it starts where the previous id's ends.
    spelling_ends: Box<[u32]>,
    /// Every id's bytes, in id order.
    bytes: Box<[u8]>,
    /// Where each id's bytes end in `bytes`.
    byte_ends: Box<[u32]>,
    /// Whether a token has each id.
    present: Box<[bool]>,
    /// The ids a spelling names whose own spelling it is, sorted by spelling.
    by_spelling: Box<[u32]>,
    /// Spellings naming an id whose own spelling is another one (two tokens of one id in the
    /// file), sorted.
    aliases: Box<[(Box<str>, u32)]>,
}

impl Vocab {
    /// The vocabulary of ids `0..size` from `(spelling, id)` entries. Of entries with the same id
    /// the last gives the id's spelling; of entries with the same spelling the last gives its id.
    ///
    /// # Errors
    /// [`Error::Tokenizer`] when an id is not below `size` or the spellings pass 4 GiB.
    pub(super) fn new<'a>(
        size: usize,
        entries: impl IntoIterator<Item = (&'a str, u32)>,
    ) -> Result<Self> {
        let mut own: Vec<Option<&str>> = vec![None; size];
        let mut ids: FxHashMap<&str, u32> = FxHashMap::default();
        for (spelling, id) in entries {
            *own.get_mut(id as usize).ok_or_else(|| {
                Error::Tokenizer(format!("token id {id} is outside the vocabulary"))
            })? = Some(spelling);
            ids.insert(spelling, id);
        }
        let mut spellings = String::new();
        let mut bytes = Vec::new();
        let mut spelling_ends = Vec::with_capacity(size);
        let mut byte_ends = Vec::with_capacity(size);
        for spelling in &own {
            let spelling = spelling.unwrap_or("");
            spellings.push_str(spelling);
            push_decoded(spelling, &mut bytes);
            spelling_ends.push(offset(spellings.len())?);
            byte_ends.push(offset(bytes.len())?);
        }
        let mut by_spelling = Vec::with_capacity(ids.len());
        let mut aliases = Vec::new();
        for (spelling, id) in ids {
            if own[id as usize] == Some(spelling) {
                by_spelling.push(id);
            } else {
                aliases.push((Box::from(spelling), id));
            }
        }
        by_spelling.sort_unstable_by_key(|&id| own[id as usize]);
        aliases.sort_unstable();
        Ok(Self {
            spellings: spellings.into_boxed_str(),
            spelling_ends: spelling_ends.into_boxed_slice(),
            bytes: bytes.into_boxed_slice(),
            byte_ends: byte_ends.into_boxed_slice(),
            present: own.iter().map(Option::is_some).collect(),
            by_spelling: by_spelling.into_boxed_slice(),
            aliases: aliases.into_boxed_slice(),
        })
    }

    /// One more than the largest id.
    pub(super) fn len(&self) -> usize {
        self.present.len()
    }

    /// The spelling of token `id`, if a token has it.
    #[inline]
    pub(super) fn spelling(&self, id: u32) -> Option<&str> {
        let range = self.range(&self.spelling_ends, id)?;
        self.spellings.get(range)
    }

    /// The bytes token `id` decodes to, if a token has it.
    #[inline]
    pub(super) fn bytes(&self, id: u32) -> Option<&[u8]> {
        let range = self.range(&self.byte_ends, id)?;
        self.bytes.get(range)
    }

    /// The bytes token `id` decodes to, if a token has it, followed by the bytes of the tokens
    /// after it: `(run, len)` where the token's bytes are `run[..len]`. A copy of a short token
    /// can then move a fixed-size block (one instruction) instead of calling `memcpy`.
    #[inline]
    pub(super) fn bytes_onward(&self, id: u32) -> Option<(&[u8], usize)> {
        let range = self.range(&self.byte_ends, id)?;
        let len = range.len();
        Some((self.bytes.get(range.start..)?, len))
    }

    /// Every token's id and bytes, in id order.
    pub(super) fn all_bytes(&self) -> impl Iterator<Item = (u32, &[u8])> {
        // Ids fit in u32: `new` takes them as u32.
        (0..self.len() as u32).filter_map(|id| Some((id, self.bytes(id)?)))
    }

    /// The id of the token spelled `spelling`.
    pub(super) fn id(&self, spelling: &str) -> Option<u32> {
        let own = self
            .by_spelling
            .binary_search_by(|&id| self.spelling(id).unwrap_or_default().cmp(spelling));
        match own {
            Ok(at) => Some(self.by_spelling[at]),
            Err(_) => self
                .aliases
                .binary_search_by(|(alias, _)| alias.as_ref().cmp(spelling))
                .ok()
                .map(|at| self.aliases[at].1),
        }
    }

    fn range(&self, ends: &[u32], id: u32) -> Option<std::ops::Range<usize>> {
        let id = id as usize;
        if !*self.present.get(id)? {
            return None;
        }
        let start = match id {
            0 => 0,
            _ => ends[id - 1] as usize,
        };
        Some(start..ends[id] as usize)
    }
}

/// Appends the bytes a token spelled `spelling` decodes to, as the reference's byte-level decoder
/// does: the bytes its characters spell when every character spells one, else its own UTF-8.
fn push_decoded(spelling: &str, out: &mut Vec<u8>) {
    let start = out.len();
    for char in spelling.chars() {
        match char_byte(char) {
            Some(byte) => out.push(byte),
            None => {
                out.truncate(start);
                out.extend_from_slice(spelling.as_bytes());
                return;
            }
        }
    }
}

fn offset(len: usize) -> Result<u32> {
    u32::try_from(len).map_err(|_| Error::Tokenizer("token spellings past 4 GiB".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_bytes_and_ids_are_found_by_each_other() {
        let vocab = Vocab::new(6, [("Ġhi", 0), ("a", 2), ("<｜User｜>", 3), ("", 5)]).unwrap();
        assert_eq!(vocab.len(), 6);
        assert_eq!(vocab.spelling(0), Some("Ġhi"));
        assert_eq!(vocab.bytes(0), Some(&b" hi"[..]));
        assert_eq!(vocab.bytes(3), Some("<｜User｜>".as_bytes()));
        assert_eq!((vocab.spelling(1), vocab.bytes(1)), (None, None));
        assert_eq!((vocab.spelling(4), vocab.spelling(6)), (None, None));
        assert_eq!(
            (vocab.spelling(5), vocab.bytes(5)),
            (Some(""), Some(&b""[..]))
        );
        for (spelling, id) in [("Ġhi", 0), ("a", 2), ("<｜User｜>", 3), ("", 5)] {
            assert_eq!(vocab.id(spelling), Some(id), "{spelling}");
        }
        assert_eq!(vocab.id("b"), None);
        let ids: Vec<u32> = vocab.all_bytes().map(|(id, _)| id).collect();
        assert_eq!(ids, [0, 2, 3, 5]);
    }

    #[test]
    fn later_entries_win_for_an_id_and_for_a_spelling() {
        // "a" is named twice (the added token's id wins); id 1 is spelled twice (the last wins),
        // and its first spelling still names it.
        let vocab = Vocab::new(4, [("a", 0), ("b", 1), ("c", 1), ("a", 3)]).unwrap();
        assert_eq!(vocab.id("a"), Some(3));
        assert_eq!(vocab.spelling(0), Some("a"));
        assert_eq!(vocab.spelling(1), Some("c"));
        assert_eq!((vocab.id("b"), vocab.id("c")), (Some(1), Some(1)));
        assert!(Vocab::new(2, [("x", 2)]).is_err());
    }
}
