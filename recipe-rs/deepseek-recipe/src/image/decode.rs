//! Header inspection and decoding to 8-bit RGB, with limits set before any pixel is decoded.
//!
//! Header dimensions come from the `image` crate (PNG IHDR, JPEG SOF, GIF logical screen, WebP
//! header). Pixels are decoded strictly, the way the reference's decoder (libpng, libjpeg,
//! libwebp) judges files: a PNG needs valid checksums and its `IEND`, a JPEG its `EOI`, a WebP
//! a RIFF size that fits the data. GIF is decoded by the `image` crate (first frame on the
//! logical screen). Transparent pixels are blended onto [`BACKGROUND`].

use std::io::Cursor;

use image::{DynamicImage, ImageBuffer, ImageReader, Limits, RgbImage};

use super::detect::ImageFormat;

/// The background transparent pixels are blended onto (#FDFDFD).
pub const BACKGROUND: u8 = 253;

/// Bytes of the largest decode buffer: a `max_dimension`² image at 8 bytes per pixel (RGBA16).
pub(crate) fn decode_budget(max_dimension: u32) -> u64 {
    u64::from(max_dimension).pow(2).saturating_mul(8).max(64)
}

/// Why decoding failed, in the reference's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DecodeFailure {
    /// The header cannot be read.
    Header,
    /// The header is fine but the pixel data cannot be decoded.
    Pixels,
}

/// The dimensions the file's header declares.
pub(crate) fn header_dimensions(
    data: &[u8],
    format: ImageFormat,
) -> Result<(u32, u32), DecodeFailure> {
    ImageReader::with_format(Cursor::new(data), crate_format(format))
        .into_dimensions()
        .map_err(|_| DecodeFailure::Header)
}

/// Decodes the first frame to 8-bit RGB, transparency blended onto [`BACKGROUND`].
/// `max_dimension` bounds both sides (and so the memory the decoder may use).
pub(crate) fn decode_rgb(
    data: &[u8],
    format: ImageFormat,
    max_dimension: u32,
) -> Result<RgbImage, DecodeFailure> {
    let budget = decode_budget(max_dimension);
    match format {
        ImageFormat::Png => decode_png(data, budget),
        ImageFormat::Jpeg if !jpeg_has_end_marker(data) => Err(DecodeFailure::Pixels),
        ImageFormat::Webp if !webp_riff_size_fits(data) => Err(DecodeFailure::Pixels),
        ImageFormat::Jpeg | ImageFormat::Webp => {
            decode_with_image_crate(data, format, max_dimension, budget)
                .map_err(|_| DecodeFailure::Pixels)
        }
        ImageFormat::Gif => decode_with_image_crate(data, format, max_dimension, budget)
            .map_err(|_| DecodeFailure::Header),
    }
}

fn crate_format(format: ImageFormat) -> image::ImageFormat {
    match format {
        ImageFormat::Png => image::ImageFormat::Png,
        ImageFormat::Jpeg => image::ImageFormat::Jpeg,
        ImageFormat::Gif => image::ImageFormat::Gif,
        ImageFormat::Webp => image::ImageFormat::WebP,
    }
}

fn decode_with_image_crate(
    data: &[u8],
    format: ImageFormat,
    max_dimension: u32,
    budget: u64,
) -> image::ImageResult<RgbImage> {
    let mut limits = Limits::default();
    limits.max_image_width = Some(max_dimension);
    limits.max_image_height = Some(max_dimension);
    limits.max_alloc = Some(budget);
    let mut reader = ImageReader::with_format(Cursor::new(data), crate_format(format));
    reader.limits(limits);
    Ok(to_rgb(reader.decode()?))
}

/// A JPEG is complete only with an `EOI` marker after its first scan (trailing bytes after it
/// are ignored).
fn jpeg_has_end_marker(data: &[u8]) -> bool {
    let Some(scan) = data.windows(2).position(|pair| pair == [0xFF, 0xDA]) else {
        return false;
    };
    data[scan..].windows(2).any(|pair| pair == [0xFF, 0xD9])
}

/// The RIFF chunk size must cover the WebP data actually present (more bytes after it are fine).
fn webp_riff_size_fits(data: &[u8]) -> bool {
    let Some(size) = data.get(4..8) else {
        return false;
    };
    let size = u64::from(u32::from_le_bytes([size[0], size[1], size[2], size[3]]));
    size >= 4 && size + 8 <= data.len() as u64
}

/// PNG with checksums verified (CRC and Adler-32), the default image (the first APNG frame),
/// and the file read up to `IEND`.
fn decode_png(data: &[u8], budget: u64) -> Result<RgbImage, DecodeFailure> {
    let mut options = png::DecodeOptions::default();
    options.set_ignore_adler32(false);
    options.set_ignore_crc(false);
    let mut decoder = png::Decoder::new_with_options(Cursor::new(data), options);
    decoder.set_limits(png::Limits {
        bytes: usize::try_from(budget).unwrap_or(usize::MAX),
    });
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().map_err(|_| DecodeFailure::Pixels)?;
    let size = reader.output_buffer_size().ok_or(DecodeFailure::Pixels)?;
    if size as u64 > budget {
        return Err(DecodeFailure::Pixels);
    }
    let mut buffer = vec![0; size];
    let frame = reader
        .next_frame(&mut buffer)
        .map_err(|_| DecodeFailure::Pixels)?;
    reader.finish().map_err(|_| DecodeFailure::Pixels)?;
    buffer.truncate(frame.buffer_size());
    // 16-bit samples are scaled by the `image` crate's conversion (round(v / 257)).
    let (width, height) = (frame.width, frame.height);
    let sixteen = frame.bit_depth == png::BitDepth::Sixteen;
    let image = if sixteen {
        let samples: Vec<u16> = buffer
            .chunks_exact(2)
            .map(|pair| u16::from_be_bytes([pair[0], pair[1]]))
            .collect();
        match frame.color_type {
            png::ColorType::Grayscale => {
                ImageBuffer::from_raw(width, height, samples).map(DynamicImage::ImageLuma16)
            }
            png::ColorType::GrayscaleAlpha => {
                ImageBuffer::from_raw(width, height, samples).map(DynamicImage::ImageLumaA16)
            }
            png::ColorType::Rgb => {
                ImageBuffer::from_raw(width, height, samples).map(DynamicImage::ImageRgb16)
            }
            png::ColorType::Rgba => {
                ImageBuffer::from_raw(width, height, samples).map(DynamicImage::ImageRgba16)
            }
            png::ColorType::Indexed => None,
        }
    } else {
        match frame.color_type {
            png::ColorType::Grayscale => {
                ImageBuffer::from_raw(width, height, buffer).map(DynamicImage::ImageLuma8)
            }
            png::ColorType::GrayscaleAlpha => {
                ImageBuffer::from_raw(width, height, buffer).map(DynamicImage::ImageLumaA8)
            }
            png::ColorType::Rgb => {
                ImageBuffer::from_raw(width, height, buffer).map(DynamicImage::ImageRgb8)
            }
            png::ColorType::Rgba => {
                ImageBuffer::from_raw(width, height, buffer).map(DynamicImage::ImageRgba8)
            }
            png::ColorType::Indexed => None,
        }
    };
    image.map(to_rgb).ok_or(DecodeFailure::Pixels)
}

/// One channel blended onto the background: `(c·a + 253·(255 − a) + 127) / 255`.
pub(crate) fn blend(channel: u8, alpha: u8) -> u8 {
    let (c, a) = (u32::from(channel), u32::from(alpha));
    ((c * a + u32::from(BACKGROUND) * (255 - a) + 127) / 255) as u8
}

/// Any decoded image as 8-bit RGB, alpha blended onto the background.
fn to_rgb(image: DynamicImage) -> RgbImage {
    if !image.color().has_alpha() {
        return image.into_rgb8();
    }
    let rgba = image.into_rgba8();
    let (width, height) = rgba.dimensions();
    let mut rgb = RgbImage::new(width, height);
    for (source, target) in rgba.pixels().zip(rgb.pixels_mut()) {
        let [r, g, b, a] = source.0;
        target.0 = [blend(r, a), blend(g, a), blend(b, a)];
    }
    rgb
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blending_matches_the_reference() {
        assert_eq!(blend(0, 0), 253);
        assert_eq!(blend(255, 128), 254);
        assert_eq!(blend(0, 128), 126);
        assert_eq!(blend(17, 255), 17);
    }

    #[test]
    fn structural_checks() {
        assert!(jpeg_has_end_marker(b"\xFF\xD8\xFF\xDA..\xFF\xD9junk"));
        assert!(!jpeg_has_end_marker(b"\xFF\xD8\xFF\xD9\xFF\xDA.."));
        assert!(webp_riff_size_fits(b"RIFF\x04\0\0\0WEBP"));
        assert!(!webp_riff_size_fits(b"RIFF\x05\0\0\0WEBP"));
    }
}
