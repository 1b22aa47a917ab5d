//! Python `str`s of long texts, built without CPython's slow path for wide characters.
//!
//! CPython decodes UTF-8 into a one-byte `str` and widens it (a new buffer and a copy of what is
//! written so far) at the first character that does not fit: for a megabyte of text with one
//! character beyond U+FFFF this means buffers of up to four times the text's size, allocated
//! fresh (page faults) on every call. Decoding the text in pieces small enough to stay in cache
//! and joining them lets `str.join` allocate the result once, at its final width
//! (docs/performance.md, "Second round").
//!
//! The pieces live next to the result until it is joined, so they are kept narrow where the text
//! allows: a long stretch without characters from U+0100 up is a piece of its own, one byte a
//! character. Otherwise a text with wide characters spread through it (an agent's prompt with
//! emoji in its tool results) makes every piece four bytes a character, the pieces take as much
//! memory as the result, and glibc returns that memory to the kernel after each call, to fault
//! it in again on the next (docs/performance.md, "Sixth round").

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

/// UTF-8 bytes per piece of wide text: a piece's widest buffer (four bytes a character) fits in
/// L2 cache.
const PIECE_BYTES: usize = 16 * 1024;
/// Shortest stretch without wide characters that becomes a piece of its own, in bytes.
const NARROW_RUN_BYTES: usize = 1024;
/// The smallest UTF-8 lead byte of a character from U+0100 up (a one-byte-wide `str` cannot
/// hold it); continuation bytes are all below it.
const WIDE_LEAD: u8 = 0xC4;
/// Bytes examined at once when looking for the next wide character.
const SCAN_BLOCK: usize = 32;

/// `text` as a Python `str`: in one call when it is short or ASCII (one width, no widening),
/// otherwise decoded piece by piece and joined.
pub(crate) fn long_str<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyString>> {
    if text.len() <= PIECE_BYTES || text.is_ascii() {
        return Ok(PyString::new(py, text));
    }
    let pieces = PyList::empty(py);
    for piece in pieces_of(text) {
        pieces.append(PyString::new(py, piece))?;
    }
    PyString::new(py, "")
        .call_method1(intern!(py, "join"), (pieces,))?
        .cast_into::<PyString>()
        .map_err(Into::into)
}

/// `text` cut into consecutive pieces on character boundaries: every narrow run
/// (`narrow_runs`) alone, the text between them in pieces of at most `PIECE_BYTES` bytes.
fn pieces_of(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut rest_start = 0;
    for (start, end) in narrow_runs(text.as_bytes()) {
        push_bounded(&mut pieces, &text[rest_start..start]);
        pieces.push(&text[start..end]);
        rest_start = end;
    }
    push_bounded(&mut pieces, &text[rest_start..]);
    pieces
}

/// The byte ranges of at least `NARROW_RUN_BYTES` bytes that hold no character from U+0100 up
/// and are bounded by such characters or the ends of the text, in order. Each step looks at the
/// next `NARROW_RUN_BYTES` bytes and jumps past the last wide character in them, so dense wide
/// text is crossed a window at a time.
fn narrow_runs(bytes: &[u8]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < bytes.len() {
            let window_end = (at + NARROW_RUN_BYTES).min(bytes.len());
            if let Some(lead) = last_wide_lead(&bytes[at..window_end]) {
                at += lead + utf8_len(bytes[at + lead]);
                continue;
            }
            let start = at;
            let end = next_wide_lead(bytes, window_end).unwrap_or(bytes.len());
            at = bytes
                .get(end)
                .map_or(bytes.len(), |&lead| end + utf8_len(lead));
            if end - start >= NARROW_RUN_BYTES {
                return Some((start, end));
            }
        }
        None
    })
}

/// Whether `block` holds a wide lead byte: a maximum over the block (vectorised) rather than a
/// search that stops early.
fn has_wide_lead(block: &[u8]) -> bool {
    block.iter().fold(0, |high, &byte| high.max(byte)) >= WIDE_LEAD
}

/// The position of the next lead byte of a character from U+0100 up, at or after `from`.
fn next_wide_lead(bytes: &[u8], from: usize) -> Option<usize> {
    let rest = &bytes[from..];
    let skipped = rest
        .chunks_exact(SCAN_BLOCK)
        .take_while(|block| !has_wide_lead(block))
        .count()
        * SCAN_BLOCK;
    rest[skipped..]
        .iter()
        .position(|&byte| byte >= WIDE_LEAD)
        .map(|offset| from + skipped + offset)
}

/// The position in `window` of its last lead byte of a character from U+0100 up.
fn last_wide_lead(window: &[u8]) -> Option<usize> {
    let mut end = window.len();
    for block in window.rchunks(SCAN_BLOCK) {
        let start = end - block.len();
        if has_wide_lead(block) {
            return block
                .iter()
                .rposition(|&byte| byte >= WIDE_LEAD)
                .map(|at| start + at);
        }
        end = start;
    }
    None
}

/// The length of the UTF-8 character whose lead byte is `lead` (a multi-byte lead).
fn utf8_len(lead: u8) -> usize {
    match lead {
        0xF0.. => 4,
        0xE0.. => 3,
        _ => 2,
    }
}

/// Appends `text` cut into consecutive pieces of at most `PIECE_BYTES` bytes, each ending on a
/// character boundary.
fn push_bounded<'a>(pieces: &mut Vec<&'a str>, text: &'a str) {
    let mut rest = text;
    while !rest.is_empty() {
        let mut end = rest.len().min(PIECE_BYTES);
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let (piece, tail) = rest.split_at(end);
        pieces.push(piece);
        rest = tail;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_narrow(piece: &str) -> bool {
        piece.chars().all(|ch| u32::from(ch) < 0x100)
    }

    #[test]
    fn pieces_cover_the_text_on_character_boundaries() {
        let text = "a😀é".repeat(PIECE_BYTES / 3);
        let pieces = pieces_of(&text);
        assert!(pieces.len() > 1);
        assert!(pieces.iter().all(|piece| piece.len() <= PIECE_BYTES));
        assert_eq!(pieces.concat(), text);
        assert!(pieces_of("").is_empty());
    }

    #[test]
    fn long_narrow_stretches_are_pieces_of_their_own() {
        let narrow = "é, plain text. ".repeat(NARROW_RUN_BYTES / 16 + 1);
        let short = "x".repeat(NARROW_RUN_BYTES - 1);
        let text = format!("{narrow}😀{short}中{narrow}{narrow}€");
        let pieces = pieces_of(&text);
        assert_eq!(pieces.concat(), text);
        assert_eq!(pieces[0], narrow);
        assert_eq!(pieces[1], format!("😀{short}中"));
        assert_eq!(pieces[2], format!("{narrow}{narrow}"));
        assert_eq!(pieces[3], "€");
        let wide = "中".repeat(PIECE_BYTES);
        let text = format!("{wide}{narrow}");
        let pieces = pieces_of(&text);
        assert_eq!(pieces.concat(), text);
        assert!(pieces
            .iter()
            .all(|piece| piece.len() <= PIECE_BYTES || is_narrow(piece)));
        assert_eq!(pieces.last(), Some(&narrow.as_str()));
    }

    /// Text of random narrow, wide and astral characters in random stretches (xorshift).
    fn random_text(seed: &mut u64, len: usize) -> String {
        let mut next = |bound: u64| {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            *seed % bound
        };
        let mut text = String::new();
        while text.len() < len {
            let run = NARROW_RUN_BYTES as u64;
            let stretch = [1, 3, 40, run - 1, run, run + 1, 3 * run][next(7) as usize];
            let ch = ['a', 'é', 'Ā', '中', '😀', '\u{ff}'][next(6) as usize];
            for _ in 0..next(stretch) + 1 {
                text.push(ch);
            }
        }
        text
    }

    /// `narrow_runs` by its definition: the gaps between wide characters.
    fn narrow_runs_by_definition(text: &str) -> Vec<(usize, usize)> {
        let mut bounds = vec![(0, 0)];
        for (at, ch) in text
            .char_indices()
            .filter(|&(_, ch)| u32::from(ch) >= 0x100)
        {
            bounds.push((at, at + ch.len_utf8()));
        }
        bounds.push((text.len(), text.len()));
        bounds
            .windows(2)
            .map(|pair| (pair[0].1, pair[1].0))
            .filter(|&(start, end)| end - start >= NARROW_RUN_BYTES)
            .collect()
    }

    #[test]
    fn narrow_runs_are_the_long_gaps_between_wide_characters() {
        let mut seed = 0x9E37_79B9_7F4A_7C15;
        for case in 0..300 {
            let text = random_text(&mut seed, case * NARROW_RUN_BYTES / 10);
            let runs: Vec<_> = narrow_runs(text.as_bytes()).collect();
            assert_eq!(runs, narrow_runs_by_definition(&text), "{text:?}");
            assert_eq!(pieces_of(&text).concat(), text);
        }
    }

    #[test]
    fn wide_leads_are_found_at_every_offset() {
        for len in [0, 1, SCAN_BLOCK - 1, SCAN_BLOCK, 3 * SCAN_BLOCK + 5] {
            for wide_at in 0..=len {
                let mut text = "é".repeat(len / 2) + &"a".repeat(len % 2);
                let boundary = (0..=wide_at.min(text.len()))
                    .rev()
                    .find(|&at| text.is_char_boundary(at))
                    .unwrap();
                text.insert(boundary, 'Ā');
                let bytes = text.as_bytes();
                let wide = |ch: char| u32::from(ch) >= 0x100;
                for from in (0..bytes.len()).filter(|&at| text.is_char_boundary(at)) {
                    let expected = text[from..]
                        .char_indices()
                        .find(|&(_, ch)| wide(ch))
                        .map(|(offset, _)| from + offset);
                    assert_eq!(
                        next_wide_lead(bytes, from),
                        expected,
                        "{text:?} from {from}"
                    );
                    let last = text[from..]
                        .char_indices()
                        .rfind(|&(_, ch)| wide(ch))
                        .map(|(offset, _)| offset);
                    assert_eq!(last_wide_lead(&bytes[from..]), last, "{text:?} from {from}");
                }
            }
        }
    }
}
