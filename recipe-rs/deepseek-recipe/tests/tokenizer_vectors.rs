//! Every `expect.token_ids` of the request vectors, reproduced from `expect.prompt` and
//! `expect.special_ranges`: special ranges become their token ids, all other text is encoded as
//! plain text (`allow_special = false`).

use std::path::PathBuf;

use deepseek_recipe::Tokenizer;
use serde_json::Value;

/// The vectors folder: `RECIPE_VECTORS`, else `../shared/vectors` next to the repository root.
fn vectors_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("RECIPE_VECTORS") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/vectors"),
    };
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var("RECIPE_VECTORS_OPTIONAL").as_deref() == Ok("1"),
        "vectors folder {} is missing (set RECIPE_VECTORS, or RECIPE_VECTORS_OPTIONAL=1 to skip)",
        dir.display()
    );
    None
}

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
    let Some(dir) = vectors_dir() else { return };
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
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()));
        for line in text.lines().filter(|line| !line.trim().is_empty()) {
            let record: Value = serde_json::from_str(line).expect("vector lines are JSON");
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
            if actual.as_ref().ok() != Some(&expected) {
                failures.push(record["id"].as_str().unwrap_or("?").to_owned());
            }
        }
    }
    assert!(checked > 100, "only {checked} vectors carry token_ids");
    assert!(
        failures.is_empty(),
        "{} of {checked} differ: {failures:?}",
        failures.len()
    );
}
