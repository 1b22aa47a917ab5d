//! The HTTP image fetcher against a tiny server on 127.0.0.1 (the only address contacted):
//! the default policy refuses loopback and private targets, redirects are re-checked, and the
//! size limit, redirect limit, timeouts and retries behave as the spec says.

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Write};
use std::net::{IpAddr, TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use deepseek_recipe::image::{
    DestinationPolicy, HostResolver, HttpFetcher, ImageData, ImageError, ImageErrorKind,
    ImageFetcher, ImageInput, ImageQuota, ImageResolver, ResolveBudget, RetryPolicy,
};

/// Requests waiting at `/barrier/N` until N of them are in flight together.
type Barrier = (Mutex<usize>, Condvar);

/// A test server on 127.0.0.1 counting the requests per path.
struct Server {
    port: u16,
    hits: Arc<Mutex<HashMap<String, usize>>>,
}

impl Server {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().expect("local address").port();
        let hits = Arc::new(Mutex::new(HashMap::new()));
        let counter = Arc::clone(&hits);
        let barrier: Arc<Barrier> = Arc::default();
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (counter, barrier) = (Arc::clone(&counter), Arc::clone(&barrier));
                thread::spawn(move || {
                    let _ = serve(stream, port, &counter, &barrier);
                });
            }
        });
        Self { port, hits }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn hits(&self, path: &str) -> usize {
        self.hits.lock().unwrap().get(path).copied().unwrap_or(0)
    }

    fn total_hits(&self) -> usize {
        self.hits.lock().unwrap().values().sum()
    }
}

fn png_bytes() -> Vec<u8> {
    let image = image::RgbImage::from_pixel(10, 10, image::Rgb([200, 10, 10]));
    let mut out = io::Cursor::new(Vec::new());
    image
        .write_to(&mut out, image::ImageFormat::Png)
        .expect("encode png");
    out.into_inner()
}

fn respond(
    stream: &mut TcpStream,
    status: &str,
    headers: &[String],
    body: &[u8],
) -> io::Result<()> {
    let mut head = format!("HTTP/1.1 {status}\r\nConnection: close\r\n");
    for header in headers {
        head.push_str(header);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)
}

fn serve(
    mut stream: TcpStream,
    port: u16,
    hits: &Mutex<HashMap<String, usize>>,
    barrier: &Barrier,
) -> io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" {
            break;
        }
    }
    let path = request_line.split(' ').nth(1).unwrap_or("/").to_owned();
    *hits.lock().unwrap().entry(path.clone()).or_insert(0) += 1;
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let length = |body: &[u8]| vec![format!("Content-Length: {}", body.len())];
    match parts.as_slice() {
        ["png"] => {
            let body = png_bytes();
            respond(&mut stream, "200 OK", &length(&body), &body)
        }
        ["bytes", n] => {
            let body = vec![b'x'; n.parse().unwrap_or(0)];
            respond(&mut stream, "200 OK", &length(&body), &body)
        }
        ["chunked", n] => {
            let n: usize = n.parse().unwrap_or(0);
            let mut body = Vec::new();
            for piece in vec![b'x'; n].chunks(7) {
                body.extend(format!("{:x}\r\n", piece.len()).bytes());
                body.extend_from_slice(piece);
                body.extend_from_slice(b"\r\n");
            }
            body.extend_from_slice(b"0\r\n\r\n");
            respond(
                &mut stream,
                "200 OK",
                &["Transfer-Encoding: chunked".to_owned()],
                &body,
            )
        }
        ["status", code] => respond(&mut stream, &format!("{code} Status"), &length(b""), b""),
        ["redirect", "0"] => respond(&mut stream, "200 OK", &length(b"done"), b"done"),
        ["redirect", n] => {
            let next = n.parse::<u32>().unwrap_or(1) - 1;
            let headers = [
                format!("Location: /redirect/{next}"),
                "Content-Length: 0".to_owned(),
            ];
            respond(&mut stream, "302 Found", &headers, b"")
        }
        ["absolute-redirect"] => {
            let headers = [
                format!("Location: http://127.0.0.1:{port}/redirect/0"),
                "Content-Length: 0".to_owned(),
            ];
            respond(&mut stream, "301 Moved", &headers, b"")
        }
        ["to", target] => {
            let target = target.replace("PORT", &port.to_string()).replace('~', "/");
            let headers = [
                format!("Location: {target}"),
                "Content-Length: 0".to_owned(),
            ];
            respond(&mut stream, "302 Found", &headers, b"")
        }
        ["no-location"] => respond(&mut stream, "302 Found", &length(b""), b""),
        ["barrier", n] => {
            let (arrived, all_in) = barrier;
            let mut count = arrived.lock().unwrap();
            *count += 1;
            all_in.notify_all();
            let wanted: usize = n.parse().unwrap_or(1);
            let (count, _) = all_in
                .wait_timeout_while(count, Duration::from_secs(10), |count| *count < wanted)
                .unwrap();
            if *count >= wanted {
                let body = png_bytes();
                respond(&mut stream, "200 OK", &length(&body), &body)
            } else {
                respond(&mut stream, "404 Not Found", &length(b""), b"")
            }
        }
        ["slow"] => {
            thread::sleep(Duration::from_secs(3));
            respond(&mut stream, "200 OK", &length(b"late"), b"late")
        }
        _ => respond(&mut stream, "404 Not Found", &length(b""), b""),
    }
}

/// Loopback allowed explicitly (what a test host would configure); everything else default.
fn loopback_fetcher() -> HttpFetcher {
    HttpFetcher::default()
        .with_policy(DestinationPolicy::new().allow_range("127.0.0.1/32".parse().unwrap()))
}

/// Answers fixed addresses for names (no DNS query leaves the process).
struct FixedResolver(Vec<(&'static str, IpAddr)>);

impl HostResolver for FixedResolver {
    fn resolve(&self, host: &str, _port: u16) -> io::Result<Vec<IpAddr>> {
        Ok(self
            .0
            .iter()
            .filter(|(name, _)| *name == host)
            .map(|(_, ip)| *ip)
            .collect())
    }
}

#[test]
fn default_policy_refuses_loopback_and_private_targets() {
    let server = Server::start();
    let fetcher = HttpFetcher::default().with_host_resolver(FixedResolver(vec![(
        "localhost",
        "127.0.0.1".parse().unwrap(),
    )]));
    let port = server.port;
    for url in [
        server.url("/png"),
        format!("http://localhost:{port}/png"),
        format!("http://[::1]:{port}/png"),
        format!("http://[::ffff:127.0.0.1]:{port}/png"),
        format!("http://0.0.0.0:{port}/png"),
        "http://10.0.0.1/x.png".to_owned(),
        "http://172.16.5.4/x.png".to_owned(),
        "http://192.168.1.1/x.png".to_owned(),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        "http://100.100.100.200/x".to_owned(),
        "http://[fd00:ec2::254]/x".to_owned(),
        "https://[fe80::1]/x".to_owned(),
    ] {
        let error = fetcher.fetch(&url).unwrap_err();
        assert_eq!(error.kind(), ImageErrorKind::DestinationRejected, "{url}");
        assert!(!error.is_retryable());
        assert_eq!(
            error.to_string(),
            format!("image[0]: Failed to download image from {url}")
        );
    }
    assert_eq!(server.total_hits(), 0, "nothing may reach the server");
}

#[test]
fn names_resolving_to_private_addresses_are_refused() {
    let fetcher = HttpFetcher::default().with_host_resolver(FixedResolver(vec![
        ("internal.test", "192.168.7.7".parse().unwrap()),
        ("metadata.test", "169.254.169.254".parse().unwrap()),
    ]));
    for url in ["http://internal.test/x.png", "http://metadata.test/x"] {
        assert_eq!(
            fetcher.fetch(url).unwrap_err().kind(),
            ImageErrorKind::DestinationRejected
        );
    }
}

#[test]
fn redirects_to_private_addresses_are_refused() {
    let server = Server::start();
    let fetcher = loopback_fetcher().with_host_resolver(FixedResolver(vec![(
        "internal.test",
        "10.1.2.3".parse().unwrap(),
    )]));
    for target in [
        "http:~~10.0.0.1~x",
        "http:~~169.254.169.254~latest",
        "http:~~internal.test:PORT~png",
        "http:~~[::1]:PORT~png",
    ] {
        let url = server.url(&format!("/to/{target}"));
        let error = fetcher.fetch(&url).unwrap_err();
        assert_eq!(
            error.kind(),
            ImageErrorKind::DestinationRejected,
            "{target}"
        );
        assert!(!error.is_retryable());
    }
    assert_eq!(server.hits("/png"), 0);
}

#[test]
fn allowed_fetch_and_redirects_within_the_limit() {
    let server = Server::start();
    let fetcher = loopback_fetcher();
    assert_eq!(fetcher.fetch(&server.url("/png")).unwrap(), png_bytes());
    assert_eq!(fetcher.fetch(&server.url("/redirect/5")).unwrap(), b"done");
    assert_eq!(
        fetcher.fetch(&server.url("/absolute-redirect")).unwrap(),
        b"done"
    );
    let error = fetcher.fetch(&server.url("/redirect/6")).unwrap_err();
    assert_eq!(error.kind(), ImageErrorKind::Fetch);
    assert!(
        !error.is_retryable(),
        "a chain past the limit cannot succeed on a retry"
    );
    assert_eq!(
        server.hits("/redirect/0"),
        2,
        "the sixth redirect is never followed"
    );
    let error = fetcher.fetch(&server.url("/no-location")).unwrap_err();
    assert_eq!(
        (error.kind(), error.is_retryable()),
        (ImageErrorKind::FetchStatus, false)
    );
    for target in [
        "ftp:~~127.0.0.1~x",
        "file:~~~etc~passwd",
        "gopher:~~127.0.0.1:70~x",
    ] {
        let error = fetcher
            .fetch(&server.url(&format!("/to/{target}")))
            .unwrap_err();
        assert_eq!(
            (error.kind(), error.is_retryable()),
            (ImageErrorKind::Fetch, false),
            "{target}"
        );
    }
}

#[test]
fn statuses_map_to_kinds() {
    let server = Server::start();
    let fetcher = loopback_fetcher();
    assert_eq!(fetcher.fetch(&server.url("/status/204")).unwrap(), b"");
    for (code, retryable) in [
        (404, false),
        (403, false),
        (429, false),
        (500, true),
        (503, true),
    ] {
        let error = fetcher
            .fetch(&server.url(&format!("/status/{code}")))
            .unwrap_err();
        assert_eq!(
            (error.kind(), error.is_retryable()),
            (ImageErrorKind::FetchStatus, retryable)
        );
    }
    for url in [
        "ftp://127.0.0.1/x",
        "data:image/png;base64,AAAA",
        "not a url",
    ] {
        let error = fetcher.fetch(url).unwrap_err();
        assert_eq!(
            (error.kind(), error.is_retryable()),
            (ImageErrorKind::Fetch, false),
            "{url}"
        );
    }
    let error = fetcher
        .fetch(&format!("http://127.0.0.1:{}/x", free_port()))
        .unwrap_err();
    assert_eq!(
        (error.kind(), error.is_retryable()),
        (ImageErrorKind::Fetch, true),
        "a refused connection may succeed later"
    );
}

/// A port nothing listens on (bound, then released).
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    listener.local_addr().expect("local address").port()
}

#[test]
fn size_limit_applies_to_declared_and_streamed_bodies() {
    let server = Server::start();
    let fetcher = loopback_fetcher().with_max_bytes(100);
    assert_eq!(fetcher.fetch(&server.url("/bytes/100")).unwrap().len(), 100);
    assert_eq!(
        fetcher.fetch(&server.url("/chunked/100")).unwrap().len(),
        100
    );
    for path in ["/bytes/101", "/chunked/101", "/chunked/5000000"] {
        let error = fetcher.fetch(&server.url(path)).unwrap_err();
        assert_eq!(error.kind(), ImageErrorKind::ImageTooLarge, "{path}");
        assert_eq!(
            error.to_string(),
            "image[0]: image file size exceeds limit 0 MB"
        );
    }
    let fetcher = loopback_fetcher().with_max_bytes(3 << 20);
    let error = fetcher.fetch(&server.url("/bytes/4000000")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "image[0]: image file size exceeds limit 3 MB"
    );
}

#[test]
fn slow_servers_time_out() {
    let server = Server::start();
    let fetcher =
        loopback_fetcher().with_timeouts(Duration::from_millis(300), Duration::from_millis(300));
    let started = Instant::now();
    let error = fetcher.fetch(&server.url("/slow")).unwrap_err();
    assert_eq!(
        (error.kind(), error.is_retryable()),
        (ImageErrorKind::Fetch, true)
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "timed out late: {:?}",
        started.elapsed()
    );
}

#[test]
fn resolver_retries_retryable_failures_only() {
    let server = Server::start();
    let retry = RetryPolicy {
        attempts: 4,
        initial_backoff: Duration::from_millis(1),
    };
    let resolver = ImageResolver::new(loopback_fetcher().with_max_bytes(10)).with_retry(retry);
    let quota = ImageQuota::new();
    let source =
        |path: &str| ImageInput::new(ImageData::Url(server.url(path))).with_path(".messages[0]");
    let error = resolver
        .resolve(&[source("/status/500")], &quota)
        .unwrap_err();
    assert_eq!(
        (error.kind(), error.is_retryable()),
        (ImageErrorKind::FetchStatus, true)
    );
    assert_eq!(
        error.to_string(),
        format!(
            ".messages[0].image[0]: Failed to download image from {}",
            server.url("/status/500")
        )
    );
    assert_eq!(server.hits("/status/500"), 4);
    let error = resolver
        .resolve(&[source("/status/404")], &quota)
        .unwrap_err();
    assert_eq!(
        (error.kind(), error.is_retryable()),
        (ImageErrorKind::FetchStatus, false)
    );
    assert_eq!(server.hits("/status/404"), 1);
    let error = resolver
        .resolve(&[source("/bytes/11")], &quota)
        .unwrap_err();
    assert_eq!(
        (error.kind(), error.is_retryable()),
        (ImageErrorKind::Fetch, true)
    );
    assert_eq!(
        server.hits("/bytes/11"),
        1,
        "wrapped inner errors are not retried"
    );
    assert_eq!(quota.usage().image_count, 0);
}

#[test]
fn resolver_fetches_and_preprocesses() {
    let server = Server::start();
    let resolver = ImageResolver::new(loopback_fetcher());
    let quota = ImageQuota::new();
    let resolved = resolver
        .resolve(
            &[ImageInput::new(ImageData::Url(server.url("/png")))],
            &quota,
        )
        .unwrap();
    assert_eq!(
        (resolved.images[0].width, resolved.images[0].height),
        (546, 546)
    );
    assert_eq!(resolved.token_adjustment, 183);
    assert_eq!(quota.usage().byte_size, png_bytes().len() as u64);
    let default = ImageResolver::default();
    let error = default
        .resolve(
            &[ImageInput::new(ImageData::Url(server.url("/png")))],
            &ImageQuota::new(),
        )
        .unwrap_err();
    assert_eq!(error.kind(), ImageErrorKind::DestinationRejected);
}

#[test]
fn the_filter_sees_every_hop() {
    let server = Server::start();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    let policy = DestinationPolicy::new()
        .allow_range("127.0.0.1/32".parse().unwrap())
        .with_filter(move |host, address| {
            record.lock().unwrap().push((host.to_owned(), address));
            true
        });
    let fetcher = HttpFetcher::default()
        .with_policy(policy)
        .with_host_resolver(FixedResolver(vec![(
            "images.test",
            "127.0.0.1".parse().unwrap(),
        )]));
    let url = server.url("/to/http:~~images.test:PORT~redirect~0");
    assert_eq!(fetcher.fetch(&url).unwrap(), b"done");
    let loopback: IpAddr = "127.0.0.1".parse().unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        [
            ("127.0.0.1".to_owned(), loopback),
            ("images.test".to_owned(), loopback)
        ]
    );
}

fn budget(deadline: Duration, concurrent_fetches: usize) -> ResolveBudget {
    ResolveBudget {
        deadline,
        concurrent_fetches,
        ..ResolveBudget::default()
    }
}

#[test]
fn resolver_fetches_url_sources_concurrently() {
    let server = Server::start();
    let resolver =
        ImageResolver::new(loopback_fetcher()).with_budget(budget(Duration::from_secs(60), 4));
    let sources: Vec<ImageInput> = (0..4)
        .map(|_| ImageInput::new(ImageData::Url(server.url("/barrier/4"))))
        .collect();
    // Each request is answered only once all four are in flight together.
    let resolved = resolver.resolve(&sources, &ImageQuota::new()).unwrap();
    assert_eq!(resolved.images.len(), 4);
    assert_eq!(server.hits("/barrier/4"), 4);
}

#[test]
fn the_deadline_bounds_fetches_and_retries() {
    let server = Server::start();
    let retry = RetryPolicy {
        attempts: 4,
        initial_backoff: Duration::from_millis(1),
    };
    let resolver = ImageResolver::new(loopback_fetcher())
        .with_retry(retry)
        .with_budget(budget(Duration::from_millis(300), 8));
    let source = ImageInput::new(ImageData::Url(server.url("/slow"))).with_path(".messages[0]");
    let error = resolver.resolve(&[source], &ImageQuota::new()).unwrap_err();
    assert_eq!(
        (error.kind(), error.is_retryable()),
        (ImageErrorKind::Fetch, true)
    );
    assert_eq!(
        error.to_string(),
        format!(
            ".messages[0].image[0]: Failed to download image from {}",
            server.url("/slow")
        )
    );
    assert_eq!(
        server.hits("/slow"),
        1,
        "no retry once the deadline has passed"
    );
}

/// A fetcher that answers only after a pause and knows nothing of deadlines.
struct SlowFetcher(Duration);

impl ImageFetcher for SlowFetcher {
    fn fetch(&self, _url: &str) -> Result<Vec<u8>, ImageError> {
        thread::sleep(self.0);
        Ok(png_bytes())
    }
}

#[test]
fn the_resolver_stops_waiting_at_the_deadline_for_any_fetcher() {
    let slow = ImageResolver::new(SlowFetcher(Duration::from_secs(2)))
        .with_budget(budget(Duration::from_millis(200), 8));
    let sources = [
        ImageInput::new(ImageData::Bytes(png_bytes())),
        ImageInput::new(ImageData::Url("http://images.test/a.png".into())).with_path("p"),
    ];
    let quota = ImageQuota::new();
    let error = slow.resolve(&sources, &quota).unwrap_err();
    assert_eq!(
        (error.kind(), error.is_retryable()),
        (ImageErrorKind::Fetch, true)
    );
    assert_eq!(
        error.to_string(),
        "p.image[0]: Failed to download image from http://images.test/a.png"
    );
    assert_eq!(quota.usage().image_count, 0);
    let patient = ImageResolver::new(SlowFetcher(Duration::from_millis(10)));
    assert_eq!(patient.resolve(&sources, &quota).unwrap().images.len(), 2);
}

#[test]
fn redirects_to_other_schemes_are_not_retried() {
    let server = Server::start();
    let retry = RetryPolicy {
        attempts: 4,
        initial_backoff: Duration::from_millis(1),
    };
    let resolver = ImageResolver::new(loopback_fetcher()).with_retry(retry);
    for target in ["file:~~~etc~passwd", "gopher:~~127.0.0.1:70~x"] {
        let path = format!("/to/{target}");
        let source = ImageInput::new(ImageData::Url(server.url(&path)));
        let error = resolver.resolve(&[source], &ImageQuota::new()).unwrap_err();
        assert_eq!(
            (error.kind(), error.is_retryable()),
            (ImageErrorKind::Fetch, false),
            "{target}"
        );
        assert_eq!(server.hits(&path), 1, "{target}");
    }
}
