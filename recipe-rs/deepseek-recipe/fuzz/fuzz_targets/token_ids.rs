//! Arbitrary token ids (3 bytes each, including ids outside the vocabulary), in chunks split at
//! zero ids, with and without log probabilities, through the stream processor and tokenizer.
#![no_main]

mod common;

use deepseek_recipe::{InferenceChunk, InferenceFinishReason, TokenizerText};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else { return };
    let ids: Vec<u32> = rest
        .chunks(3)
        .map(|bytes| bytes.iter().fold(0u32, |id, &byte| id << 8 | u32::from(byte)) % 140_000)
        .collect();
    let mut chunks: Vec<InferenceChunk> = ids
        .split(|&id| id == 0)
        .enumerate()
        .map(|(index, ids)| {
            let logprobs = (index % 2 == 1).then(|| ids.iter().map(|&id| (-0.5, vec![(id, -1.0)])).collect());
            InferenceChunk::tokens(ids.to_vec(), logprobs)
        })
        .collect();
    chunks.push(InferenceChunk::finish(InferenceFinishReason::Length));
    common::run_stream(flags, chunks, Some(TokenizerText::deepseek_v4()));
});
