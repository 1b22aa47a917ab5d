//! Golden tests of the constrained-decoding grammar: the grammar of each request below is
//! compared byte for byte with `tests/golden/grammar/NAME.lark`. The files were checked against
//! the engine's earlier Python grammar builder (same rules, same order); after a deliberate
//! change, `UPDATE_GOLDEN=1 cargo test --test constraint_grammar` rewrites them for review.

use std::path::PathBuf;

use deepseek_recipe::{constraint_grammar, convert_json, ConversionOptions, Protocol, Tokenizer};

const TOOLS: &str = r##"[
  {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
    "properties": {"city": {"type": "string", "minLength": 1, "pattern": "^[A-Z]\\w+"},
                   "days": {"type": "integer", "minimum": 1, "maximum": 7},
                   "unit": {"type": "string", "enum": ["c", "f", "a</b"]}},
    "required": ["city"]}}},
  {"type": "function", "function": {"name": "now", "parameters": {"type": "object"}}},
  {"type": "function", "function": {"name": "notes", "parameters": {"type": "object",
    "properties": {"text": {"type": "string"}, "tags": {"type": "array", "items": {"$ref": "#/$defs/x"}}},
    "$defs": {"x": {"type": "number"}}}}}
]"##;

/// `(name, protocol, request body)` of every golden grammar.
fn cases() -> Vec<(&'static str, Protocol, String)> {
    let chat = |model: &str, extra: &str| {
        format!(
            r#"{{"model": "{model}", "messages": [{{"role": "user", "content": "q (json)"}}]{extra}}}"#
        )
    };
    vec![
        (
            "json_object",
            Protocol::ChatCompletions,
            chat(
                "DeepSeek-V4-Pro",
                r#", "thinking": {"type": "disabled"}, "response_format": {"type": "json_object"}"#,
            ),
        ),
        (
            "json_schema_thinking",
            Protocol::ChatCompletions,
            chat(
                "DeepSeek-V4-Pro",
                r#", "response_format": {"type": "json_schema", "json_schema": {"name": "n",
                    "schema": {"type": "object", "properties": {"v": {"type": "number", "minimum": 1e-7}}}}}"#,
            ),
        ),
        (
            "regex",
            Protocol::ChatCompletions,
            chat(
                "DeepSeek-V4-Pro",
                r#", "thinking": {"type": "disabled"}, "response_format": {"type": "regex", "regex": "a/\\d+\n"}"#,
            ),
        ),
        (
            "tools_auto_thinking_v4",
            Protocol::ChatCompletions,
            chat("DeepSeek-V4-Pro", &format!(r#", "tools": {TOOLS}"#)),
        ),
        (
            "tools_required_v4",
            Protocol::ChatCompletions,
            chat(
                "DeepSeek-V4-Pro",
                &format!(r#", "thinking": {{"type": "disabled"}}, "tools": {TOOLS}, "tool_choice": "required""#),
            ),
        ),
        (
            "tools_required_v41",
            Protocol::ChatCompletions,
            chat(
                "DeepSeek-V4.1-Flash",
                &format!(r#", "thinking": {{"type": "disabled"}}, "tools": {TOOLS}, "tool_choice": "required""#),
            ),
        ),
        (
            "tools_any_messages",
            Protocol::Messages,
            r#"{"model": "DeepSeek-V4-Pro", "max_tokens": 64, "messages": [{"role": "user", "content": "q"}],
                "tool_choice": {"type": "any"},
                "tools": [{"name": "now", "input_schema": {"type": "object"}}]}"#
                .to_owned(),
        ),
    ]
}

fn golden_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/grammar")
        .join(format!("{name}.lark"))
}

#[test]
fn grammars_match_their_golden_files() {
    let options = ConversionOptions::default();
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut differing = Vec::new();
    for (name, protocol, body) in cases() {
        let converted =
            convert_json(protocol, &body, &options).unwrap_or_else(|err| panic!("{name}: {err}"));
        let encoding = options.encoding_for(converted.model_version);
        let grammar = constraint_grammar(&converted, &encoding, Tokenizer::deepseek_v4())
            .unwrap_or_else(|err| panic!("{name}: {err}"))
            .unwrap_or_else(|| panic!("{name}: no constraint"));
        let path = golden_path(name);
        if update {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &grammar).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(grammar.as_str()) {
            differing.push(name);
        }
    }
    assert!(
        differing.is_empty(),
        "grammars differ from their golden files: {differing:?}"
    );
}

#[test]
fn requests_without_a_constraint_have_no_grammar() {
    let options = ConversionOptions::default();
    let body = r#"{"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "q"}]}"#;
    let converted = convert_json(Protocol::ChatCompletions, body, &options).unwrap();
    let encoding = options.encoding_for(converted.model_version);
    let grammar = constraint_grammar(&converted, &encoding, Tokenizer::deepseek_v4()).unwrap();
    assert_eq!(grammar, None);
}

#[test]
fn overridden_spellings_shape_the_grammar() {
    let options = ConversionOptions::from_json(r#"{"special_tokens": {"dsml": "|X|"}}"#).unwrap();
    let body = format!(
        r#"{{"model": "DeepSeek-V4-Pro", "messages": [{{"role": "user", "content": "q"}}],
            "thinking": {{"type": "disabled"}}, "tools": {TOOLS}}}"#
    );
    let converted = convert_json(Protocol::ChatCompletions, &body, &options).unwrap();
    let encoding = options.encoding_for(converted.model_version);
    let grammar = constraint_grammar(&converted, &encoding, Tokenizer::deepseek_v4())
        .unwrap()
        .unwrap();
    assert!(grammar.contains("\"</|X|tool_calls>\""), "{grammar}");
    assert!(!grammar.contains("DSML"), "{grammar}");
}

#[test]
fn a_thinking_end_the_tokenizer_lacks_is_asked_for_as_text() {
    let options =
        ConversionOptions::from_json(r#"{"special_tokens": {"thinking_end": "<E>"}}"#).unwrap();
    let body = r#"{"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "json"}],
        "response_format": {"type": "json_object"}}"#;
    let converted = convert_json(Protocol::ChatCompletions, body, &options).unwrap();
    let encoding = options.encoding_for(converted.model_version);
    let grammar = constraint_grammar(&converted, &encoding, Tokenizer::deepseek_v4())
        .unwrap()
        .unwrap();
    assert!(
        grammar.contains("start: reasoning \"<E>\" json_output"),
        "{grammar}"
    );
    assert!(grammar.contains("~/E\\x3E(?s:.*)/"), "{grammar}");
}
