//! Added tokens (special and not) recognised in text, as the reference does it.
//!
//! The reference splits in two passes, each taking the leftmost match and, among matches starting
//! there, the longest: first with the tokens whose `normalized` flag is false on the raw text, then
//! with the `normalized` tokens on each remaining gap (the normalizer is the identity here).

use rustc_hash::FxHashMap;

/// A part of the text: plain text to pre-tokenize, or an added token's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Segment<'t> {
    /// Text that contains no recognised added token.
    Text(&'t str),
    /// Text like [`Text`](Self::Text) that starts with a template's constant `fixed`, whose
    /// leading ids the tokenizer remembers per thread (a prompt's segments only).
    FixedStart {
        /// The constant `text` starts with.
        fixed: &'static str,
        /// The whole text, `fixed` included.
        text: &'t str,
    },
    /// A recognised added token.
    Token(u32),
}

impl<'t> Segment<'t> {
    /// The segment's text (a fixed start's whole text); `None` for a token.
    pub(crate) fn text(self) -> Option<&'t str> {
        match self {
            Segment::Text(text) | Segment::FixedStart { text, .. } => Some(text),
            Segment::Token(_) => None,
        }
    }
}

/// A byte trie over token spellings.
#[derive(Debug, Default)]
struct Trie {
    /// Token id ending at each node, `u32::MAX` for none; node 0 is the root.
    ends: Vec<u32>,
    edges: FxHashMap<(u32, u8), u32>,
    /// The distinct first bytes of the tokens, in insertion order.
    starts: Vec<u8>,
    /// The length in bytes of the longest spelling.
    longest: usize,
}

impl Trie {
    fn new() -> Self {
        Self {
            ends: vec![u32::MAX],
            edges: FxHashMap::default(),
            starts: Vec::new(),
            longest: 0,
        }
    }

    fn insert(&mut self, spelling: &str, id: u32) {
        let mut node = 0u32;
        for &byte in spelling.as_bytes() {
            let next = self.ends.len() as u32;
            node = *self.edges.entry((node, byte)).or_insert(next);
            if node == next {
                self.ends.push(u32::MAX);
            }
        }
        self.ends[node as usize] = id;
        self.longest = self.longest.max(spelling.len());
        if let Some(&first) = spelling.as_bytes().first() {
            if !self.starts.contains(&first) {
                self.starts.push(first);
            }
        }
    }

    /// The first position from `at` on where a token could start (its byte starts a token).
    /// Up to three distinct first bytes (the DeepSeek tokenizers have one or two) are found
    /// with `memchr`'s vector search; more with a byte loop.
    fn next_start(&self, bytes: &[u8], at: usize) -> Option<usize> {
        let rest = &bytes[at..];
        let found = match *self.starts.as_slice() {
            [] => None,
            [a] => memchr::memchr(a, rest),
            [a, b] => memchr::memchr2(a, b, rest),
            [a, b, c] => memchr::memchr3(a, b, c, rest),
            ref many => rest.iter().position(|byte| many.contains(byte)),
        };
        found.map(|offset| at + offset)
    }

    /// The longest token starting at `at`: its end and id.
    fn longest_at(&self, bytes: &[u8], at: usize) -> Option<(usize, u32)> {
        let mut node = 0u32;
        let mut found = None;
        for (offset, &byte) in bytes[at..].iter().enumerate() {
            match self.edges.get(&(node, byte)) {
                Some(&next) => node = next,
                None => break,
            }
            let id = self.ends[node as usize];
            if id != u32::MAX {
                found = Some((at + offset + 1, id));
            }
        }
        found
    }

    /// Whether the longest token starting somewhere before byte `at` of `bytes` ends after it.
    fn may_cross(&self, bytes: &[u8], at: usize) -> bool {
        let mut from = at.saturating_sub(self.longest.saturating_sub(1));
        while let Some(start) = self.next_start(&bytes[..at], from) {
            if self
                .longest_at(bytes, start)
                .is_some_and(|(end, _)| end > at)
            {
                return true;
            }
            from = start + 1;
        }
        false
    }

    /// Splits `text` into gaps and leftmost-longest matches.
    fn split<'t>(&self, text: &'t str, emit: &mut impl FnMut(Segment<'t>)) {
        let bytes = text.as_bytes();
        let mut gap_start = 0;
        let mut from = 0;
        while let Some(at) = self.next_start(bytes, from) {
            match self.longest_at(bytes, at) {
                Some((end, id)) => {
                    if gap_start < at {
                        emit(Segment::Text(&text[gap_start..at]));
                    }
                    emit(Segment::Token(id));
                    gap_start = end;
                    from = end;
                }
                None => from = at + 1,
            }
        }
        if gap_start < bytes.len() {
            emit(Segment::Text(&text[gap_start..]));
        }
    }
}

/// The added-token matcher.
#[derive(Debug)]
pub(super) struct AddedTokens {
    raw: Trie,
    normalized: Trie,
}

impl AddedTokens {
    /// A matcher for `(spelling, id, normalized)` triples; spellings are non-empty.
    pub(super) fn new<'a>(tokens: impl IntoIterator<Item = (&'a str, u32, bool)>) -> Self {
        let (mut raw, mut normalized) = (Trie::new(), Trie::new());
        for (spelling, id, is_normalized) in tokens {
            if is_normalized {
                normalized.insert(spelling, id);
            } else {
                raw.insert(spelling, id);
            }
        }
        Self { raw, normalized }
    }

    /// Calls `emit` with the text's segments in order.
    pub(super) fn split<'t>(&self, text: &'t str, emit: &mut impl FnMut(Segment<'t>)) {
        self.raw.split(text, &mut |segment| match segment {
            Segment::Text(gap) => self.normalized.split(gap, emit),
            token => emit(token),
        });
    }

    /// Whether [`split`](Self::split) of `text` gives the segments of `text[..at]` followed by
    /// those of `text[at..]`: no token that could match at a position before `at` reaches past
    /// it. Whatever either pass matched before `at` then ends by `at`, both passes start afresh
    /// there, and the halves' gaps are the whole's gaps cut at `at`.
    pub(super) fn can_cut_at(&self, text: &str, at: usize) -> bool {
        let bytes = text.as_bytes();
        !self.raw.may_cross(bytes, at) && !self.normalized.may_cross(bytes, at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segments<'t>(added: &AddedTokens, text: &'t str) -> Vec<Segment<'t>> {
        let mut out = Vec::new();
        added.split(text, &mut |segment| out.push(segment));
        out
    }

    #[test]
    fn leftmost_longest_in_two_passes() {
        let added = AddedTokens::new([("<a>", 1, false), ("<a>b", 2, false), ("a>b", 3, true)]);
        assert_eq!(
            segments(&added, "x<a>by<a>"),
            [
                Segment::Text("x"),
                Segment::Token(2),
                Segment::Text("y"),
                Segment::Token(1)
            ]
        );
        // The raw pass runs first even where a normalized token would start further left.
        let added = AddedTokens::new([("bc", 1, false), ("ab", 2, true)]);
        assert_eq!(
            segments(&added, "abc"),
            [Segment::Text("a"), Segment::Token(1)]
        );
        let added = AddedTokens::new([("xy", 1, false), ("ab", 2, true)]);
        assert_eq!(
            segments(&added, "abxyab"),
            [Segment::Token(2), Segment::Token(1), Segment::Token(2)]
        );
    }

    /// Leftmost-longest matching by comparing every spelling at every position.
    fn naive_split<'t>(spellings: &[&str], text: &'t str) -> Vec<Segment<'t>> {
        let mut out = Vec::new();
        let (mut gap_start, mut at) = (0, 0);
        while at < text.len() {
            let longest = (0..spellings.len())
                .filter(|&id| text[at..].starts_with(spellings[id]))
                .max_by_key(|&id| spellings[id].len());
            match longest {
                Some(id) => {
                    if gap_start < at {
                        out.push(Segment::Text(&text[gap_start..at]));
                    }
                    out.push(Segment::Token(id as u32));
                    at += spellings[id].len();
                    gap_start = at;
                }
                None => at += 1,
            }
        }
        if gap_start < text.len() {
            out.push(Segment::Text(&text[gap_start..]));
        }
        out
    }

    #[test]
    fn a_cut_where_no_token_can_cross_splits_like_the_whole() {
        let added = AddedTokens::new([
            ("<a>", 1, false),
            ("<a>bb", 2, false),
            ("a>b", 3, true),
            ("<<", 4, true),
        ]);
        let texts = [
            "x<a>bby<a>b<<a>",
            "<<a>b<<<a",
            "a>ba>b<a><a>bb",
            "plain text",
        ];
        let mut cuttable = 0;
        for text in texts {
            let whole = segments(&added, text);
            for at in 0..=text.len() {
                if !added.can_cut_at(text, at) {
                    continue;
                }
                cuttable += 1;
                let mut halves = segments(&added, &text[..at]);
                halves.extend(segments(&added, &text[at..]));
                // Gaps may be cut in two; compare with the gaps joined again.
                assert_eq!(joined(&halves), joined(&whole), "{text:?} cut at {at}");
            }
            assert!(!added.can_cut_at("<a>bb", 4) && !added.can_cut_at("<a>bb", 1));
        }
        assert!(cuttable > 20);
    }

    /// `segments` with consecutive text segments joined.
    fn joined(segments: &[Segment<'_>]) -> Vec<Result<String, u32>> {
        let mut out: Vec<Result<String, u32>> = Vec::new();
        for segment in segments {
            match (segment, out.last_mut()) {
                (Segment::Text(text), Some(Ok(last))) => last.push_str(text),
                (Segment::Text(text), _) => out.push(Ok((*text).to_owned())),
                (Segment::Token(id), _) => out.push(Err(*id)),
                (Segment::FixedStart { .. }, _) => panic!("splitting gives no fixed starts"),
            }
        }
        out
    }

    #[test]
    fn every_count_of_first_bytes_finds_the_leftmost_longest_matches() {
        // One to five distinct first bytes: memchr, memchr2, memchr3, then the byte loop.
        let spellings = ["<a>", "[b]", "{c}", "(d)", "|e|", "<a>>"];
        let texts = [
            "x<a [b] {c}(d)|e| <a>(d |e|<",
            "<a>><a>[b]{c}(d)|e|",
            "no candidates at all",
            "<<<a>>>[[b]]|",
            "",
        ];
        for count in 1..=5 {
            let used: Vec<&str> = spellings[..count]
                .iter()
                .chain(&spellings[5..])
                .copied()
                .collect();
            let added = AddedTokens::new(
                used.iter()
                    .enumerate()
                    .map(|(id, spelling)| (*spelling, id as u32, false)),
            );
            for text in texts {
                assert_eq!(
                    segments(&added, text),
                    naive_split(&used, text),
                    "{count} {text:?}"
                );
            }
        }
    }
}
