//! Tool-call ids of the official shape and the clock for `created` timestamps.

use std::hash::{BuildHasher, Hasher};
use std::time::{SystemTime, UNIX_EPOCH};

const ALPHANUMERIC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// A small seedable random source (SplitMix64) for tool-call ids.
#[derive(Debug, Clone)]
pub struct IdSource {
    state: u64,
}

impl IdSource {
    /// A deterministic source: the same seed gives the same ids.
    pub fn seeded(seed: u64) -> Self {
        Self { state: seed }
    }

    /// A source seeded from process randomness and the clock.
    pub fn random() -> Self {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u128(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        Self {
            state: hasher.finish(),
        }
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn pick(&mut self, alphabet: &[u8]) -> char {
        let len = alphabet.len() as u64;
        char::from(alphabet[(self.next_u64() % len) as usize])
    }

    /// `call_<NN>_[ET_]<20 alphanumerics><4 digits>`; `empty_thinking` adds the `ET_` marker.
    pub fn tool_call_id(&mut self, index: usize, empty_thinking: bool) -> String {
        let mut id = format!("call_{index:02}_");
        if empty_thinking {
            id.push_str("ET_");
        }
        for _ in 0..20 {
            id.push(self.pick(ALPHANUMERIC));
        }
        for _ in 0..4 {
            id.push(self.pick(b"0123456789"));
        }
        id
    }
}

/// Current unix time in seconds.
pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_have_the_official_shape_and_are_reproducible() {
        let mut source = IdSource::seeded(7);
        let id = source.tool_call_id(3, true);
        assert!(id.starts_with("call_03_ET_"));
        let tail = &id["call_03_ET_".len()..];
        assert_eq!(tail.len(), 24);
        assert!(tail[..20].bytes().all(|b| b.is_ascii_alphanumeric()));
        assert!(tail[20..].bytes().all(|b| b.is_ascii_digit()));
        assert_eq!(IdSource::seeded(7).tool_call_id(3, true), id);
        assert!(IdSource::seeded(1)
            .tool_call_id(100, false)
            .starts_with("call_100_"));
    }
}
