//! `data:` URLs at resolution time: media type, size estimate, and forgiving decoding.

use super::error::ImageErrorKind;

/// Media types a data URL may declare (lower case; parameters ignored).
const SUPPORTED_MEDIA_TYPES: [&str; 5] = [
    "image/png",
    "image/jpeg",
    "image/jpg",
    "image/gif",
    "image/webp",
];

/// A parsed `data:[<media type>][;params][;base64],<body>` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DataUrl<'a> {
    /// The media type, lower-cased (may be empty).
    media_type: String,
    /// Whether the body is base64 (else percent-encoded).
    base64: bool,
    /// Everything after the first comma.
    body: &'a str,
}

impl<'a> DataUrl<'a> {
    /// Splits a data URL (scheme case-insensitive, leading ASCII whitespace skipped);
    /// `InvalidDataUrl` without `data:` or comma.
    pub(crate) fn parse(url: &'a str) -> Result<Self, ImageErrorKind> {
        let url = url.trim_ascii_start();
        let rest = match url.get(..5) {
            Some(scheme) if scheme.eq_ignore_ascii_case("data:") => &url[5..],
            _ => return Err(ImageErrorKind::InvalidDataUrl),
        };
        let (header, body) = rest.split_once(',').ok_or(ImageErrorKind::InvalidDataUrl)?;
        let media_type = header
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        let base64 = header
            .rsplit(';')
            .next()
            .is_some_and(|last| header.contains(';') && last.trim().eq_ignore_ascii_case("base64"));
        Ok(Self {
            media_type,
            base64,
            body,
        })
    }

    /// Whether the declared media type is PNG, JPEG (`image/jpg` too), GIF or WebP.
    pub(crate) fn has_supported_media_type(&self) -> bool {
        SUPPORTED_MEDIA_TYPES.contains(&self.media_type.as_str())
    }

    /// The decoded size estimated before decoding: `len / 4 · 3` for base64,
    /// `len − 2·count('%')` for percent-encoding.
    pub(crate) fn estimated_size(&self) -> u64 {
        let len = self.body.len() as u64;
        if self.base64 {
            len / 4 * 3
        } else {
            let escapes = self.body.bytes().filter(|&byte| byte == b'%').count() as u64;
            len.saturating_sub(2 * escapes)
        }
    }

    /// The bytes; `InvalidDataUrl` for bad base64 or percent escapes.
    pub(crate) fn decode(&self) -> Result<Vec<u8>, ImageErrorKind> {
        let decoded = if self.base64 {
            decode_base64(self.body)
        } else {
            decode_percent(self.body)
        };
        decoded.ok_or(ImageErrorKind::InvalidDataUrl)
    }
}

/// A base64 body without its trailing control characters and spaces (U+0000 to U+0020),
/// which the reference ignores.
pub(crate) fn trim_base64_end(body: &str) -> &str {
    body.trim_end_matches(|c: char| c <= ' ')
}

/// Standard-alphabet base64; ASCII whitespace skipped, missing padding accepted, extra
/// padding, `=` inside the data and any other character refused (trailing control characters
/// are ignored: [`trim_base64_end`]).
pub(crate) fn decode_base64(body: &str) -> Option<Vec<u8>> {
    let symbols: Vec<u8> = trim_base64_end(body)
        .bytes()
        .filter(|byte| !byte.is_ascii_whitespace())
        .collect();
    let data_len = symbols
        .iter()
        .position(|&b| b == b'=')
        .unwrap_or(symbols.len());
    let padding = symbols.len() - data_len;
    if symbols[data_len..].iter().any(|&b| b != b'=') {
        return None;
    }
    let remainder = data_len % 4;
    let padding_ok = match remainder {
        0 => padding == 0,
        1 => false,
        _ => padding <= 4 - remainder,
    };
    if !padding_ok {
        return None;
    }
    let mut out = Vec::with_capacity(data_len / 4 * 3 + 2);
    let mut buffer = 0u32;
    let mut bits = 0;
    for &symbol in &symbols[..data_len] {
        buffer = (buffer << 6) | u32::from(base64_value(symbol)?);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
            buffer &= (1 << bits) - 1;
        }
    }
    Some(out)
}

fn base64_value(symbol: u8) -> Option<u8> {
    match symbol {
        b'A'..=b'Z' => Some(symbol - b'A'),
        b'a'..=b'z' => Some(symbol - b'a' + 26),
        b'0'..=b'9' => Some(symbol - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// Percent-decoding: `%XX` becomes the byte, every other byte stays; a `%` without two hex
/// digits is refused.
fn decode_percent(body: &str) -> Option<Vec<u8>> {
    let bytes = body.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let hex = bytes.get(index + 1..index + 3)?;
            let high = (hex[0] as char).to_digit(16)?;
            let low = (hex[1] as char).to_digit(16)?;
            out.push((high * 16 + low) as u8);
            index += 3;
        } else {
            out.push(bytes[index]);
            index += 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_headers() {
        let url = DataUrl::parse("DATA:IMAGE/PNG;charset=x;base64,QUJD").unwrap();
        assert!(url.has_supported_media_type());
        assert_eq!(url.decode().unwrap(), b"ABC");
        let url = DataUrl::parse("data:image/jpg,%41B").unwrap();
        assert!(url.has_supported_media_type());
        assert_eq!(url.decode().unwrap(), b"AB");
        assert_eq!(url.estimated_size(), 2);
        assert!(!DataUrl::parse("data:;base64,QQ==")
            .unwrap()
            .has_supported_media_type());
        assert_eq!(
            DataUrl::parse("data:image/png;base64"),
            Err(ImageErrorKind::InvalidDataUrl)
        );
        assert_eq!(DataUrl::parse(""), Err(ImageErrorKind::InvalidDataUrl));
        let url = DataUrl::parse("\n data:image/png;base64,QUJD").unwrap();
        assert_eq!(url.decode().unwrap(), b"ABC");
        let url = DataUrl::parse("data:image/png;base64,QUJD\u{1f}\u{0}").unwrap();
        assert_eq!(url.decode().unwrap(), b"ABC");
    }

    #[test]
    fn base64_is_forgiving_but_not_sloppy() {
        assert_eq!(decode_base64("QU JD\n").unwrap(), b"ABC");
        assert_eq!(decode_base64("QQ").unwrap(), b"A");
        assert_eq!(decode_base64("QQ=").unwrap(), b"A");
        assert_eq!(decode_base64("QQ==").unwrap(), b"A");
        assert_eq!(decode_base64("").unwrap(), b"");
        assert!(decode_base64("QQ===").is_none());
        assert!(decode_base64("QUJD=").is_none());
        assert!(decode_base64("Q").is_none());
        assert!(decode_base64("Q-_A").is_none());
        assert!(decode_base64("QQ==QQ==").is_none());
        assert!(decode_percent("%4").is_none());
    }
}
