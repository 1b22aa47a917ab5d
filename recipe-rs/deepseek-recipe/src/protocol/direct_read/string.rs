//! JSON strings of the direct read: a run without escapes is borrowed from the body, an escaped
//! one is decoded into one `String` sized from the raw text.
//!
//! Both scans look at 16 bytes at a time for the bytes that end a plain run (a quote, a
//! backslash, a control character); the decoder walks a 64-byte block's mask of them, so a
//! string with an escape every few dozen bytes costs one mask per block, not one search per
//! escape.

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
/// first quote preceded by an even number of backslashes.
fn closing_quote(bytes: &[u8], mut from: usize) -> Option<usize> {
    loop {
        let quote = from + memchr::memchr(b'"', bytes.get(from..)?)?;
        let backslashes = bytes[..quote]
            .iter()
            .rev()
            .take_while(|&&byte| byte == b'\\')
            .count();
        if backslashes % 2 == 0 {
            return Some(quote);
        }
        from = quote + 1;
    }
}

/// Decodes the contents `raw` of a string (without its quotes; every quote in it is escaped),
/// whose first `plain` bytes hold no escape.
fn decode(raw: &str, plain: usize) -> Option<String> {
    let bytes = raw.as_bytes();
    let mut out = String::with_capacity(raw.len());
    // `copied`: where the text not yet copied starts; `at`: where the scan goes on.
    let mut copied = 0;
    let mut at = plain;
    while let Some(block) = bytes.get(at..at + BLOCK) {
        let base = at;
        let mut mask = block_mask(block.try_into().expect("a block"));
        at = base + BLOCK;
        while mask != 0 {
            let escape = base + mask.trailing_zeros() as usize;
            out.push_str(raw.get(copied..escape)?);
            copied = unescape(bytes, escape, &mut out)?;
            let consumed = copied - base;
            if consumed >= BLOCK {
                at = copied;
                break;
            }
            mask &= u128::MAX << consumed;
        }
    }
    while let Some(&byte) = bytes.get(at) {
        if is_special(byte) {
            out.push_str(raw.get(copied..at)?);
            copied = unescape(bytes, at, &mut out)?;
            at = copied;
        } else {
            at += 1;
        }
    }
    out.push_str(raw.get(copied..)?);
    Some(out)
}

/// Appends the character of the escape at `at` to `out` and returns the index after the escape
/// (after both halves of an escaped surrogate pair); `None` if `at` holds no valid escape (a
/// control character, an unescaped quote) or a surrogate outside a pair.
#[inline(always)]
fn unescape(bytes: &[u8], at: usize, out: &mut String) -> Option<usize> {
    if bytes[at] != b'\\' {
        return None;
    }
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
    byte == b'"' || byte == b'\\' || byte < 0x20
}

/// The bytes the decoder masks at once: a mask's loop ends (a mispredicted branch) once per
/// block, so a block spans several escapes of a text with an escape every few dozen bytes.
const BLOCK: usize = 128;

/// One bit per byte of `block` (bit `k` for byte `k`) that [`is_special`].
fn block_mask(block: &[u8; BLOCK]) -> u128 {
    block
        .chunks_exact(16)
        .enumerate()
        .fold(0, |mask, (index, part)| {
            let part: &[u8; 16] = part.try_into().expect("16 bytes");
            mask | u128::from(special_mask(part)) << (16 * index)
        })
}

/// One bit per byte of `block` (bit `k` for byte `k`) that [`is_special`]: SSE2 compares.
#[cfg(target_arch = "x86_64")]
fn special_mask(block: &[u8; 16]) -> u32 {
    use safe_arch::{
        cmp_eq_mask_i8_m128i, load_unaligned_m128i, min_u8_m128i, move_mask_i8_m128i,
        set_splat_i8_m128i,
    };
    let bytes = load_unaligned_m128i(block);
    let quote = cmp_eq_mask_i8_m128i(bytes, set_splat_i8_m128i(b'"' as i8));
    let backslash = cmp_eq_mask_i8_m128i(bytes, set_splat_i8_m128i(b'\\' as i8));
    // `min(byte, 0x1f) == byte` exactly when `byte <= 0x1f` (unsigned).
    let control = cmp_eq_mask_i8_m128i(min_u8_m128i(bytes, set_splat_i8_m128i(0x1f)), bytes);
    move_mask_i8_m128i(quote | backslash | control) as u32
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
    fn a_long_escaped_string_is_decoded_whole() {
        let line = "text with a \\\"quote\\\", a tab\\t and é☃😀\\u00e9\\\\";
        let json = format!("\"{}\"", line.repeat(5000));
        let expected: String = serde_json::from_str(&json).unwrap();
        assert_eq!(read(&json), Some((expected, json.len())));
    }
}
