//! Reading `tokenizer.json`: the supported subset, checked strictly.
//!
//! Anything that would change the ids or the decoded text and is not implemented here is refused
//! with [`Error::Tokenizer`] naming the feature, never silently ignored.

use std::borrow::{Borrow, Cow};
use std::fmt;

use rustc_hash::FxHashMap;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use super::added::AddedTokens;
use super::bpe::{Bpe, Merge};
use super::bytelevel::BYTE_CHARS;
use super::pretokenize::{CJK_REGEX, NUMBER_REGEX, WORD_REGEX};
use super::vocab::Vocab;
use crate::error::{Error, Result};

/// Token ids must be below this bound (the id tables are dense).
const MAX_TOKEN_ID: u32 = 1 << 24;

#[derive(Deserialize)]
struct TokenizerFile<'a> {
    #[serde(default)]
    truncation: Value,
    #[serde(default)]
    padding: Value,
    #[serde(default)]
    added_tokens: Vec<AddedTokenSpec>,
    #[serde(default)]
    normalizer: Value,
    #[serde(default)]
    pre_tokenizer: Value,
    #[serde(default)]
    post_processor: Value,
    #[serde(default)]
    decoder: Value,
    #[serde(borrow)]
    model: ModelSpec<'a>,
}

#[derive(Deserialize)]
struct AddedTokenSpec {
    id: u32,
    content: String,
    #[serde(default)]
    single_word: bool,
    #[serde(default)]
    lstrip: bool,
    #[serde(default)]
    rstrip: bool,
    #[serde(default = "default_true")]
    normalized: bool,
}

fn default_true() -> bool {
    true
}

#[derive(Deserialize)]
struct ModelSpec<'a> {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    dropout: Option<f64>,
    #[serde(default)]
    continuing_subword_prefix: Option<String>,
    #[serde(default)]
    end_of_word_suffix: Option<String>,
    #[serde(default)]
    ignore_merges: bool,
    #[serde(borrow)]
    vocab: FxHashMap<Spelling<'a>, u32>,
    #[serde(borrow)]
    merges: Vec<MergeSpec<'a>>,
}

/// A token spelling, borrowed from the JSON text unless it contains escapes.
#[derive(PartialEq, Eq, Hash)]
struct Spelling<'a>(Cow<'a, str>);

impl Borrow<str> for Spelling<'_> {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Spelling<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SpellingVisitor;
        impl<'de> Visitor<'de> for SpellingVisitor {
            type Value = Spelling<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a token spelling")
            }
            fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(Spelling(Cow::Borrowed(text)))
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
                Ok(Spelling(Cow::Owned(text.to_owned())))
            }
        }
        deserializer.deserialize_str(SpellingVisitor)
    }
}

/// One merge line: `"left right"` (format 1) or `["left", "right"]` (format 2).
struct MergeSpec<'a>(Cow<'a, str>, Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for MergeSpec<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MergeVisitor;
        impl<'de> Visitor<'de> for MergeVisitor {
            type Value = MergeSpec<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a merge as \"left right\" or [left, right]")
            }
            fn visit_borrowed_str<E: de::Error>(self, line: &'de str) -> Result<Self::Value, E> {
                let (left, right) = split_merge(line)?;
                Ok(MergeSpec(Cow::Borrowed(left), Cow::Borrowed(right)))
            }
            fn visit_str<E: de::Error>(self, line: &str) -> Result<Self::Value, E> {
                let (left, right) = split_merge(line)?;
                Ok(MergeSpec(
                    Cow::Owned(left.to_owned()),
                    Cow::Owned(right.to_owned()),
                ))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let left: Spelling<'de> = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(0, &self))?;
                let right: Spelling<'de> = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(1, &self))?;
                if seq.next_element::<de::IgnoredAny>()?.is_some() {
                    return Err(de::Error::invalid_length(3, &self));
                }
                Ok(MergeSpec(left.0, right.0))
            }
        }
        deserializer.deserialize_any(MergeVisitor)
    }
}

/// The two tokens of a `"left right"` merge line.
fn split_merge<E: de::Error>(line: &str) -> Result<(&str, &str), E> {
    let mut parts = line.split(' ');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(left), Some(right), None) => Ok((left, right)),
        _ => Err(E::custom(format!("merge {line:?} is not two tokens"))),
    }
}

/// Everything a tokenizer is built from.
pub(super) struct Parts {
    pub(super) bpe: Bpe,
    pub(super) added: AddedTokens,
    /// Spellings, bytes and ids of every token (added tokens win over the model vocabulary).
    pub(super) vocab: Vocab,
    /// The spelling of every added token.
    pub(super) added_spellings: Vec<Box<str>>,
}

fn unsupported(what: impl fmt::Display) -> Error {
    Error::Tokenizer(format!("unsupported tokenizer.json: {what}"))
}

/// Parses and checks `tokenizer.json`.
pub(super) fn parse(json: &[u8]) -> Result<Parts> {
    let file: TokenizerFile = serde_json::from_slice(json)
        .map_err(|err| Error::Tokenizer(format!("invalid tokenizer.json: {err}")))?;
    check_pipeline(&file)?;
    check_model(&file.model)?;
    let vocab = &file.model.vocab;
    let mut byte_ids = [0u32; 256];
    for (byte, slot) in byte_ids.iter_mut().enumerate() {
        let spelling = BYTE_CHARS[byte].to_string();
        *slot = *vocab.get(spelling.as_str()).ok_or_else(|| {
            unsupported(format!(
                "the vocabulary lacks the byte-level token for byte {byte:#04x}"
            ))
        })?;
    }
    let mut merges =
        FxHashMap::with_capacity_and_hasher(file.model.merges.len(), Default::default());
    let mut merged_spelling = String::new();
    for (rank, MergeSpec(left, right)) in file.model.merges.iter().enumerate() {
        let id_of = |token: &str| {
            vocab.get(token).copied().ok_or_else(|| {
                Error::Tokenizer(format!(
                    "invalid tokenizer.json: merge token {token:?} is not in the vocabulary"
                ))
            })
        };
        merged_spelling.clear();
        merged_spelling.push_str(left);
        merged_spelling.push_str(right);
        let merged = id_of(&merged_spelling)?;
        let rank = u32::try_from(rank).map_err(|_| unsupported("more than 2^32 merges"))?;
        // A repeated pair keeps its last rank, as the reference's map does.
        merges.insert((id_of(left)?, id_of(right)?), Merge { rank, id: merged });
    }
    for token in &file.added_tokens {
        if token.lstrip || token.rstrip || token.single_word {
            return Err(unsupported(format!(
                "added token {:?} uses lstrip, rstrip or single_word",
                token.content
            )));
        }
        if token.content.is_empty() {
            return Err(unsupported("an added token with empty content"));
        }
    }
    let max_id = vocab
        .values()
        .chain(file.added_tokens.iter().map(|token| &token.id))
        .copied()
        .max()
        .unwrap_or(0);
    if max_id >= MAX_TOKEN_ID {
        return Err(unsupported(format!("token id {max_id} is too large")));
    }
    let size = max_id as usize + 1;
    // Added tokens come last: they win over the model vocabulary for a spelling they share.
    let entries = vocab
        .iter()
        .map(|(spelling, &id)| (spelling.borrow(), id))
        .chain(
            file.added_tokens
                .iter()
                .map(|token| (token.content.as_str(), token.id)),
        );
    let vocab = Vocab::new(size, entries)?;
    let added = AddedTokens::new(file.added_tokens.iter().map(|token| {
        (
            token.content.as_str(),
            vocab.id(&token.content).unwrap_or(token.id),
            token.normalized,
        )
    }));
    Ok(Parts {
        bpe: Bpe::new(byte_ids, merges).with_whole_tokens(vocab.all_bytes()),
        added,
        vocab,
        added_spellings: file
            .added_tokens
            .iter()
            .map(|token| token.content.as_str().into())
            .collect(),
    })
}

fn check_pipeline(file: &TokenizerFile) -> Result<()> {
    if !file.truncation.is_null() || !file.padding.is_null() {
        return Err(unsupported("truncation and padding must be null"));
    }
    let normalizer = &file.normalizer;
    let identity_normalizer = normalizer.is_null()
        || (normalizer["type"] == "Sequence"
            && normalizer["normalizers"]
                .as_array()
                .is_some_and(Vec::is_empty));
    if !identity_normalizer {
        return Err(unsupported(format!(
            "normalizer {normalizer} (only none is implemented)"
        )));
    }
    let steps = match &file.pre_tokenizer {
        step if step["type"] == "Sequence" => step["pretokenizers"].as_array(),
        _ => None,
    };
    let deepseek_pre_tokenizer = steps.is_some_and(|steps| {
        steps.len() == 4
            && is_isolated_split(&steps[0], NUMBER_REGEX)
            && is_isolated_split(&steps[1], CJK_REGEX)
            && is_isolated_split(&steps[2], WORD_REGEX)
            && steps[3]["type"] == "ByteLevel"
            && steps[3]["add_prefix_space"] == false
            && steps[3]["use_regex"] == false
    });
    if !deepseek_pre_tokenizer {
        return Err(unsupported(
            "pre_tokenizer (only the DeepSeek V3/V4 sequence of three Split regexes and ByteLevel \
             is implemented)",
        ));
    }
    let post = &file.post_processor;
    if !(post.is_null() || post["type"] == "ByteLevel") {
        return Err(unsupported(format!(
            "post_processor of type {} (only ByteLevel or none is implemented)",
            post["type"]
        )));
    }
    if file.decoder["type"] != "ByteLevel" {
        return Err(unsupported(format!(
            "decoder of type {} (only ByteLevel is implemented)",
            file.decoder["type"]
        )));
    }
    Ok(())
}

fn is_isolated_split(step: &Value, pattern: &str) -> bool {
    step["type"] == "Split"
        && step["pattern"]["Regex"] == pattern
        && step["behavior"] == "Isolated"
        && step["invert"] == false
}

fn check_model(model: &ModelSpec) -> Result<()> {
    if model.kind.as_deref().is_some_and(|kind| kind != "BPE") {
        return Err(unsupported(format!(
            "model type {:?} (only BPE)",
            model.kind
        )));
    }
    if model.dropout.is_some_and(|dropout| dropout != 0.0) {
        return Err(unsupported("BPE dropout"));
    }
    if model.continuing_subword_prefix.is_some() || model.end_of_word_suffix.is_some() {
        return Err(unsupported(
            "continuing_subword_prefix or end_of_word_suffix",
        ));
    }
    if model.ignore_merges {
        return Err(unsupported("ignore_merges"));
    }
    Ok(())
}
