//! The byte-level BPE tokenizer of DeepSeek V4, exact with Hugging Face `tokenizers`.
//!
//! [`Tokenizer`] reads a `tokenizer.json` of the supported kind (the DeepSeek V3/V4 pre-tokenizer,
//! byte-level BPE, added tokens without strip options); [`Tokenizer::deepseek_v4`] is the bundled
//! DeepSeek V4 one. Encoding gives the same ids as the reference and decoding the same text
//! (see `docs/tokenizer.md`).

mod added;
mod batch;
mod bpe;
mod bytelevel;
mod char_kind;
mod chars;
mod decode;
mod decode_bytes;
mod extend;
mod fixed_start;
mod int_table;
mod load;
mod parallel;
mod pretokenize;
mod state_pool;
mod thread_state;
mod unicode_tables;
mod vocab;
mod whole_tokens;

use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use rustc_hash::FxHashMap;

pub use decode::IncrementalDecoder;
pub use decode_bytes::DecodedLayout;

use crate::error::{Error, Result};
use crate::markup::SpecialTokens;
use added::AddedTokens;
pub(crate) use added::Segment;
use bpe::{Bpe, EncodeState};
use state_pool::StatePool;

/// The bundled DeepSeek V4 `tokenizer.json`.
const DEEPSEEK_V4_JSON: &[u8] = include_bytes!("../../data/deepseek-v4/tokenizer.json");

/// Texts shorter than this are always encoded on the calling thread.
const PARALLEL_MIN_BYTES: usize = 64 * 1024;
/// A text is cut into at most one part per this many bytes for parallel encoding.
const PARALLEL_PART_MIN_BYTES: usize = 32 * 1024;

/// Parts per thread a long text is cut into: threads that finish early take more parts.
const PARTS_PER_THREAD: usize = 4;

/// A byte-level BPE tokenizer. Cloning is cheap (the tables are shared).
///
/// A tokenizer encodes on the calling thread unless [`with_threads`](Self::with_threads) allows
/// more: then texts of at least 64 KiB are cut at pre-tokenizer boundaries and the parts encoded
/// in parallel, with the same ids.
#[derive(Clone)]
pub struct Tokenizer {
    inner: Arc<Inner>,
    threads: usize,
}

struct Inner {
    /// Identifies these tables among all tokenizers of the process (see [`thread_state`]).
    id: u64,
    bpe: Bpe,
    added: AddedTokens,
    vocab: vocab::Vocab,
    added_spellings: Vec<Box<str>>,
    /// [`Tokenizer::prompt_special_id`] of every added token that has one, made on first use.
    prompt_special_ids: OnceLock<FxHashMap<Box<str>, u32>>,
    /// The encode states of parallel calls' workers, kept between calls.
    worker_states: StatePool,
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokenizer")
            .field("vocab_size", &self.vocab_size())
            .finish_non_exhaustive()
    }
}

impl Tokenizer {
    /// Reads a `tokenizer.json` from its text.
    ///
    /// # Errors
    /// [`Error::Tokenizer`] when the JSON is invalid or uses a feature this tokenizer does not
    /// implement (the message names it).
    pub fn from_json(json: impl AsRef<[u8]>) -> Result<Self> {
        let parts = load::parse(json.as_ref())?;
        Ok(Self {
            inner: Arc::new(Inner {
                id: thread_state::new_tokenizer_id(),
                bpe: parts.bpe,
                added: parts.added,
                vocab: parts.vocab,
                added_spellings: parts.added_spellings,
                prompt_special_ids: OnceLock::new(),
                worker_states: StatePool::default(),
            }),
            threads: 1,
        })
    }

    /// Reads a `tokenizer.json` file.
    ///
    /// # Errors
    /// [`Error::Tokenizer`] when the file cannot be read or [`from_json`](Self::from_json) fails.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let json = std::fs::read(path)
            .map_err(|err| Error::Tokenizer(format!("cannot read {}: {err}", path.display())))?;
        Self::from_json(json)
    }

    /// The bundled DeepSeek V4 tokenizer, parsed on first use.
    pub fn deepseek_v4() -> &'static Tokenizer {
        static DEEPSEEK_V4: OnceLock<Tokenizer> = OnceLock::new();
        DEEPSEEK_V4.get_or_init(|| {
            Self::from_json(DEEPSEEK_V4_JSON).expect("the bundled tokenizer.json is supported")
        })
    }

    /// The text of the bundled DeepSeek V4 `tokenizer.json` (for tools that need the file itself,
    /// e.g. a grammar engine building its own token table).
    pub fn deepseek_v4_json() -> &'static str {
        std::str::from_utf8(DEEPSEEK_V4_JSON).expect("the bundled tokenizer.json is UTF-8")
    }

    /// The text of `json` (a `tokenizer.json`) with each of `spellings` that is not an added token
    /// yet added as a special token: a spelling of the BPE vocabulary keeps its id, any other gets
    /// the next id after the file's largest, in order. Text encodes to the same ids as before.
    ///
    /// # Errors
    /// [`Error::Tokenizer`] when `json` has no `model.vocab` object, its `added_tokens` is not an
    /// array, or a spelling is empty.
    pub fn json_with_special_tokens(json: &str, spellings: &[&str]) -> Result<String> {
        extend::with_special_tokens(json, spellings)
    }

    /// The bundled DeepSeek V4 `tokenizer.json` with the special tokens of the V4.1 prompt format
    /// it lacks (`<｜System｜>`) added after its last id, made on first use.
    ///
    /// No official V4.1 `tokenizer.json` is public: this is V4's BPE plus V4.1's special tokens,
    /// so V4.1 prompts encode; the added ids are this crate's, not necessarily DeepSeek's.
    pub fn deepseek_v41_json() -> &'static str {
        static DEEPSEEK_V41_JSON: OnceLock<String> = OnceLock::new();
        DEEPSEEK_V41_JSON.get_or_init(|| {
            Self::json_with_v41_special_tokens(Self::deepseek_v4_json())
                .expect("the bundled tokenizer.json takes the V4.1 special tokens")
        })
    }

    /// [`json_with_special_tokens`](Self::json_with_special_tokens) with every special token of
    /// the V4.1 prompt format (the default [`SpecialTokens`]): how a V4-style `tokenizer.json`
    /// becomes one that encodes V4.1 prompts.
    ///
    /// # Errors
    /// As [`json_with_special_tokens`](Self::json_with_special_tokens).
    pub fn json_with_v41_special_tokens(json: &str) -> Result<String> {
        Self::json_with_special_tokens(json, &SpecialTokens::default().spellings())
    }

    /// The tokenizer of [`deepseek_v41_json`](Self::deepseek_v41_json), parsed on first use.
    pub fn deepseek_v41() -> &'static Tokenizer {
        static DEEPSEEK_V41: OnceLock<Tokenizer> = OnceLock::new();
        DEEPSEEK_V41.get_or_init(|| {
            Self::from_json(Self::deepseek_v41_json())
                .expect("the V4.1 tokenizer.json is supported")
        })
    }

    /// This tokenizer (sharing its tables) encoding long texts on up to `threads` threads
    /// (`0` counts as `1`).
    pub fn with_threads(&self, threads: usize) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
            threads: threads.max(1),
        }
    }

    /// The most threads one encode call uses (1 unless set by [`with_threads`](Self::with_threads)).
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The ids of `text`.
    ///
    /// With `allow_special = false` every character is plain text, including spellings of added
    /// tokens such as `<｜User｜>` (this is how prompt text is encoded). With `allow_special = true`
    /// added tokens written in the text are recognised, exactly as the reference's
    /// `encode(text, add_special_tokens=False)` does.
    pub fn encode(&self, text: &str, allow_special: bool) -> Vec<u32> {
        concat(self.encode_parts(text, allow_special))
    }

    /// The ids of `text` (as [`encode`](Self::encode) gives them) in consecutive parts whose
    /// concatenation is the ids: one part unless the text was cut for parallel encoding, then one
    /// per cut part. A host that copies the ids anyway (into another language's array) saves
    /// [`encode`](Self::encode)'s copy of every id into one vector, made on the calling thread.
    pub fn encode_parts(&self, text: &str, allow_special: bool) -> Vec<Vec<u32>> {
        if self.parallel_parts(text.len()) > 1 {
            return self.encode_segment_parts(&[Segment::Text(text)], allow_special);
        }
        let mut out = Vec::with_capacity(text.len() / 3 + 1);
        self.with_state(|state| self.encode_into(text, allow_special, &mut out, state));
        vec![out]
    }

    /// Writes every id of `lists`, in order, into `out` as native-endian `u32` bytes, on up to
    /// [`threads`](Self::threads) threads when there are many: how a host fills an id array of
    /// its own (a Python `bytearray`) from [`encode_parts`](Self::encode_parts) or
    /// [`encode_batch`](Self::encode_batch) without one thread copying every id.
    ///
    /// # Errors
    /// [`Error::Tokenizer`] when `out` is not exactly 4 bytes per id.
    pub fn write_ids_ne<L: AsRef<[u32]>>(&self, lists: &[L], out: &mut [u8]) -> Result<()> {
        let ids: usize = lists.iter().map(|ids| ids.as_ref().len()).sum();
        if out.len() != ids * batch::ID_BYTES {
            return Err(Error::Tokenizer(format!(
                "{} bytes cannot hold {ids} ids of {} bytes",
                out.len(),
                batch::ID_BYTES
            )));
        }
        batch::write_ids_ne(lists, ids, self.threads, out);
        Ok(())
    }

    /// `job` with this thread's encode state for this tokenizer (its word cache kept across
    /// calls).
    fn with_state<R>(&self, job: impl FnOnce(&mut EncodeState) -> R) -> R {
        thread_state::with_state(self.inner.id, job)
    }

    /// Appends the ids of `text` to `out` on the calling thread, through `state`'s word cache.
    fn encode_into(
        &self,
        text: &str,
        allow_special: bool,
        out: &mut Vec<u32>,
        state: &mut EncodeState,
    ) {
        if allow_special {
            self.inner.added.split(text, &mut |segment| match segment {
                Segment::Text(part) | Segment::FixedStart { text: part, .. } => {
                    self.encode_plain(part, out, state)
                }
                Segment::Token(id) => out.push(id),
            });
        } else {
            self.encode_plain(text, out, state);
        }
    }

    /// The ids of each of `texts` (as [`encode`](Self::encode) gives them), the texts shared
    /// among up to [`threads`](Self::threads) threads. A batch of fewer texts than threads is
    /// encoded text by text instead, each long one cut into parts as [`encode`](Self::encode) does.
    pub fn encode_batch<S: AsRef<str> + Sync>(
        &self,
        texts: &[S],
        allow_special: bool,
    ) -> Vec<Vec<u32>> {
        if texts.len() < self.threads {
            return texts
                .iter()
                .map(|text| self.encode(text.as_ref(), allow_special))
                .collect();
        }
        batch::map_items(
            texts,
            self.threads,
            |text| text.as_ref().len(),
            || self.inner.worker_states.lease(),
            |state, text| {
                let text = text.as_ref();
                let mut out = Vec::with_capacity(text.len() / 3 + 1);
                self.encode_into(text, allow_special, &mut out, state);
                out
            },
        )
    }

    /// The number of ids of each of `texts`, counted on up to [`threads`](Self::threads) threads
    /// (a batch of fewer texts than threads text by text, as [`encode_batch`](Self::encode_batch)).
    pub fn count_batch<S: AsRef<str> + Sync>(
        &self,
        texts: &[S],
        allow_special: bool,
    ) -> Vec<usize> {
        if texts.len() < self.threads {
            return texts
                .iter()
                .map(|text| self.count(text.as_ref(), allow_special))
                .collect();
        }
        batch::map_items(
            texts,
            self.threads,
            |text| text.as_ref().len(),
            || (self.inner.worker_states.lease(), Vec::new()),
            |(state, out), text| {
                out.clear();
                self.encode_into(text.as_ref(), allow_special, out, state);
                out.len()
            },
        )
    }

    /// The text of each id list (as [`decode`](Self::decode) gives it), decoded on up to
    /// [`threads`](Self::threads) threads.
    ///
    /// # Errors
    /// [`Error::Tokenizer`] for an id no token has.
    pub fn decode_batch<I: AsRef<[u32]> + Sync>(&self, batch: &[I]) -> Result<Vec<String>> {
        let mut blocks = batch::Blocks::default();
        self.decode_batch_blocks(batch, |start, texts| blocks.push(start, texts));
        blocks.into_results().into_iter().collect()
    }

    /// [`decode_batch`](Self::decode_batch) handing its results over as they are done: `sink` gets
    /// blocks of consecutive results (the index of the block's first item, then one result per
    /// item) on the calling thread, in completion order, while other threads still decode. A
    /// caller that must turn each text into something on its own thread (a Python `str`) overlaps
    /// that work with the decoding this way.
    pub fn decode_batch_blocks<I: AsRef<[u32]> + Sync>(
        &self,
        batch: &[I],
        sink: impl FnMut(usize, Vec<Result<String>>),
    ) {
        batch::for_each_block(
            batch,
            self.threads,
            |ids| ids.as_ref().len(),
            || (),
            |(), ids| self.decode(ids.as_ref()),
            sink,
        );
    }

    /// The ids of `segments` in order: each text is plain (added tokens not recognised), each
    /// token its id. Long inputs are encoded in parallel when [`threads`](Self::threads) allows.
    pub(crate) fn encode_segments(&self, segments: &[Segment<'_>]) -> Vec<u32> {
        concat(self.encode_segment_parts(segments, false))
    }

    /// The ids of `segments` (each text encoded as [`encode`](Self::encode) encodes it with
    /// `allow_special`, each token its id) in consecutive parts, as
    /// [`encode_parts`](Self::encode_parts) does. Texts are cut only where no added token could
    /// cross the cut, so the parts' threads look for added tokens themselves.
    fn encode_segment_parts(&self, segments: &[Segment<'_>], allow_special: bool) -> Vec<Vec<u32>> {
        let text_bytes = parallel::text_len(segments);
        let parts = self.parallel_parts(text_bytes);
        if parts <= 1 {
            let mut out = Vec::with_capacity(text_bytes / 3 + segments.len());
            self.with_state(|state| {
                self.encode_segments_with(segments, allow_special, &mut out, state);
            });
            return vec![out];
        }
        let chunks = parallel::split_segments(
            segments,
            text_bytes,
            parts * PARTS_PER_THREAD,
            |text, at| !allow_special || self.inner.added.can_cut_at(text, at),
        );
        batch::map_items(
            &chunks,
            parts,
            |chunk| parallel::text_len(chunk),
            || self.inner.worker_states.lease(),
            |state, chunk| {
                let mut ids = Vec::with_capacity(parallel::text_len(chunk) / 3 + 1);
                self.encode_segments_with(chunk, allow_special, &mut ids, state);
                ids
            },
        )
    }

    /// Appends the ids of `segments` to `out` (texts as [`encode`](Self::encode) encodes them
    /// with `allow_special`), on the calling thread through `state`'s cache.
    fn encode_segments_with(
        &self,
        segments: &[Segment<'_>],
        allow_special: bool,
        out: &mut Vec<u32>,
        state: &mut EncodeState,
    ) {
        for segment in segments {
            match *segment {
                Segment::Text(text) => self.encode_into(text, allow_special, out, state),
                Segment::FixedStart { fixed, text } if !allow_special => {
                    self.encode_fixed_start(fixed, text, out, state)
                }
                Segment::FixedStart { text, .. } => self.encode_into(text, true, out, state),
                Segment::Token(id) => out.push(id),
            }
        }
    }

    /// How many parts to encode `text_bytes` of text in (1: on the calling thread).
    fn parallel_parts(&self, text_bytes: usize) -> usize {
        if self.threads <= 1 || text_bytes < PARALLEL_MIN_BYTES {
            return 1;
        }
        self.threads.min(text_bytes / PARALLEL_PART_MIN_BYTES)
    }

    /// The number of ids [`encode`](Self::encode) gives for `text`.
    pub fn count(&self, text: &str, allow_special: bool) -> usize {
        self.encode_parts(text, allow_special)
            .iter()
            .map(Vec::len)
            .sum()
    }

    /// The ids of `text` where the byte ranges `special_ranges` (sorted, not overlapping) are each
    /// one added token and all other text is plain (`allow_special = false`).
    ///
    /// # Errors
    /// [`Error::Tokenizer`] when a range is out of order, not on character boundaries, or does not
    /// spell a token.
    pub fn encode_with_special_ranges(
        &self,
        text: &str,
        special_ranges: &[Range<usize>],
    ) -> Result<Vec<u32>> {
        let mut out = Vec::with_capacity(text.len() / 3 + 1);
        self.with_state(|state| {
            self.encode_around_special_ranges(text, special_ranges, &mut out, state)
        })?;
        Ok(out)
    }

    /// Appends the ids of `text` with `special_ranges` as tokens (see
    /// [`encode_with_special_ranges`](Self::encode_with_special_ranges)) to `out`.
    fn encode_around_special_ranges(
        &self,
        text: &str,
        special_ranges: &[Range<usize>],
        out: &mut Vec<u32>,
        state: &mut EncodeState,
    ) -> Result<()> {
        let mut done = 0;
        for range in special_ranges {
            let (Some(before), Some(special)) =
                (text.get(done..range.start), text.get(range.clone()))
            else {
                return Err(Error::Tokenizer(format!(
                    "special range {range:?} is out of order or not on character boundaries"
                )));
            };
            let id = self.token_to_id(special).ok_or_else(|| {
                Error::Tokenizer(format!(
                    "special range {range:?} ({special:?}) is not a token"
                ))
            })?;
            self.encode_plain(before, out, state);
            out.push(id);
            done = range.end;
        }
        self.encode_plain(&text[done..], out, state);
        Ok(())
    }

    fn encode_plain(&self, text: &str, out: &mut Vec<u32>, state: &mut EncodeState) {
        pretokenize::pretokenize(text, &mut |piece| {
            self.inner.bpe.encode_piece(piece.as_bytes(), out, state);
        });
    }

    /// Appends the ids of plain `text`, which starts with the constant `fixed`: the ids before
    /// the constant's last safe cut come from `state`'s memo (worked out on first use), the rest
    /// of the text is encoded as usual.
    fn encode_fixed_start(
        &self,
        fixed: &'static str,
        text: &str,
        out: &mut Vec<u32>,
        state: &mut EncodeState,
    ) {
        if !text.starts_with(fixed) {
            return self.encode_plain(text, out, state);
        }
        let cut = match state.fixed_starts.get(fixed) {
            Some((cut, ids)) => {
                out.extend_from_slice(ids);
                cut
            }
            None => {
                let cut = pretokenize::last_safe_cut(fixed).unwrap_or(0);
                let first = out.len();
                self.encode_plain(&fixed[..cut], out, state);
                state.fixed_starts.insert(fixed, cut, &out[first..]);
                cut
            }
        };
        self.encode_plain(&text[cut..], out, state);
    }

    /// The text of `ids`: the tokens' bytes concatenated, read as UTF-8, with every maximal invalid
    /// byte sequence replaced by U+FFFD. A byte-level token contributes the bytes it spells; an
    /// added token whose spelling is not byte-level (such as `<｜User｜>`) its UTF-8 spelling.
    /// Special tokens are not skipped.
    ///
    /// # Errors
    /// [`Error::Tokenizer`] for an id no token has.
    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        let mut bytes = Vec::with_capacity(ids.len() * 4);
        for &id in ids {
            bytes.extend_from_slice(self.token_bytes(id)?);
        }
        Ok(match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(err) => String::from_utf8_lossy(err.as_bytes()).into_owned(),
        })
    }

    /// A streaming decoder over this tokenizer.
    pub fn incremental_decoder(&self) -> IncrementalDecoder {
        IncrementalDecoder::new(self.clone())
    }

    fn token_bytes(&self, id: u32) -> Result<&[u8]> {
        self.inner
            .vocab
            .bytes(id)
            .ok_or_else(|| Error::unknown_token_id(id))
    }

    /// The id `spelling` has as a special token of a prompt: `Some` when it is recognised as one
    /// added token with added tokens enabled, and is not that same single token as plain text.
    ///
    /// Only an added token's spelling can be one, so the answers are worked out once for every
    /// added token (on first use) and looked up.
    pub(crate) fn prompt_special_id(&self, spelling: &str) -> Option<u32> {
        self.inner
            .prompt_special_ids
            .get_or_init(|| {
                let single = self.with_threads(1);
                self.inner
                    .added_spellings
                    .iter()
                    .filter_map(|spelling| match single.encode(spelling, true).as_slice() {
                        [id] if single.encode(spelling, false) != [*id] => {
                            Some((spelling.clone(), *id))
                        }
                        _ => None,
                    })
                    .collect()
            })
            .get(spelling)
            .copied()
    }

    /// The id of a token spelled `token` (byte-level spelling for vocabulary tokens, e.g. `Ġthe`).
    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.inner.vocab.id(token)
    }

    /// The spelling of token `id`.
    pub fn id_to_token(&self, id: u32) -> Option<&str> {
        self.inner.vocab.spelling(id)
    }

    /// One more than the largest token id (129,280 for DeepSeek V4).
    pub fn vocab_size(&self) -> usize {
        self.inner.vocab.len()
    }
}

/// The ids of `parts` in one vector (the only part itself when there is one).
fn concat(mut parts: Vec<Vec<u32>>) -> Vec<u32> {
    if parts.len() == 1 {
        return parts.pop().unwrap_or_default();
    }
    parts.concat()
}

#[cfg(test)]
mod tests;
