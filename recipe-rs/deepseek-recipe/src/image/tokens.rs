//! The V4.1 image token specification: how many prompt tokens an image of a given size costs.
//!
//! One token covers a 42×42 pixel area (14 px patches, downsampled 3×3); every row of tokens
//! ends with a newline token and the image is wrapped in a start and an end token. Sizes are
//! first fitted to the budget ([`target_size`]); a prompt count adds
//! [`token_adjustment`] (Σ(tokens − 1)) because each image is one placeholder token in the
//! rendered prompt.

use std::fmt;

/// Side of one vision patch, in pixels.
pub const PATCH_PX: u64 = 14;
/// Patches merged per token along each side.
pub const DOWNSAMPLE: u64 = 3;
/// Most tokens one image may cost.
pub const TOKEN_BUDGET: u64 = 1024;
/// Images with fewer pixels than this are scaled up to about this area (544²).
pub const MIN_AREA_PX: u64 = 544 * 544;
/// Side of the area one token covers (`PATCH_PX · DOWNSAMPLE`).
const TOKEN_PX: u64 = PATCH_PX * DOWNSAMPLE;
/// Fit steps tried before [`target_size`] gives up (the first and at most 9 more).
const MAX_FIT_STEPS: usize = 10;

/// The resize search did not reach a fixed point (never observed with the built-in constants).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalcResizeError {
    /// The size after the last step.
    pub last: (u64, u64),
}

impl fmt::Display for CalcResizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "image resize did not converge after {MAX_FIT_STEPS} iterations, last result: {}x{}",
            self.last.0, self.last.1
        )
    }
}

impl std::error::Error for CalcResizeError {}

/// Tokens of a patch-aligned size: `rows · (cols + 1) + 2`.
pub fn tokens_for_aligned(width: u64, height: u64) -> u64 {
    let rows = (height / PATCH_PX).div_ceil(DOWNSAMPLE);
    let cols = (width / PATCH_PX).div_ceil(DOWNSAMPLE);
    rows.saturating_mul(cols + 1).saturating_add(2)
}

/// One fitting step: scale tiny images up to the minimum area, align to patches, and if the
/// budget is exceeded solve for the largest token grid with the same aspect ratio.
pub fn fit_step(width: u64, height: u64) -> (u64, u64) {
    let (mut w, mut h) = (width, height);
    let area = u128::from(w) * u128::from(h);
    if area > 0 && area < u128::from(MIN_AREA_PX) {
        let ratio = (MIN_AREA_PX as f64 / area as f64).sqrt();
        w = (w as f64 * ratio) as u64;
        h = (h as f64 * ratio) as u64;
    }
    let aligned_w = w.div_ceil(PATCH_PX) * PATCH_PX;
    let aligned_h = h.div_ceil(PATCH_PX) * PATCH_PX;
    if tokens_for_aligned(aligned_w, aligned_h) <= TOKEN_BUDGET {
        return (aligned_w, aligned_h);
    }
    let (wf, hf) = (w as f64, h as f64);
    let q = if w == 0 { f64::INFINITY } else { hf / wf };
    let fw = (((TOKEN_BUDGET - 2) as f64) / q + 0.25).sqrt() - 0.5;
    let fh = fw * q;
    if fw < 1.0 {
        return (TOKEN_PX, (TOKEN_BUDGET / 2 - 1) * TOKEN_PX);
    }
    if fh < 1.0 {
        return ((TOKEN_BUDGET - 3) * TOKEN_PX, TOKEN_PX);
    }
    let (mw, mh) = (fw.trunc(), fh.trunc());
    let beta = f64::min(TOKEN_PX as f64 * mw / wf, TOKEN_PX as f64 * mh / hf);
    let patch = PATCH_PX as f64;
    (
        (wf * beta / patch) as u64 * PATCH_PX,
        (hf * beta / patch) as u64 * PATCH_PX,
    )
}

/// The size the model sees for an image of `width`×`height`: [`fit_step`] repeated until it
/// no longer changes.
pub fn target_size(width: u64, height: u64) -> Result<(u64, u64), CalcResizeError> {
    let mut current = fit_step(width, height);
    for _ in 1..MAX_FIT_STEPS {
        let next = fit_step(current.0, current.1);
        if next == current {
            return Ok(current);
        }
        current = next;
    }
    Err(CalcResizeError { last: current })
}

/// Prompt tokens one image of `width`×`height` costs.
pub fn image_tokens(width: u64, height: u64) -> Result<u64, CalcResizeError> {
    let (w, h) = target_size(width, height)?;
    Ok(tokens_for_aligned(w, h))
}

/// What a prompt token count must add for these image sizes: Σ(tokens − 1), since every image
/// already counts as its one placeholder token.
pub fn token_adjustment(
    sizes: impl IntoIterator<Item = (u64, u64)>,
) -> Result<u64, CalcResizeError> {
    sizes.into_iter().try_fold(0u64, |sum, (w, h)| {
        Ok(sum.saturating_add(image_tokens(w, h)? - 1))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_from_the_spec() {
        let cases = [
            ((1, 1), (546, 546), 184),
            ((547, 547), (560, 560), 212),
            ((1000, 1000), (1008, 1008), 602),
            ((8192, 8192), (1302, 1302), 994),
            ((1920, 1080), (1708, 966), 968),
            ((40, 50), (490, 616), 197),
            ((2, 750), (28, 10570), 506),
        ];
        for (input, output, tokens) in cases {
            assert_eq!(target_size(input.0, input.1), Ok(output), "{input:?}");
            assert_eq!(image_tokens(input.0, input.1), Ok(tokens), "{input:?}");
        }
    }

    #[test]
    fn degenerate_sizes() {
        assert_eq!(image_tokens(0, 0), Ok(2));
        assert_eq!(image_tokens(500, 0), Ok(2));
        assert_eq!(image_tokens(0, 14 * 3 * 10), Ok(12));
        assert_eq!(target_size(0, 10_000_000), Ok((42, 21462)));
        assert_eq!(image_tokens(u32::MAX.into(), u32::MAX.into()), Ok(994));
    }

    #[test]
    fn adjustment_sums_tokens_minus_one() {
        assert_eq!(token_adjustment([(1, 1), (1000, 1000)]), Ok(183 + 601));
        assert_eq!(token_adjustment([]), Ok(0));
    }
}
