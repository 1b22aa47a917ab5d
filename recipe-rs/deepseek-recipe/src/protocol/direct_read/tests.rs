use serde::Deserialize;
use serde_json::Value;

use super::read;
use crate::protocol::shared::{json_from_text, typed_from_value};

/// The two-stage read's outcome: text to a JSON value, value to `T`.
fn two_stage<T: serde::de::DeserializeOwned>(text: &str) -> Option<T> {
    typed_from_value(json_from_text(text).ok()?).ok()
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Tagged {
    Text { text: String, weight: Option<f64> },
    Count { count: u32 },
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Mode {
    Fast,
    Exact,
}

#[derive(Debug, PartialEq, Deserialize)]
struct Shape {
    name: String,
    items: Option<Vec<Tagged>>,
    mode: Option<Mode>,
    limit: Option<u8>,
    seed: Option<i64>,
    ratio: Option<f32>,
    flag: Option<bool>,
    extra: Option<Value>,
}

/// Every body is either read directly with the two-stage read's value, or declined; and a body
/// the two-stage read rejects is never read directly.
fn agrees(text: &str) -> bool {
    let direct = read::<Shape>(text);
    if let Some(direct) = &direct {
        assert_eq!(Some(direct), two_stage::<Shape>(text).as_ref(), "{text}");
    }
    let value = read::<Value>(text);
    if let Some(value) = &value {
        assert_eq!(Some(value), two_stage::<Value>(text).as_ref(), "{text}");
    }
    direct.is_some()
}

#[test]
fn ordinary_bodies_are_read_directly_with_the_same_values() {
    for text in [
        r#"{"name": "x"}"#,
        r#" {"name":"é\n☃","mode":"exact","limit":255,"seed":-9007199254740993,"ratio":0.7000000774860382080078126} "#,
        r#"{"name": "a", "items": [{"kind": "text", "text": "t\"\\", "weight": 1e-3}, {"count": 4, "kind": "count"}]}"#,
        r#"{"extra": {"z": [1, 2.5, -0, 1E2, true, null, "s"], "a": {}}, "name": "n", "unknown": [[[{"k": 1e300}]]]}"#,
        r#"{"name": "dup", "extra": {"k": 1, "k": 2}}"#,
        r#"{"name": "\u00e9\u20ac\u0000\/", "flag": false, "extra": null}"#,
        "{\"name\":\"tab\\tline\\nend\"\r\n}",
        r#"{"name": "\ud83d\ude00 \uD83D\uDE00", "extra": ["\udbff\udfff"]}"#,
    ] {
        assert!(agrees(text), "declined: {text}");
    }
}

#[test]
fn what_the_two_stage_read_decides_alone_is_declined() {
    let deep = format!(
        r#"{{"name": "x", "extra": {}1{}}}"#,
        "[".repeat(100),
        "]".repeat(100)
    );
    let long_number = format!(r#"{{"name": "x", "extra": 1{}}}"#, "0".repeat(400));
    for text in [
        deep.as_str(),
        long_number.as_str(),
        r#"{"name": "x", "extra": "\ud800"}"#,
        r#"{"name": "x", "extra": "\ud83d\u0041"}"#,
        r#"{"name": "x", "unknown": 1e400}"#,
        r#"{"name": "x", "name": "y"}"#,
        r#"{"name": "x", "mode": {"fast": null}}"#,
    ] {
        assert!(!agrees(text), "read: {text}");
    }
}

#[test]
fn invalid_json_is_never_read() {
    for text in [
        "",
        " ",
        r#"{"name": "x",}"#,
        r#"{"name": "x"} x"#,
        r#"{"name": "x", "items": [,]}"#,
        r#"{"name": "x", "items": [{"kind": "count", "count": 1},]}"#,
        r#"{"name": "x" "flag": true}"#,
        r#"{"name": 'x'}"#,
        r#"{"name": "x", "limit": 01}"#,
        r#"{"name": "x", "limit": +1}"#,
        r#"{"name": "x", "ratio": 1.}"#,
        r#"{"name": "x", "ratio": .5}"#,
        r#"{"name": "x", "ratio": 1e}"#,
        r#"{"name": "x", "flag": tru}"#,
        r#"{"name": "x", "flag": nul}"#,
        r#"{"name": "x", "extra": NaN}"#,
        "{\"name\": \"x\u{1}\"}",
        r#"{"name": "x\q"}"#,
        "\u{feff}{\"name\": \"x\"}",
        r#"{"name": "x"}}"#,
        r#"{"name": "x", "limit": 256}"#,
        r#"{"name": "x", "limit": 1.0}"#,
        r#"{"name": "x", "limit": "1"}"#,
        r#"{"name": "x", "mode": "slow"}"#,
        r#"{name: "x"}"#,
    ] {
        assert!(two_stage::<Shape>(text).is_none(), "{text}");
        assert!(read::<Shape>(text).is_none(), "read: {text}");
    }
}

#[test]
fn numbers_reach_their_visitors_as_serde_json_shows_them() {
    for number in [
        "0",
        "-0",
        "7",
        "-7",
        "18446744073709551615",
        "18446744073709551616",
        "-9223372036854775809",
        "0.1",
        "2.5e-5",
        "1E2",
        "123456789012345680000",
    ] {
        let text = format!("[{number}]");
        assert_eq!(read::<Value>(&text), two_stage::<Value>(&text), "{number}");
        assert_eq!(
            read::<Vec<f64>>(&text),
            two_stage::<Vec<f64>>(&text),
            "{number}"
        );
        assert_eq!(
            read::<Vec<i64>>(&text),
            two_stage::<Vec<i64>>(&text),
            "{number}"
        );
    }
}

#[test]
fn object_key_order_survives() {
    let text = r#"{"z": 1, "a": {"y": [], "b": "\n"}, "m": null}"#;
    let value = read::<Value>(text).unwrap();
    assert_eq!(
        value.to_string(),
        serde_json::from_str::<Value>(text).unwrap().to_string()
    );
}

/// Request bodies of every protocol to mutate: strings with escapes, nested schemas, numbers.
const SEEDS: [&str; 3] = [
    r#"{"model": "DeepSeek-V4-Pro", "temperature": 0.7, "max_tokens": 512, "stop": ["\n\n", "END"], "messages": [{"role": "system", "content": "Be brief.\tReally."}, {"role": "user", "content": [{"type": "text", "text": "caf\u00e9 \"quoted\" \\ path"}]}, {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get", "arguments": "{\"q\": 1}"}}]}, {"role": "tool", "tool_call_id": "c1", "content": "42"}], "tools": [{"type": "function", "function": {"name": "get", "description": "Gets.\nLine two", "parameters": {"type": "object", "properties": {"q": {"type": "integer", "minimum": -1e3}}, "required": ["q"]}}}], "tool_choice": "auto", "stream": false, "seed": 12345678901234}"#,
    r#"{"model": "DeepSeek-V4.1-Flash", "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi\r\n\u2603"}]}, {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"}, {"type": "function_call_output", "call_id": "a", "output": "ok"}], "instructions": "sys", "text": {"format": {"type": "json_schema", "name": "s", "schema": {"type": "object"}}}, "top_p": 1}"#,
    r#"{"model": "DeepSeek-V4-Pro", "max_tokens": 100, "system": [{"type": "text", "text": "S\/S"}], "messages": [{"role": "user", "content": [{"type": "text", "text": "x"}, {"type": "tool_result", "tool_use_id": "t", "content": "r"}]}], "tools": [{"name": "t", "input_schema": {"type": "object", "properties": {}}}], "thinking": {"type": "enabled", "budget_tokens": 2048}}"#,
];

/// Bytes a mutation inserts: JSON syntax, escape letters, digits, controls, wide characters.
const ALPHABET: [&str; 24] = [
    "\"", "\\", "{", "}", "[", "]", ":", ",", " ", "0", "9", "-", ".", "e", "n", "u", "t", "d8",
    "\u{1}", "\n", "é", "😀", "null", "1e400",
];

/// Values a mutation puts in place of a whole string (a key or a value).
const VALUES: [&str; 8] = ["1", "-0.5", "null", "true", "[]", "{}", "\"x\"", "[1]"];

/// The byte range (quotes included) of the first string of `text` that starts at or after `at`.
fn string_at_or_after(text: &str, at: usize) -> Option<std::ops::Range<usize>> {
    let bytes = text.as_bytes();
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] != b'"' {
            index += 1;
            continue;
        }
        let open = index;
        index += 1;
        while *bytes.get(index)? != b'"' {
            index += if bytes[index] == b'\\' { 2 } else { 1 };
        }
        index += 1;
        if open >= at {
            return Some(open..index);
        }
    }
    None
}

fn mutate(seed: &str, edits: &[(usize, usize, usize)]) -> String {
    let mut text = seed.to_owned();
    for &(at, kind, piece) in edits {
        let mut at = at % (text.len() + 1);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        match kind % 4 {
            0 => text.insert_str(at, ALPHABET[piece % ALPHABET.len()]),
            3 => {
                if let Some(span) = string_at_or_after(&text, at) {
                    text.replace_range(span, VALUES[piece % VALUES.len()]);
                }
            }
            1 => {
                if let Some(removed) = text[at..].chars().next() {
                    text.replace_range(at..at + removed.len_utf8(), "");
                }
            }
            _ => {
                if let Some(removed) = text[at..].chars().next() {
                    text.replace_range(
                        at..at + removed.len_utf8(),
                        ALPHABET[piece % ALPHABET.len()],
                    );
                }
            }
        }
    }
    text
}

/// A body read directly equals its two-stage read, as a JSON value and as each protocol's request.
fn agrees_everywhere(text: &str) {
    use crate::protocol::{ChatCompletionRequest, MessagesRequest, ResponsesRequest};
    if let Some(value) = read::<Value>(text) {
        assert_eq!(Some(value), two_stage::<Value>(text), "{text}");
    }
    macro_rules! same_request {
        ($($request:ty),*) => {$(
            if let Some(direct) = read::<$request>(text) {
                let staged = two_stage::<$request>(text).map(|request| format!("{request:?}"));
                assert_eq!(Some(format!("{direct:?}")), staged, "{text}");
            }
        )*};
    }
    same_request!(ChatCompletionRequest, ResponsesRequest, MessagesRequest);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]

    #[test]
    fn mutated_bodies_are_read_as_the_two_stages_read_them(
        seed in 0usize..SEEDS.len(),
        edits in proptest::collection::vec((0usize..2000, 0usize..4, 0usize..64), 0..4),
    ) {
        agrees_everywhere(&mutate(SEEDS[seed], &edits));
    }

    #[test]
    fn strings_replaced_by_other_kinds_are_read_as_the_two_stages_read_them(
        seed in 0usize..SEEDS.len(),
        edits in proptest::collection::vec((0usize..2000, 3usize..4, 0usize..64), 1..3),
    ) {
        agrees_everywhere(&mutate(SEEDS[seed], &edits));
    }
}

#[test]
fn the_seed_bodies_are_read_directly() {
    use crate::protocol::{ChatCompletionRequest, MessagesRequest, ResponsesRequest};
    assert!(read::<ChatCompletionRequest>(SEEDS[0]).is_some());
    assert!(read::<ResponsesRequest>(SEEDS[1]).is_some());
    assert!(read::<MessagesRequest>(SEEDS[2]).is_some());
    for seed in SEEDS {
        agrees_everywhere(seed);
    }
}

#[test]
fn each_kind_reaches_only_the_methods_the_json_value_serves_it_to() {
    // A derived identifier visitor takes a variant's index as well as its name; the JSON value
    // serves identifiers only from strings.
    for text in [
        r#"{"name": "x", "items": [{"kind": 1, "count": 2}]}"#,
        r#"{"name": "x", "mode": 0}"#,
        r#"{"name": "x", "flag": 1}"#,
        r#"{"name": "x", "limit": true}"#,
        r#"{"name": ["x"]}"#,
        r#"{"name": "x", "items": {"kind": "count", "count": 2}}"#,
    ] {
        assert_eq!(two_stage::<Shape>(text), None, "{text}");
        assert_eq!(read::<Shape>(text), None, "{text}");
    }
    let text = r#"["x", null, "fast", 7, -1, 0.5, false, {"k": []}]"#;
    assert_eq!(read::<Shape>(text), two_stage::<Shape>(text));
    assert!(read::<Shape>(text).is_some());
}
