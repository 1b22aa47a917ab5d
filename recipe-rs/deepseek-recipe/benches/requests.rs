//! Request pipeline cost: convert (parse + validate) → render → encode, per stage and end to end,
//! for a short chat and a ~100K-token agent conversation with 40 tools.
#![allow(missing_docs)] // `criterion_group!` generates an undocumented public function.
#![allow(clippy::print_stderr)] // The bench reports each workload's size once.

#[path = "support/workloads.rs"]
mod workloads;

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use deepseek_recipe::{convert_json, encode, ConversionOptions, Protocol, Tokenizer};

fn request_pipeline(c: &mut Criterion) {
    let tokenizer = Tokenizer::deepseek_v4();
    let options = ConversionOptions::default();
    let workloads = [
        ("short_chat", workloads::short_chat()),
        ("agent_100k", workloads::agent_conversation()),
    ];
    for (name, body) in &workloads {
        let converted = convert_json(Protocol::ChatCompletions, body, &options)
            .expect("the workload is a valid request");
        let encoding = options.encoding_for(converted.model_version);
        let rendered = encoding.render(&converted.conversation);
        let tokens = encode(&rendered, tokenizer).expect("the prompt encodes");
        eprintln!(
            "{name}: body {} bytes, prompt {} chars, {} prompt tokens",
            body.len(),
            rendered.prompt.chars().count(),
            tokens.len()
        );

        let mut group = c.benchmark_group(*name);
        group
            .sample_size(20)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(4));
        group.bench_function("convert", |b| {
            b.iter(|| convert_json(Protocol::ChatCompletions, body, &options))
        });
        group.bench_function("render", |b| {
            b.iter(|| encoding.render(&converted.conversation))
        });
        group.bench_function("encode", |b| b.iter(|| encode(&rendered, tokenizer)));
        group.bench_function("convert_render_encode", |b| {
            b.iter(|| {
                let converted = convert_json(Protocol::ChatCompletions, body, &options)?;
                let rendered = options
                    .encoding_for(converted.model_version)
                    .render(&converted.conversation);
                encode(&rendered, tokenizer)
            })
        });
        group.finish();
    }
}

criterion_group!(benches, request_pipeline);
criterion_main!(benches);
