//! The limits of image input, with their defaults and JSON forms: the official request
//! limits, the budget a host sets, and how a fetcher downloads a URL.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::policy::DestinationPolicy;

/// Bytes in a mebibyte.
pub(super) const MIB: u64 = 1 << 20;

/// The resolver's limits (the reference's defaults are [`ResolverLimits::default`]). As JSON
/// every key is optional: an absent one keeps its default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ResolverLimits {
    /// Images per request (quota count plus this call).
    pub max_images: usize,
    /// Encoded bytes per image.
    pub max_image_bytes: u64,
    /// Encoded bytes per request (quota bytes plus this call).
    pub max_total_bytes: u64,
    /// Largest source width/height.
    pub max_dimension_px: u32,
    /// Largest source width/height once the request holds `many_images` images or more.
    pub many_images_max_dimension_px: u32,
    /// Image count from which `many_images_max_dimension_px` applies.
    pub many_images: usize,
    /// Long-side limit for `low` detail.
    pub low_detail_max_dimension_px: u32,
    /// Longest URL source, in bytes.
    pub max_url_bytes: usize,
}

impl Default for ResolverLimits {
    /// 600 images, 32 MiB per image, 64 MiB per request, 8192 px sides (4096 px from 15 images),
    /// 512 px for `low` detail, 8192-byte URLs.
    fn default() -> Self {
        Self {
            max_images: 600,
            max_image_bytes: 32 * MIB,
            max_total_bytes: 64 * MIB,
            max_dimension_px: 8192,
            many_images_max_dimension_px: 4096,
            many_images: 15,
            low_detail_max_dimension_px: 512,
            max_url_bytes: 8192,
        }
    }
}

/// What one request may spend beyond the official limits: bounds a host sets so that a
/// request within those limits (600 images) cannot hold a worker for minutes. As JSON every key
/// is optional (an absent one keeps its default) and the deadline is `deadline_s`, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ResolveBudget {
    /// Wall-clock time a resolve call may spend obtaining its sources (every fetch, retry and
    /// pause); a URL still pending then fails with a retryable `Fetch` error.
    #[serde(rename = "deadline_s", with = "seconds")]
    pub deadline: Duration,
    /// URL sources fetched at the same time (0 counts as 1).
    pub concurrent_fetches: usize,
    /// Pixels a request may decode and encode, over all its resolve calls: each image costs
    /// its source width × height plus its output width × height, known from the header before
    /// any decoding. The image that would exceed it fails with `TotalSizeTooLarge`.
    pub max_pixels: u64,
}

impl Default for ResolveBudget {
    /// 60 s, 8 concurrent fetches, 512 Mi pixels (about 36 twelve-megapixel photos; some tens
    /// of seconds of CPU at worst).
    fn default() -> Self {
        Self {
            deadline: Duration::from_secs(60),
            concurrent_fetches: 8,
            max_pixels: 512 << 20,
        }
    }
}

/// How an HTTP fetcher downloads one URL. As JSON every key is optional (an absent one keeps
/// its default), the timeouts are `connect_timeout_s` and `total_timeout_s`, in seconds, and
/// `destinations` is the [`DestinationPolicy`]'s JSON form (its filter is never serialised).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FetchPolicy {
    /// Largest body accepted (exactly `max_bytes` passes).
    pub max_bytes: u64,
    /// Redirects followed before the fetch fails.
    pub max_redirects: u32,
    /// Time one connection attempt may take.
    #[serde(rename = "connect_timeout_s", with = "seconds")]
    pub connect_timeout: Duration,
    /// Time the whole fetch may take: every hop and the body.
    #[serde(rename = "total_timeout_s", with = "seconds")]
    pub total_timeout: Duration,
    /// Which addresses may be connected to.
    pub destinations: DestinationPolicy,
}

impl Default for FetchPolicy {
    /// 32 MiB bodies, 5 redirects, 10 s to connect, 30 s in total, public addresses only.
    fn default() -> Self {
        Self {
            max_bytes: 32 * MIB,
            max_redirects: 5,
            connect_timeout: Duration::from_secs(10),
            total_timeout: Duration::from_secs(30),
            destinations: DestinationPolicy::default(),
        }
    }
}

/// A [`Duration`] as a JSON number of seconds (finite, not negative).
pub(super) mod seconds {
    use std::time::Duration;

    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(in crate::image) fn serialize<S: Serializer>(
        duration: &Duration,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(duration.as_secs_f64())
    }

    pub(in crate::image) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Duration, D::Error> {
        let seconds = f64::deserialize(deserializer)?;
        Duration::try_from_secs_f64(seconds)
            .map_err(|_| D::Error::custom(format!("invalid number of seconds: {seconds}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_json_keys_are_optional_and_the_deadline_is_in_seconds() {
        let budget: ResolveBudget = serde_json::from_str(r#"{"deadline_s": 0.5}"#).unwrap();
        assert_eq!(
            budget,
            ResolveBudget {
                deadline: Duration::from_millis(500),
                ..ResolveBudget::default()
            }
        );
        let text = serde_json::to_string(&ResolveBudget::default()).unwrap();
        assert_eq!(
            text,
            r#"{"deadline_s":60.0,"concurrent_fetches":8,"max_pixels":536870912}"#
        );
        for bad in [r#"{"deadline_s": -1}"#, r#"{"pixels": 1}"#] {
            assert!(serde_json::from_str::<ResolveBudget>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn fetch_policy_json_keys_are_optional_and_timeouts_are_in_seconds() {
        assert_eq!(
            serde_json::to_string(&FetchPolicy::default()).unwrap(),
            concat!(
                r#"{"max_bytes":33554432,"max_redirects":5,"connect_timeout_s":10.0,"#,
                r#""total_timeout_s":30.0,"destinations":{"allow_special_addresses":false,"#,
                r#""allowed_ranges":[]}}"#
            )
        );
        let policy: FetchPolicy = serde_json::from_str(
            r#"{"max_bytes": 100, "total_timeout_s": 0.5,
                "destinations": {"allow_special_addresses": true}}"#,
        )
        .unwrap();
        let default = FetchPolicy::default();
        assert_eq!(policy.max_bytes, 100);
        assert_eq!(policy.total_timeout, Duration::from_millis(500));
        assert_eq!(policy.max_redirects, default.max_redirects);
        assert_eq!(policy.connect_timeout, default.connect_timeout);
        assert!(policy
            .destinations
            .permits("x", "10.0.0.1".parse().unwrap()));
        for bad in [
            r#"{"max_bytes": -1}"#,
            r#"{"max_redirects": 1.5}"#,
            r#"{"connect_timeout_s": "10"}"#,
            r#"{"total_timeout_s": -0.1}"#,
            r#"{"destinations": {"allowed_ranges": ["127.0.0.0/40"]}}"#,
            r#"{"allow_special_addresses": true}"#,
        ] {
            assert!(serde_json::from_str::<FetchPolicy>(bad).is_err(), "{bad}");
        }
    }
}
