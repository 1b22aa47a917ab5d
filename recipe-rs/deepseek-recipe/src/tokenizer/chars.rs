//! Character classes used by the pre-tokenizer regexes.

pub(super) use super::char_kind::Kind;
use super::unicode_tables::KIND_RANGES;

const fn ascii_kind(byte: u8) -> Kind {
    match byte {
        b'\t'..=b'\r' | b' ' => Kind::Space,
        b'0'..=b'9' => Kind::Number,
        b'a'..=b'z' | b'A'..=b'Z' => Kind::LetterOrMark,
        b'!'..=b'/' | b':'..=b'@' | b'['..=b'`' | b'{'..=b'~' => Kind::PunctOrSymbol,
        _ => Kind::Other,
    }
}

const ASCII_KINDS: [Kind; 128] = {
    let mut table = [Kind::Other; 128];
    let mut byte = 0;
    while byte < 128 {
        table[byte] = ascii_kind(byte as u8);
        byte += 1;
    }
    table
};

/// The kind of every Basic Multilingual Plane code point, expanded from [`KIND_RANGES`].
static BMP_KINDS: [Kind; 0x10000] = {
    let mut table = [Kind::Other; 0x10000];
    let mut range = 0;
    while range < KIND_RANGES.len() {
        let (start, end, kind) = KIND_RANGES[range];
        let mut code = start;
        while code <= end && code < 0x10000 {
            table[code as usize] = kind;
            code += 1;
        }
        range += 1;
    }
    table
};

/// The kind of `c`.
#[inline]
pub(super) fn kind_of(c: char) -> Kind {
    let code = c as u32;
    if code < 128 {
        return ASCII_KINDS[code as usize];
    }
    if code < 0x10000 {
        return BMP_KINDS[code as usize];
    }
    astral_kind(code)
}

/// The kind of a code point above the Basic Multilingual Plane (rare: kept out of line so that
/// [`kind_of`] inlines into the pre-tokenizer's loops).
#[inline(never)]
fn astral_kind(code: u32) -> Kind {
    match KIND_RANGES.binary_search_by(|&(start, end, _)| {
        if end < code {
            std::cmp::Ordering::Less
        } else if start > code {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    }) {
        Ok(index) => KIND_RANGES[index].2,
        Err(_) => Kind::Other,
    }
}

/// Whether `c` is in `[一-龥぀-ゟ゠-ヿ]`, the CJK class of the second split.
#[inline]
pub(super) fn is_cjk(c: char) -> bool {
    matches!(c, '\u{4E00}'..='\u{9FA5}' | '\u{3040}'..='\u{309F}' | '\u{30A0}'..='\u{30FF}')
}

/// The character starting at byte `at` of `text` and its length in bytes.
///
/// `at` must be a character boundary inside `text`.
#[inline]
pub(super) fn char_at(text: &str, at: usize) -> (char, usize) {
    let bytes = text.as_bytes();
    let first = bytes[at];
    if first < 0x80 {
        return (first as char, 1);
    }
    match text[at..].chars().next() {
        Some(c) => (c, c.len_utf8()),
        None => ('\0', 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_of_sample_characters() {
        assert_eq!(kind_of('a'), Kind::LetterOrMark);
        assert_eq!(kind_of('é'), Kind::LetterOrMark);
        assert_eq!(kind_of('\u{0301}'), Kind::LetterOrMark);
        assert_eq!(kind_of('中'), Kind::LetterOrMark);
        assert_eq!(kind_of('٣'), Kind::Number);
        assert_eq!(kind_of('½'), Kind::Number);
        assert_eq!(kind_of('$'), Kind::PunctOrSymbol);
        assert_eq!(kind_of('😀'), Kind::PunctOrSymbol);
        assert_eq!(kind_of('。'), Kind::PunctOrSymbol);
        assert_eq!(kind_of('\u{3000}'), Kind::Space);
        assert_eq!(kind_of('\u{85}'), Kind::Space);
        assert_eq!(kind_of('\u{1F}'), Kind::Other);
        assert_eq!(kind_of('\u{200D}'), Kind::Other);
        assert_eq!(kind_of('\u{10FFFF}'), Kind::Other);
    }

    #[test]
    fn ascii_table_agrees_with_the_generated_ranges() {
        for byte in 0u8..128 {
            let code = u32::from(byte);
            let from_ranges = KIND_RANGES
                .iter()
                .find(|&&(start, end, _)| start <= code && code <= end)
                .map_or(Kind::Other, |&(_, _, kind)| kind);
            assert_eq!(ascii_kind(byte), from_ranges, "byte {byte:#x}");
        }
    }

    #[test]
    fn bmp_table_agrees_with_the_generated_ranges() {
        for &(start, end, kind) in KIND_RANGES.iter().filter(|range| range.0 < 0x10000) {
            for code in [start, (start + end) / 2, end.min(0xFFFF)] {
                assert_eq!(BMP_KINDS[code as usize], kind, "U+{code:04X}");
            }
        }
        assert_eq!(BMP_KINDS[0xD800], Kind::Other);
    }

    #[test]
    fn cjk_class_bounds() {
        assert!(is_cjk('一') && is_cjk('龥') && is_cjk('ぁ') && is_cjk('ヿ'));
        assert!(!is_cjk('龦') && !is_cjk('〇') && !is_cjk('a'));
    }
}
