//! Running one job over every item of a batch on several threads.
//!
//! Workers claim blocks of consecutive items from a shared counter, each block a share of the items
//! not yet claimed (large while much is left, down to single items at the end), so items of uneven
//! cost still keep every thread busy to the end while the counter is touched a few hundred times
//! at most; each worker keeps one scratch state (the encoder's word cache and buffers) for all the
//! items it takes, instead of one per item.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

/// Batches with less work than this (in `weight` units: bytes or ids) stay on the calling thread.
pub(super) const PARALLEL_MIN_WORK: usize = 64 * 1024;
/// A claim takes this fraction of the unclaimed items per worker (at least one item): smaller
/// balances better, larger touches the counter less.
const CLAIM_SHARE_PER_WORKER: usize = 4;

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
    let mut blocks = Blocks::default();
    for_each_block(items, threads, weight, new_state, job, |start, results| {
        blocks.push(start, results);
    });
    blocks.into_results()
}

/// Blocks of consecutive results gathered in any order (as [`for_each_block`] hands them over).
pub(super) struct Blocks<R>(Vec<(usize, Vec<R>)>);

impl<R> Default for Blocks<R> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<R> Blocks<R> {
    /// Adds the block whose first item is item `start`.
    pub(super) fn push(&mut self, start: usize, results: Vec<R>) {
        self.0.push((start, results));
    }

    /// Every result, in item order.
    pub(super) fn into_results(mut self) -> Vec<R> {
        self.0.sort_unstable_by_key(|(start, _)| *start);
        self.0
            .into_iter()
            .flat_map(|(_, results)| results)
            .collect()
    }
}

/// `job(state, item)` for every item, as [`map_items`] runs it, handing each block of
/// consecutive results to `sink(index of the block's first item, results)` on the calling thread
/// as soon as the block is done (blocks in completion order, each item in exactly one block), so
/// the caller can consume results while other threads still work. The calling thread works too,
/// between draining finished blocks into `sink`.
pub(super) fn for_each_block<'a, T: Sync, S, R: Send>(
    items: &'a [T],
    threads: usize,
    weight: impl Fn(&T) -> usize,
    new_state: impl Fn() -> S + Sync,
    job: impl Fn(&mut S, &'a T) -> R + Sync,
    mut sink: impl FnMut(usize, Vec<R>),
) {
    let threads = threads.min(items.len());
    if threads <= 1 || items.iter().map(weight).sum::<usize>() < PARALLEL_MIN_WORK {
        let mut state = new_state();
        sink(0, items.iter().map(|item| job(&mut state, item)).collect());
        return;
    }
    let next = AtomicUsize::new(0);
    let claim = || {
        let mut start = next.load(Ordering::Relaxed);
        loop {
            let block = ((items.len() - start) / (threads * CLAIM_SHARE_PER_WORKER)).max(1);
            let end = (start + block).min(items.len());
            if start >= end {
                return None;
            }
            match next.compare_exchange_weak(start, end, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Some(start..end),
                Err(now) => start = now,
            }
        }
    };
    let run_block = |state: &mut S, block: Range<usize>| {
        let start = block.start;
        (
            start,
            items[block].iter().map(|item| job(state, item)).collect(),
        )
    };
    let (claim, run_block, new_state) = (&claim, &run_block, &new_state);
    std::thread::scope(|scope| {
        let (done, finished) = mpsc::channel::<(usize, Vec<R>)>();
        let helpers: Vec<_> = (1..threads)
            .map(|_| {
                let done = done.clone();
                scope.spawn(move || {
                    let mut state = new_state();
                    while let Some(block) = claim() {
                        if done.send(run_block(&mut state, block)).is_err() {
                            return;
                        }
                    }
                })
            })
            .collect();
        drop(done);
        let mut state = None;
        loop {
            while let Ok((start, results)) = finished.try_recv() {
                sink(start, results);
            }
            let Some(block) = claim() else { break };
            let (start, results) = run_block(state.get_or_insert_with(new_state), block);
            sink(start, results);
        }
        for (start, results) in finished {
            sink(start, results);
        }
        for helper in helpers {
            if let Err(panic) = helper.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
}

/// Bytes per id in [`write_ids_ne`]'s output (a native-endian `u32`).
pub(super) const ID_BYTES: usize = 4;

/// Writes every id of `lists` (`total` ids), in order, into `out` (exactly [`ID_BYTES`] per id),
/// native-endian; on up to `threads` threads, each taking a consecutive run of about equal ids,
/// when there are at least [`PARALLEL_MIN_WORK`] ids.
pub(super) fn write_ids_ne<L: AsRef<[u32]>>(
    lists: &[L],
    total: usize,
    threads: usize,
    out: &mut [u8],
) {
    debug_assert_eq!(out.len(), total * ID_BYTES);
    let threads = threads.max(1);
    if threads == 1 || total < PARALLEL_MIN_WORK {
        let mut rest = out;
        for ids in lists {
            let (head, tail) = rest.split_at_mut(ids.as_ref().len() * ID_BYTES);
            copy_ids(ids.as_ref(), head);
            rest = tail;
        }
        return;
    }
    let share = total.div_ceil(threads);
    let mut runs: Vec<Vec<(&[u32], &mut [u8])>> = vec![Vec::new()];
    let mut in_run = 0;
    let mut rest = out;
    for ids in lists {
        let mut ids = ids.as_ref();
        while !ids.is_empty() {
            if in_run == share {
                runs.push(Vec::new());
                in_run = 0;
            }
            let (taken, left) = ids.split_at(ids.len().min(share - in_run));
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(taken.len() * ID_BYTES);
            if let Some(run) = runs.last_mut() {
                run.push((taken, head));
            }
            in_run += taken.len();
            ids = left;
            rest = tail;
        }
    }
    run_each(runs, |run| {
        run.into_iter()
            .for_each(|(ids, bytes)| copy_ids(ids, bytes));
    });
}

/// `job` of every run, each run on a thread of its own except the last, which runs on the calling
/// thread; the results in run order. A run that panics resumes its panic here.
pub(super) fn run_each<T: Send, R: Send>(mut runs: Vec<T>, job: impl Fn(T) -> R + Sync) -> Vec<R> {
    let Some(own) = runs.pop() else {
        return Vec::new();
    };
    let job = &job;
    std::thread::scope(|scope| {
        let helpers: Vec<_> = runs
            .into_iter()
            .map(|run| scope.spawn(move || job(run)))
            .collect();
        let own = job(own);
        let mut results: Vec<R> = helpers
            .into_iter()
            .map(|helper| {
                helper
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect();
        results.push(own);
        results
    })
}

/// `ids` into `bytes` (exactly [`ID_BYTES`] per id), native-endian.
fn copy_ids(ids: &[u32], bytes: &mut [u8]) {
    for (slot, id) in bytes.chunks_exact_mut(ID_BYTES).zip(ids) {
        slot.copy_from_slice(&id.to_ne_bytes());
    }
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
    fn blocks_cover_every_item_once_and_reach_the_sink_on_the_calling_thread() {
        let items: Vec<usize> = (0..3000).collect();
        let caller = std::thread::current().id();
        for threads in [1, 2, 5, 16] {
            let mut seen = vec![0u8; items.len()];
            let mut blocks = Blocks::default();
            for_each_block(
                &items,
                threads,
                |_| 100,
                || (),
                |(), item| item + 1,
                |start, results| {
                    assert_eq!(std::thread::current().id(), caller);
                    for (index, result) in (start..).zip(&results) {
                        assert_eq!(*result, index + 1);
                        seen[index] += 1;
                    }
                    blocks.push(start, results);
                },
            );
            assert!(seen.iter().all(|&count| count == 1), "threads {threads}");
            assert_eq!(blocks.into_results(), (1..=3000).collect::<Vec<_>>());
        }
    }

    #[test]
    #[should_panic(expected = "item 2500")]
    fn a_panicking_job_reaches_the_caller_whichever_thread_ran_it() {
        let items: Vec<usize> = (0..3000).collect();
        for_each_block(
            &items,
            4,
            |_| 100,
            || (),
            |(), &item| assert!(item != 2500, "item {item}"),
            |_, _| {},
        );
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

    #[test]
    fn ids_are_written_in_order_on_any_thread_count() {
        let lists: Vec<Vec<u32>> = (0..300u32)
            .map(|list| {
                (0..(list * 37) % 1500)
                    .map(|id| id ^ (list << 16))
                    .collect()
            })
            .collect();
        let expected: Vec<u8> = lists
            .iter()
            .flatten()
            .flat_map(|id| id.to_ne_bytes())
            .collect();
        assert!(
            expected.len() / ID_BYTES >= PARALLEL_MIN_WORK,
            "large enough to go parallel"
        );
        for threads in [1, 2, 3, 16, 1000] {
            let mut out = vec![0u8; expected.len()];
            write_ids_ne(&lists, expected.len() / ID_BYTES, threads, &mut out);
            assert!(out == expected, "threads {threads}");
        }
        let one_long = [expected
            .iter()
            .map(|&byte| u32::from(byte))
            .collect::<Vec<u32>>()];
        let mut out = vec![0u8; one_long[0].len() * ID_BYTES];
        write_ids_ne(&one_long, one_long[0].len(), 7, &mut out);
        assert!(out
            .chunks_exact(ID_BYTES)
            .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
            .eq(one_long[0].iter().copied()));
        write_ids_ne::<Vec<u32>>(&[], 0, 4, &mut []);
    }
}
