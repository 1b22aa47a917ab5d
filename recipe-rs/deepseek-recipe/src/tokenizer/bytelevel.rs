//! The byte-level alphabet: every byte is spelled as one printable character in the vocabulary.

/// Whether `byte` is spelled as the character with the same code point.
const fn spells_itself(byte: u8) -> bool {
    matches!(byte, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF)
}

/// The character that spells each byte: itself when printable, else `U+0100 + n` where `n`
/// counts the non-printable bytes before it.
pub(super) const BYTE_CHARS: [char; 256] = {
    let mut table = ['\0'; 256];
    let mut shifted = 0u32;
    let mut byte = 0usize;
    while byte < 256 {
        let code = if spells_itself(byte as u8) {
            byte as u32
        } else {
            shifted += 1;
            255 + shifted
        };
        table[byte] = match char::from_u32(code) {
            Some(c) => c,
            None => '\0',
        };
        byte += 1;
    }
    table
};

/// The non-printable bytes in order: `SHIFTED_BYTES[n]` is spelled `U+0100 + n`.
const SHIFTED_BYTES: [u8; 68] = {
    let mut table = [0u8; 68];
    let mut count = 0;
    let mut byte = 0usize;
    while byte < 256 {
        if !spells_itself(byte as u8) {
            table[count] = byte as u8;
            count += 1;
        }
        byte += 1;
    }
    table
};

/// The byte a byte-level character spells, if it is one.
#[inline]
pub(super) fn char_byte(c: char) -> Option<u8> {
    let code = c as u32;
    if code < 256 {
        let byte = code as u8;
        return spells_itself(byte).then_some(byte);
    }
    SHIFTED_BYTES
        .get(usize::try_from(code - 256).ok()?)
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alphabet_is_a_bijection() {
        for byte in 0..=255u8 {
            assert_eq!(char_byte(BYTE_CHARS[usize::from(byte)]), Some(byte));
        }
        assert_eq!(BYTE_CHARS[usize::from(b' ')], 'Ġ');
        assert_eq!(BYTE_CHARS[usize::from(b'\n')], 'Ċ');
        assert_eq!(char_byte('｜'), None);
        assert_eq!(char_byte(' '), None);
    }
}
