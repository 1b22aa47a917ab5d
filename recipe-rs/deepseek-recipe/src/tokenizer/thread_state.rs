//! The encode state (buffers and word cache) each thread keeps per tokenizer between calls.
//!
//! Words that are not whole tokens need a merge loop whose every step is a lookup in a table of
//! megabytes; remembering their ids across calls makes a repeated word one lookup in a small,
//! hot cache, also when a host encodes many short texts one call at a time. The states are
//! keyed by a process-unique tokenizer id (never reused, unlike an address), so a cache never
//! serves another tokenizer's ids.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use super::bpe::EncodeState;

/// The most tokenizers whose states one thread keeps; the least recently used is dropped.
const STATES_PER_THREAD: usize = 4;

thread_local! {
    /// This thread's states, most recently used first, with their tokenizer ids.
    static STATES: RefCell<Vec<(u64, EncodeState)>> = const { RefCell::new(Vec::new()) };
}

/// A new process-unique tokenizer id.
pub(super) fn new_tokenizer_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// `job` with the calling thread's state for tokenizer `id` (a fresh one if the thread's states
/// are already in use further up the stack).
pub(super) fn with_state<R>(id: u64, job: impl FnOnce(&mut EncodeState) -> R) -> R {
    STATES.with(|states| {
        let Ok(mut states) = states.try_borrow_mut() else {
            return job(&mut EncodeState::default());
        };
        match states.iter().position(|(owner, _)| *owner == id) {
            Some(0) => {}
            Some(at) => states[..=at].rotate_right(1),
            None => {
                states.truncate(STATES_PER_THREAD - 1);
                states.insert(0, (id, EncodeState::default()));
            }
        }
        let result = job(&mut states[0].1);
        states[0].1.release_long_word_buffers();
        result
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tokenizer_gets_its_own_state_and_the_oldest_is_dropped() {
        let ids: Vec<u64> = (0..=STATES_PER_THREAD)
            .map(|_| new_tokenizer_id())
            .collect();
        for &id in &ids {
            with_state(id, |_| ());
        }
        STATES.with(|states| {
            let owners: Vec<u64> = states.borrow().iter().map(|(owner, _)| *owner).collect();
            let mut newest_first: Vec<u64> = ids[1..].to_vec();
            newest_first.reverse();
            assert_eq!(owners, newest_first);
        });
        let nested = with_state(ids[1], |_| with_state(ids[1], |_| "fresh state"));
        assert_eq!(nested, "fresh state");
    }
}
