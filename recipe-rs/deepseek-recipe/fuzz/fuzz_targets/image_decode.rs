//! Fuzzes the image decoders and preprocessing with arbitrary bytes: no panic, and memory and
//! time bounded by the dimension limit (set before any pixel is decoded). Inputs starting
//! with `data:` also go through the resolver's data-URL decoding.

#![no_main]

use deepseek_recipe::conversation::ImageDetail;
use deepseek_recipe::image::{
    preprocess, ImageData, ImageInput, ImageQuota, ImageResolver, PreprocessOptions,
    ResolverLimits,
};
use libfuzzer_sys::fuzz_target;

/// Sides above this are refused before decoding (bounds a decode to 2048²·8 bytes).
const MAX_SIDE: u32 = 2048;

fuzz_target!(|data: &[u8]| {
    let detail = match data.last().copied().unwrap_or(0) % 4 {
        0 => ImageDetail::Low,
        1 => ImageDetail::High,
        2 => ImageDetail::Original,
        _ => ImageDetail::Auto,
    };
    if let Some(url) = std::str::from_utf8(data).ok().filter(|text| text.starts_with("data:")) {
        let limits = ResolverLimits {
            max_dimension_px: MAX_SIDE,
            many_images_max_dimension_px: MAX_SIDE,
            ..ResolverLimits::default()
        };
        let source = ImageInput::new(ImageData::DataUrl(url.to_owned())).with_detail(detail);
        let _ = ImageResolver::offline()
            .with_limits(limits)
            .resolve(&[source], &ImageQuota::new());
        return;
    }
    let options = PreprocessOptions {
        detail,
        max_dimension_px: MAX_SIDE,
        low_detail_max_dimension_px: 512,
    };
    if let Ok(image) = preprocess(data, &options) {
        assert!(image.width % 14 == 0 && image.height % 14 == 0);
        assert!(image.token_count <= 1024);
    }
});
