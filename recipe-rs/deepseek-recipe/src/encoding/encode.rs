//! Prompt encoding: a rendered prompt becomes token ids.

use super::prompt::RenderedPrompt;
use crate::error::{Error, Result};
use crate::tokenizer::{Segment, Tokenizer};

/// The token ids of `prompt`: every special range is the id of its spelling in the tokenizer's
/// added vocabulary, all other text is byte-level BPE with added tokens NOT recognised (so a
/// user-typed `<｜User｜>` stays ordinary text).
///
/// # Errors
/// [`Error::Encode`] naming the first special range whose spelling is not an added token.
pub fn encode(prompt: &RenderedPrompt, tokenizer: &Tokenizer) -> Result<Vec<u32>> {
    let text = prompt.prompt.as_str();
    let mut segments = Vec::with_capacity(2 * prompt.special_ranges.len() + 1);
    let mut done = 0;
    for range in &prompt.special_ranges {
        let (Some(before), Some(spelling)) = (text.get(done..range.start), text.get(range.clone()))
        else {
            return Err(Error::Encode(format!(
                "special range {range:?} is out of order or not on character boundaries"
            )));
        };
        let id = tokenizer.prompt_special_id(spelling).ok_or_else(|| {
            Error::Encode(format!(
                "special token \"{spelling}\" is not in the added vocabulary"
            ))
        })?;
        if !before.is_empty() {
            segments.push(text_segment(prompt, done, before));
        }
        segments.push(Segment::Token(id));
        done = range.end;
    }
    if done < text.len() {
        segments.push(text_segment(prompt, done, &text[done..]));
    }
    Ok(tokenizer.encode_segments(&segments))
}

/// The segment of the text between special ranges that starts at byte `start`: marked with the
/// template constant it starts with, if any.
fn text_segment<'p>(prompt: &RenderedPrompt, start: usize, text: &'p str) -> Segment<'p> {
    match prompt.fixed_start_at(start) {
        Some(fixed) => Segment::FixedStart { fixed, text },
        None => Segment::Text(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::prompt::PromptBuilder;
    use crate::markup::SpecialTokens;

    #[test]
    fn injected_spellings_in_text_stay_plain() {
        let mut builder = PromptBuilder::default();
        builder.special("<｜User｜>");
        builder.text(" <｜User｜>");
        let ids = encode(&builder.finish(), Tokenizer::deepseek_v4()).expect("encodes");
        assert_eq!(ids, [128803, 818, 28217, 6756, 28217, 32]);
    }

    #[test]
    fn constants_that_start_a_segment_encode_as_plain_text() {
        const EFFORT: &str = "Reasoning: think it through.\n\n";
        let mut builder = PromptBuilder::default();
        builder.fixed_text(EFFORT);
        builder.text("\nSystem text");
        builder.special("<｜User｜>");
        builder.text("Hi ");
        builder.fixed_text(EFFORT);
        let prompt = builder.finish();
        let second = prompt.prompt.len() - EFFORT.len();
        assert_eq!(prompt.fixed_start_at(0), Some(EFFORT));
        assert_eq!(
            prompt.fixed_start_at(second),
            None,
            "not at a segment start"
        );
        let tokenizer = Tokenizer::deepseek_v4();
        let user = tokenizer.token_to_id("<｜User｜>").expect("added");
        let mut expected = tokenizer.encode(&format!("{EFFORT}\nSystem text"), false);
        expected.push(user);
        expected.extend(tokenizer.encode(&format!("Hi {EFFORT}"), false));
        for _ in 0..2 {
            assert_eq!(encode(&prompt, tokenizer).expect("encodes"), expected);
        }
    }

    #[test]
    fn unknown_special_spellings_are_an_error() {
        let mut builder = PromptBuilder::default();
        builder.special("<｜begin▁of▁sentence｜>");
        builder.special("<BOS>");
        let error = encode(&builder.finish(), Tokenizer::deepseek_v4()).expect_err("fails");
        assert_eq!(
            error.to_string(),
            "failed to encode conversation: special token \"<BOS>\" is not in the added vocabulary"
        );
    }

    #[test]
    fn the_v41_tokenizer_encodes_every_special_spelling() {
        let (v4, v41) = (Tokenizer::deepseek_v4(), Tokenizer::deepseek_v41());
        let mut builder = PromptBuilder::default();
        for spelling in SpecialTokens::default().spellings() {
            builder.special(spelling);
            builder.text(" x");
        }
        let prompt = builder.finish();
        assert!(encode(&prompt, v4).is_err(), "V4 lacks <｜System｜>");
        let ids = encode(&prompt, v41).expect("V4.1 has every spelling");
        let system = v41.token_to_id("<｜System｜>").expect("added");
        assert_eq!(system as usize, v4.vocab_size());
        assert_eq!(v41.vocab_size(), v4.vocab_size() + 1);
        assert!(ids.contains(&system));
        assert_eq!(v41.decode(&[system]).ok().as_deref(), Some("<｜System｜>"));
    }

    #[test]
    fn plain_vocabulary_tokens_are_not_added_tokens() {
        let mut builder = PromptBuilder::default();
        builder.special("a");
        assert!(encode(&builder.finish(), Tokenizer::deepseek_v4()).is_err());
    }
}
