//! Cutting a long input into parts that encode independently, for parallel encoding.
//!
//! Plain-text segments are pre-tokenized on their own, so a cut between segments is always safe;
//! inside a text segment the cut goes at a [`safe_cut_from`] position, where pre-tokenizing the
//! halves gives the pieces of the whole. Every piece is then merged exactly as on one thread, so
//! the ids are identical; only the word cache is per thread.

use super::added::Segment;
use super::pretokenize::safe_cut_from;

/// The number of text bytes in `segments`.
pub(super) fn text_len(segments: &[Segment<'_>]) -> usize {
    segments
        .iter()
        .filter_map(|segment| segment.text())
        .map(str::len)
        .sum()
}

/// Cuts `segments` (holding `text_bytes` bytes of text) into at most `parts` consecutive chunks
/// of about equal text, each starting at a safe cut where `can_cut(text, at)` also holds (the
/// text segment being cut and the position in it). A text with no safe cut near a chunk's
/// target end makes that chunk longer (a long run of one character is one BPE word).
pub(super) fn split_segments<'t>(
    segments: &[Segment<'t>],
    text_bytes: usize,
    parts: usize,
    can_cut: impl Fn(&str, usize) -> bool,
) -> Vec<Vec<Segment<'t>>> {
    // The text bytes that chunks 0..=index hold together when they are balanced.
    let target = |index: usize| text_bytes * (index + 1) / parts;
    let mut chunks: Vec<Vec<Segment<'t>>> = vec![Vec::new()];
    let mut placed = 0;
    for &segment in segments {
        if chunks.len() < parts
            && placed >= target(chunks.len() - 1)
            && chunks.last().is_some_and(|chunk| !chunk.is_empty())
        {
            chunks.push(Vec::new());
        }
        // Texts encoded in parallel lose their fixed start (remembered ids only save time).
        let Some(mut rest) = segment.text() else {
            push(&mut chunks, segment);
            continue;
        };
        while chunks.len() < parts && placed + rest.len() > target(chunks.len() - 1) {
            let wanted = target(chunks.len() - 1).saturating_sub(placed);
            let mut cut = safe_cut_from(rest, wanted);
            while let Some(at) = cut.filter(|&at| !can_cut(rest, at)) {
                cut = safe_cut_from(rest, at + 1);
            }
            match cut {
                Some(cut) => {
                    push(&mut chunks, Segment::Text(&rest[..cut]));
                    placed += cut;
                    rest = &rest[cut..];
                    chunks.push(Vec::new());
                }
                None => break,
            }
        }
        placed += rest.len();
        if !rest.is_empty() {
            push(&mut chunks, Segment::Text(rest));
        }
    }
    chunks.retain(|chunk| !chunk.is_empty());
    chunks
}

/// Appends `segment` to the last chunk.
fn push<'t>(chunks: &mut [Vec<Segment<'t>>], segment: Segment<'t>) {
    if let Some(chunk) = chunks.last_mut() {
        chunk.push(segment);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_keep_every_segment_in_order() {
        let text = "alpha beta\ngamma 123 delta, 中文 epsilon\n".repeat(40);
        let segments = [
            Segment::Token(7),
            Segment::Text(&text),
            Segment::Token(8),
            Segment::Text("tail"),
        ];
        let total = text_len(&segments);
        for parts in 1..6 {
            let chunks = split_segments(&segments, total, parts, |_, _| true);
            assert!(!chunks.is_empty() && chunks.len() <= parts, "{parts}");
            let mut joined = String::new();
            let mut tokens = Vec::new();
            for segment in chunks.iter().flatten() {
                match segment {
                    Segment::Text(part) | Segment::FixedStart { text: part, .. } => {
                        joined.push_str(part)
                    }
                    Segment::Token(id) => tokens.push(*id),
                }
            }
            assert_eq!(joined, format!("{text}tail"));
            assert_eq!(tokens, [7, 8]);
        }
        assert_eq!(split_segments(&segments, total, 4, |_, _| true).len(), 4);
    }

    #[test]
    fn cuts_go_only_where_the_caller_allows() {
        let text = "word ".repeat(400);
        // Safe cuts fall after each "word"; the caller allows only multiples of 7 (each cut is
        // relative to the text left after the previous one, so the absolute ones are too).
        let chunks = split_segments(&[Segment::Text(&text)], text.len(), 4, |_, at| at % 7 == 0);
        assert_eq!(chunks.len(), 4);
        let mut start = 0;
        for chunk in &chunks {
            let [Segment::Text(part)] = chunk[..] else {
                panic!("{chunk:?}")
            };
            assert!(start % 7 == 0, "cut at {start}");
            start += part.len();
        }
        assert_eq!(start, text.len());
    }

    #[test]
    fn a_text_without_safe_cuts_stays_whole() {
        let run = "a".repeat(1000);
        let chunks = split_segments(&[Segment::Text(&run)], run.len(), 4, |_, _| true);
        assert_eq!(chunks, [vec![Segment::Text(run.as_str())]]);
    }
}
