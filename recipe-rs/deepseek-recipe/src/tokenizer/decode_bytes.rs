//! Decoding a batch into one flat byte buffer: every list's tokens' bytes, in order, written on
//! several threads straight into the caller's buffer (a Python `bytearray`), with no object per
//! text. What a host uses when making each text's string (which a Python `str` makes under the
//! GIL, one thread at a time) would cost more than the decoding.
//!
//! Two steps, because the caller allocates the buffer: [`Tokenizer::decoded_layout`] sizes every
//! list (checking every id), [`Tokenizer::write_decoded_bytes`] fills the buffer. The bytes are the
//! ones [`Tokenizer::decode`] reads as UTF-8 before replacing invalid sequences with U+FFFD.

use super::batch::{self, PARALLEL_MIN_WORK};
use super::Tokenizer;
use crate::{Error, Result};

/// Lists are cut into chunks of at most this many ids, so that one long list is shared among
/// threads too.
const CHUNK_IDS: usize = 16 * 1024;
/// Tokens of at most this many bytes are copied as one block of this size.
const BLOCK: usize = 16;

/// Where each id list's bytes go in the flat buffer of [`Tokenizer::write_decoded_bytes`]; made
/// by [`Tokenizer::decoded_layout`].
#[derive(Debug)]
pub struct DecodedLayout<'a> {
    /// Every list cut into chunks of at most [`CHUNK_IDS`] ids, in order, each with its size in
    /// bytes.
    chunks: Vec<(&'a [u32], usize)>,
    /// The `len + 1` boundaries of the lists' bytes in the buffer, from 0.
    offsets: Vec<u64>,
}

impl DecodedLayout<'_> {
    /// The size of the whole buffer in bytes.
    pub fn total_bytes(&self) -> usize {
        self.offsets.last().map_or(0, |&end| end as usize)
    }

    /// The `len + 1` offsets of the lists: list `i`'s bytes are `offsets[i]..offsets[i + 1]`.
    pub fn offsets(&self) -> &[u64] {
        &self.offsets
    }
}

impl Tokenizer {
    /// The layout of `batch`'s bytes in one flat buffer: each list's tokens' bytes, in order.
    /// Sized on up to [`threads`](Self::threads) threads.
    ///
    /// # Errors
    /// [`Error::Tokenizer`] for an id no token has (the first such id by position).
    pub fn decoded_layout<'a, I: AsRef<[u32]> + Sync>(
        &self,
        batch: &'a [I],
    ) -> Result<DecodedLayout<'a>> {
        let mut chunks: Vec<&'a [u32]> = Vec::new();
        let mut chunks_per_list = Vec::with_capacity(batch.len());
        for ids in batch {
            let before = chunks.len();
            chunks.extend(ids.as_ref().chunks(CHUNK_IDS));
            chunks_per_list.push(chunks.len() - before);
        }
        let sizes = batch::map_items(
            &chunks,
            self.threads,
            |ids| ids.len(),
            || (),
            |(), ids| self.token_bytes_len(ids),
        );
        let sizes = sizes.into_iter().collect::<Result<Vec<usize>>>()?;
        let mut offsets = Vec::with_capacity(batch.len() + 1);
        offsets.push(0);
        let (mut end, mut first) = (0u64, 0);
        for count in chunks_per_list {
            end += sizes[first..first + count].iter().sum::<usize>() as u64;
            first += count;
            offsets.push(end);
        }
        Ok(DecodedLayout {
            chunks: chunks.into_iter().zip(sizes).collect(),
            offsets,
        })
    }

    /// Writes every list of `layout` (its tokens' bytes, in order) into `out`, on up to
    /// [`threads`](Self::threads) threads, each taking a consecutive run of about equal bytes.
    ///
    /// # Errors
    /// [`Error::Tokenizer`] when `out` is not [`DecodedLayout::total_bytes`] long, or when the
    /// layout was made by a tokenizer whose tokens differ from this one's.
    pub fn write_decoded_bytes(&self, layout: &DecodedLayout<'_>, out: &mut [u8]) -> Result<()> {
        if out.len() != layout.total_bytes() {
            return Err(layout_mismatch());
        }
        let share = out
            .len()
            .div_ceil(self.threads.max(1))
            .max(PARALLEL_MIN_WORK);
        let mut runs: Vec<Vec<(&[u32], &mut [u8])>> = vec![Vec::new()];
        let (mut in_run, mut rest) = (0, out);
        for &(ids, size) in &layout.chunks {
            if in_run >= share {
                runs.push(Vec::new());
                in_run = 0;
            }
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(size);
            if let Some(run) = runs.last_mut() {
                run.push((ids, head));
            }
            in_run += size;
            rest = tail;
        }
        batch::run_each(runs, |run| {
            run.into_iter()
                .try_for_each(|(ids, bytes)| self.copy_token_bytes(ids, bytes))
        })
        .into_iter()
        .collect()
    }

    /// The number of bytes the tokens of `ids` spell.
    fn token_bytes_len(&self, ids: &[u32]) -> Result<usize> {
        ids.iter()
            .map(|&id| self.token_bytes(id).map(<[u8]>::len))
            .sum()
    }

    /// The tokens' bytes of `ids` into `out`, which they must fill exactly. A token of at most
    /// [`BLOCK`] bytes with room behind it is copied as one fixed block (what follows the token
    /// in the vocabulary lands past its end and is overwritten by the next token), so most
    /// tokens cost no `memcpy` call.
    fn copy_token_bytes(&self, ids: &[u32], out: &mut [u8]) -> Result<()> {
        let mut at = 0;
        for &id in ids {
            let (run, len) = self
                .inner
                .vocab
                .bytes_onward(id)
                .ok_or_else(|| Error::unknown_token_id(id))?;
            let end = at + len;
            let block = out
                .get_mut(at..at + BLOCK)
                .and_then(|b| <&mut [u8; BLOCK]>::try_from(b).ok());
            let source = run
                .get(..BLOCK)
                .and_then(|s| <&[u8; BLOCK]>::try_from(s).ok());
            match (block, source) {
                (Some(block), Some(source)) if len <= BLOCK => *block = *source,
                _ => out
                    .get_mut(at..end)
                    .ok_or_else(layout_mismatch)?
                    .copy_from_slice(&run[..len]),
            }
            at = end;
        }
        if at == out.len() {
            Ok(())
        } else {
            Err(layout_mismatch())
        }
    }
}

/// The error for a buffer or layout that does not fit the tokens written into it.
fn layout_mismatch() -> Error {
    Error::Tokenizer("the buffer does not match the decoded layout of these ids".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(tokenizer: &Tokenizer, batch: &[Vec<u32>]) -> Result<(Vec<u8>, Vec<u64>)> {
        let layout = tokenizer.decoded_layout(batch)?;
        let mut out = vec![0; layout.total_bytes()];
        tokenizer.write_decoded_bytes(&layout, &mut out)?;
        Ok((out, layout.offsets().to_vec()))
    }

    #[test]
    fn each_lists_bytes_lossily_read_are_its_decoded_text_on_any_thread_count() {
        let base = Tokenizer::deepseek_v4();
        // Tokens longer than a copy block too: runs of spaces and of `=`.
        let long_tokens = format!("a{}b{}", " ".repeat(40), "=".repeat(64));
        let texts = ["Hello, world", "", "你好 🌍 ünïcödé", "x", &long_tokens];
        let mut batch: Vec<Vec<u32>> = texts.iter().map(|t| base.encode(t, false)).collect();
        // A list that ends inside a character, and one long list cut into several chunks.
        batch.push(base.encode("é", false)[..1].to_vec());
        batch.push(base.encode(&"the quick brown 狐狸 ".repeat(20_000), false));
        for threads in [1, 2, 5] {
            let tokenizer = base.with_threads(threads);
            let (bytes, offsets) = decoded(&tokenizer, &batch).unwrap();
            assert_eq!(offsets.len(), batch.len() + 1);
            assert_eq!(offsets.last().copied(), Some(bytes.len() as u64));
            for (index, ids) in batch.iter().enumerate() {
                let own = &bytes[offsets[index] as usize..offsets[index + 1] as usize];
                assert_eq!(
                    String::from_utf8_lossy(own),
                    tokenizer.decode(ids).unwrap(),
                    "list {index}, {threads} threads"
                );
            }
        }
    }

    #[test]
    fn an_unknown_id_or_a_buffer_of_another_size_is_an_error() {
        let tokenizer = Tokenizer::deepseek_v4();
        let unknown = u32::try_from(tokenizer.vocab_size()).unwrap() + 7;
        assert!(decoded(tokenizer, &[vec![1, 2], vec![3, unknown]]).is_err());
        let batch = [vec![100u32, 200]];
        let layout = tokenizer.decoded_layout(&batch).unwrap();
        let mut short = vec![0; layout.total_bytes() - 1];
        assert!(tokenizer.write_decoded_bytes(&layout, &mut short).is_err());
        let empty: [Vec<u32>; 0] = [];
        assert_eq!(decoded(tokenizer, &empty).unwrap(), (vec![], vec![0]));
    }

    #[test]
    fn tokens_longer_than_a_block_are_copied_whole() {
        let tokenizer = Tokenizer::deepseek_v4();
        let longest = (0..tokenizer.vocab_size() as u32)
            .max_by_key(|&id| tokenizer.token_bytes(id).map_or(0, <[u8]>::len))
            .unwrap();
        assert!(tokenizer.token_bytes(longest).unwrap().len() > BLOCK);
        let (bytes, _) = decoded(tokenizer, &[vec![longest, 100, longest]]).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&bytes),
            tokenizer.decode(&[longest, 100, longest]).unwrap()
        );
    }
}
