//! String helpers of the parser, free of its state: finding a marker, the suffix a marker may
//! still complete, the remembered tail of consumed text, character boundaries, bounded appends.

use super::tags::Tags;

/// Offset of the first occurrence of `marker` in `hay`. Held text is usually a few bytes, where
/// a scan for the marker's first byte beats building a substring searcher.
pub(super) fn find_marker(hay: &str, marker: &str) -> Option<usize> {
    const SHORT_HAY: usize = 64;
    let (bytes, needle) = (hay.as_bytes(), marker.as_bytes());
    let Some((&first, rest)) = needle.split_first() else {
        return Some(0);
    };
    if hay.len() > SHORT_HAY {
        return hay.find(marker);
    }
    let last_start = bytes.len().checked_sub(needle.len())?;
    (0..=last_start).find(|&at| bytes[at] == first && bytes[at + 1..].starts_with(rest))
}

/// Start of the longest non-empty suffix of `hay` that a tag `marker` may still complete. Tags
/// end in a special token, judged alone (see `StreamParser::markup_allowed`): once the suffix
/// reaches into that token's text, the text from there on must not come from ordinary token ids
/// (`spelled(offset in hay)`), while those can only be waiting for the token itself (`<`,
/// `</` before the DSML token; nothing before `</think>`), from either kind of input (found by
/// the differential harness, streams that mix text and token-id chunks).
pub(super) fn partial_tag_start(
    tags: &Tags,
    hay: &str,
    marker: &str,
    spelled: impl Fn(usize) -> bool,
) -> Option<usize> {
    let mut candidates = partial_marker_starts(hay, marker).peekable();
    // Most held text ends in no prefix of the marker: no search for its special token then.
    candidates.peek()?;
    let special = tags.special_token_in(marker)?;
    candidates.find(|&start| start + special >= hay.len() || spelled(start + special))
}

/// Start of the longest non-empty suffix of `hay` that is a proper prefix of `marker`.
pub(super) fn partial_marker_start(hay: &str, marker: &str) -> Option<usize> {
    partial_marker_starts(hay, marker).next()
}

/// Starts of the non-empty suffixes of `hay` that are proper prefixes of `marker`, longest first.
///
/// Only offsets holding the marker's first byte are compared; that byte starts a UTF-8 sequence,
/// so such an offset is always a character boundary.
fn partial_marker_starts<'a>(hay: &'a str, marker: &'a str) -> impl Iterator<Item = usize> + 'a {
    let (bytes, needle) = (hay.as_bytes(), marker.as_bytes());
    let longest = needle.len().saturating_sub(1).min(bytes.len());
    (bytes.len() - longest..bytes.len())
        .filter(move |&start| bytes[start] == needle[0] && needle.starts_with(&bytes[start..]))
}

/// Offset from which `hay` must be kept because a suffix may start one of `markers`.
pub(super) fn keep_partial(hay: &str, markers: &[impl AsRef<str>]) -> usize {
    markers
        .iter()
        .filter_map(|marker| partial_marker_start(hay, marker.as_ref()))
        .min()
        .unwrap_or(hay.len())
}

/// Keeps the last `keep` bytes (or so, on a character boundary) of `tail` followed by
/// `consumed`.
pub(super) fn remember_tail(tail: &mut String, consumed: &str, keep: usize) {
    if consumed.len() >= keep {
        let mut start = consumed.len() - keep;
        while !consumed.is_char_boundary(start) {
            start += 1;
        }
        tail.clear();
        tail.push_str(&consumed[start..]);
        return;
    }
    tail.push_str(consumed);
    let mut excess = tail.len().saturating_sub(keep);
    while !tail.is_char_boundary(excess) {
        excess += 1;
    }
    tail.drain(..excess);
}

/// The largest character boundary of `text` at or before `offset`.
pub(super) fn char_floor(text: &str, mut offset: usize) -> usize {
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// Appends `text` to `target` without letting it grow past `limit` bytes.
pub(super) fn push_bounded(target: &mut String, text: &str, limit: usize) {
    let room = limit.saturating_sub(target.len());
    if text.len() <= room {
        target.push_str(text);
    } else {
        let mut cut = room;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        target.push_str(&text[..cut]);
    }
}
