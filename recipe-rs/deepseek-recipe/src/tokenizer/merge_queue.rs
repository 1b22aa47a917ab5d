//! Priority queues of pending merges for the long-word BPE path: keys are `rank << 32 | position`
//! and the smallest pops first.
//!
//! [`RadixHeap`] needs every pushed key to be at least the last popped one. BPE gives that when
//! the merge table is *monotone*: every merge ranks after each merge that makes one of its two
//! tokens, so a merge of rank `r` only creates pairs of higher rank (see
//! [`merges_are_monotone`]). Its pushes and pops touch a few growing vectors instead of sifting a
//! heap, so a word of `n` bytes costs close to `O(n)`; other tables use the binary heap.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

use super::bpe::Merge;

/// A min-queue of `u64` keys.
pub(super) trait MergeQueue {
    /// Empties the queue and adds `keys` (in any order).
    fn reset(&mut self, keys: impl Iterator<Item = u64>);
    /// Adds `key`.
    fn push(&mut self, key: u64);
    /// Removes and returns the smallest key.
    fn pop(&mut self) -> Option<u64>;
}

impl MergeQueue for BinaryHeap<Reverse<u64>> {
    fn reset(&mut self, keys: impl Iterator<Item = u64>) {
        let mut items = std::mem::take(self).into_vec();
        items.clear();
        items.extend(keys.map(Reverse));
        *self = BinaryHeap::from(items);
    }

    #[inline]
    fn push(&mut self, key: u64) {
        BinaryHeap::push(self, Reverse(key));
    }

    #[inline]
    fn pop(&mut self) -> Option<u64> {
        BinaryHeap::pop(self).map(|Reverse(key)| key)
    }
}

/// A monotone radix heap: bucket `i > 0` holds the keys whose highest bit differing from `last`
/// (the last popped key) is bit `i - 1`; bucket 0 holds keys equal to `last`.
#[derive(Debug)]
pub(super) struct RadixHeap {
    last: u64,
    buckets: [Vec<u64>; 65],
}

impl Default for RadixHeap {
    fn default() -> Self {
        Self {
            last: 0,
            buckets: std::array::from_fn(|_| Vec::new()),
        }
    }
}

impl RadixHeap {
    #[inline]
    fn bucket_of(&self, key: u64) -> usize {
        64 - (key ^ self.last).leading_zeros() as usize
    }
}

impl MergeQueue for RadixHeap {
    fn reset(&mut self, keys: impl Iterator<Item = u64>) {
        self.last = 0;
        for bucket in &mut self.buckets {
            bucket.clear();
        }
        for key in keys {
            self.push(key);
        }
    }

    #[inline]
    fn push(&mut self, key: u64) {
        debug_assert!(key >= self.last, "radix heap keys must not decrease");
        let bucket = self.bucket_of(key);
        self.buckets[bucket].push(key);
    }

    fn pop(&mut self) -> Option<u64> {
        if self.buckets[0].is_empty() {
            let index = self.buckets.iter().position(|bucket| !bucket.is_empty())?;
            let mut moved = std::mem::take(&mut self.buckets[index]);
            self.last = moved.iter().copied().min()?;
            for &key in &moved {
                let bucket = self.bucket_of(key);
                self.buckets[bucket].push(key);
            }
            moved.clear();
            // Keep the emptied bucket's allocation for later pushes.
            self.buckets[index] = moved;
        }
        self.buckets[0].pop()
    }
}

/// Whether every merge ranks after each merge that makes one of its tokens (then a merge only
/// creates pairs of higher rank, and [`RadixHeap`] can order them).
pub(super) fn merges_are_monotone(merges: &FxHashMap<u64, Merge>) -> bool {
    let mut made_last: FxHashMap<u32, u32> = FxHashMap::default();
    for merge in merges.values() {
        let rank = made_last.entry(merge.id).or_insert(merge.rank);
        *rank = (*rank).max(merge.rank);
    }
    merges.iter().all(|(&pair, merge)| {
        let (left, right) = ((pair >> 32) as u32, pair as u32);
        [left, right]
            .iter()
            .all(|token| made_last.get(token).is_none_or(|&made| made < merge.rank))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn radix_heap_pops_in_order_while_keys_grow() {
        let mut heap = RadixHeap::default();
        heap.reset([9u64, 3, 3, 1 << 40, 7].into_iter());
        let mut popped = Vec::new();
        while let Some(key) = heap.pop() {
            popped.push(key);
            if key == 7 {
                heap.push(8);
                heap.push(1 << 35);
            }
        }
        assert_eq!(popped, [3, 3, 7, 8, 9, 1 << 35, 1 << 40]);
        heap.reset([5u64, 2].into_iter());
        assert_eq!(
            (heap.pop(), heap.pop(), heap.pop()),
            (Some(2), Some(5), None)
        );
    }

    #[test]
    fn monotone_merges() {
        let merge = |rank, id| Merge { rank, id };
        let key = |left: u32, right: u32| (u64::from(left) << 32) | u64::from(right);
        let mut merges = FxHashMap::default();
        merges.insert(key(0, 0), merge(0, 4));
        merges.insert(key(4, 0), merge(1, 5));
        assert!(merges_are_monotone(&merges));
        // Token 5 is made again at rank 3, after the merge at rank 2 that uses it.
        merges.insert(key(5, 1), merge(2, 6));
        merges.insert(key(0, 4), merge(3, 5));
        assert!(!merges_are_monotone(&merges));
    }
}
