//! Format sniffing by magic bytes only (declared media types are never trusted).

/// An encoded image format the pipeline accepts or produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImageFormat {
    /// PNG (APNG included: its first frame is used).
    Png,
    /// JPEG (baseline, progressive, CMYK).
    Jpeg,
    /// GIF (the first frame, composited on the logical screen).
    Gif,
    /// WebP (lossy, lossless, animated: the first frame).
    Webp,
}

impl ImageFormat {
    /// Lower-case name (`png`, `jpeg`, `gif`, `webp`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Png => "png",
            Self::Jpeg => "jpeg",
            Self::Gif => "gif",
            Self::Webp => "webp",
        }
    }
}

/// The format the leading bytes announce: PNG `89 50 4E 47`, JPEG `FF D8 FF`, GIF `47 49 46`,
/// WebP `WEBP` at offset 8 (the `RIFF` tag is not checked). `None` for anything else.
pub fn sniff_format(data: &[u8]) -> Option<ImageFormat> {
    if data.starts_with(&[0x89, b'P', b'N', b'G']) {
        Some(ImageFormat::Png)
    } else if data.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some(ImageFormat::Jpeg)
    } else if data.starts_with(b"GIF") {
        Some(ImageFormat::Gif)
    } else if data.get(8..12) == Some(b"WEBP") {
        Some(ImageFormat::Webp)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_bytes_decide() {
        assert_eq!(sniff_format(b"\x89PNG"), Some(ImageFormat::Png));
        assert_eq!(sniff_format(b"\x89PN"), None);
        assert_eq!(sniff_format(b"\xFF\xD8\xFF\xE0"), Some(ImageFormat::Jpeg));
        assert_eq!(sniff_format(b"\xFF\xD8"), None);
        assert_eq!(sniff_format(b"GIF89a"), Some(ImageFormat::Gif));
        assert_eq!(sniff_format(b"xxxxxxxxWEBPfunk"), Some(ImageFormat::Webp));
        assert_eq!(sniff_format(b"BM\0\0"), None);
        assert_eq!(sniff_format(b"\0\x89PNG"), None);
        assert_eq!(sniff_format(b""), None);
    }
}
