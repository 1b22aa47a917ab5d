//! Per-piece cost of SSE streaming on a generated ~20K-token output with reasoning, content and
//! 20 tool calls, fed as ~4-character text pieces and as one-token id pieces, for each protocol,
//! at 1× and 16× the size (the per-piece cost should stay flat). Every piece goes the serving
//! path: parse, generate, accumulate the complete response, write SSE bytes.
//!
//! Two adversarial workloads scale the same way: 1,000 short tool calls per unit of size (each
//! fragment once cost a scan of the earlier calls in the Chat accumulator), and 16 stop sequences
//! of 6,000 characters per unit of size with content that keeps matching their prefixes, fed one
//! character at a time (each piece once re-read the stop sequences and the held text).
//!
//! `STREAM_BENCH_SCALES=1,4,16` picks the sizes (default `1,16`). On Linux the benches time the
//! thread's CPU time (`/proc/thread-self/schedstat`), which a loaded shared machine distorts far
//! less than wall time; `STREAM_BENCH_CLOCK=wall` (or any other OS) times wall-clock instead.
#![allow(missing_docs)] // `criterion_group!` generates an undocumented public function.

use std::time::{Duration, Instant};

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use deepseek_recipe::{
    Accumulator, GeneratorConfig, IdSource, InferenceFinishReason, ParsingOptions, PromptUsage,
    ResponseContext, SseStream, StreamIdentity, StreamProcessor, ThinkingInitialStage, Tokenizer,
    TokenizerText,
};

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

/// Reasoning, content and 20 V4 tool calls: about 20K tokens per unit of `scale`.
fn generated_output(scale: usize) -> String {
    let mut output = words(7000 * scale, 1);
    output.push_str("</think>");
    output.push_str(&words(7000 * scale, 2));
    output.push_str("\n\n<｜DSML｜tool_calls>\n");
    for call in 0..20 {
        output.push_str("<｜DSML｜invoke name=\"search\">\n");
        output.push_str("<｜DSML｜parameter name=\"q\" string=\"true\">");
        output.push_str(&words(250 * scale, call));
        output.push_str("</｜DSML｜parameter>\n<｜DSML｜parameter name=\"limit\" string=\"false\">10</｜DSML｜parameter>\n</｜DSML｜invoke>\n");
    }
    output.push_str("</｜DSML｜tool_calls>");
    output
}

fn config(protocol: &str) -> GeneratorConfig {
    let context = match protocol {
        "chat" => ResponseContext::ChatCompletions {
            include_usage: false,
        },
        "responses" => ResponseContext::Responses(Box::default()),
        _ => ResponseContext::Messages,
    };
    let identity = StreamIdentity {
        created: Some(1),
        ..StreamIdentity::new("bench-1", "DeepSeek-V4-Pro")
    };
    GeneratorConfig {
        thinking_mode: true,
        ..GeneratorConfig::new(identity, context)
    }
}

/// Short V4 tool calls only: 1,000 per unit of `scale`.
fn many_tool_calls(scale: usize) -> String {
    let mut output = String::from("</think><｜DSML｜tool_calls>\n");
    for call in 0..1000 * scale {
        output.push_str(
            "<｜DSML｜invoke name=\"get\">\n<｜DSML｜parameter name=\"id\" string=\"false\">",
        );
        output.push_str(&call.to_string());
        output.push_str("</｜DSML｜parameter>\n</｜DSML｜invoke>\n");
    }
    output.push_str("</｜DSML｜tool_calls>");
    output
}

/// 16 stop sequences of 6,000 characters per unit of `scale` (`a…a` then a distinct letter),
/// and content of `a`s four times as long: the longest stop prefix is held and never completes.
fn long_stops(scale: usize) -> (Vec<String>, String) {
    let length = 6000 * scale;
    let stops = (b'b'..b'r')
        .map(|last| format!("{}{}", "a".repeat(length - 1), char::from(last)))
        .collect();
    (stops, format!("</think>{}", "a".repeat(4 * length)))
}

fn stream(protocol: &str, stop_sequences: Vec<String>) -> SseStream {
    let config = config(protocol);
    let options = ParsingOptions {
        parse_tool_calls: true,
        thinking_initial_stage: Some(ThinkingInitialStage::ReasoningStart),
        stop_sequences,
        ..ParsingOptions::default()
    };
    let accumulator = Accumulator::for_config(&config, 1, PromptUsage::default());
    let processor = StreamProcessor::with_id_source(
        config,
        options,
        Some(TokenizerText::deepseek_v4()),
        IdSource::seeded(1),
    );
    SseStream::new(processor, accumulator)
}

/// Streams every piece with `push`; returns the SSE bytes written (the buffer is drained like a
/// server's).
fn run_pieces<P>(
    protocol: &str,
    stop_sequences: Vec<String>,
    pieces: impl IntoIterator<Item = P>,
    push: impl Fn(&mut SseStream, P, &mut Vec<u8>) -> deepseek_recipe::Result<()>,
) -> usize {
    let mut stream = stream(protocol, stop_sequences);
    let mut out = Vec::new();
    let mut written = 0;
    for piece in pieces {
        push(&mut stream, piece, &mut out).expect("the stream is open");
        written += out.len();
        out.clear();
    }
    stream
        .push_finish(InferenceFinishReason::Stop, &mut out)
        .expect("the stream is open");
    written + out.len()
}

/// Streams text pieces of one token each.
fn run_text(protocol: &str, stop_sequences: &[String], pieces: &[&str]) -> usize {
    run_pieces(
        protocol,
        stop_sequences.to_vec(),
        pieces,
        |stream, piece, out| stream.push_text(piece, 1, out),
    )
}

/// Streams token ids one per piece.
fn run_tokens(protocol: &str, ids: &[u32]) -> usize {
    run_pieces(protocol, Vec::new(), ids, |stream, id, out| {
        stream.push_tokens(std::slice::from_ref(id), None, out)
    })
}

/// The output cut into pieces of `size` characters.
fn text_pieces(output: &str, size: usize) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    for (count, (offset, _)) in output.char_indices().enumerate() {
        if count > 0 && count % size == 0 {
            pieces.push(&output[start..offset]);
            start = offset;
        }
    }
    pieces.push(&output[start..]);
    pieces
}

/// CPU time this thread has run, when the OS reports it (Linux: first field of schedstat, ns).
fn thread_cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos = stat.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(nanos))
}

/// Times `iters` runs of `routine` in CPU time when available (see the module docs).
fn timed(iters: u64, mut routine: impl FnMut() -> usize) -> Duration {
    let cpu = std::env::var("STREAM_BENCH_CLOCK").as_deref() != Ok("wall");
    let start_cpu = thread_cpu_time().filter(|_| cpu);
    let start = Instant::now();
    for _ in 0..iters {
        black_box(routine());
    }
    match (start_cpu, thread_cpu_time()) {
        (Some(before), Some(after)) => after.saturating_sub(before),
        _ => start.elapsed(),
    }
}

fn bench_stream(c: &mut Criterion) {
    let scales: Vec<usize> = std::env::var("STREAM_BENCH_SCALES")
        .unwrap_or_else(|_| "1,16".to_owned())
        .split(',')
        .filter_map(|scale| scale.trim().parse().ok())
        .collect();
    let _ = TokenizerText::deepseek_v4();
    for scale in scales {
        let output = generated_output(scale);
        let pieces = text_pieces(&output, 4);
        let ids = Tokenizer::deepseek_v4().encode(&output, true);
        let calls = many_tool_calls(scale);
        let call_pieces = text_pieces(&calls, 4);
        let (stops, stopped) = long_stops(scale);
        let stop_pieces = text_pieces(&stopped, 1);
        let mut group = c.benchmark_group(format!("stream_{scale}x"));
        group.sample_size(10);
        group.warm_up_time(Duration::from_secs(1));
        group.measurement_time(Duration::from_secs(3));
        for protocol in ["chat", "responses", "messages"] {
            group.throughput(Throughput::Elements(pieces.len() as u64));
            group.bench_function(format!("{protocol}/text_pieces_4_chars"), |b| {
                b.iter_custom(|iters| timed(iters, || run_text(protocol, &[], black_box(&pieces))))
            });
            group.throughput(Throughput::Elements(call_pieces.len() as u64));
            group.bench_function(format!("{protocol}/many_tool_calls"), |b| {
                b.iter_custom(|iters| {
                    timed(iters, || run_text(protocol, &[], black_box(&call_pieces)))
                })
            });
            group.throughput(Throughput::Elements(stop_pieces.len() as u64));
            group.bench_function(format!("{protocol}/long_stop_sequences"), |b| {
                b.iter_custom(|iters| {
                    timed(iters, || {
                        run_text(protocol, &stops, black_box(&stop_pieces))
                    })
                })
            });
            group.throughput(Throughput::Elements(ids.len() as u64));
            group.bench_function(format!("{protocol}/token_id_pieces"), |b| {
                b.iter_custom(|iters| timed(iters, || run_tokens(protocol, black_box(&ids))))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench_stream);
criterion_main!(benches);
