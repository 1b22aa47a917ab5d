//! JSON strings of the direct read: a run without escapes is borrowed from the body, an escaped
//! one is decoded into one `String` sized from the raw text.
//!
//! The first scan looks at 16 bytes at a time for the bytes that end a plain run (a quote, a
//! backslash, a control character). An escaped string's closing quote is found through 64-byte
//! masks of quotes (an escaped quote costs a bit, not a new search); then the decoder walks a
//! 64-byte block's mask of backslashes (a string with an escape every few dozen bytes costs one
//! mask per block, not one search per escape) and keeps the lowest byte of its blocks to find a
//! raw control character at the end, instead of testing for one at every byte.

/// A decoded JSON string.
pub(super) enum Text<'de> {
    /// No escapes: the body's own text.
    Borrowed(&'de str),
    /// With escapes: decoded.
    Owned(String),
}

/// Reads the string whose opening quote is at `open`: its text and the index after its closing
/// quote. `None` for what the two-stage read rejects (a raw control character, an unknown or cut
/// escape, no closing quote) and for a `\u` escape of a surrogate that is not the high half of a
/// pair escaped right after it (`\ud83d\ude00`, one character), which the two-stage read checks.
pub(super) fn read_string(text: &str, open: usize) -> Option<(Text<'_>, usize)> {
    let bytes = text.as_bytes();
    let start = open + 1;
    let special = first_special(bytes, start);
    match *bytes.get(special)? {
        b'"' => Some((Text::Borrowed(text.get(start..special)?), special + 1)),
        b'\\' => {
            let close = closing_quote(bytes, special)?;
            let decoded = decode(text.get(start..close)?, special - start)?;
            Some((Text::Owned(decoded), close + 1))
        }
        _ => None,
    }
}

/// The index of the first quote, backslash or control character at or after `from`, or the
/// length of `bytes` if there is none.
fn first_special(bytes: &[u8], mut from: usize) -> usize {
    while let Some(block) = bytes.get(from..from + 16) {
        let mask = special_mask(block.try_into().expect("16 bytes"));
        if mask != 0 {
            return from + mask.trailing_zeros() as usize;
        }
        from += 16;
    }
    from + bytes
        .get(from..)
        .unwrap_or_default()
        .iter()
        .position(|&byte| is_special(byte))
        .unwrap_or(bytes.len().saturating_sub(from))
}

/// The index of the quote that closes a string, searching from `from` (inside the string): the
/// first quote preceded by an even number of backslashes. Blocks are masked for quotes, so the
/// escaped quotes of a string cost a bit each rather than a new search.
fn closing_quote(bytes: &[u8], mut from: usize) -> Option<usize> {
    while let Some(block) = bytes.get(from..from + BLOCK) {
        let mut quotes = byte_mask(block.try_into().expect("a block"), b'"');
        while quotes != 0 {
            let quote = from + quotes.trailing_zeros() as usize;
            if is_unescaped(bytes, quote) {
                return Some(quote);
            }
            quotes &= quotes - 1;
        }
        from += BLOCK;
    }
    loop {
        let quote = from + memchr::memchr(b'"', bytes.get(from..)?)?;
        if is_unescaped(bytes, quote) {
            return Some(quote);
        }
        from = quote + 1;
    }
}

/// Whether the byte at `at` follows an even number of backslashes.
fn is_unescaped(bytes: &[u8], at: usize) -> bool {
    let backslashes = bytes[..at]
        .iter()
        .rev()
        .take_while(|&&byte| byte == b'\\')
        .count();
    backslashes % 2 == 0
}

/// One bit per byte of `block` equal to `wanted` (bit `k` for byte `k`): SSE2 compares.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn byte_mask(block: &[u8; BLOCK], wanted: u8) -> u64 {
    use safe_arch::{
        cmp_eq_mask_i8_m128i, load_unaligned_m128i, move_mask_i8_m128i, set_splat_i8_m128i,
    };
    block
        .chunks_exact(16)
        .enumerate()
        .fold(0, |mask, (index, part)| {
            let bytes = load_unaligned_m128i(part.try_into().expect("16 bytes"));
            let equal = cmp_eq_mask_i8_m128i(bytes, set_splat_i8_m128i(wanted as i8));
            mask | u64::from(move_mask_i8_m128i(equal) as u16) << (16 * index)
        })
}

/// One bit per byte of `block` equal to `wanted` (bit `k` for byte `k`): a byte loop.
#[cfg(not(target_arch = "x86_64"))]
fn byte_mask(block: &[u8; BLOCK], wanted: u8) -> u64 {
    block.iter().enumerate().fold(0, |mask, (index, &byte)| {
        mask | u64::from(byte == wanted) << index
    })
}

/// Decodes the contents `raw` of a string (without its quotes; every quote in it is escaped),
/// whose first `plain` bytes hold no escape. Blocks are masked for backslashes alone; the raw
/// control characters the two-stage read rejects are found through the lowest byte seen.
fn decode(raw: &str, plain: usize) -> Option<String> {
    let bytes = raw.as_bytes();
    let mut out = String::with_capacity(raw.len());
    let mut lowest = Lowest::new();
    // `copied`: where the text not yet copied starts; `at`: where the scan goes on.
    let mut copied = 0;
    let mut at = plain;
    while let Some(block) = bytes.get(at..at + BLOCK) {
        let base = at;
        let block = block.try_into().expect("a block");
        lowest.keep(block);
        let mut mask = byte_mask(block, b'\\');
        at = base + BLOCK;
        while mask != 0 {
            let escape = base + mask.trailing_zeros() as usize;
            if escape != copied {
                out.push_str(raw.get(copied..escape)?);
            }
            copied = unescape(bytes, escape, &mut out)?;
            let consumed = copied - base;
            if consumed >= BLOCK {
                at = copied;
                break;
            }
            mask &= u64::MAX << consumed;
        }
    }
    while let Some(&byte) = bytes.get(at) {
        if is_control(byte) {
            return None;
        }
        if byte == b'\\' {
            out.push_str(raw.get(copied..at)?);
            copied = unescape(bytes, at, &mut out)?;
            at = copied;
        } else {
            at += 1;
        }
    }
    if lowest.is_control() {
        return None;
    }
    out.push_str(raw.get(copied..)?);
    Some(out)
}

/// Appends the character of the escape whose backslash is at `at` to `out` and returns the index
/// after the escape (after both halves of an escaped surrogate pair); `None` for an unknown or cut
/// escape and for a surrogate outside a pair.
#[inline(always)]
fn unescape(bytes: &[u8], at: usize, out: &mut String) -> Option<usize> {
    let kind = *bytes.get(at + 1)?;
    let simple = SIMPLE_ESCAPES[usize::from(kind)];
    if simple != 0 {
        out.push(char::from(simple));
        return Some(at + 2);
    }
    if kind != b'u' {
        return None;
    }
    let code = hex_code(bytes, at + 2)?;
    // `from_u32` is `None` exactly for the surrogates.
    if let Some(character) = char::from_u32(code) {
        out.push(character);
        return Some(at + 6);
    }
    let low = match bytes.get(at + 6..at + 8) {
        Some(br"\u") if HIGH_SURROGATES.contains(&code) => hex_code(bytes, at + 8)?,
        _ => return None,
    };
    if !LOW_SURROGATES.contains(&low) {
        return None;
    }
    out.push(char::from_u32(
        0x1_0000 + ((code - HIGH_SURROGATES.start) << 10) + (low - LOW_SURROGATES.start),
    )?);
    Some(at + 12)
}

/// The first half of a UTF-16 surrogate pair.
const HIGH_SURROGATES: std::ops::Range<u32> = 0xD800..0xDC00;
/// The second half of a UTF-16 surrogate pair.
const LOW_SURROGATES: std::ops::Range<u32> = 0xDC00..0xE000;

/// The value of the four hexadecimal digits at `at`, if they are four hexadecimal digits.
fn hex_code(bytes: &[u8], at: usize) -> Option<u32> {
    bytes
        .get(at..at + 4)?
        .iter()
        .try_fold(0u32, |code, &digit| {
            Some(code * 16 + char::from(digit).to_digit(16)?)
        })
}

/// The character of each one-letter escape (`\n`, `\"`, …), 0 for the rest.
const SIMPLE_ESCAPES: [u8; 256] = {
    let mut table = [0u8; 256];
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table[b'/' as usize] = b'/';
    table[b'b' as usize] = 0x08;
    table[b'f' as usize] = 0x0c;
    table[b'n' as usize] = b'\n';
    table[b'r' as usize] = b'\r';
    table[b't' as usize] = b'\t';
    table
};

/// Whether `byte` ends a plain run of string text.
fn is_special(byte: u8) -> bool {
    byte == b'"' || byte == b'\\' || is_control(byte)
}

/// Whether `byte` is a raw control character, which a JSON string may not hold.
fn is_control(byte: u8) -> bool {
    byte < 0x20
}

/// The lanes of `bytes` that hold a control character (all ones), the others zero.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn control_lanes(bytes: safe_arch::m128i) -> safe_arch::m128i {
    use safe_arch::{cmp_eq_mask_i8_m128i, min_u8_m128i, set_splat_i8_m128i};
    // `min(byte, 0x1f) == byte` exactly when `byte <= 0x1f` (unsigned).
    cmp_eq_mask_i8_m128i(min_u8_m128i(bytes, set_splat_i8_m128i(0x1f)), bytes)
}

/// The bytes the decoder masks at once: a mask's loop ends (a mispredicted branch) once per
/// block, so a block spans several escapes of a text with an escape every few dozen bytes; one
/// `u64` mask is cheaper to step through than a `u128` of two blocks (measured: 155 -> 143 us for
/// the bench's document, 27,790 escapes).
const BLOCK: usize = 64;

/// The lowest byte of the blocks kept so far, 16 lanes wide: a control character exactly when
/// one of them is one.
#[cfg(target_arch = "x86_64")]
struct Lowest(safe_arch::m128i);

/// The lowest byte of the blocks kept so far: a control character exactly when one of them is
/// one.
#[cfg(not(target_arch = "x86_64"))]
struct Lowest(u8);

#[cfg(target_arch = "x86_64")]
impl Lowest {
    /// No byte seen yet.
    fn new() -> Self {
        Self(safe_arch::set_splat_i8_m128i(-1))
    }

    /// Keeps the bytes of `block` in the minimum.
    #[inline(always)]
    fn keep(&mut self, block: &[u8; BLOCK]) {
        use safe_arch::{load_unaligned_m128i, min_u8_m128i};
        for part in block.chunks_exact(16) {
            self.0 = min_u8_m128i(
                self.0,
                load_unaligned_m128i(part.try_into().expect("16 bytes")),
            );
        }
    }

    /// Whether a byte kept is a control character.
    fn is_control(&self) -> bool {
        safe_arch::move_mask_i8_m128i(control_lanes(self.0)) != 0
    }
}

#[cfg(not(target_arch = "x86_64"))]
impl Lowest {
    /// No byte seen yet.
    fn new() -> Self {
        Self(u8::MAX)
    }

    /// Keeps the bytes of `block` in the minimum.
    fn keep(&mut self, block: &[u8; BLOCK]) {
        self.0 = block.iter().copied().fold(self.0, u8::min);
    }

    /// Whether a byte kept is a control character.
    fn is_control(&self) -> bool {
        is_control(self.0)
    }
}

/// One bit per byte of `block` (bit `k` for byte `k`) that [`is_special`]: SSE2 compares.
#[cfg(target_arch = "x86_64")]
fn special_mask(block: &[u8; 16]) -> u32 {
    use safe_arch::{
        cmp_eq_mask_i8_m128i, load_unaligned_m128i, move_mask_i8_m128i, set_splat_i8_m128i,
    };
    let bytes = load_unaligned_m128i(block);
    let quote = cmp_eq_mask_i8_m128i(bytes, set_splat_i8_m128i(b'"' as i8));
    let backslash = cmp_eq_mask_i8_m128i(bytes, set_splat_i8_m128i(b'\\' as i8));
    move_mask_i8_m128i(quote | backslash | control_lanes(bytes)) as u32
}

/// One bit per byte of `block` (bit `k` for byte `k`) that [`is_special`]: a byte loop.
#[cfg(not(target_arch = "x86_64"))]
fn special_mask(block: &[u8; 16]) -> u32 {
    block.iter().enumerate().fold(0, |mask, (index, &byte)| {
        mask | u32::from(is_special(byte)) << index
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: &str) -> Option<(String, usize)> {
        read_string(json, 0).map(|(text, end)| match text {
            Text::Borrowed(text) => (text.to_owned(), end),
            Text::Owned(text) => (text, end),
        })
    }

    #[test]
    fn the_mask_marks_exactly_the_special_bytes() {
        for seed in 0u32..4096 {
            let block: [u8; 16] = std::array::from_fn(|index| {
                let mixed = seed
                    .wrapping_mul(2_654_435_761)
                    .rotate_left(index as u32 * 3);
                [b'"', b'\\', 0x1f, 0x20, 0x00, b'a', 0x7f, 0x80, 0xff, 0x5d][mixed as usize % 10]
                    .wrapping_add(u8::from(mixed % 7 == 0))
            });
            let expected = block.iter().enumerate().fold(0u32, |mask, (index, &byte)| {
                mask | u32::from(is_special(byte)) << index
            });
            assert_eq!(special_mask(&block), expected, "{block:?}");
        }
    }

    #[test]
    fn the_block_masks_mark_exactly_the_wanted_bytes_and_keep_the_lowest() {
        for seed in 0u32..1024 {
            let block: [u8; BLOCK] = std::array::from_fn(|index| {
                let mixed = seed
                    .wrapping_mul(2_654_435_761)
                    .rotate_left(index as u32 % 32)
                    .wrapping_add(index as u32 * 40_503);
                // Odd seeds draw no control character.
                let bytes: &[u8] = if seed % 2 == 0 {
                    &[b'"', b'\\', 0x1f, 0x20, 0x00, b'a', 0x7f, 0x80, 0xff]
                } else {
                    &[b'"', b'\\', 0x20, b'a', 0x7f, 0x80, 0xff]
                };
                bytes[mixed as usize % bytes.len()]
            });
            for wanted in [b'"', b'\\'] {
                let expected = block.iter().enumerate().fold(0u64, |mask, (index, &byte)| {
                    mask | u64::from(byte == wanted) << index
                });
                assert_eq!(byte_mask(&block, wanted), expected, "{block:?}");
            }
            let mut lowest = Lowest::new();
            lowest.keep(&block);
            assert_eq!(lowest.is_control(), block.iter().any(|&byte| byte < 0x20));
        }
    }

    #[test]
    fn strings_decode_as_serde_json_decodes_them() {
        let pieces = [
            "plain",
            "é☃😀",
            r"\n",
            r"\r\t\b\f",
            r#"\""#,
            r"\\",
            r"\/",
            r"\u00e9",
            r"\u20AC",
            r"\u0000",
            r"\ud83d\ude00",
            r"\uD83D\uDE00\ud800\udc00",
            r"\udbff\udfff",
            "\u{7f}",
            " ",
            "]",
            "#",
            "x",
        ];
        // Every piece at every offset around the 16- and 64-byte block edges.
        for pad in 0..70 {
            for piece in pieces {
                for tail in ["", "z", r"\n"] {
                    let json = format!(r#""{}{piece}{tail}{piece}" , 1"#, "a".repeat(pad));
                    let expected: String = serde_json::Deserializer::from_str(&json)
                        .into_iter::<String>()
                        .next()
                        .unwrap()
                        .unwrap();
                    let end = json.find(" , 1").unwrap();
                    assert_eq!(read(&json), Some((expected, end)), "{json}");
                }
            }
        }
    }

    #[test]
    fn what_the_two_stage_read_rejects_or_checks_is_not_read() {
        for pad in [0, 15, 16, 63, 64, 100] {
            let a = "a".repeat(pad);
            for bad in [
                format!("\"{a}\u{1}\""),
                format!("\"{a}\n\""),
                format!(r#""{a}\x""#),
                format!(r#""{a}\u12""#),
                format!(r#""{a}\u12G4""#),
                format!(r#""{a}\ud800""#),
                format!(r#""{a}\uDFFF\uD800""#),
                format!(r#""{a}\ud83d\u0041""#),
                format!(r#""{a}\ud83d\ud83d\ude00""#),
                format!(r#""{a}\ud83d\ude0""#),
                format!(r#""{a}\ud83d\n""#),
                format!(r#""{a}\ud83d""#),
                format!(r#""{a}\n"#),
                format!(r#""{a}\"#),
                format!("\"{a}\\n\u{1}\""),
                format!("\"{a}"),
            ] {
                assert_eq!(read(&bad), None, "{bad}");
            }
        }
    }

    #[test]
    fn a_raw_control_character_anywhere_after_an_escape_is_not_read() {
        let text: String = (0..300)
            .map(|index| if index % 7 == 3 { "\\n" } else { "ab" })
            .collect();
        let json = format!("\"\\t{text}\"");
        let expected: String = serde_json::from_str(&json).unwrap();
        assert_eq!(read(&json), Some((expected, json.len())));
        for at in (3..json.len() - 1).filter(|&at| json.is_char_boundary(at)) {
            for control in ["\u{0}", "\u{1f}", "\n"] {
                let mut bad = json.clone();
                bad.insert_str(at, control);
                assert_eq!(read(&bad), None, "control at {at}");
            }
        }
    }

    #[test]
    fn what_follows_the_closing_quote_is_not_the_strings() {
        let tails = ["", "\u{1}\"\\x", "\\\"\n\"", "\"\"\"", "\\u12", "\u{0}"];
        for length in [1, 2, 40, 63, 64, 65, 130, 4000, 30_000, 40_000] {
            let contents: String = (0..length)
                .map(|index| match index % 23 {
                    0 => r"\n",
                    11 => r#"\""#,
                    17 => r"\u00e9",
                    _ => "é",
                })
                .collect();
            let string = format!(r#""{contents}""#);
            let expected: String = serde_json::from_str(&string).unwrap();
            for tail in tails {
                for repeat in [1, 50, 60_000] {
                    let json = format!("{string}{}", tail.repeat(repeat));
                    let Some((Text::Owned(text), end)) = read_string(&json, 0) else {
                        panic!("{string} not decoded")
                    };
                    assert_eq!((text.as_str(), end), (expected.as_str(), string.len()));
                    assert!(
                        text.capacity() <= 2 * text.len().max(string.len()),
                        "{length}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_long_escaped_string_is_decoded_whole() {
        let line = "text with a \\\"quote\\\", a tab\\t and é☃😀\\u00e9\\\\";
        let json = format!("\"{}\"", line.repeat(5000));
        let expected: String = serde_json::from_str(&json).unwrap();
        assert_eq!(read(&json), Some((expected, json.len())));
    }
}
