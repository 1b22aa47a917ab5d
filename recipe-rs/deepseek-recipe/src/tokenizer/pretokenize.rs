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
    while at < text.len() {
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

    #[test]
    fn word_regex_constant_matches_the_bundled_file() {
        let json = include_str!("../../data/deepseek-v4/tokenizer.json");
        assert!(json.contains(&serde_json::to_string(WORD_REGEX).unwrap_or_default()));
    }
}
