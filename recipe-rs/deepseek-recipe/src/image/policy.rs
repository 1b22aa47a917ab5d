//! The destination policy: which addresses the fetcher may connect to (SSRF protection).
//!
//! By default every address that is not plainly public is refused: loopback, private
//! (RFC 1918), link-local (cloud metadata endpoints such as 169.254.169.254 included),
//! unique-local and site-local IPv6, shared address space (CGNAT, e.g. 100.100.100.200),
//! multicast, broadcast, unspecified, reserved, documentation and benchmarking ranges, and
//! IPv6 forms that embed one of those IPv4 addresses (IPv4-mapped, IPv4-compatible, NAT64,
//! 6to4) or hide one (Teredo). The check runs on every address a host resolves to and again
//! for every redirect target.
//!
//! As JSON a policy is `{"allow_special_addresses": bool, "allowed_ranges": ["CIDR", ...]}`
//! (every key optional; a caller's filter has no JSON form).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A CIDR range such as `127.0.0.0/8` or `fd00::/8` (as JSON: that string).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpRange {
    network: IpAddr,
    prefix: u8,
}

impl IpRange {
    /// The range of `network` with a `prefix`-bit mask (`None` if the prefix is too long).
    pub fn new(network: IpAddr, prefix: u8) -> Option<Self> {
        let max = if network.is_ipv4() { 32 } else { 128 };
        (prefix <= max).then_some(Self { network, prefix })
    }

    /// Whether `address` (same family) lies in the range.
    pub fn contains(&self, address: IpAddr) -> bool {
        match (self.network, address) {
            (IpAddr::V4(network), IpAddr::V4(address)) => prefix_matches(
                network.to_bits().into(),
                address.to_bits().into(),
                32,
                self.prefix,
            ),
            (IpAddr::V6(network), IpAddr::V6(address)) => {
                prefix_matches(network.to_bits(), address.to_bits(), 128, self.prefix)
            }
            _ => false,
        }
    }
}

fn prefix_matches(network: u128, address: u128, bits: u8, prefix: u8) -> bool {
    if prefix == 0 {
        return true;
    }
    let shift = u32::from(bits - prefix);
    network >> shift == address >> shift
}

impl FromStr for IpRange {
    type Err = String;

    /// `a.b.c.d/n`, `x::y/n`, or a bare address (a single-address range).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text, None),
        };
        let network: IpAddr = address
            .parse()
            .map_err(|_| format!("invalid address in range {text:?}"))?;
        let prefix = match prefix {
            Some(prefix) => prefix
                .parse()
                .map_err(|_| format!("invalid prefix in range {text:?}"))?,
            None if network.is_ipv4() => 32,
            None => 128,
        };
        Self::new(network, prefix).ok_or_else(|| format!("prefix too long in range {text:?}"))
    }
}

impl fmt::Display for IpRange {
    /// `network/prefix`, which [`IpRange::from_str`] reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.network, self.prefix)
    }
}

impl Serialize for IpRange {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for IpRange {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// A caller-supplied check of `(URL host, resolved address)`.
pub type DestinationFilter = dyn Fn(&str, IpAddr) -> bool + Send + Sync;

/// Which destinations the fetcher may connect to (default: public addresses only).
#[derive(Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DestinationPolicy {
    #[serde(rename = "allow_special_addresses")]
    allow_special: bool,
    #[serde(rename = "allowed_ranges")]
    allowed: Vec<IpRange>,
    #[serde(skip)]
    filter: Option<Arc<DestinationFilter>>,
}

impl fmt::Debug for DestinationPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DestinationPolicy")
            .field("allow_special", &self.allow_special)
            .field("allowed", &self.allowed)
            .field("has_filter", &self.filter.is_some())
            .finish()
    }
}

impl DestinationPolicy {
    /// The default policy: public addresses only.
    pub fn new() -> Self {
        Self::default()
    }

    /// Allows (`true`) or refuses (`false`, the default) loopback, private and every other
    /// special address.
    pub fn allow_special_addresses(mut self, allow: bool) -> Self {
        self.allow_special = allow;
        self
    }

    /// Allows the addresses of `range` even when they are special (e.g. an internal image host).
    pub fn allow_range(mut self, range: IpRange) -> Self {
        self.allowed.push(range);
        self
    }

    /// Adds a check that must also accept `(URL host, address)`; the host is the URL's host
    /// (a name, or an IP literal with IPv6 brackets removed).
    pub fn with_filter(
        mut self,
        filter: impl Fn(&str, IpAddr) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.filter = Some(Arc::new(filter));
        self
    }

    /// Whether connecting to `address` for a URL with host `host` is allowed.
    pub fn permits(&self, host: &str, address: IpAddr) -> bool {
        if let Some(filter) = &self.filter {
            if !filter(host, address) {
                return false;
            }
        }
        let address = address.to_canonical();
        self.allow_special
            || self.allowed.iter().any(|range| range.contains(address))
            || special_address_class(address).is_none()
    }
}

/// Why an address is not a plain public destination (`None` for a public address).
pub fn special_address_class(address: IpAddr) -> Option<&'static str> {
    match address {
        IpAddr::V4(address) => special_v4_class(address),
        IpAddr::V6(address) => special_v6_class(address),
    }
}

fn special_v4_class(address: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = address.octets();
    let class = match (a, b, c) {
        (0, _, _) => "unspecified (this network)",
        (10, _, _) => "private",
        (100, 64..=127, _) => "shared address space (CGNAT)",
        (127, _, _) => "loopback",
        (169, 254, _) => "link-local (cloud metadata)",
        (172, 16..=31, _) => "private",
        (192, 0, 0) => "IETF protocol assignments",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "documentation",
        (192, 88, 99) => "6to4 relay anycast",
        (192, 168, _) => "private",
        (198, 18..=19, _) => "benchmarking",
        (224..=239, _, _) => "multicast",
        (240..=255, _, _) => "reserved or broadcast",
        _ => return None,
    };
    Some(class)
}

fn special_v6_class(address: Ipv6Addr) -> Option<&'static str> {
    let segments = address.segments();
    let embedded_v4 =
        |high: u16, low: u16| Ipv4Addr::from((u32::from(high) << 16) | u32::from(low));
    if address.is_unspecified() {
        return Some("unspecified");
    }
    if address.is_loopback() {
        return Some("loopback");
    }
    if let Some(v4) = address.to_ipv4_mapped() {
        return special_v4_class(v4);
    }
    let class = match segments {
        [0, 0, 0, 0, 0, 0, high, low] => {
            return special_v4_class(embedded_v4(high, low)).or(Some("IPv4-compatible"))
        }
        [0x64, 0xff9b, 0, 0, 0, 0, high, low] => {
            return special_v4_class(embedded_v4(high, low)).or(Some("NAT64"))
        }
        [0x64, 0xff9b, 1, ..] => "NAT64 (local use)",
        [0x2002, high, low, ..] => return special_v4_class(embedded_v4(high, low)),
        [0x2001, 0, ..] => "Teredo",
        [0x2001, 0xdb8, ..] => "documentation",
        [0x100, 0, 0, 0, ..] => "discard",
        [first, ..] if first & 0xfe00 == 0xfc00 => "unique local",
        [first, ..] if first & 0xffc0 == 0xfe80 => "link-local",
        [first, ..] if first & 0xffc0 == 0xfec0 => "site-local",
        [first, ..] if first & 0xff00 == 0xff00 => "multicast",
        _ => return None,
    };
    Some(class)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> bool {
        !DestinationPolicy::new().permits("host", text.parse().unwrap())
    }

    #[test]
    fn default_refuses_special_addresses() {
        for address in [
            "127.0.0.1",
            "127.255.0.9",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.100.100.200",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "fe80::1",
            "fc00::1",
            "fd00:ec2::254",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::",
            "2001::1",
        ] {
            assert!(refused(address), "{address} should be refused");
        }
    }

    #[test]
    fn default_allows_public_addresses() {
        for address in [
            "93.184.216.34",
            "8.8.8.8",
            "172.32.0.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            assert!(!refused(address), "{address} should be allowed");
        }
    }

    #[test]
    fn configurable() {
        let loopback: IpAddr = "127.0.0.1".parse().unwrap();
        let policy = DestinationPolicy::new().allow_range("127.0.0.0/8".parse().unwrap());
        assert!(policy.permits("localhost", loopback));
        assert!(!policy.permits("x", "10.0.0.1".parse().unwrap()));
        let policy = DestinationPolicy::new().allow_special_addresses(true);
        assert!(policy.permits("x", "10.0.0.1".parse().unwrap()));
        let policy = policy.with_filter(|host, _| host != "blocked.example");
        assert!(!policy.permits("blocked.example", "8.8.8.8".parse().unwrap()));
        assert!("10.0.0.0/33".parse::<IpRange>().is_err());
        let range: IpRange = "::ffff:0:0/96".parse().unwrap();
        assert!(range.contains("::ffff:1.2.3.4".parse().unwrap()));
    }

    #[test]
    fn json_form_reads_ranges_as_cidr_strings() {
        let text = serde_json::to_string(&DestinationPolicy::new()).unwrap();
        assert_eq!(
            text,
            r#"{"allow_special_addresses":false,"allowed_ranges":[]}"#
        );
        let policy: DestinationPolicy =
            serde_json::from_str(r#"{"allowed_ranges": ["10.1.0.0/16", "::1"]}"#).unwrap();
        assert!(policy.permits("x", "10.1.2.3".parse().unwrap()));
        assert!(!policy.permits("x", "10.2.0.1".parse().unwrap()));
        assert_eq!(
            serde_json::to_string(&policy).unwrap(),
            r#"{"allow_special_addresses":false,"allowed_ranges":["10.1.0.0/16","::1/128"]}"#
        );
        for bad in [
            r#"{"allowed_ranges": ["10.0.0.0/33"]}"#,
            r#"{"allowed_ranges": "10.0.0.0/8"}"#,
            r#"{"allow_special_addresses": 1}"#,
            r#"{"filter": null}"#,
        ] {
            assert!(
                serde_json::from_str::<DestinationPolicy>(bad).is_err(),
                "{bad}"
            );
        }
    }
}
