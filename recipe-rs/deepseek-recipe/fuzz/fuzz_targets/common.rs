//! Shared driver: options and protocol from the first input byte, then a whole stream.

use deepseek_recipe::stream::chat::{ChatConfig, ChatResponse};
use deepseek_recipe::stream::ids::IdSource;
use deepseek_recipe::stream::messages::{MessagesConfig, MessagesResponse};
use deepseek_recipe::stream::responses::{ResponsesConfig, ResponsesResponse};
use deepseek_recipe::stream::{
    Accumulator, GeneratorConfig, InferenceChunk, ParsingOptions, PromptUsage, StreamProcessor,
    SharedTokenText, ThinkingInitialStage,
};

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
    };
    let thinking_mode = stage.is_some();
    let (config, mut accumulator) = match flags >> 6 {
        0 => (
            GeneratorConfig::Chat(ChatConfig { id: "c".into(), thinking_mode, ..ChatConfig::default() }),
            Accumulator::Chat(ChatResponse::new("c", "m", 0)),
        ),
        1 => (
            GeneratorConfig::Messages(MessagesConfig { id: "m".into(), thinking_mode, ..MessagesConfig::default() }),
            Accumulator::Messages(MessagesResponse::new("m", "m", PromptUsage::default())),
        ),
        _ => {
            let config = ResponsesConfig { id: "r".into(), thinking_mode, ..ResponsesConfig::default() };
            let accumulator = Accumulator::Responses(Box::new(ResponsesResponse::new("r", "", 0)));
            (GeneratorConfig::Responses(Box::new(config)), accumulator)
        }
    };
    let mut processor = StreamProcessor::with_id_source(config, options, tokenizer, IdSource::seeded(0));
    for chunk in chunks {
        match processor.push(chunk) {
            Ok(produced) => {
                for chunk in &produced {
                    let _ = chunk.to_sse();
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
