//! The ids of a template's constant text (such as V4's reasoning-effort text) at the start of a
//! prompt segment, remembered per thread and tokenizer instead of pre-tokenized and merged again
//! for every prompt.
//!
//! What follows the constant in the prompt can change how its last pieces split, so only the ids
//! before its last [safe cut](super::pretokenize::last_safe_cut) are remembered; the text from the
//! cut on is encoded together with what follows. A safe cut depends only on the two characters
//! around it, both inside the constant, so the remembered ids are those of every prompt that
//! starts a segment with it.

/// At most this many constants are remembered per thread and tokenizer (templates have a handful;
/// the memo is emptied when full).
const MAX_CONSTANTS: usize = 16;

/// Remembered constants: each one's address and length, its safe cut and the ids before the cut.
#[derive(Debug, Default)]
pub(super) struct FixedStarts {
    entries: Vec<Entry>,
}

#[derive(Debug)]
struct Entry {
    /// The constant's address and length: a `'static` text keeps both for the process's life.
    key: (usize, usize),
    cut: usize,
    ids: Box<[u32]>,
}

impl FixedStarts {
    /// The cut and the ids before it remembered for `constant`, if any.
    pub(super) fn get(&self, constant: &'static str) -> Option<(usize, &[u32])> {
        let key = key_of(constant);
        self.entries
            .iter()
            .find(|entry| entry.key == key)
            .map(|entry| (entry.cut, &*entry.ids))
    }

    /// Remembers that `constant` is encoded as `ids` up to byte `cut`.
    pub(super) fn insert(&mut self, constant: &'static str, cut: usize, ids: &[u32]) {
        if self.entries.len() >= MAX_CONSTANTS {
            self.entries.clear();
        }
        self.entries.push(Entry {
            key: key_of(constant),
            cut,
            ids: ids.into(),
        });
    }
}

fn key_of(constant: &'static str) -> (usize, usize) {
    (constant.as_ptr() as usize, constant.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_are_told_apart_by_address_and_length_and_a_full_memo_starts_over() {
        static TEXT: &str = "one two";
        let mut memo = FixedStarts::default();
        memo.insert(TEXT, 3, &[1, 2]);
        assert_eq!(memo.get(TEXT), Some((3, &[1, 2][..])));
        assert_eq!(memo.get(&TEXT[..3]), None);
        for index in 0..MAX_CONSTANTS {
            let constant: &'static str = Box::leak(format!("constant {index}").into_boxed_str());
            memo.insert(constant, 1, &[]);
        }
        assert_eq!(memo.get(TEXT), None);
        assert_eq!(memo.entries.len(), 1);
    }
}
