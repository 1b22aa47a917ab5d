//! Shared driver: options and protocol from the first input byte, then a whole stream.

use deepseek_recipe::{ResponseContext, IdSource, Accumulator, GeneratorConfig, InferenceChunk, PromptUsage, SharedTokenText, StreamIdentity, StreamProcessor, ParsingOptions, ThinkingInitialStage};

/// Runs `chunks` through a processor configured by `flags`; checks that nothing panics, that
/// errors only come from misuse, and that every chunk serialises.
pub fn run_stream(flags: u8, chunks: Vec<InferenceChunk>, tokenizer: Option<SharedTokenText>) {
    let stage = match flags & 3 {
        0 => None,
        1 => Some(ThinkingInitialStage::ReasoningStart),
        2 => Some(ThinkingInitialStage::ReasoningContinuation),
        _ => Some(ThinkingInitialStage::ContentContinuation),
    };
    let options = ParsingOptions {
        parse_tool_calls: flags & 4 != 0,
        starts_in_tool_calls: flags & 8 != 0,
        parse_json_output: flags & 16 != 0,
        thinking_initial_stage: stage,
        stop_sequences: if flags & 32 != 0 { vec!["END".into(), "\n\n".into()] } else { Vec::new() },
    ..ParsingOptions::default()
    };
    let thinking_mode = stage.is_some();
    let context = match flags >> 6 {
        0 => ResponseContext::ChatCompletions { include_usage: false },
        1 => ResponseContext::Messages,
        _ => ResponseContext::Responses(Box::default()),
    };
    let config = GeneratorConfig { thinking_mode, ..GeneratorConfig::new(StreamIdentity::new("r", "m"), context) };
    let mut accumulator = Accumulator::for_config(&config, 0, PromptUsage::default());
    let mut processor = StreamProcessor::with_id_source(config, options, tokenizer, IdSource::seeded(0));
    for chunk in chunks {
        match processor.push(chunk) {
            Ok(produced) => {
                for chunk in &produced {
                    deepseek_recipe::write_sse_event(chunk, &mut Vec::new());
                    accumulator.accumulate(chunk);
                }
            }
            Err(_) => break,
        }
    }
    if let Ok(produced) = processor.finish() {
        for chunk in &produced {
            accumulator.accumulate(chunk);
        }
    }
    let _ = accumulator.to_json();
}
