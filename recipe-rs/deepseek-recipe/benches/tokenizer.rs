//! Encode throughput of the bundled DeepSeek V4 tokenizer on a generated mixed corpus.
#![allow(missing_docs)] // `criterion_group!` generates an undocumented public function.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use deepseek_recipe::Tokenizer;

/// A deterministic xorshift generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
}

/// About `size` bytes of English, code, JSON, CJK, emoji, numbers and whitespace.
fn mixed_corpus(size: usize) -> String {
    const WORDS: &[&str] = &[
        "the", "model", "returns", "a", "response", "when", "tokens", "are", "streamed", "and",
        "Hello", "world", "isn't", "it's", "parsing", "JSON", "function", "value", "DeepSeek",
    ];
    const CODE: &[&str] = &[
        "fn main() {\n    let x = vec![1, 2, 3];\n}\n",
        "def f(a, b):\n\treturn a + b  # sum\n",
        "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 3}}",
        "if (x >= 10 && y != null) { return x.map(v => v * 2); }\r\n",
    ];
    const OTHER: &[&str] = &[
        "我们今天讨论分词器的性能。",
        "東京はきれいです。カタカナ",
        "🎉👍🏽 ❤️ 👨\u{200D}👩\u{200D}👧",
        "Ünïcödé façade — naïve café",
        "مرحبا بالعالم",
        "1234567890 3.14159 2026-11-29",
        "   \n\n\t  \r\n",
        "<｜User｜>hi<｜Assistant｜><think>",
    ];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut text = String::with_capacity(size + 256);
    while text.len() < size {
        match rng.next() % 10 {
            0..=5 => {
                text.push_str(rng.pick(WORDS));
                text.push(if rng.next() % 12 == 0 { '.' } else { ' ' });
            }
            6 | 7 => text.push_str(rng.pick(CODE)),
            _ => text.push_str(rng.pick(OTHER)),
        }
    }
    text
}

fn encode_throughput(c: &mut Criterion) {
    let tokenizer = Tokenizer::deepseek_v4();
    let corpus = mixed_corpus(1 << 20);
    let mut group = c.benchmark_group("encode");
    group.throughput(Throughput::Bytes(corpus.len() as u64));
    group.sample_size(20);
    group.bench_function("mixed_1MiB_plain", |b| {
        b.iter(|| tokenizer.encode(&corpus, false))
    });
    group.bench_function("mixed_1MiB_special", |b| {
        b.iter(|| tokenizer.encode(&corpus, true))
    });
    group.finish();
}

fn long_runs_throughput(c: &mut Criterion) {
    let tokenizer = Tokenizer::deepseek_v4();
    // Long runs of one character are single huge words: the BPE heap path.
    let runs: Vec<String> = ["a", " ", "\n", "-", "中", "😀", "é", "ab"]
        .iter()
        .flat_map(|unit| [200, 1000, 5000].map(|count| unit.repeat(count)))
        .collect();
    let mut group = c.benchmark_group("encode_runs");
    group.throughput(Throughput::Bytes(
        runs.iter().map(|run| run.len() as u64).sum(),
    ));
    group.sample_size(20);
    group.bench_function("long_runs", |b| {
        b.iter(|| {
            runs.iter()
                .map(|run| tokenizer.encode(run, false).len())
                .sum::<usize>()
        })
    });
    group.finish();
}

fn run_scaling(c: &mut Criterion) {
    // One run of one character at 5K, 50K and 500K characters: cost per byte should stay flat.
    let tokenizer = Tokenizer::deepseek_v4();
    let mut group = c.benchmark_group("encode_run_scaling");
    group.sample_size(10);
    for unit in ["a", " "] {
        for count in [5_000, 50_000, 500_000] {
            let run = unit.repeat(count);
            group.throughput(Throughput::Bytes(run.len() as u64));
            let name = format!("{}x{count}", if unit == " " { "space" } else { unit });
            group.bench_function(name, |b| b.iter(|| tokenizer.encode(&run, false).len()));
        }
    }
    group.finish();
}

fn parallel_encode(c: &mut Criterion) {
    // The same 4 MiB text on 1 and 2 threads (ids identical; wall time should halve).
    let corpus = mixed_corpus(4 << 20);
    let mut group = c.benchmark_group("encode_threads");
    group.throughput(Throughput::Bytes(corpus.len() as u64));
    group.sample_size(10);
    for threads in [1, 2] {
        let tokenizer = Tokenizer::deepseek_v4().with_threads(threads);
        group.bench_function(format!("mixed_4MiB_{threads}_threads"), |b| {
            b.iter(|| tokenizer.encode(&corpus, false).len())
        });
    }
    group.finish();
}

fn decode_throughput(c: &mut Criterion) {
    let tokenizer = Tokenizer::deepseek_v4();
    let ids = tokenizer.encode(&mixed_corpus(1 << 20), false);
    let mut group = c.benchmark_group("decode");
    group.throughput(Throughput::Elements(ids.len() as u64));
    group.sample_size(20);
    group.bench_function("mixed_1MiB", |b| b.iter(|| tokenizer.decode(&ids)));
    group.finish();
}

criterion_group!(
    benches,
    encode_throughput,
    long_runs_throughput,
    run_scaling,
    parallel_encode,
    decode_throughput
);
criterion_main!(benches);
