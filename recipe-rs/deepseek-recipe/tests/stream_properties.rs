//! Properties of the stream processor: however the model output is split into text pieces, the
//! accumulated (non-streamed) response is the same as for one piece; every chunk's hand-written
//! JSON is what `serde_json` writes for it; batch pushing writes the SSE bytes of one-by-one
//! pushing.
//!
//! Pieces carry `token_count: 0` (so usage does not depend on the split), tool-call ids come from
//! a seeded source, and JSON output mode is left out (it reports every prefix piece as `" "`, so
//! its content depends on the split by design).

use deepseek_recipe::{
    Accumulator, Chunk, GeneratorConfig, IdSource, InferenceChunk, InferenceFinishReason,
    ParsingOptions, PromptUsage, ResponseContext, SseStream, StreamIdentity, StreamProcessor,
    ThinkingInitialStage,
};
use proptest::prelude::*;

const ID: &str = "resp_prop";

fn config(protocol: usize, thinking_mode: bool) -> (GeneratorConfig, Accumulator) {
    let context = match protocol {
        0 => ResponseContext::ChatCompletions {
            include_usage: false,
        },
        1 => ResponseContext::Messages,
        _ => ResponseContext::Responses(Box::default()),
    };
    let identity = StreamIdentity {
        created: Some(1),
        ..StreamIdentity::new(ID, "m")
    };
    let config = GeneratorConfig {
        thinking_mode,
        ..GeneratorConfig::new(identity, context)
    };
    let accumulator = Accumulator::for_config(&config, 1, PromptUsage::default());
    (config, accumulator)
}

/// The accumulated response JSON (without `completed_at`, which is the clock) for `pieces`.
fn accumulate(pieces: &[&str], options: &ParsingOptions, protocol: usize) -> String {
    let thinking_mode = options.thinking_initial_stage.is_some();
    let (generator, mut accumulator) = config(protocol, thinking_mode);
    let mut processor =
        StreamProcessor::with_id_source(generator, options.clone(), None, IdSource::seeded(7));
    let mut chunks = Vec::new();
    for piece in pieces {
        if processor.finished() {
            break; // a stop sequence ended the stream
        }
        let produced = processor.push(InferenceChunk::text(*piece, 0));
        chunks.extend(produced.expect("push"));
    }
    if !processor.finished() {
        let finish = InferenceChunk::finish(InferenceFinishReason::Stop);
        chunks.extend(processor.push(finish).expect("finish"));
    }
    for chunk in &chunks {
        assert_eq!(
            chunk.to_json(),
            serde_json_of(chunk),
            "hand-written JSON differs"
        );
        accumulator.accumulate(chunk);
    }
    let mut value: serde_json::Value = serde_json::from_str(&accumulator.to_json()).expect("json");
    if let Some(object) = value.as_object_mut() {
        object.remove("completed_at");
    }
    value.to_string()
}

/// The chunk as `serde_json` writes its typed value (what the hand-written writer must match).
fn serde_json_of(chunk: &Chunk) -> String {
    match chunk {
        Chunk::Chat(chunk) => serde_json::to_string(chunk),
        Chunk::Messages(event) => serde_json::to_string(event),
        Chunk::Responses(event) => serde_json::to_string(event),
    }
    .expect("json")
}

/// The SSE bytes of `pieces` through [`SseStream`], one call per piece or one batch call, and
/// the accumulated response (the stream ends with `finish`, `[DONE]` included).
fn sse_bytes(pieces: &[&str], options: &ParsingOptions, protocol: usize, batch: bool) -> Vec<u8> {
    let thinking_mode = options.thinking_initial_stage.is_some();
    let (mut generator, accumulator) = config(protocol, thinking_mode);
    // Responses report `completed_at` as the later of the clock and `created_at`: a future
    // `created_at` keeps the two runs compared identical.
    generator.identity.created = Some(4_000_000_000);
    let processor =
        StreamProcessor::with_id_source(generator, options.clone(), None, IdSource::seeded(7));
    let mut stream = SseStream::new(processor, accumulator);
    let mut out = Vec::new();
    if batch {
        stream
            .push_text_many(pieces.iter().copied(), 1, &mut out)
            .expect("push");
    } else {
        for piece in pieces {
            stream.push_text(piece, 1, &mut out).expect("push");
            if stream.finished() {
                break;
            }
        }
    }
    stream.finish(&mut out).expect("finish");
    out.extend_from_slice(stream.accumulator().to_json().as_bytes());
    out
}

/// A model output built from words, reasoning, markup and tool calls in both DSML spellings.
fn output_strategy() -> impl Strategy<Value = (String, ParsingOptions)> {
    let word = prop::sample::select(vec![
        "a", "b c", " ", "\n", "\n\n", "é", "😀", "<", "</", "|", "｜", "{", "}", "\"", "x=1",
        "END", "<think>", "</p>", "\t", "DSML",
    ]);
    let text = prop::collection::vec(word, 0..8).prop_map(|words| words.concat());
    let value = prop::sample::select(vec!["Paris", "", "a\"b\\c\nd", "1.5", "[1, 2]", "ü 😀"]);
    let parameter = (
        prop::sample::select(vec!["q", "city", "n"]),
        value,
        any::<bool>(),
    );
    let call = (
        prop::sample::select(vec!["search", "get_weather"]),
        prop::collection::vec(parameter, 0..3),
    );
    let calls = prop::collection::vec(call, 0..3);
    (any::<bool>(), text.clone(), text, calls, any::<bool>(), prop::option::of(Just("END")))
        .prop_map(|(thinking, reasoning, content, calls, v41, stop)| {
            let gap = if v41 { " " } else { "" };
            let block = if v41 { " calls" } else { "tool_calls" };
            let mut output = String::new();
            if thinking {
                output.push_str(&reasoning);
                output.push_str("</think>");
            }
            output.push_str(&content);
            if !calls.is_empty() {
                output.push_str(&format!("\n\n<｜DSML｜{block}>\n"));
                for (name, parameters) in &calls {
                    output.push_str(&format!("<｜DSML｜{gap}invoke name=\"{name}\">\n"));
                    for (key, value, string) in parameters {
                        output.push_str(&format!(
                            "<｜DSML｜{gap}parameter name=\"{key}\" string=\"{string}\">{value}</｜DSML｜{gap}parameter>\n"
                        ));
                    }
                    output.push_str(&format!("</｜DSML｜{gap}invoke>\n"));
                }
                output.push_str(&format!("</｜DSML｜{block}>"));
            }
            let options = ParsingOptions {
                parse_tool_calls: true,
                starts_in_tool_calls: false,
                parse_json_output: false,
                thinking_initial_stage: thinking.then_some(ThinkingInitialStage::ReasoningStart),
                stop_sequences: stop.into_iter().map(str::to_owned).collect(),
        ..ParsingOptions::default()
            };
            (output, options)
        })
}

/// Splits `text` at the given char-boundary-rounded byte positions.
fn split_at<'a>(text: &'a str, cuts: &[usize]) -> Vec<&'a str> {
    let mut bounds: Vec<usize> = cuts
        .iter()
        .map(|&cut| {
            let mut cut = cut % (text.len() + 1);
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            cut
        })
        .collect();
    bounds.sort_unstable();
    bounds.dedup();
    let mut pieces = Vec::new();
    let mut start = 0;
    for cut in bounds {
        if cut > start {
            pieces.push(&text[start..cut]);
            start = cut;
        }
    }
    pieces.push(&text[start..]);
    pieces
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn any_split_accumulates_like_one_piece(
        (output, options) in output_strategy(),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
        protocol in 0usize..3,
    ) {
        let whole = accumulate(&[output.as_str()], &options, protocol);
        let pieces = split_at(&output, &cuts);
        prop_assert_eq!(accumulate(&pieces, &options, protocol), whole);
    }

    #[test]
    fn batches_write_the_bytes_of_one_by_one_pushing(
        (output, options) in output_strategy(),
        cuts in prop::collection::vec(any::<usize>(), 0..24),
        protocol in 0usize..3,
    ) {
        let pieces = split_at(&output, &cuts);
        prop_assert_eq!(
            sse_bytes(&pieces, &options, protocol, true),
            sse_bytes(&pieces, &options, protocol, false)
        );
    }
}

/// Every two-piece split at every character boundary inside every markup tag.
#[test]
fn splits_inside_every_tag_accumulate_like_one_piece() {
    let outputs = [
        "hmm\n\n</think>OK\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"search\">\n<｜DSML｜parameter name=\"q\" string=\"true\">x\"y</｜DSML｜parameter>\n<｜DSML｜parameter name=\"n\" string=\"false\">1.5</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
        "r</think>\n<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"get_weather\">\n<｜DSML｜ parameter name=\"city\" string=\"true\">Paris</｜DSML｜ parameter>\n</｜DSML｜ invoke>\n</｜DSML｜ calls>",
    ];
    let options = ParsingOptions {
        parse_tool_calls: true,
        thinking_initial_stage: Some(ThinkingInitialStage::ReasoningStart),
        ..ParsingOptions::default()
    };
    for output in outputs {
        let tags = tag_spans(output);
        assert!(tags.len() > 5);
        for protocol in 0..3 {
            let whole = accumulate(&[output], &options, protocol);
            for &(start, end) in &tags {
                for cut in (start + 1..end).filter(|&cut| output.is_char_boundary(cut)) {
                    let pieces = [&output[..cut], &output[cut..]];
                    assert_eq!(
                        accumulate(&pieces, &options, protocol),
                        whole,
                        "cut at {cut}"
                    );
                }
            }
        }
    }
}

/// Byte spans of `<…>` tags (including `</think>`).
fn tag_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut from = 0;
    while let Some(start) = text[from..].find('<').map(|at| at + from) {
        let Some(end) = text[start..].find('>').map(|at| at + start + 1) else {
            break;
        };
        spans.push((start, end));
        from = end;
    }
    spans
}
