//! Fetching URL sources: the [`ImageFetcher`] trait the resolver uses and, with the `fetch`
//! feature, `HttpFetcher` — an HTTP(S) client following a
//! [`FetchPolicy`](super::limits::FetchPolicy): a size limit, timeouts, bounded redirects
//! followed by hand, and the [`DestinationPolicy`](super::policy::DestinationPolicy) applied
//! to every resolved address of every hop (the connection is pinned to the checked
//! addresses, so a second DNS answer cannot slip through).

use std::time::Instant;

use super::error::{ImageError, ImageErrorKind};

/// Downloads the bytes of an image URL.
pub trait ImageFetcher: Send + Sync {
    /// The body of `url`. Errors are located at `image[0]` (the resolver re-locates them);
    /// retryable ones may be retried by the caller.
    fn fetch(&self, url: &str) -> Result<Vec<u8>, ImageError>;

    /// The body of `url`, giving up at `deadline` with a retryable `Fetch` error. The
    /// resolver calls this; a fetcher that cannot stop early may keep the default, which
    /// ignores the deadline (the resolver then stops waiting for it at the deadline).
    fn fetch_until(&self, url: &str, deadline: Instant) -> Result<Vec<u8>, ImageError> {
        let _ = deadline;
        self.fetch(url)
    }
}

/// `<location>: Failed to download image from <url>` with `kind`, not retryable.
pub(crate) fn fetch_failure(kind: ImageErrorKind, location: &str, url: &str) -> ImageError {
    ImageError::new(
        kind,
        location,
        format!("Failed to download image from {url}"),
    )
}

#[cfg(feature = "fetch")]
pub use http::{HostResolver, HttpFetcher, SystemResolver};

#[cfg(feature = "fetch")]
mod http {
    use std::io::{self, Read};
    use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use url::{Host, Url};

    use super::super::error::{too_large_detail, ImageError, ImageErrorKind};
    use super::super::limits::FetchPolicy;
    use super::super::policy::DestinationPolicy;
    use super::{fetch_failure, ImageFetcher};

    /// Location standalone fetch errors report.
    const LOCATION: &str = "image[0]";
    /// Statuses whose `Location` is followed.
    const REDIRECT_STATUSES: [u16; 5] = [301, 302, 303, 307, 308];

    /// Resolves host names to addresses (tests inject fixed answers).
    pub trait HostResolver: Send + Sync {
        /// The addresses of `host` (a name, never an IP literal).
        fn resolve(&self, host: &str, port: u16) -> io::Result<Vec<IpAddr>>;
    }

    /// The operating system's resolver.
    #[derive(Debug, Clone, Copy, Default)]
    pub struct SystemResolver;

    impl HostResolver for SystemResolver {
        fn resolve(&self, host: &str, port: u16) -> io::Result<Vec<IpAddr>> {
            Ok((host, port)
                .to_socket_addrs()?
                .map(|addr| addr.ip())
                .collect())
        }
    }

    /// An HTTP(S) image fetcher (blocking, `ureq` with rustls).
    ///
    /// Its [`FetchPolicy`] (default: [`FetchPolicy::default`]) bounds the body, the redirects
    /// and the time, and says which destinations are allowed; host names are resolved by the
    /// system resolver unless another [`HostResolver`] is given. Only `Accept: */*`, `Host`
    /// and a `User-Agent` are sent; no proxy, no cookies, no compression.
    #[derive(Clone)]
    pub struct HttpFetcher {
        policy: FetchPolicy,
        resolver: Arc<dyn HostResolver>,
    }

    impl std::fmt::Debug for HttpFetcher {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("HttpFetcher")
                .field("policy", &self.policy)
                .finish()
        }
    }

    impl Default for HttpFetcher {
        fn default() -> Self {
            Self::new(FetchPolicy::default())
        }
    }

    impl HttpFetcher {
        /// A fetcher following `policy`, with the system resolver.
        pub fn new(policy: FetchPolicy) -> Self {
            Self {
                policy,
                resolver: Arc::new(SystemResolver),
            }
        }

        /// The policy in force.
        pub fn policy(&self) -> &FetchPolicy {
            &self.policy
        }

        /// The same fetcher with another body size limit (exactly `max_bytes` passes).
        pub fn with_max_bytes(mut self, max_bytes: u64) -> Self {
            self.policy.max_bytes = max_bytes;
            self
        }

        /// The same fetcher following at most `max_redirects` redirects.
        pub fn with_max_redirects(mut self, max_redirects: u32) -> Self {
            self.policy.max_redirects = max_redirects;
            self
        }

        /// The same fetcher with other timeouts: per connection attempt, and for the whole
        /// fetch (all hops and the body).
        pub fn with_timeouts(mut self, connect: Duration, total: Duration) -> Self {
            self.policy.connect_timeout = connect;
            self.policy.total_timeout = total;
            self
        }

        /// The same fetcher with another destination policy.
        pub fn with_policy(mut self, destinations: DestinationPolicy) -> Self {
            self.policy.destinations = destinations;
            self
        }

        /// The same fetcher resolving host names with `resolver`.
        pub fn with_host_resolver(mut self, resolver: impl HostResolver + 'static) -> Self {
            self.resolver = Arc::new(resolver);
            self
        }

        /// One hop: check the destination, connect only to allowed addresses, send the GET.
        fn request(
            &self,
            target: &Url,
            deadline: Instant,
            original: &str,
        ) -> Result<ureq::Response, ImageError> {
            let failure =
                || fetch_failure(ImageErrorKind::Fetch, LOCATION, original).retryable(true);
            // A URL that is not http(s) with a host and port cannot succeed on a retry.
            let unusable = || fetch_failure(ImageErrorKind::Fetch, LOCATION, original);
            if !matches!(target.scheme(), "http" | "https") {
                return Err(unusable());
            }
            let port = target.port_or_known_default().ok_or_else(unusable)?;
            let (host, addresses) = match target.host().ok_or_else(unusable)? {
                Host::Ipv4(address) => (address.to_string(), vec![IpAddr::V4(address)]),
                Host::Ipv6(address) => (address.to_string(), vec![IpAddr::V6(address)]),
                Host::Domain(name) => {
                    let addresses = self.resolver.resolve(name, port).map_err(|_| failure())?;
                    (name.to_owned(), addresses)
                }
            };
            let allowed: Vec<SocketAddr> = addresses
                .into_iter()
                .filter(|address| self.policy.destinations.permits(&host, *address))
                .map(|address| SocketAddr::new(address, port))
                .collect();
            if allowed.is_empty() {
                return Err(fetch_failure(
                    ImageErrorKind::DestinationRejected,
                    LOCATION,
                    original,
                ));
            }
            let remaining = deadline
                .checked_duration_since(Instant::now())
                .filter(|remaining| !remaining.is_zero())
                .ok_or_else(failure)?;
            let agent = ureq::AgentBuilder::new()
                .redirects(0)
                .timeout_connect(self.policy.connect_timeout.min(remaining))
                .timeout(remaining)
                .user_agent(concat!("deepseek-recipe/", env!("CARGO_PKG_VERSION")))
                .resolver(move |_: &str| Ok(allowed.clone()))
                .build();
            match agent.request_url("GET", target).set("Accept", "*/*").call() {
                Ok(response) => Ok(response),
                Err(ureq::Error::Status(status, _)) => {
                    Err(
                        fetch_failure(ImageErrorKind::FetchStatus, LOCATION, original)
                            .retryable(status >= 500),
                    )
                }
                Err(ureq::Error::Transport(_)) => Err(failure()),
            }
        }

        /// The body, refused once it is longer than the limit (by `Content-Length` before
        /// reading, else while reading).
        fn read_body(
            &self,
            response: ureq::Response,
            original: &str,
        ) -> Result<Vec<u8>, ImageError> {
            let too_large = || {
                ImageError::new(
                    ImageErrorKind::ImageTooLarge,
                    LOCATION,
                    too_large_detail(self.policy.max_bytes),
                )
            };
            let declared = response
                .header("content-length")
                .and_then(|value| value.trim().parse::<u64>().ok());
            if declared.is_some_and(|length| length > self.policy.max_bytes) {
                return Err(too_large());
            }
            let mut body = Vec::new();
            response
                .into_reader()
                .take(self.policy.max_bytes.saturating_add(1))
                .read_to_end(&mut body)
                .map_err(|_| {
                    fetch_failure(ImageErrorKind::Fetch, LOCATION, original).retryable(true)
                })?;
            if body.len() as u64 > self.policy.max_bytes {
                return Err(too_large());
            }
            Ok(body)
        }
    }

    impl ImageFetcher for HttpFetcher {
        fn fetch(&self, url: &str) -> Result<Vec<u8>, ImageError> {
            self.fetch_until(url, Instant::now() + self.policy.total_timeout)
        }

        /// Stops at the earlier of `deadline` and the fetcher's own total timeout. An
        /// unparsable URL or redirect target, and a redirect chain past the limit, are not
        /// retryable (retrying cannot succeed); transport failures are.
        fn fetch_until(&self, url: &str, deadline: Instant) -> Result<Vec<u8>, ImageError> {
            let unusable = || fetch_failure(ImageErrorKind::Fetch, LOCATION, url);
            let deadline = deadline.min(Instant::now() + self.policy.total_timeout);
            let mut target = Url::parse(url).map_err(|_| unusable())?;
            let mut redirects = 0;
            loop {
                let response = self.request(&target, deadline, url)?;
                let status = response.status();
                if (200..300).contains(&status) {
                    return self.read_body(response, url);
                }
                if !REDIRECT_STATUSES.contains(&status) {
                    return Err(fetch_failure(ImageErrorKind::FetchStatus, LOCATION, url)
                        .retryable(status >= 500));
                }
                let Some(location) = response.header("location") else {
                    return Err(fetch_failure(ImageErrorKind::FetchStatus, LOCATION, url));
                };
                if redirects == self.policy.max_redirects {
                    return Err(unusable());
                }
                redirects += 1;
                target = target.join(location).map_err(|_| unusable())?;
            }
        }
    }
}
