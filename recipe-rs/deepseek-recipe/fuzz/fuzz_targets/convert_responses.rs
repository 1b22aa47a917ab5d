//! OpenAI Responses request bodies (structure-aware: JSON mutated as a tree, seeded from the golden
//! vectors) through conversion, rendering and encoding; the properties are in `conversion.rs`.
#![no_main]

mod conversion;
mod json_mutation;

use deepseek_recipe::convert::Protocol;
use libfuzzer_sys::{fuzz_crossover, fuzz_mutator, fuzz_target};

fuzz_target!(|data: &[u8]| conversion::check(Protocol::Responses, data));

fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    json_mutation::mutate(data, size, max_size, seed)
});

fuzz_crossover!(|first: &[u8], second: &[u8], out: &mut [u8], seed: u32| {
    json_mutation::crossover(first, second, out, seed)
});
