//! Stop-sequence matching: an Aho–Corasick automaton over the stop strings' bytes.
//!
//! The parser feeds content text through the automaton once, as it arrives, and keeps the
//! automaton's state between pieces. The state tells where the first stop sequence ends (the
//! shortest one wins, then the earliest in the request) and how long the longest suffix of
//! the text is that may still grow into a stop sequence, which is the text the parser holds.
//! Each byte is read once and costs amortised constant time, whatever the number and length
//! of the stop sequences.

/// A state of the automaton: the longest suffix of the text read that is a prefix of a stop.
pub(super) type StopState = u32;

/// The state before any text (the empty prefix).
pub(super) const START: StopState = 0;

/// Marks a node at which no stop sequence ends.
const NO_STOP: u32 = u32::MAX;

/// The automaton. Nodes are the distinct prefixes of the stop sequences, numbered in
/// breadth-first order so that the children of a node are consecutive and sorted by byte.
#[derive(Debug, Clone)]
pub(super) struct StopMatcher {
    /// Byte length of each stop sequence, by its index in the options.
    lengths: Vec<usize>,
    /// Index of the first child of each node; one extra entry closes the last node's range.
    first_child: Vec<u32>,
    /// The byte on the edge into each node (unused for the start node).
    edge_byte: Vec<u8>,
    /// The node of the longest proper suffix of each node's prefix (failure link).
    fail: Vec<u32>,
    /// Length of each node's prefix.
    depth: Vec<u32>,
    /// The lowest index of a stop sequence that is a suffix of each node's prefix.
    ending: Vec<u32>,
    /// The lowest index of a stop sequence that is exactly `"\n"`.
    newline_stop: Option<usize>,
}

impl StopMatcher {
    /// The automaton of `stops`; empty strings never match.
    pub(super) fn new(stops: &[String]) -> Self {
        let mut matcher = Self {
            lengths: stops.iter().map(String::len).collect(),
            first_child: Vec::new(),
            edge_byte: vec![0],
            fail: vec![START],
            depth: vec![0],
            ending: vec![NO_STOP],
            newline_stop: stops.iter().position(|stop| stop == "\n"),
        };
        matcher.build_trie(stops);
        matcher.link_failures();
        matcher
    }

    /// Whether no stop sequence can ever match.
    pub(super) fn is_empty(&self) -> bool {
        self.depth.len() == 1
    }

    /// Index of the first stop sequence that is exactly one newline.
    pub(super) fn newline_stop(&self) -> Option<usize> {
        self.newline_stop
    }

    /// Byte length of stop sequence `index`.
    pub(super) fn stop_len(&self, index: usize) -> usize {
        self.lengths[index]
    }

    /// Length of the text suffix that state `state` stands for (what may still grow into a stop).
    pub(super) fn depth(&self, state: StopState) -> usize {
        self.depth[state as usize] as usize
    }

    /// Reads `bytes` from `state`. Stops at the first byte where a stop sequence ends and returns
    /// the offset just past it and the stop's index; otherwise `state` is the state after all
    /// of `bytes`.
    pub(super) fn feed(&self, state: &mut StopState, bytes: &[u8]) -> Option<(usize, usize)> {
        for (offset, &byte) in bytes.iter().enumerate() {
            *state = self.next(*state, byte);
            let ending = self.ending[*state as usize];
            if ending != NO_STOP {
                return Some((offset + 1, ending as usize));
            }
        }
        None
    }

    /// The state after `byte` in `state`, following failure links.
    fn next(&self, mut state: StopState, byte: u8) -> StopState {
        loop {
            if let Some(child) = self.child(state, byte) {
                return child;
            }
            if state == START {
                return START;
            }
            state = self.fail[state as usize];
        }
    }

    /// The child of `node` along `byte`, if the trie has one.
    fn child(&self, node: StopState, byte: u8) -> Option<StopState> {
        let node = node as usize;
        let (first, last) = (self.first_child[node], self.first_child[node + 1]);
        let children = &self.edge_byte[first as usize..last as usize];
        children
            .binary_search(&byte)
            .ok()
            .map(|at| first + at as u32)
    }

    /// Builds the trie one level at a time: each node of a level carries the indices of the
    /// stops through it, grouped into children by their next byte.
    fn build_trie(&mut self, stops: &[String]) {
        let mut level: Vec<Vec<usize>> = vec![(0..stops.len())
            .filter(|&index| !stops[index].is_empty())
            .collect()];
        let mut depth = 0;
        while !level.is_empty() {
            let mut next_level = Vec::new();
            for (node, passing) in (self.first_child.len()..).zip(&mut level) {
                self.first_child.push(self.depth.len() as u32);
                passing.sort_by_key(|&index| (stops[index].as_bytes().get(depth).copied(), index));
                let mut rest = passing.iter().copied().peekable();
                while let Some(index) = rest.next_if(|&index| stops[index].len() == depth) {
                    self.ending[node] = self.ending[node].min(index as u32);
                }
                while let Some(index) = rest.next() {
                    let byte = stops[index].as_bytes()[depth];
                    let mut group = vec![index];
                    while let Some(next) =
                        rest.next_if(|&next| stops[next].as_bytes()[depth] == byte)
                    {
                        group.push(next);
                    }
                    self.edge_byte.push(byte);
                    self.fail.push(START);
                    self.depth.push(depth as u32 + 1);
                    self.ending.push(NO_STOP);
                    next_level.push(group);
                }
            }
            level = next_level;
            depth += 1;
        }
        self.first_child.push(self.depth.len() as u32);
    }

    /// Sets the failure links and inherited stop endings in breadth-first order (a node's
    /// failure target is shallower, so it is complete before the node is).
    fn link_failures(&mut self) {
        for node in 0..self.depth.len() {
            let (first, last) = (self.first_child[node], self.first_child[node + 1]);
            for child in first..last {
                let byte = self.edge_byte[child as usize];
                let fail = if node == 0 {
                    START
                } else {
                    self.next(self.fail[node], byte)
                };
                self.fail[child as usize] = fail;
                let inherited = self.ending[fail as usize];
                let ending = &mut self.ending[child as usize];
                *ending = (*ending).min(inherited);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The reference rule, read naively: the first end offset at which any stop ends, with the
    /// lowest index among the stops ending there.
    fn naive_first_match(stops: &[String], text: &[u8]) -> Option<(usize, usize)> {
        (1..=text.len()).find_map(|end| {
            stops
                .iter()
                .position(|stop| !stop.is_empty() && text[..end].ends_with(stop.as_bytes()))
                .map(|index| (end, index))
        })
    }

    /// Length of the longest suffix of `text` that is a prefix of some stop.
    fn naive_depth(stops: &[String], text: &[u8]) -> usize {
        (0..=text.len())
            .rev()
            .find(|&len| {
                let suffix = &text[text.len() - len..];
                stops.iter().any(|stop| stop.as_bytes().starts_with(suffix))
            })
            .unwrap_or(0)
    }

    fn feed_in_pieces(
        matcher: &StopMatcher,
        text: &[u8],
        cuts: &[usize],
    ) -> (StopState, Option<(usize, usize)>) {
        let mut state = START;
        let mut at = 0;
        let mut bounds: Vec<usize> = cuts.iter().map(|cut| cut % (text.len() + 1)).collect();
        bounds.sort_unstable();
        bounds.push(text.len());
        for bound in bounds {
            if bound < at {
                continue;
            }
            if let Some((end, index)) = matcher.feed(&mut state, &text[at..bound]) {
                return (state, Some((at + end, index)));
            }
            at = bound;
        }
        (state, None)
    }

    proptest! {
        #[test]
        fn matches_like_the_naive_rule(
            stops in prop::collection::vec("[ab\n]{0,6}|é|a{1,9}", 1..6),
            text in "[abé\n]{0,40}",
            cuts in prop::collection::vec(0usize..64, 0..8),
        ) {
            let matcher = StopMatcher::new(&stops);
            let (state, found) = feed_in_pieces(&matcher, text.as_bytes(), &cuts);
            let expected = naive_first_match(&stops, text.as_bytes());
            prop_assert_eq!(found, expected);
            if found.is_none() {
                prop_assert_eq!(matcher.depth(state), naive_depth(&stops, text.as_bytes()));
            }
        }
    }

    #[test]
    fn shorter_stop_inside_a_longer_one_wins_and_ties_go_to_the_first() {
        let stops = ["abcd".to_owned(), "bc".to_owned(), "c".to_owned()];
        let matcher = StopMatcher::new(&stops);
        let mut state = START;
        assert_eq!(matcher.feed(&mut state, b"xabcd"), Some((4, 1)));
        let stops = ["c".to_owned(), "bc".to_owned()];
        let mut state = START;
        assert_eq!(
            StopMatcher::new(&stops).feed(&mut state, b"abc"),
            Some((3, 0))
        );
    }

    #[test]
    fn long_stops_match_byte_by_byte_and_report_their_partial_length() {
        let stop = format!("Q{}", "ab".repeat(50_000));
        let matcher = StopMatcher::new(std::slice::from_ref(&stop));
        let mut state = START;
        for &byte in &stop.as_bytes()[..stop.len() - 1] {
            assert_eq!(matcher.feed(&mut state, &[byte]), None);
        }
        assert_eq!(matcher.depth(state), stop.len() - 1);
        assert_eq!(matcher.feed(&mut state, b"b"), Some((1, 0)));
    }

    #[test]
    fn empty_stops_are_ignored() {
        let matcher = StopMatcher::new(&[String::new()]);
        assert!(matcher.is_empty());
        let mut state = START;
        assert_eq!(matcher.feed(&mut state, b"anything"), None);
        assert_eq!(matcher.newline_stop(), None);
        assert_eq!(
            StopMatcher::new(&["x".into(), "\n".into()]).newline_stop(),
            Some(1)
        );
    }
}
