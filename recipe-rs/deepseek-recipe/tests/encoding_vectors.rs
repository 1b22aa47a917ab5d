//! Golden request vectors: every converted conversation renders to the recorded prompt and
//! special ranges, and encodes to the recorded V4 token ids (or the recorded encoding error).
//!
//! The vectors' conversations list image sources without their placeholder positions. They are
//! recovered from the message text: every occurrence of the placeholder spelling when there is
//! exactly one per source, else the occurrences that form a whole content part (conversion joins
//! parts with blank lines, so user-typed spellings inside a text part are skipped). Messages
//! where neither gives one placeholder per source are counted as "unrecoverable" (the
//! request→prompt pipeline test covers them).
#![allow(
    clippy::print_stdout,
    reason = "the test prints its summary and failures"
)]

mod common;
#[path = "support/failures.rs"]
mod failures;

use deepseek_recipe::conversation::Conversation;
use deepseek_recipe::encoding::{encode, Encoding, SpecialTokenOverrides, SpecialTokens};
use deepseek_recipe::Tokenizer;
use failures::{assert_none_failed, Failure};
use serde_json::{json, Value};

const FILES: [&str; 4] = [
    "requests/chat_completions.jsonl",
    "requests/responses.jsonl",
    "requests/messages.jsonl",
    "images/image_requests.jsonl",
];

enum Outcome {
    Passed,
    Failed(String),
    Unrecoverable,
}

#[test]
fn request_vectors_render_byte_exactly() {
    let Some(dir) = common::vectors_dir() else {
        return;
    };
    let mut failures = Vec::new();
    let (mut passed, mut unrecoverable) = (0, 0);
    for file in FILES {
        let (mut file_passed, mut file_failed, mut file_unrecoverable) = (0, 0, 0);
        for record in common::read_records(&dir.join(file)) {
            if record["expect"].get("error").is_some() {
                continue;
            }
            match check(&record) {
                Outcome::Passed => file_passed += 1,
                Outcome::Unrecoverable => file_unrecoverable += 1,
                Outcome::Failed(why) => {
                    file_failed += 1;
                    failures.push(Failure {
                        id: record["id"].as_str().unwrap_or("?").to_owned(),
                        mismatches: vec![why],
                    });
                }
            }
        }
        println!(
            "{file}: {file_passed} passed, {file_failed} failed, {file_unrecoverable} unrecoverable image cases"
        );
        passed += file_passed;
        unrecoverable += file_unrecoverable;
    }
    println!(
        "encoding vectors: {passed} passed, {} failed ({unrecoverable} image cases left to the pipeline test)",
        failures.len()
    );
    assert!(passed > 0, "no vectors were checked");
    assert_none_failed("encoding vectors", &failures);
}

fn check(record: &Value) -> Outcome {
    let expect = &record["expect"];
    let overrides: SpecialTokenOverrides = match record["options"].get("special_tokens") {
        Some(value) => match serde_json::from_value(value.clone()) {
            Ok(overrides) => overrides,
            Err(error) => return Outcome::Failed(format!("special_tokens option: {error}")),
        },
        None => SpecialTokenOverrides::default(),
    };
    let tokens = SpecialTokens::default().with_overrides(&overrides);
    let encoding = match expect["model_version"].as_str() {
        Some("DeepseekV4Pro") => Encoding::v4(),
        Some("DeepseekV41Flash") => Encoding::v41(),
        other => return Outcome::Failed(format!("unknown model version {other:?}")),
    };
    let Some(conversation) = conversation_from_vector(&expect["conversation"], &tokens.image)
    else {
        return Outcome::Unrecoverable;
    };
    let conversation: Conversation = match serde_json::from_value(conversation) {
        Ok(conversation) => conversation,
        Err(error) => {
            return Outcome::Failed(format!("conversation does not deserialise: {error}"))
        }
    };
    let rendered = encoding.with_special_tokens(tokens).render(&conversation);
    let expected_prompt = expect["prompt"].as_str().unwrap_or_default();
    if rendered.prompt != expected_prompt {
        return Outcome::Failed(first_difference(&rendered.prompt, expected_prompt));
    }
    let ranges: Vec<[usize; 2]> = rendered
        .special_char_ranges()
        .into_iter()
        .map(|range| [range.start, range.end])
        .collect();
    if json!(ranges) != expect["special_ranges"] {
        return Outcome::Failed(format!(
            "special ranges differ:\n  ours     {:?}\n  expected {}",
            ranges, expect["special_ranges"]
        ));
    }
    if json!(rendered.image_sources.len()) != expect["image_count"] {
        return Outcome::Failed(format!(
            "image count {} != {}",
            rendered.image_sources.len(),
            expect["image_count"]
        ));
    }
    check_encoding(&rendered, expect)
}

/// Token ids where the vector records them, the error message where it records a failure.
fn check_encoding(rendered: &deepseek_recipe::RenderedPrompt, expect: &Value) -> Outcome {
    let encoded = encode(rendered, Tokenizer::deepseek_v4());
    if let Some(expected_ids) = expect.get("token_ids") {
        return match encoded {
            Ok(ids) if json!(ids) == *expected_ids => Outcome::Passed,
            Ok(ids) => Outcome::Failed(format!(
                "token ids differ ({} ids, expected {})",
                ids.len(),
                expected_ids.as_array().map_or(0, Vec::len)
            )),
            Err(error) => Outcome::Failed(format!("encoding failed: {error}")),
        };
    }
    if let Some(expected_error) = expect.get("encode_error") {
        return match encoded {
            Ok(_) => Outcome::Failed(format!("encoding succeeded, expected {expected_error}")),
            Err(error) if json!(error.to_string()) == expected_error["message"] => Outcome::Passed,
            Err(error) => {
                Outcome::Failed(format!("encoding error {error}, expected {expected_error}"))
            }
        };
    }
    Outcome::Passed
}

/// The vector conversation in the serde shape of [`Conversation`], or `None` when image
/// placeholder positions are ambiguous.
fn conversation_from_vector(conversation: &Value, image_spelling: &str) -> Option<Value> {
    let mut conversation = conversation.clone();
    let Some(messages) = conversation
        .get_mut("messages")
        .and_then(Value::as_array_mut)
    else {
        return Some(conversation);
    };
    for message in messages {
        let Some(object) = message.as_object_mut() else {
            continue;
        };
        let Some(sources) = object.remove("image_sources") else {
            continue;
        };
        let sources = sources.as_array().cloned().unwrap_or_default();
        let content = object
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let spans = placeholder_spans(content, image_spelling, sources.len())?;
        let images: Vec<Value> = sources
            .iter()
            .zip(spans)
            .map(|(source, span)| json!({"span": [span.0, span.1], "source": image_source(source)}))
            .collect();
        object.insert("images".to_owned(), Value::Array(images));
    }
    Some(conversation)
}

/// The byte spans of `count` image placeholders in `content`, when they can be told apart from
/// user-typed spellings.
fn placeholder_spans(content: &str, spelling: &str, count: usize) -> Option<Vec<(usize, usize)>> {
    let all: Vec<(usize, usize)> = content
        .match_indices(spelling)
        .map(|(start, found)| (start, start + found.len()))
        .collect();
    if all.len() == count {
        return Some(all);
    }
    let whole_parts: Vec<(usize, usize)> = all
        .into_iter()
        .filter(|&(start, end)| {
            let before = &content[..start];
            let after = &content[end..];
            (before.is_empty() || before.ends_with("\n\n"))
                && (after.is_empty() || after.starts_with("\n\n"))
        })
        .collect();
    (whole_parts.len() == count).then_some(whole_parts)
}

/// `{kind, detail, path, url | data_url}` → `{kind, detail, path, location}`.
fn image_source(source: &Value) -> Value {
    let location = source
        .get("url")
        .or_else(|| source.get("data_url"))
        .cloned()
        .unwrap_or(Value::Null);
    json!({
        "kind": source["kind"],
        "detail": source["detail"],
        "path": source["path"],
        "location": location,
    })
}

fn first_difference(ours: &str, expected: &str) -> String {
    let common = ours
        .char_indices()
        .zip(expected.chars())
        .find(|((_, a), b)| a != b)
        .map_or(ours.len().min(expected.len()), |((index, _), _)| index);
    let start = ours[..common]
        .char_indices()
        .rev()
        .nth(60)
        .map_or(0, |(index, _)| index);
    let tail = |text: &str| text[common..].chars().take(80).collect::<String>();
    format!(
        "prompt differs after {:?}\n  ours     {:?}\n  expected {:?}",
        &ours[start..common],
        tail(ours),
        tail(expected)
    )
}
