//! Every `expect.token_ids` of the request vectors, reproduced from `expect.prompt` and
//! `expect.special_ranges`: special ranges become their token ids, all other text is encoded as
//! plain text (`allow_special = false`).

mod common;
#[path = "support/failures.rs"]
mod failures;

use deepseek_recipe::Tokenizer;
use failures::{assert_none_failed, Failure};
use serde_json::Value;

/// Byte offset of each code point offset of `text` (plus the end).
fn byte_offsets(text: &str) -> Vec<usize> {
    text.char_indices()
        .map(|(at, _)| at)
        .chain([text.len()])
        .collect()
}

fn special_ranges(prompt: &str, ranges: &Value) -> Vec<std::ops::Range<usize>> {
    let offsets = byte_offsets(prompt);
    let at = |value: &Value| {
        let index = value.as_u64().expect("offset is an integer") as usize;
        offsets[index]
    };
    ranges
        .as_array()
        .expect("special_ranges is a list")
        .iter()
        .map(|range| at(&range[0])..at(&range[1]))
        .collect()
}

#[test]
fn request_vector_token_ids() {
    let Some(dir) = common::vectors_dir() else {
        return;
    };
    let tokenizer = Tokenizer::deepseek_v4();
    let files = [
        "requests/chat_completions.jsonl",
        "requests/responses.jsonl",
        "requests/messages.jsonl",
        "images/image_requests.jsonl",
    ];
    let mut checked = 0;
    let mut failures = Vec::new();
    for file in files {
        let path = dir.join(file);
        for record in common::read_records(&path) {
            let expect = &record["expect"];
            let Some(expected) = expect["token_ids"].as_array() else {
                continue;
            };
            let expected: Vec<u32> = expected
                .iter()
                .map(|id| id.as_u64().expect("ids are integers") as u32)
                .collect();
            let prompt = expect["prompt"]
                .as_str()
                .expect("a prompt comes with token_ids");
            let ranges = special_ranges(prompt, &expect["special_ranges"]);
            let actual = tokenizer.encode_with_special_ranges(prompt, &ranges);
            checked += 1;
            let mismatch = match actual {
                Ok(ids) if ids == expected => continue,
                Ok(ids) => format!("{} ids, expected {}", ids.len(), expected.len()),
                Err(error) => format!("encoding failed: {error}"),
            };
            failures.push(Failure {
                id: record["id"].as_str().unwrap_or("?").to_owned(),
                mismatches: vec![mismatch],
            });
        }
    }
    assert!(checked > 100, "only {checked} vectors carry token_ids");
    assert_none_failed("token-id vectors", &failures);
}
