//! A small compact-JSON writer for the hot chunk shapes, byte-exact with `serde_json`'s compact
//! output: strings escape `"`, `\` and control characters exactly as `serde_json` does (the short
//! forms `\b \t \n \f \r`, otherwise `\u00xx` in lowercase hex; everything else is copied as is).
//! Values with floats or nested objects are delegated to `serde_json` itself.

use serde::Serialize;

/// How `serde_json` escapes each byte: 0 = copied, `u` = `\u00xx`, else the short escape letter.
const ESCAPES: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = b'u';
        byte += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0A] = b'n';
    table[0x0C] = b'f';
    table[0x0D] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Whether any of the eight bytes of `word` needs escaping (a control byte, `"` or `\`). Exact:
/// the classic "has a byte below n" / "has a zero byte" word tricks have no false answers for
/// the question "any byte?".
#[inline]
fn word_needs_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word;
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let has_quote = quote.wrapping_sub(ONES) & !quote;
    let has_backslash = backslash.wrapping_sub(ONES) & !backslash;
    (below_space | has_quote | has_backslash) & HIGHS != 0
}

/// The length of `bytes` when none of it needs escaping, else of its longest prefix of whole
/// eight-byte words that needs none. The last few bytes are tested as one word padded with
/// plain bytes, so a short string (an id, a model name, a piece of a few characters) is one test.
#[inline]
fn plain_prefix(bytes: &[u8]) -> usize {
    let mut at = 0;
    while let Some(word) = bytes.get(at..at + 8) {
        if word_needs_escape(u64::from_le_bytes(word.try_into().expect("eight bytes"))) {
            return at;
        }
        at += 8;
    }
    let mut tail = [b'a'; 8];
    tail[..bytes.len() - at].copy_from_slice(&bytes[at..]);
    if word_needs_escape(u64::from_le_bytes(tail)) {
        at
    } else {
        bytes.len()
    }
}

/// Appends the escaped inside of a JSON string (no quotes).
#[inline]
pub fn write_escaped(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    let plain = plain_prefix(bytes);
    if plain == bytes.len() {
        out.extend_from_slice(bytes);
        return;
    }
    let mut start = 0;
    let mut index = plain;
    while index < bytes.len() {
        // Skip eight plain bytes at a time (most text needs no escaping at all).
        if let Some(word) = bytes.get(index..index + 8) {
            let word = u64::from_le_bytes(word.try_into().expect("eight bytes"));
            if !word_needs_escape(word) {
                index += 8;
                continue;
            }
        }
        let byte = bytes[index];
        let escape = ESCAPES[byte as usize];
        if escape != 0 {
            out.extend_from_slice(&bytes[start..index]);
            match escape {
                b'u' => out.extend_from_slice(&[
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[(byte >> 4) as usize],
                    HEX[(byte & 0xF) as usize],
                ]),
                letter => out.extend_from_slice(&[b'\\', letter]),
            }
            start = index + 1;
        }
        index += 1;
    }
    out.extend_from_slice(&bytes[start..]);
}

/// Appends `text` as a JSON string.
#[inline]
pub fn write_str(out: &mut Vec<u8>, text: &str) {
    out.push(b'"');
    write_escaped(out, text);
    out.push(b'"');
}

/// Appends `text` as a JSON string, or `null`.
#[inline]
pub fn write_opt_str(out: &mut Vec<u8>, text: Option<&str>) {
    match text {
        Some(text) => write_str(out, text),
        None => out.extend_from_slice(b"null"),
    }
}

/// Appends an unsigned integer.
#[inline]
pub fn write_u64(out: &mut Vec<u8>, mut value: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    // Byte pushes after one reservation: cheaper than a copy call for a few digits.
    out.reserve(digits.len() - at);
    for &digit in &digits[at..] {
        out.push(digit);
    }
}

/// Appends a `usize` (see [`write_u64`]).
#[inline]
pub fn write_usize(out: &mut Vec<u8>, value: usize) {
    write_u64(out, value as u64);
}

/// Appends `,"key":` (or `"key":` when `first`); `key` needs no escaping.
#[inline(always)]
pub fn write_key(out: &mut Vec<u8>, key: &str, first: bool) {
    if !first {
        out.push(b',');
    }
    out.push(b'"');
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(b"\":");
}

/// Appends any serialisable value through `serde_json` (the same bytes it writes nested).
pub fn write_value<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    serde_json::to_writer(out, value).expect("stream types always serialise");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_escape_like_serde_json() {
        let mut all = String::new();
        for code in 0u32..0x300 {
            all.extend(char::from_u32(code));
        }
        all.push_str("😀\u{2028}\u{FFFD}\"\\/");
        let mut ours = Vec::new();
        write_str(&mut ours, &all);
        assert_eq!(
            String::from_utf8(ours).unwrap(),
            serde_json::to_string(&all).unwrap()
        );
    }

    #[test]
    fn escapes_at_every_offset_of_a_word() {
        for special in [
            '"', '\\', '\n', '\u{1}', '\u{1f}', ' ', '!', '#', '[', ']', '\u{7f}', 'é',
        ] {
            for offset in 0..20 {
                for after in [0, 1, 6, 7, 25] {
                    let mut text = "a".repeat(offset);
                    text.push(special);
                    text.push_str(&"bcdefghijklmnopqrstuvwxyz"[..after]);
                    let mut ours = Vec::new();
                    write_str(&mut ours, &text);
                    assert_eq!(ours, serde_json::to_vec(&text).unwrap(), "{text:?}");
                }
            }
        }
    }

    #[test]
    fn integers_print_like_serde_json() {
        for value in [0, 7, 10, 99, 100, 12_345, u64::MAX] {
            let mut ours = Vec::new();
            write_u64(&mut ours, value);
            assert_eq!(ours, serde_json::to_vec(&value).unwrap());
        }
    }
}
