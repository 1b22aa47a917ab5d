//! Running one job over every item of a batch on several threads.
//!
//! Workers claim small blocks of consecutive items from a shared counter, so items of uneven
//! cost still keep every thread busy to the end, and each worker keeps one scratch state (the
//! encoder's word cache and buffers) for all the items it takes, instead of one per item.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Batches with less work than this (in `weight` units: bytes or ids) stay on the calling thread.
pub(super) const PARALLEL_MIN_WORK: usize = 64 * 1024;
/// Blocks per worker a batch is claimed in: more balances better, fewer touch the counter less.
const BLOCKS_PER_WORKER: usize = 16;

/// `job(state, item)` for every item, in order, on up to `threads` threads when the items weigh
/// (by `weight`) at least [`PARALLEL_MIN_WORK`] together; each thread makes its `state` once with
/// `new_state`.
pub(super) fn map_items<'a, T: Sync, S, R: Send>(
    items: &'a [T],
    threads: usize,
    weight: impl Fn(&T) -> usize,
    new_state: impl Fn() -> S + Sync,
    job: impl Fn(&mut S, &'a T) -> R + Sync,
) -> Vec<R> {
    let threads = threads.min(items.len());
    if threads <= 1 || items.iter().map(weight).sum::<usize>() < PARALLEL_MIN_WORK {
        let mut state = new_state();
        return items.iter().map(|item| job(&mut state, item)).collect();
    }
    let block = items.len().div_ceil(threads * BLOCKS_PER_WORKER);
    let next = AtomicUsize::new(0);
    let worker = || {
        let mut state = new_state();
        let mut done = Vec::new();
        loop {
            let start = next.fetch_add(block, Ordering::Relaxed);
            if start >= items.len() {
                break done;
            }
            let end = (start + block).min(items.len());
            let results = items[start..end].iter().map(|item| job(&mut state, item));
            done.push((start, results.collect::<Vec<R>>()));
        }
    };
    let mut blocks = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(worker)).collect();
        let mut blocks = worker();
        for helper in helpers {
            match helper.join() {
                Ok(done) => blocks.extend(done),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        blocks
    });
    blocks.sort_unstable_by_key(|(start, _)| *start);
    blocks
        .into_iter()
        .flat_map(|(_, results)| results)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_item_order_with_one_state_per_thread() {
        let items: Vec<usize> = (0..5000).collect();
        for threads in [1, 2, 3, 8] {
            let states = AtomicUsize::new(0);
            let results = map_items(
                &items,
                threads,
                |_| 100,
                || states.fetch_add(1, Ordering::Relaxed),
                |_, item| item * 2,
            );
            assert_eq!(
                results,
                items.iter().map(|item| item * 2).collect::<Vec<_>>()
            );
            assert!(states.into_inner() <= threads, "threads {threads}");
        }
    }

    #[test]
    fn small_batches_stay_on_the_calling_thread() {
        let caller = std::thread::current().id();
        let results = map_items(
            &[1, 2, 3],
            8,
            |_| 1,
            || (),
            |(), item| (std::thread::current().id() == caller, item + 1),
        );
        assert_eq!(results, [(true, 2), (true, 3), (true, 4)]);
    }
}
