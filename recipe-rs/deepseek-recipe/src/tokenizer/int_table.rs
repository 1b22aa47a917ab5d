//! A read-only hash table from `u64` keys to `u64` values whose lookups usually read one cache
//! line: the merge table and the whole-token table are megabytes, so nearly every lookup of a
//! word seen for the first time misses the CPU caches, and a general-purpose map (control bytes
//! apart from the entries) misses twice.
//!
//! Open addressing with linear probing over 16-byte slots (four to a cache line), at most three
//! quarters full; the slot of a key comes from a multiplicative hash of it.

/// The key of an empty slot; a table never holds it.
const EMPTY: u64 = u64::MAX;
/// Fibonacci hashing's multiplier (2^64 divided by the golden ratio, odd).
const MULTIPLIER: u64 = 0x9E37_79B9_7F4A_7C15;

/// One slot: a key ([`EMPTY`] when free) and its value.
#[derive(Debug, Clone, Copy)]
struct Slot {
    key: u64,
    value: u64,
}

/// A read-only map from `u64` to `u64`.
#[derive(Debug)]
pub(super) struct IntTable {
    slots: Box<[Slot]>,
    /// `64 - log2(slots.len())`: the hash's top bits pick the first slot.
    shift: u32,
}

impl Default for IntTable {
    fn default() -> Self {
        Self::new(std::iter::empty())
    }
}

impl IntTable {
    /// A table of `entries`; of repeated keys the last value is kept. A key of `u64::MAX` is
    /// never found (it marks free slots).
    pub(super) fn new(entries: impl IntoIterator<Item = (u64, u64)>) -> Self {
        let entries: Vec<(u64, u64)> = entries.into_iter().collect();
        let capacity = (entries.len() + entries.len() / 3 + 1)
            .next_power_of_two()
            .max(8);
        let mut table = Self {
            slots: vec![
                Slot {
                    key: EMPTY,
                    value: 0
                };
                capacity
            ]
            .into_boxed_slice(),
            shift: 64 - capacity.trailing_zeros(),
        };
        for (key, value) in entries {
            if key != EMPTY {
                let at = table.slot_of(key);
                table.slots[at] = Slot { key, value };
            }
        }
        table
    }

    /// The slot holding `key`, or the free slot where it would go.
    #[inline]
    fn slot_of(&self, key: u64) -> usize {
        let mask = self.slots.len() - 1;
        // The shift keeps log2(len) bits, so the index is in range.
        let mut at = (key.wrapping_mul(MULTIPLIER) >> self.shift) as usize;
        loop {
            let slot = self.slots[at];
            if slot.key == key || slot.key == EMPTY {
                return at;
            }
            at = (at + 1) & mask;
        }
    }

    /// The value of `key`, if the table has it.
    #[inline]
    pub(super) fn get(&self, key: u64) -> Option<u64> {
        if key == EMPTY {
            return None;
        }
        let slot = self.slots[self.slot_of(key)];
        (slot.key == key).then_some(slot.value)
    }

    /// Every value (in no particular order).
    #[cfg(test)]
    pub(super) fn values(&self) -> impl Iterator<Item = u64> + '_ {
        self.slots
            .iter()
            .filter(|slot| slot.key != EMPTY)
            .map(|slot| slot.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_key_and_nothing_else() {
        let keys: Vec<u64> = (0..5000u64)
            .map(|n| n.wrapping_mul(0x0123_4567_89AB_CDEF) ^ (n << 40))
            .collect();
        let table = IntTable::new(keys.iter().map(|&key| (key, key / 3)));
        let held: std::collections::HashSet<u64> = keys.iter().copied().collect();
        for &key in &keys {
            assert_eq!(table.get(key), Some(key / 3));
            let other = key ^ 1 << 63;
            if !held.contains(&other) {
                assert_eq!(table.get(other), None);
            }
        }
        assert!(table.slots.len() * 3 >= keys.len() * 4);
        assert_eq!(table.values().count(), keys.len());
    }

    #[test]
    fn last_value_wins_and_the_free_key_is_never_found() {
        let table = IntTable::new([(7, 1), (7, 2), (EMPTY, 3)]);
        assert_eq!(table.get(7), Some(2));
        assert_eq!(table.get(EMPTY), None);
        assert_eq!(IntTable::default().get(0), None);
        assert_eq!(table.values().collect::<Vec<_>>(), [2]);
    }
}
