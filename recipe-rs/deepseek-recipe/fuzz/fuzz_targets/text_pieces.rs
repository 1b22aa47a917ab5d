//! Arbitrary text pieces (split at 0xFF bytes, decoded lossily) through the stream processor.
#![no_main]

mod common;

use deepseek_recipe::{InferenceChunk, InferenceFinishReason};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else { return };
    let mut chunks: Vec<InferenceChunk> = rest
        .split(|&byte| byte == 0xFF)
        .map(|piece| InferenceChunk::text(String::from_utf8_lossy(piece), 1))
        .collect();
    if flags & 1 == 0 {
        chunks.push(InferenceChunk::finish(InferenceFinishReason::Stop));
    }
    common::run_stream(flags, chunks, None);
});
