//! Byte-level BPE: the merge table, the merge loops and the word cache.
//!
//! Merging follows the reference exactly: repeatedly merge the adjacent pair with the lowest merge
//! rank, the leftmost one among equal ranks, until no adjacent pair has a merge. Words of up to 64
//! bytes use a linear scan over a small array. Longer words (long runs of one character, space
//! runs, long CJK runs) merge by passes, each merging every occurrence of the lowest-ranked pair
//! in one sweep, when the merge ranks allow it (every merge ranks after the merges that make its
//! tokens, as in DeepSeek V4's file); a word whose pairs do not repeat, or a file without that
//! property, goes through a binary heap over a linked list (`O(n log n)`).
//!
//! Before merging, a word is looked up in the [whole-token table](super::whole_tokens) and then in
//! the word cache of the [`EncodeState`], which the tokenizer keeps per thread across calls. Most
//! words of ordinary text are whole tokens or were merged before, so a word usually costs one or
//! two lookups instead of a merge loop. The merge table is an [`IntTable`], so a merge step's
//! lookup usually reads one cache line.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

use super::fixed_start::FixedStarts;
use super::int_table::IntTable;
use super::whole_tokens::{WholeTokens, SHORT_WORD_MAX};

/// Words up to this many bytes are merged with the linear scan.
const LINEAR_SCAN_MAX: usize = 64;
/// Words up to this many bytes are remembered in the word cache.
const CACHED_WORD_MAX: usize = 128;
/// The word cache is emptied when it holds this many words (it lives as long as its thread).
const CACHE_CAPACITY: usize = 1 << 15;
/// Merge buffers longer than this many symbols are freed between calls.
const KEPT_BUFFER_SYMBOLS: usize = 1 << 16;
/// Long words merge by passes until the passes have read this many symbols per byte of the word.
const PASS_WORK_PER_BYTE: usize = 4;
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
    /// Packed merges ([`Merge::packed`]) by [`pair_key`].
    merges: IntTable,
    /// Whether every merge ranks after every merge that makes one of its two tokens: then a
    /// merge never creates a pair that ranks before it, and long words merge by passes.
    ranks_follow_makers: bool,
    /// Tokens of at most [`SHORT_WORD_MAX`] bytes whose bytes, merged as one word, give exactly
    /// that token.
    whole_tokens: WholeTokens,
}

/// Reusable buffers and the word cache of the merge loop, and the remembered ids of template
/// constants, for one tokenizer on one thread.
#[derive(Default)]
pub(super) struct EncodeState {
    /// The ids of template constants that start prompt segments.
    pub(super) fixed_starts: FixedStarts,
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
    /// Frees the merge buffers when a long word grew them past [`KEPT_BUFFER_SYMBOLS`] symbols (a
    /// text that is one word of megabytes would otherwise leave tens of megabytes behind); the
    /// word cache stays.
    pub(super) fn release_long_word_buffers(&mut self) {
        if self.symbols.capacity() > KEPT_BUFFER_SYMBOLS {
            self.symbols = Vec::new();
            self.ranks = Vec::new();
        }
        if self.nodes.capacity() > KEPT_BUFFER_SYMBOLS {
            self.nodes = Vec::new();
            self.heap = BinaryHeap::new();
        }
    }

    /// The number of words in the word cache.
    #[cfg(test)]
    pub(super) fn cached_words(&self) -> usize {
        self.cache.len()
    }

    /// Remembers that `word` merges into `ids`, emptying a full cache first (keeping its memory).
    fn remember(&mut self, word: &[u8], ids: &[u32]) {
        if self.cache.len() >= CACHE_CAPACITY {
            self.cache.clear();
            self.cached_ids.clear();
        }
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
        let ranks_follow_makers = ranks_follow_makers(&merges);
        let merges = IntTable::new(
            merges
                .into_iter()
                .map(|((left, right), merge)| (pair_key(left, right), merge.packed())),
        );
        Self {
            byte_ids,
            merges,
            ranks_follow_makers,
            whole_tokens: WholeTokens::default(),
        }
    }

    /// This model with the whole-token table filled from `token_bytes` (each token's id and
    /// bytes): each token of 2 to [`SHORT_WORD_MAX`] bytes is merged as a word and kept when that
    /// gives the token.
    pub(super) fn with_whole_tokens<'a>(
        mut self,
        token_bytes: impl IntoIterator<Item = (u32, &'a [u8])>,
    ) -> Self {
        let mut state = EncodeState::default();
        let mut ids = Vec::new();
        let mut whole_tokens = Vec::new();
        for (id, bytes) in token_bytes {
            if !(2..=SHORT_WORD_MAX).contains(&bytes.len()) {
                continue;
            }
            ids.clear();
            self.encode_word(bytes, &mut ids, &mut state);
            if ids == [id] {
                whole_tokens.push((bytes, id));
            }
        }
        self.whole_tokens = WholeTokens::new(whole_tokens);
        self
    }

    #[inline]
    fn merge_of(&self, left: u32, right: u32) -> Option<Merge> {
        let packed = self.merges.get(pair_key(left, right))?;
        Some(Merge {
            rank: (packed >> 32) as u32,
            id: packed as u32,
        })
    }

    /// The packed merge ([`Merge::packed`]) of the pair, or `u64::MAX` when it has none.
    #[inline]
    fn packed_merge(&self, left: u32, right: u32) -> u64 {
        self.merges.get(pair_key(left, right)).unwrap_or(u64::MAX)
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
            self.merge_long(word, out, state);
        }
    }

    fn merge_linear(&self, word: &[u8], out: &mut Vec<u32>, state: &mut EncodeState) {
        let symbols = &mut state.symbols;
        let ranks = &mut state.ranks;
        self.start_symbols(word, symbols, ranks);
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

    /// Merges a word longer than the linear scan's limit: by passes when the merge ranks allow it,
    /// through the heap otherwise or from where the passes stop.
    fn merge_long(&self, word: &[u8], out: &mut Vec<u32>, state: &mut EncodeState) {
        let EncodeState {
            symbols,
            ranks,
            nodes,
            heap,
            ..
        } = state;
        self.start_symbols(word, symbols, ranks);
        if !self.ranks_follow_makers
            || !self.merge_by_passes(symbols, ranks, word.len() * PASS_WORK_PER_BYTE)
        {
            self.merge_heap(symbols, nodes, heap);
        }
        out.extend_from_slice(symbols);
    }

    /// Fills `symbols` with the ids of `word`'s bytes and `ranks` with the packed merge of each
    /// adjacent pair (`u64::MAX`: none).
    fn start_symbols(&self, word: &[u8], symbols: &mut Vec<u32>, ranks: &mut Vec<u64>) {
        symbols.clear();
        symbols.extend(word.iter().map(|&byte| self.byte_ids[usize::from(byte)]));
        ranks.clear();
        ranks.extend(
            symbols
                .windows(2)
                .map(|pair| self.packed_merge(pair[0], pair[1])),
        );
    }

    /// Merges `symbols` (with `ranks`, the packed merge of each adjacent pair) one rank at a time:
    /// each pass merges every occurrence of the lowest-ranked pair, leftmost first, in one sweep
    /// that also finds the next lowest. Exact only when [`Bpe::ranks_follow_makers`]: a pass then
    /// creates no pair that ranks before its own, so the reference would merge the same
    /// occurrences in the same order. Gives up (returning `false`, `symbols` and `ranks` left
    /// consistent and partly merged) once the passes have read more than `budget` symbols: a word
    /// without repeating pairs needs one pass per merge, and the heap path finishes it.
    fn merge_by_passes(&self, symbols: &mut Vec<u32>, ranks: &mut Vec<u64>, budget: usize) -> bool {
        let mut budget = budget;
        let mut best = ranks.iter().copied().min().unwrap_or(u64::MAX);
        while best != u64::MAX {
            let len = symbols.len();
            let Some(left) = budget.checked_sub(len) else {
                return false;
            };
            budget = left;
            // The low half of a packed merge is the merged id.
            let merged = best as u32;
            let mut next_best = u64::MAX;
            let (mut read, mut write) = (0, 0);
            let mut previous_merged = false;
            // `write <= read`, so the pairs from `read` on are still the old ones; each step
            // writes the rank of the pair that ends at `write`.
            while read < len {
                let merges_here = read + 1 < len && ranks[read] == best;
                let symbol = if merges_here { merged } else { symbols[read] };
                if write > 0 {
                    let rank = if merges_here || previous_merged {
                        self.packed_merge(symbols[write - 1], symbol)
                    } else {
                        ranks[read - 1]
                    };
                    ranks[write - 1] = rank;
                    next_best = next_best.min(rank);
                }
                symbols[write] = symbol;
                write += 1;
                read += if merges_here { 2 } else { 1 };
                previous_merged = merges_here;
            }
            symbols.truncate(write);
            ranks.truncate(write - 1);
            best = next_best;
        }
        true
    }

    /// Merges `symbols` in place through a binary heap of pending merges over a linked list:
    /// `O(n log n)` for any word.
    fn merge_heap(
        &self,
        symbols: &mut Vec<u32>,
        nodes: &mut Vec<Node>,
        heap_store: &mut BinaryHeap<Reverse<u64>>,
    ) {
        let Some(last) = symbols.len().checked_sub(1) else {
            return;
        };
        nodes.clear();
        nodes.extend(symbols.iter().enumerate().map(|(at, &id)| Node {
            id,
            prev: if at == 0 { NONE } else { at as u32 - 1 },
            next: if at == last { NONE } else { at as u32 + 1 },
        }));
        let queued = |rank: u32, at: u32| Reverse((u64::from(rank) << 32) | u64::from(at));
        let mut pending = std::mem::take(heap_store).into_vec();
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
        *heap_store = heap;
        symbols.clear();
        let mut at = 0;
        while at != NONE {
            let node = nodes[at as usize];
            symbols.push(node.id);
            at = node.next;
        }
    }
}

/// Whether every merge ranks after every merge that makes its left or its right token (see
/// [`Bpe::merge_by_passes`]).
fn ranks_follow_makers(merges: &FxHashMap<(u32, u32), Merge>) -> bool {
    let mut last_maker: FxHashMap<u32, u32> = FxHashMap::default();
    for merge in merges.values() {
        let rank = last_maker.entry(merge.id).or_insert(merge.rank);
        *rank = (*rank).max(merge.rank);
    }
    merges.iter().all(|(&(left, right), merge)| {
        [left, right]
            .iter()
            .all(|token| last_maker.get(token).is_none_or(|&made| made < merge.rank))
    })
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

    /// The ids of `word` by the linear scan, then by passes with budgets from unbounded (passes
    /// alone) to none (the heap alone), the others handing over to the heap part way.
    fn all_paths(bpe: &Bpe, word: &[u8]) -> Vec<Vec<u32>> {
        let mut state = EncodeState::default();
        let mut linear = Vec::new();
        bpe.merge_linear(word, &mut linear, &mut state);
        let mut results = vec![linear];
        for budget in [usize::MAX, word.len(), 2 * word.len(), 0] {
            let EncodeState {
                symbols,
                ranks,
                nodes,
                heap,
                ..
            } = &mut state;
            bpe.start_symbols(word, symbols, ranks);
            if !bpe.merge_by_passes(symbols, ranks, budget) {
                bpe.merge_heap(symbols, nodes, heap);
            }
            results.push(symbols.clone());
        }
        results
    }

    /// Deterministic pseudo-random words over `alphabet`.
    fn random_words<'a>(
        alphabet: &'a [&'a str],
        count: usize,
    ) -> impl Iterator<Item = String> + 'a {
        let mut seed = 0x2545_f491_u32;
        (1..=count).map(move |len| {
            (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 17;
                    seed ^= seed << 5;
                    alphabet[seed as usize % alphabet.len()]
                })
                .collect()
        })
    }

    #[test]
    fn lowest_rank_then_leftmost() {
        let bpe = toy();
        assert_eq!(all_paths(&bpe, b"aaa")[0], [5]);
        assert_eq!(all_paths(&bpe, b"aaaa")[0], [8]);
        assert_eq!(all_paths(&bpe, b"abc")[0], [7]);
        assert_eq!(all_paths(&bpe, b"aabc")[0], [4, 6]);
        assert_eq!(all_paths(&bpe, b"xa")[0], [3, 0]);
    }

    #[test]
    fn every_path_gives_the_same_ids() {
        let bpe = toy();
        assert!(bpe.ranks_follow_makers);
        for word in random_words(&["a", "a", "b", "c", "x"], 200) {
            let results = all_paths(&bpe, word.as_bytes());
            assert!(results.iter().all(|ids| *ids == results[0]), "word {word}");
        }
    }

    #[test]
    fn passes_give_the_heap_ids_on_long_v4_words() {
        let bpe = &crate::tokenizer::Tokenizer::deepseek_v4().inner.bpe;
        assert!(bpe.ranks_follow_makers);
        let alphabets: [&[&str]; 5] = [
            &["a", "b", "ab", "e", "n", "t"],
            &[" ", " ", "\n", "\t", "\r\n", "\u{a0}"],
            &["-", "=", ".", "*", "_", "#"],
            &["中", "文", "ー", "の", "是", "我们"],
            &["é", "😀", "ß", "\u{301}", "ж"],
        ];
        for alphabet in alphabets {
            for word in
                random_words(alphabet, 300).chain(alphabet.iter().map(|unit| unit.repeat(3000)))
            {
                let results = all_paths(bpe, word.as_bytes());
                assert!(
                    results[1..].iter().all(|ids| *ids == results[1]),
                    "word {word:?}"
                );
            }
        }
    }

    #[test]
    fn a_merge_ranked_before_a_maker_of_its_tokens_turns_passes_off() {
        // `a a -> 4` ranks after `4 a -> 5`, which consumes token 4.
        let merges = [((0, 0), (1, 4)), ((4, 0), (0, 5))]
            .into_iter()
            .map(|(pair, (rank, id))| (pair, Merge { rank, id }))
            .collect();
        assert!(!ranks_follow_makers(&merges));
    }

    #[test]
    fn whole_tokens_are_the_tokens_their_own_bytes_merge_into() {
        // Token 9 spells "ab", which no merge makes: merging "ab" gives `a b`, so it is no whole
        // token and the word still merges (to two ids).
        let spellings: [&[u8]; 10] = [
            b"a", b"b", b"c", b"x", b"aa", b"aaa", b"bc", b"abc", b"aaaa", b"ab",
        ];
        let bpe = toy().with_whole_tokens((0..).zip(spellings));
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
