//! Per-piece cost of the stream processor on a generated ~20K-token output with reasoning,
//! content and 20 tool calls, fed as ~4-character text pieces and as one-token id chunks.
#![allow(missing_docs)] // `criterion_group!` generates an undocumented public function.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use deepseek_recipe::stream::chat::ChatConfig;
use deepseek_recipe::stream::ids::IdSource;
use deepseek_recipe::stream::{
    GeneratorConfig, InferenceChunk, InferenceFinishReason, ParsingOptions, StreamProcessor,
    ThinkingInitialStage, TokenizerText,
};
use deepseek_recipe::Tokenizer;

const WORDS: [&str; 16] = [
    "the", "model", "thinks", "about", "Paris", "weather", "and", "then", "calls", "a", "tool",
    "with", "数据", "über", "😀", "results",
];

fn words(count: usize, seed: usize) -> String {
    let mut text = String::new();
    for index in 0..count {
        text.push_str(WORDS[(index * 7 + seed) % WORDS.len()]);
        text.push(if index % 13 == 12 { '\n' } else { ' ' });
    }
    text
}

/// Reasoning, content and 20 V4 tool calls: about 20K tokens.
fn generated_output() -> String {
    let mut output = words(7000, 1);
    output.push_str("</think>");
    output.push_str(&words(7000, 2));
    output.push_str("\n\n<｜DSML｜tool_calls>\n");
    for call in 0..20 {
        output.push_str("<｜DSML｜invoke name=\"search\">\n");
        output.push_str("<｜DSML｜parameter name=\"q\" string=\"true\">");
        output.push_str(&words(250, call));
        output.push_str("</｜DSML｜parameter>\n<｜DSML｜parameter name=\"limit\" string=\"false\">10</｜DSML｜parameter>\n</｜DSML｜invoke>\n");
    }
    output.push_str("</｜DSML｜tool_calls>");
    output
}

fn processor() -> StreamProcessor {
    let config = GeneratorConfig::Chat(ChatConfig {
        id: "chatcmpl-bench".into(),
        model: "DeepSeek-V4-Pro".into(),
        thinking_mode: true,
        ..ChatConfig::default()
    });
    let options = ParsingOptions {
        parse_tool_calls: true,
        thinking_initial_stage: Some(ThinkingInitialStage::ReasoningStart),
        ..ParsingOptions::default()
    };
    StreamProcessor::with_id_source(
        config,
        options,
        Some(TokenizerText::deepseek_v4()),
        IdSource::seeded(1),
    )
}

fn run(chunks: &[InferenceChunk]) -> usize {
    let mut processor = processor();
    let mut produced = 0;
    for chunk in chunks {
        produced += processor
            .push(chunk.clone())
            .map_or(0, |chunks| chunks.len());
    }
    produced
}

fn bench_stream(c: &mut Criterion) {
    let output = generated_output();
    let mut text_chunks = Vec::new();
    let mut piece = String::new();
    for ch in output.chars() {
        piece.push(ch);
        if piece.chars().count() == 4 {
            text_chunks.push(InferenceChunk::text(std::mem::take(&mut piece), 1));
        }
    }
    text_chunks.push(InferenceChunk::text(piece, 1));
    text_chunks.push(InferenceChunk::finish(InferenceFinishReason::Stop));

    let ids = Tokenizer::deepseek_v4().encode(&output, true);
    let mut token_chunks: Vec<InferenceChunk> = ids
        .iter()
        .map(|&id| InferenceChunk::tokens(vec![id], None))
        .collect();
    token_chunks.push(InferenceChunk::finish(InferenceFinishReason::Stop));
    let _ = TokenizerText::deepseek_v4();

    let mut group = c.benchmark_group(format!("stream_{}_tokens", ids.len()));
    group.sample_size(10);
    group.throughput(Throughput::Elements(text_chunks.len() as u64));
    group.bench_function("text_pieces_4_chars", |b| {
        b.iter(|| run(black_box(&text_chunks)))
    });
    group.throughput(Throughput::Elements(token_chunks.len() as u64));
    group.bench_function("token_id_pieces", |b| {
        b.iter(|| run(black_box(&token_chunks)))
    });
    group.finish();
}

criterion_group!(benches, bench_stream);
criterion_main!(benches);
