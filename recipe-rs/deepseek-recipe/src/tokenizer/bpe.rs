//! Byte-level BPE: merge-rank table, the merge loop and the per-call word cache.
//!
//! Merging follows the reference exactly: repeatedly merge the adjacent pair with the lowest merge
//! rank, the leftmost one among equal ranks, until no adjacent pair has a merge. Short words use a
//! linear scan over a small array; long words (long runs of one character, long space runs) use a
//! binary heap over a linked list, so that a word of `n` bytes costs `O(n log n)`.
//!
//! Before merging, a word is looked up in the table of whole tokens (the tokens of at most 16
//! bytes whose own bytes merge into exactly that token, checked once when the table is built;
//! keys are packed into integers, so a lookup reads no other memory) and then in the word cache
//! of the [`EncodeState`], which the tokenizer keeps per thread across calls. Most words of
//! ordinary text are whole tokens or were merged before, so a word usually costs one or two
//! lookups instead of a merge loop (each merge step is a lookup in a table of megabytes).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

/// Words up to this many bytes are merged with the linear scan.
const LINEAR_SCAN_MAX: usize = 64;
/// Words up to this many bytes are remembered in the word cache.
const CACHED_WORD_MAX: usize = 128;
/// The word cache is emptied when it holds this many words (it lives as long as its thread).
const CACHE_CAPACITY: usize = 1 << 15;
/// Words up to this many bytes can be whole tokens (the size of a [`ShortWord`]).
const SHORT_WORD_MAX: usize = 16;
/// Marks a removed heap-path symbol or a missing neighbour.
const NONE: u32 = u32::MAX;

/// One merge: its rank (lower merges first) and the id of the merged token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Merge {
    /// The merge's line number in `merges`.
    pub(super) rank: u32,
    /// The id of the token the pair becomes.
    pub(super) id: u32,
}

impl Merge {
    /// Rank and id packed so that comparing packed values compares ranks first.
    #[inline]
    fn packed(self) -> u64 {
        (u64::from(self.rank) << 32) | u64::from(self.id)
    }
}

/// The BPE model: the id of every byte, the merge table and the whole-token table.
#[derive(Debug)]
pub(super) struct Bpe {
    byte_ids: [u32; 256],
    merges: FxHashMap<u64, Merge>,
    /// Tokens of at most [`SHORT_WORD_MAX`] bytes whose bytes, merged as one word, give exactly
    /// that token.
    whole_tokens: WholeTokens,
}

/// Words of up to this many bytes are keyed by one `u64` in the whole-token table.
const PACKED_WORD_MAX: usize = 7;

/// The whole-token table, in two parts so that most lookups read a small table: words of up to
/// [`PACKED_WORD_MAX`] bytes (most words) keyed by one integer, longer ones by a [`ShortWord`].
#[derive(Debug, Default)]
struct WholeTokens {
    packed: FxHashMap<u64, u32>,
    longer: FxHashMap<ShortWord, u32>,
}

impl WholeTokens {
    /// The whole token spelled `word`, if any.
    #[inline]
    fn get(&self, word: &[u8]) -> Option<u32> {
        if word.len() <= PACKED_WORD_MAX {
            return self.packed.get(&packed_word(word)).copied();
        }
        self.longer.get(&ShortWord::new(word)?).copied()
    }

    /// Records `word` (at most [`SHORT_WORD_MAX`] bytes) as the whole token `id`.
    fn insert(&mut self, word: &[u8], id: u32) {
        if word.len() <= PACKED_WORD_MAX {
            self.packed.insert(packed_word(word), id);
        } else if let Some(key) = ShortWord::new(word) {
            self.longer.insert(key, id);
        }
    }

    /// The ids of every whole token.
    #[cfg(test)]
    fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.packed.values().chain(self.longer.values()).copied()
    }
}

/// A word of at most [`PACKED_WORD_MAX`] bytes as one integer: its bytes, then its length in the
/// top byte.
#[inline]
fn packed_word(word: &[u8]) -> u64 {
    let mut bytes = [0u8; 8];
    bytes[..word.len()].copy_from_slice(word);
    bytes[7] = word.len() as u8;
    u64::from_le_bytes(bytes)
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

/// Reusable buffers and the word cache of the merge loop, for one tokenizer on one thread.
#[derive(Default)]
pub(super) struct EncodeState {
    symbols: Vec<u32>,
    ranks: Vec<u64>,
    nodes: Vec<Node>,
    /// Pending merges of the heap path as `rank << 32 | position`: the lowest rank pops first,
    /// the leftmost among equal ranks.
    heap: BinaryHeap<Reverse<u64>>,
    /// Merged words: where their ids start in `cached_ids` and how many there are.
    cache: FxHashMap<Box<[u8]>, (u32, u32)>,
    cached_ids: Vec<u32>,
}

/// A symbol of the heap path, linked to its neighbours.
#[derive(Debug, Clone, Copy)]
struct Node {
    id: u32,
    prev: u32,
    next: u32,
}

#[inline]
fn pair_key(left: u32, right: u32) -> u64 {
    (u64::from(left) << 32) | u64::from(right)
}

impl EncodeState {
    /// Empties the word cache once it holds more than `words` words, keeping its memory: a
    /// worker's cache, kept over many texts, stays small enough to be read from the CPU cache.
    /// (Clearing costs time in proportion to the cache's size, so it is not done per text.)
    pub(super) fn forget_words_over(&mut self, words: usize) {
        if self.cache.len() > words {
            self.cache.clear();
            self.cached_ids.clear();
        }
    }

    /// Remembers that `word` merges into `ids`, emptying a full cache first.
    fn remember(&mut self, word: &[u8], ids: &[u32]) {
        self.forget_words_over(CACHE_CAPACITY - 1);
        let start = self.cached_ids.len();
        self.cached_ids.extend_from_slice(ids);
        // Both fit: a cached word is at most CACHED_WORD_MAX ids, the cache CACHE_CAPACITY words.
        self.cache
            .insert(word.into(), (start as u32, ids.len() as u32));
    }
}

impl Bpe {
    /// A model from the id of each byte's token and the merges `(left, right) -> merge`.
    pub(super) fn new(byte_ids: [u32; 256], merges: FxHashMap<(u32, u32), Merge>) -> Self {
        let merges = merges
            .into_iter()
            .map(|((left, right), merge)| (pair_key(left, right), merge))
            .collect();
        Self {
            byte_ids,
            merges,
            whole_tokens: WholeTokens::default(),
        }
    }

    /// This model with the whole-token table filled from `token_bytes` (the bytes of every id):
    /// each token of 2 to [`SHORT_WORD_MAX`] bytes is merged as a word and kept when that gives
    /// the token.
    pub(super) fn with_whole_tokens(mut self, token_bytes: &[Box<[u8]>]) -> Self {
        let mut state = EncodeState::default();
        let mut ids = Vec::new();
        let mut whole_tokens = WholeTokens::default();
        for (id, bytes) in token_bytes.iter().enumerate() {
            if !(2..=SHORT_WORD_MAX).contains(&bytes.len()) {
                continue;
            }
            ids.clear();
            self.encode_word(bytes, &mut ids, &mut state);
            // Ids fit in u32: the vocabulary is indexed by u32 ids.
            if ids == [id as u32] {
                whole_tokens.insert(bytes, id as u32);
            }
        }
        self.whole_tokens = whole_tokens;
        self
    }

    #[inline]
    fn merge_of(&self, left: u32, right: u32) -> Option<Merge> {
        self.merges.get(&pair_key(left, right)).copied()
    }

    #[inline]
    fn packed_merge(&self, left: u32, right: u32) -> u64 {
        self.merge_of(left, right).map_or(u64::MAX, Merge::packed)
    }

    /// Appends the ids of one pre-tokenized piece to `out`, through the call's word cache.
    #[inline]
    pub(super) fn encode_piece(&self, piece: &[u8], out: &mut Vec<u32>, state: &mut EncodeState) {
        if let [byte] = piece {
            out.push(self.byte_ids[usize::from(*byte)]);
            return;
        }
        if let Some(id) = self.whole_tokens.get(piece) {
            out.push(id);
            return;
        }
        let cacheable = piece.len() <= CACHED_WORD_MAX;
        if cacheable {
            if let Some(&(start, len)) = state.cache.get(piece) {
                let start = start as usize;
                out.extend_from_slice(&state.cached_ids[start..start + len as usize]);
                return;
            }
        }
        let first = out.len();
        self.encode_word(piece, out, state);
        if cacheable {
            state.remember(piece, &out[first..]);
        }
    }

    /// Appends the BPE ids of `word` (no cache).
    pub(super) fn encode_word(&self, word: &[u8], out: &mut Vec<u32>, state: &mut EncodeState) {
        if word.len() <= LINEAR_SCAN_MAX {
            self.merge_linear(word, out, state);
        } else {
            self.merge_heap(word, out, state);
        }
    }

    fn merge_linear(&self, word: &[u8], out: &mut Vec<u32>, state: &mut EncodeState) {
        let symbols = &mut state.symbols;
        let ranks = &mut state.ranks;
        symbols.clear();
        symbols.extend(word.iter().map(|&byte| self.byte_ids[usize::from(byte)]));
        ranks.clear();
        ranks.extend(
            symbols
                .windows(2)
                .map(|pair| self.packed_merge(pair[0], pair[1])),
        );
        loop {
            let mut best = u64::MAX;
            let mut best_at = 0;
            for (at, &rank) in ranks.iter().enumerate() {
                if rank < best {
                    best = rank;
                    best_at = at;
                }
            }
            if best == u64::MAX {
                break;
            }
            // The low half of a packed merge is the merged id.
            symbols[best_at] = best as u32;
            symbols.remove(best_at + 1);
            ranks.remove(best_at);
            if best_at > 0 {
                ranks[best_at - 1] = self.packed_merge(symbols[best_at - 1], symbols[best_at]);
            }
            if best_at + 1 < symbols.len() {
                ranks[best_at] = self.packed_merge(symbols[best_at], symbols[best_at + 1]);
            }
        }
        out.extend_from_slice(symbols);
    }

    fn merge_heap(&self, word: &[u8], out: &mut Vec<u32>, state: &mut EncodeState) {
        let nodes = &mut state.nodes;
        nodes.clear();
        let last = word.len() - 1;
        nodes.extend(word.iter().enumerate().map(|(at, &byte)| Node {
            id: self.byte_ids[usize::from(byte)],
            prev: if at == 0 { NONE } else { at as u32 - 1 },
            next: if at == last { NONE } else { at as u32 + 1 },
        }));
        let queued = |rank: u32, at: u32| Reverse((u64::from(rank) << 32) | u64::from(at));
        let mut pending = std::mem::take(&mut state.heap).into_vec();
        pending.clear();
        pending.extend((0..last).filter_map(|at| {
            let merge = self.merge_of(nodes[at].id, nodes[at + 1].id)?;
            Some(queued(merge.rank, at as u32))
        }));
        let mut heap = BinaryHeap::from(pending);
        while let Some(Reverse(key)) = heap.pop() {
            let (rank, at) = ((key >> 32) as u32, key as u32);
            let node = nodes[at as usize];
            if node.id == NONE || node.next == NONE {
                continue;
            }
            let right = nodes[node.next as usize];
            // A stale entry: the pair at `at` changed since it was queued. Ranks identify pairs,
            // and a position's left symbol only ever grows, so an equal rank means the same pair.
            let merged = match self.merge_of(node.id, right.id) {
                Some(merge) if merge.rank == rank => merge.id,
                _ => continue,
            };
            nodes[at as usize].id = merged;
            nodes[at as usize].next = right.next;
            nodes[node.next as usize].id = NONE;
            if right.next != NONE {
                nodes[right.next as usize].prev = at;
                if let Some(merge) = self.merge_of(merged, nodes[right.next as usize].id) {
                    heap.push(queued(merge.rank, at));
                }
            }
            if node.prev != NONE {
                if let Some(merge) = self.merge_of(nodes[node.prev as usize].id, merged) {
                    heap.push(queued(merge.rank, node.prev));
                }
            }
        }
        state.heap = heap;
        let mut at = 0;
        while at != NONE {
            let node = nodes[at as usize];
            out.push(node.id);
            at = node.next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A toy model over bytes `a`, `b`, `c` (ids 0-2, every other byte id 3) with merges
    /// `a a -> 4`, `4 a -> 5`, `b c -> 6`, `a 6 -> 7`, `4 4 -> 8`.
    fn toy() -> Bpe {
        let mut byte_ids = [3u32; 256];
        byte_ids[usize::from(b'a')] = 0;
        byte_ids[usize::from(b'b')] = 1;
        byte_ids[usize::from(b'c')] = 2;
        let merges = [
            ((0, 0), 4),
            ((4, 0), 5),
            ((1, 2), 6),
            ((0, 6), 7),
            ((4, 4), 8),
        ]
        .into_iter()
        .enumerate()
        .map(|(rank, (pair, id))| {
            (
                pair,
                Merge {
                    rank: rank as u32,
                    id,
                },
            )
        })
        .collect();
        Bpe::new(byte_ids, merges)
    }

    fn both_paths(bpe: &Bpe, word: &[u8]) -> (Vec<u32>, Vec<u32>) {
        let mut state = EncodeState::default();
        let (mut linear, mut heap) = (Vec::new(), Vec::new());
        bpe.merge_linear(word, &mut linear, &mut state);
        bpe.merge_heap(word, &mut heap, &mut state);
        (linear, heap)
    }

    #[test]
    fn lowest_rank_then_leftmost() {
        let bpe = toy();
        assert_eq!(both_paths(&bpe, b"aaa").0, [5]);
        assert_eq!(both_paths(&bpe, b"aaaa").0, [8]);
        assert_eq!(both_paths(&bpe, b"abc").0, [7]);
        assert_eq!(both_paths(&bpe, b"aabc").0, [4, 6]);
        assert_eq!(both_paths(&bpe, b"xa").0, [3, 0]);
    }

    #[test]
    fn linear_and_heap_paths_agree() {
        let bpe = toy();
        let mut seed = 0x2545_f491_u32;
        for len in 1..200 {
            let word: Vec<u8> = (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 17;
                    seed ^= seed << 5;
                    b"aabcx"[(seed % 5) as usize]
                })
                .collect();
            let (linear, heap) = both_paths(&bpe, &word);
            assert_eq!(linear, heap, "word {}", String::from_utf8_lossy(&word));
        }
    }

    #[test]
    fn whole_tokens_are_the_tokens_their_own_bytes_merge_into() {
        // Token 9 spells "ab", which no merge makes: merging "ab" gives `a b`, so it is no whole
        // token and the word still merges (to two ids).
        let spellings: [&[u8]; 10] = [
            b"a", b"b", b"c", b"x", b"aa", b"aaa", b"bc", b"abc", b"aaaa", b"ab",
        ];
        let token_bytes: Vec<Box<[u8]>> = spellings.iter().map(|&bytes| bytes.into()).collect();
        let bpe = toy().with_whole_tokens(&token_bytes);
        let mut whole: Vec<u32> = bpe.whole_tokens.ids().collect();
        whole.sort_unstable();
        assert_eq!(whole, [4, 5, 6, 7, 8]);
        let mut state = EncodeState::default();
        let mut out = Vec::new();
        for word in [&b"abc"[..], b"ab", b"aaaaa"] {
            bpe.encode_piece(word, &mut out, &mut state);
        }
        assert_eq!(out, [7, 0, 1, 4, 5]);
    }

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
        let mut table = WholeTokens::default();
        for (id, word) in words.iter().enumerate() {
            table.insert(word, id as u32);
        }
        for (id, word) in words.iter().enumerate() {
            assert_eq!(table.get(word), Some(id as u32), "{word:?}");
        }
        assert_eq!(table.get(b"a"), None);
        assert_eq!(table.get(b"abcdefghijklmnopq"), None);
        table.insert(b"abcdefghijklmnopq", 99);
        assert_eq!(table.ids().count(), words.len());
    }

    #[test]
    fn cache_returns_what_the_merge_loop_returns() {
        let bpe = toy();
        let mut state = EncodeState::default();
        let mut out = Vec::new();
        let text = b"aaaa aaaa";
        bpe.encode_piece(&text[..4], &mut out, &mut state);
        bpe.encode_piece(&text[5..], &mut out, &mut state);
        assert_eq!(out, [8, 8]);
        assert_eq!(state.cache.len(), 1);
    }
}
