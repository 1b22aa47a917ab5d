//! The URL sources of one resolve call, downloaded concurrently under one deadline.
//!
//! Worker threads take the URLs in order and fetch each with retries; the resolver waits for
//! the outcomes in source order, never past the deadline. A fetcher that ignores the deadline
//! cannot hold the call up: its worker is left to finish on its own. [`RetryPolicy`] says how
//! often a retryable failure is retried.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::error::ImageError;
use super::fetch::ImageFetcher;
use super::limits::seconds;

/// How retryable fetch failures are retried. As JSON every key is optional (an absent one
/// keeps its default) and the backoff is `initial_backoff_s`, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetryPolicy {
    /// Attempts in total (at least one is always made).
    pub attempts: u32,
    /// Pause before the first retry; it doubles before each further one.
    #[serde(rename = "initial_backoff_s", with = "seconds")]
    pub initial_backoff: Duration,
}

impl Default for RetryPolicy {
    /// 4 attempts, pauses of 250 ms, 500 ms and 1 s.
    fn default() -> Self {
        Self {
            attempts: 4,
            initial_backoff: Duration::from_millis(250),
        }
    }
}

/// The outcome of one download: the body, or the last attempt's error.
pub(super) type Download = Result<Vec<u8>, ImageError>;

/// Downloads in progress.
pub(super) struct Downloads {
    results: Receiver<(usize, Download)>,
    finished: Vec<Option<Download>>,
    deadline: Instant,
    stop: Arc<AtomicBool>,
}

/// What every worker shares.
struct Work {
    fetcher: Arc<dyn ImageFetcher>,
    urls: Vec<String>,
    next: AtomicUsize,
    retry: RetryPolicy,
    deadline: Instant,
    stop: Arc<AtomicBool>,
}

impl Downloads {
    /// Starts fetching `urls` on up to `workers` threads (at least one), retrying retryable
    /// failures as `retry` says while the deadline allows.
    pub(super) fn start(
        fetcher: Arc<dyn ImageFetcher>,
        urls: Vec<String>,
        retry: RetryPolicy,
        workers: usize,
        deadline: Instant,
    ) -> Self {
        let (sender, results) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let count = urls.len();
        let work = Arc::new(Work {
            fetcher,
            urls,
            next: AtomicUsize::new(0),
            retry,
            deadline,
            stop: Arc::clone(&stop),
        });
        for _ in 0..workers.max(1).min(count) {
            let (work, sender) = (Arc::clone(&work), sender.clone());
            thread::spawn(move || work.run(&sender));
        }
        Self {
            results,
            finished: (0..count).map(|_| None).collect(),
            deadline,
            stop,
        }
    }

    /// The outcome of download `index` (in the order of `urls`), waiting for it until the
    /// deadline; `None` once the deadline passed first.
    pub(super) fn wait(&mut self, index: usize) -> Option<Download> {
        while self.finished[index].is_none() {
            let left = self.deadline.saturating_duration_since(Instant::now());
            match self.results.recv_timeout(left) {
                Ok((done, outcome)) => self.finished[done] = Some(outcome),
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return None,
            }
        }
        self.finished[index].take()
    }
}

impl Drop for Downloads {
    /// The call is over: workers start no further download or attempt.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl Work {
    /// Takes URLs until none is left (or the call is over) and reports each outcome.
    fn run(&self, results: &Sender<(usize, Download)>) {
        loop {
            let index = self.next.fetch_add(1, Ordering::Relaxed);
            if index >= self.urls.len() || self.stop.load(Ordering::Relaxed) {
                return;
            }
            if results
                .send((index, self.fetch(&self.urls[index])))
                .is_err()
            {
                return;
            }
        }
    }

    /// One URL with retries: pauses double from the initial backoff; no attempt or pause
    /// goes past the deadline, and the last failure is the outcome.
    fn fetch(&self, url: &str) -> Download {
        let mut backoff = self.retry.initial_backoff;
        let mut attempt = 1;
        loop {
            let error = match self.fetcher.fetch_until(url, self.deadline) {
                Ok(body) => return Ok(body),
                Err(error) => error,
            };
            let retry_at = Instant::now() + backoff;
            let stopped = self.stop.load(Ordering::Relaxed);
            if !error.is_retryable() || attempt >= self.retry.attempts || stopped {
                return Err(error);
            }
            if retry_at >= self.deadline {
                return Err(error);
            }
            thread::sleep(backoff);
            backoff = backoff.saturating_mul(2);
            attempt += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_json_keys_are_optional_and_the_backoff_is_in_seconds() {
        assert_eq!(
            serde_json::to_string(&RetryPolicy::default()).unwrap(),
            r#"{"attempts":4,"initial_backoff_s":0.25}"#
        );
        let retry: RetryPolicy = serde_json::from_str(r#"{"attempts": 1}"#).unwrap();
        assert_eq!(
            retry,
            RetryPolicy {
                attempts: 1,
                ..RetryPolicy::default()
            }
        );
        for bad in [
            r#"{"attempts": -1}"#,
            r#"{"initial_backoff_s": -1}"#,
            r#"{"backoff_s": 1}"#,
        ] {
            assert!(serde_json::from_str::<RetryPolicy>(bad).is_err(), "{bad}");
        }
    }
}
