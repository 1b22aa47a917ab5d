//! The DeepSeek V4 pre-tokenizer, written out by hand.
//!
//! `tokenizer.json` describes it as a sequence of three `Split` pre-tokenizers (behaviour
//! `Isolated`: matches and the text between them both become pieces), each applied to every piece
//! the previous one produced, followed by a byte-level mapping:
//!
//! 1. `\p{N}{1,3}`: numbers in runs of at most three characters;
//! 2. `[一-龥぀-ゟ゠-ヿ]+`: CJK ideograph and kana runs;
//! 3. [`WORD_REGEX`]: words, punctuation, newlines and spaces.
//!
//! Numbers and CJK characters are disjoint classes, so splits 1 and 2 are one scan here. Split 3
//! runs on each resulting piece on its own: its look-ahead `(?!\S)` and its matches stop at the
//! piece's end, exactly as the regex engine sees a piece as the whole subject string.

use super::chars::{char_at, is_cjk, kind_of, Kind};

/// The pattern of split 1, as `tokenizer.json` spells it.
pub(super) const NUMBER_REGEX: &str = r"\p{N}{1,3}";
/// The pattern of split 2, as `tokenizer.json` spells it.
pub(super) const CJK_REGEX: &str = "[一-龥぀-ゟ゠-ヿ]+";
/// The pattern of split 3, as `tokenizer.json` spells it. Its alternatives, in order:
/// (A) an ASCII punctuation character followed by ASCII letters; (B) one optional character that is
/// not a newline, letter, punctuation or symbol, then letters and marks; (C) an optional space,
/// punctuation and symbols, then newlines; (D) spaces up to the last newline of a space run;
/// (E) a space run not followed by a non-space; (F) any space run.
pub(super) const WORD_REGEX: &str = "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+";

/// Calls `emit` with every piece of `text`, in order; the pieces concatenate to `text`.
pub(super) fn pretokenize<'t>(text: &'t str, emit: &mut impl FnMut(&'t str)) {
    let mut rest_start = 0;
    let mut at = 0;
    loop {
        // Splits 1 and 2 can only start at a digit or a non-ASCII character.
        at = next_digit_or_non_ascii(text.as_bytes(), at);
        if at >= text.len() {
            break;
        }
        let (c, len) = char_at(text, at);
        if c.is_ascii_digit() || (!c.is_ascii() && kind_of(c) == Kind::Number) {
            split_words(&text[rest_start..at], emit);
            at = emit_numbers(text, at, emit);
            rest_start = at;
        } else if !c.is_ascii() && is_cjk(c) {
            split_words(&text[rest_start..at], emit);
            let end = run_end(text, at, is_cjk);
            split_words(&text[at..end], emit);
            at = end;
            rest_start = at;
        } else {
            at += len;
        }
    }
    split_words(&text[rest_start..], emit);
}

/// The offset of the first byte at or after `from` that is an ASCII digit or not ASCII
/// (`bytes.len()` when none), eight bytes at a time.
fn next_digit_or_non_ascii(bytes: &[u8], mut from: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = ONES * 0x80;
    while let Some(chunk) = bytes.get(from..from + 8) {
        let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        // A byte below 0x80 gets its top bit set by adding 0x50 when it is '0' or above, and by
        // adding 0x46 when it is ':' or above. A byte of 0x80 or above is flagged by its own top
        // bit; the carries it may cause only reach later bytes, so the lowest flag is exact.
        let at_least_zero = word.wrapping_add(ONES * 0x50);
        let above_nine = word.wrapping_add(ONES * 0x46);
        let flags = (word | (at_least_zero & !above_nine)) & HIGH;
        if flags != 0 {
            return from + (flags.trailing_zeros() / 8) as usize;
        }
        from += 8;
    }
    bytes[from..]
        .iter()
        .position(|&byte| !byte.is_ascii() || byte.is_ascii_digit())
        .map_or(bytes.len(), |offset| from + offset)
}

/// The first position at or after byte `from` of `text` (strictly inside it) where the text can be
/// cut so that pre-tokenizing the two halves gives exactly the pieces of the whole, if any.
///
/// A cut between characters `a` and `b` is safe when one of them starts or ends a run that an
/// earlier split isolates (numbers for split 1, CJK for split 2; each run's pieces are separate
/// subject strings for split 3), or when split 3 cannot match across it and the match at `b` does
/// not depend on `a`: an ASCII letter followed by an ASCII non-letter (letter runs end there), or
/// a newline followed by an ASCII letter (newline matches end at the last newline, and the letter
/// alternative never takes a newline as its optional first character).
pub(super) fn safe_cut_from(text: &str, from: usize) -> Option<usize> {
    let mut at = from.max(1);
    while at < text.len() && !text.is_char_boundary(at) {
        at += 1;
    }
    if at >= text.len() {
        return None;
    }
    let mut before = text[..at].chars().next_back()?;
    for (offset, after) in text[at..].char_indices() {
        if is_safe_cut(before, after) {
            return Some(at + offset);
        }
        before = after;
    }
    None
}

/// The last position strictly inside `text` where [`safe_cut_from`] could cut it, if any. The
/// rule reads only the two characters around the cut, so the pieces of `text[..cut]` are also the
/// leading pieces of `text` followed by anything.
pub(super) fn last_safe_cut(text: &str) -> Option<usize> {
    let mut chars = text.char_indices().rev();
    let (_, mut after) = chars.next()?;
    let mut after_at = text.len() - after.len_utf8();
    for (at, before) in chars {
        if is_safe_cut(before, after) {
            return Some(after_at);
        }
        (after, after_at) = (before, at);
    }
    None
}

/// Whether pre-tokenization never joins characters `a` and `b` into one piece and the pieces on
/// either side do not depend on the other side (see [`safe_cut_from`]).
fn is_safe_cut(a: char, b: char) -> bool {
    let (a_number, b_number) = (kind_of(a) == Kind::Number, kind_of(b) == Kind::Number);
    let (a_cjk, b_cjk) = (is_cjk(a), is_cjk(b));
    (a_number != b_number && !a_cjk && !b_cjk)
        || (a_cjk != b_cjk && !a_number && !b_number)
        || (a.is_ascii_alphabetic() && b.is_ascii() && !b.is_ascii_alphabetic())
        || (a == '\n' && b.is_ascii_alphabetic())
}

/// Emits the number run starting at `start` in pieces of at most three characters; returns its end.
fn emit_numbers<'t>(text: &'t str, start: usize, emit: &mut impl FnMut(&'t str)) -> usize {
    let mut piece_start = start;
    let mut count = 0;
    let mut at = start;
    while at < text.len() {
        let (c, len) = char_at(text, at);
        if kind_of(c) != Kind::Number {
            break;
        }
        if count == 3 {
            emit(&text[piece_start..at]);
            piece_start = at;
            count = 0;
        }
        count += 1;
        at += len;
    }
    emit(&text[piece_start..at]);
    at
}

/// The end of the run of characters satisfying `keep` that starts at `at`.
#[inline]
fn run_end(text: &str, mut at: usize, keep: impl Fn(char) -> bool) -> usize {
    let bytes = text.as_bytes();
    while at < text.len() {
        if bytes[at] < 0x80 {
            if !keep(bytes[at] as char) {
                break;
            }
            at += 1;
        } else {
            let (c, len) = char_at(text, at);
            if !keep(c) {
                break;
            }
            at += len;
        }
    }
    at
}

#[inline]
fn is_letter_or_mark(c: char) -> bool {
    kind_of(c) == Kind::LetterOrMark
}

#[inline]
fn is_punct_or_symbol(c: char) -> bool {
    kind_of(c) == Kind::PunctOrSymbol
}

#[inline]
fn is_newline(c: char) -> bool {
    c == '\r' || c == '\n'
}

/// Split 3 on one piece: emits the matches of [`WORD_REGEX`] and the text between them.
fn split_words<'t>(piece: &'t str, emit: &mut impl FnMut(&'t str)) {
    let mut gap_start = 0;
    let mut at = 0;
    while at < piece.len() {
        match word_match_end(piece, at) {
            Some(end) => {
                if gap_start < at {
                    emit(&piece[gap_start..at]);
                }
                emit(&piece[at..end]);
                at = end;
                gap_start = end;
            }
            None => at += char_at(piece, at).1,
        }
    }
    if gap_start < piece.len() {
        emit(&piece[gap_start..]);
    }
}

/// The end of the [`WORD_REGEX`] match that starts at `at`, if one does (first alternative wins).
fn word_match_end(piece: &str, at: usize) -> Option<usize> {
    let bytes = piece.as_bytes();
    let (c, len) = char_at(piece, at);
    let next = at + len;
    // (A) [!"#...~][A-Za-z]+
    if c.is_ascii_punctuation() && next < bytes.len() && bytes[next].is_ascii_alphabetic() {
        return Some(run_end(piece, next, |c| c.is_ascii_alphabetic()));
    }
    let kind = kind_of(c);
    // (B) [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+
    if kind == Kind::LetterOrMark {
        return Some(run_end(piece, next, is_letter_or_mark));
    }
    if !is_newline(c) && kind != Kind::PunctOrSymbol && next < bytes.len() {
        let (second, second_len) = char_at(piece, next);
        if is_letter_or_mark(second) {
            return Some(run_end(piece, next + second_len, is_letter_or_mark));
        }
    }
    // (C) ' ?[\p{P}\p{S}]+[\r\n]*'
    let punct_start = if c == ' ' && next < bytes.len() {
        let (second, second_len) = char_at(piece, next);
        is_punct_or_symbol(second).then_some(next + second_len)
    } else if kind == Kind::PunctOrSymbol {
        Some(next)
    } else {
        None
    };
    if let Some(start) = punct_start {
        let punct_end = run_end(piece, start, is_punct_or_symbol);
        return Some(run_end(piece, punct_end, is_newline));
    }
    if kind != Kind::Space {
        return None;
    }
    // The space run: its end, the start of its last character and the end of its last newline.
    let mut end = at;
    let mut last_start = at;
    let mut newline_end = None;
    while end < piece.len() {
        let (c, len) = char_at(piece, end);
        if kind_of(c) != Kind::Space {
            break;
        }
        last_start = end;
        end += len;
        if is_newline(c) {
            newline_end = Some(end);
        }
    }
    // (D) \s*[\r\n]+
    if newline_end.is_some() {
        return newline_end;
    }
    // (E) \s+(?!\S): the whole run at the piece's end, else all but its last character.
    if end == piece.len() {
        return Some(end);
    }
    if last_start > at {
        return Some(last_start);
    }
    // (F) \s+
    Some(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        pretokenize(text, &mut |piece| out.push(piece));
        out
    }

    #[test]
    fn digit_and_non_ascii_scan_matches_a_byte_loop() {
        let mut seed = 0x5EED_0FD1_617B_u64;
        let alphabet = b"aZ /:09\x7f\x80\xc3\xa9\xff~";
        for len in 0..40 {
            for _ in 0..200 {
                let bytes: Vec<u8> = (0..len)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        alphabet[(seed % alphabet.len() as u64) as usize]
                    })
                    .collect();
                for from in 0..=len {
                    let expected = (from..len)
                        .find(|&at| !bytes[at].is_ascii() || bytes[at].is_ascii_digit())
                        .unwrap_or(len);
                    assert_eq!(
                        next_digit_or_non_ascii(&bytes, from),
                        expected,
                        "{bytes:?} {from}"
                    );
                }
            }
        }
        for byte in 0..=255u8 {
            let flagged = !byte.is_ascii() || byte.is_ascii_digit();
            let mut word = [b'a'; 8];
            word[5] = byte;
            assert_eq!(
                next_digit_or_non_ascii(&word, 0),
                if flagged { 5 } else { 8 }
            );
        }
    }

    #[test]
    fn words_spaces_and_punctuation() {
        assert_eq!(pieces("Hello world!"), ["Hello", " world", "!"]);
        assert_eq!(pieces("a  b"), ["a", " ", " b"]);
        assert_eq!(pieces("a  "), ["a", "  "]);
        assert_eq!(pieces("x .com's"), ["x", " .", "com", "'s"]);
        assert_eq!(pieces("end.\n\nNext"), ["end", ".\n\n", "Next"]);
        assert_eq!(pieces("a \n \n  b"), ["a", " \n \n", " ", " b"]);
        assert_eq!(pieces("\tfoo"), ["\tfoo"]);
    }

    #[test]
    fn numbers_split_in_threes_before_anything_else() {
        assert_eq!(pieces("1234567"), ["123", "456", "7"]);
        assert_eq!(pieces("abc  123"), ["abc", "  ", "123"]);
        assert_eq!(pieces("v2x"), ["v", "2", "x"]);
    }

    #[test]
    fn cjk_runs_are_isolated_then_split_again() {
        assert_eq!(pieces("我们hello"), ["我们", "hello"]);
        assert_eq!(pieces("カタ・カナ"), ["カタ", "・", "カナ"]);
    }

    #[test]
    fn unmatched_characters_stay_together() {
        assert_eq!(pieces("\u{0}\u{0}abc"), ["\u{0}", "\u{0}abc"]);
        assert_eq!(pieces("👨\u{200D}👩"), ["👨", "\u{200D}", "👩"]);
        assert_eq!(pieces("❤\u{FE0F}"), ["❤", "\u{FE0F}"]);
    }

    /// Deterministic text from characters that exercise every split rule and cut rule.
    fn cut_test_text(seed: &mut u64, len: usize) -> String {
        const CHARS: &[char] = &[
            'a', 'Z', 'é', '\u{301}', ' ', ' ', '\n', '\r', '\t', '\u{3000}', '1', '٣', '½', '.',
            '"', '{', '😀', '中', 'カ', '\u{0}', '\u{200D}', '_', '-',
        ];
        (0..len)
            .map(|_| {
                *seed ^= *seed << 13;
                *seed ^= *seed >> 7;
                *seed ^= *seed << 17;
                CHARS[(*seed % CHARS.len() as u64) as usize]
            })
            .collect()
    }

    #[test]
    fn safe_cuts_give_the_pieces_of_the_whole() {
        let mut seed = 0x0DDB_1A5E_5BAD_5EED;
        let mut cuts_seen = 0;
        for round in 0..400 {
            let text = cut_test_text(&mut seed, 2 + round % 60);
            let whole = pieces(&text);
            let mut from = 0;
            while let Some(cut) = safe_cut_from(&text, from) {
                assert!(0 < cut && cut < text.len() && cut >= from);
                let mut halves = pieces(&text[..cut]);
                halves.extend(pieces(&text[cut..]));
                assert_eq!(halves, whole, "{text:?} cut at {cut}");
                cuts_seen += 1;
                from = cut + 1;
            }
        }
        assert!(cuts_seen > 1000, "{cuts_seen}");
    }

    #[test]
    fn the_last_safe_cut_keeps_the_leading_pieces_whatever_follows() {
        let mut seed = 0x1A57_C07F_00D5_EED5;
        let mut checked = 0;
        for round in 0..600 {
            let text = cut_test_text(&mut seed, 1 + round % 40);
            let mut last = None;
            let mut from = 0;
            while let Some(cut) = safe_cut_from(&text, from) {
                last = Some(cut);
                from = cut + 1;
            }
            let cut = last_safe_cut(&text);
            assert_eq!(cut, last, "{text:?}");
            let Some(cut) = cut else { continue };
            let head = pieces(&text[..cut]);
            for tail_len in 0..6 {
                let mut whole = text.clone();
                whole.push_str(&cut_test_text(&mut seed, tail_len));
                let mut expected = head.clone();
                expected.extend(pieces(&whole[cut..]));
                assert_eq!(pieces(&whole), expected, "{whole:?} cut at {cut}");
                checked += 1;
            }
        }
        assert!(checked > 2000, "{checked}");
        assert_eq!(last_safe_cut("unchecked.\n\n"), Some(9));
        assert_eq!(last_safe_cut("a"), None);
        assert_eq!(last_safe_cut(""), None);
    }

    #[test]
    fn cut_rules() {
        assert_eq!(safe_cut_from("abc,def", 0), Some(3));
        assert_eq!(safe_cut_from("ab\ncd", 0), Some(2));
        assert_eq!(safe_cut_from("ab\ncd", 3), Some(3));
        assert_eq!(safe_cut_from("ab\ncd", 4), None);
        assert_eq!(safe_cut_from("x123", 2), None);
        assert_eq!(safe_cut_from("中文abc", 1), Some(6));
        assert_eq!(safe_cut_from(&"a".repeat(100), 0), None);
        assert_eq!(safe_cut_from("é", 1), None);
    }

    #[test]
    fn word_regex_constant_matches_the_bundled_file() {
        let json = include_str!("../../data/deepseek-v4/tokenizer.json");
        assert!(json.contains(&serde_json::to_string(WORD_REGEX).unwrap_or_default()));
    }
}
