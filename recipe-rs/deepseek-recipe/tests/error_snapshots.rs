//! Snapshots (insta) of the error each class of invalid request gets, per protocol: the HTTP
//! status and JSON body of a conversion error, the message of a parse error (bad JSON, wrong
//! types, unknown variants, nesting deeper than the parser allows; the server answers those
//! with 400 or 422, `deepseek_recipe_engine.preparation`). Any change of wording shows up as a
//! snapshot diff to review (docs/testing.md, "Snapshots").

use deepseek_recipe::{
    convert_json, ConversionOptions, Error, Protocol, ReasoningContentBehavior, WebSearchBehavior,
};
use serde_json::{json, Value};

/// What converting `body` gives: `status body` of an API error, `parse error: message`.
fn outcome(protocol: Protocol, body: &str, options: &ConversionOptions) -> String {
    match convert_json(protocol, body, options) {
        Ok(_) => panic!("an invalid request was accepted: {body}"),
        Err(Error::Api(error)) => format!("{} {}", error.status_code, error.body_json()),
        Err(Error::Parse(message)) => format!("parse error: {message}"),
        Err(other) => panic!("unexpected error kind for {body}: {other:?}"),
    }
}

/// Every case of a protocol: its name, raw body and the outcome, as one snapshot.
fn report(protocol: Protocol, cases: &[(&str, String)], options: &ConversionOptions) -> String {
    cases
        .iter()
        .map(|(name, body)| {
            format!(
                "## {name}\n{body}\n=> {}\n",
                outcome(protocol, body, options)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `value` nested in `depth` single-element arrays.
fn nested(depth: usize, value: &str) -> String {
    format!("{}{value}{}", "[".repeat(depth), "]".repeat(depth))
}

/// The parameters schema of the `get_weather` tool.
fn get_weather_parameters() -> Value {
    json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
}

/// A valid Chat Completions body with the fields of `extra` set.
fn chat(extra: Value) -> String {
    let mut body =
        json!({"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "Hi"}]});
    merge(&mut body, extra);
    body.to_string()
}

/// A valid Responses body with the fields of `extra` set.
fn responses(extra: Value) -> String {
    let mut body = json!({"model": "DeepSeek-V4-Pro", "input": "Hi"});
    merge(&mut body, extra);
    body.to_string()
}

/// A valid Messages body with the fields of `extra` set.
fn messages(extra: Value) -> String {
    let mut body = json!({"model": "DeepSeek-V4-Pro", "max_tokens": 1024,
        "messages": [{"role": "user", "content": "Hi"}]});
    merge(&mut body, extra);
    body.to_string()
}

/// Sets every field of `extra` on `body`.
fn merge(body: &mut Value, extra: Value) {
    if let (Some(body), Value::Object(extra)) = (body.as_object_mut(), extra) {
        body.extend(extra);
    }
}

#[test]
fn chat_completions_errors() {
    let tool = json!({"type": "function", "function": {"name": "get_weather", "parameters": get_weather_parameters()}});
    let call = json!({"id": "call_1", "type": "function",
        "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}});
    let cases = [
        ("invalid_json", "not json".to_owned()),
        (
            "truncated_json",
            "{\"model\": \"DeepSeek-V4-Pro\", ".to_owned(),
        ),
        ("not_an_object", "[1, 2]".to_owned()),
        (
            "missing_messages",
            json!({"model": "DeepSeek-V4-Pro"}).to_string(),
        ),
        ("wrong_type", chat(json!({"temperature": "1"}))),
        ("negative_integer", chat(json!({"max_tokens": -1}))),
        (
            "unknown_variant",
            chat(json!({"reasoning_effort": "bogus"})),
        ),
        (
            "unknown_role",
            chat(json!({"messages": [{"role": "robot", "content": "Hi"}]})),
        ),
        (
            "too_deep_nesting",
            chat(json!({"x": "DEEP"})).replace("\"DEEP\"", &nested(200, "1")),
        ),
        ("unknown_model", chat(json!({"model": "deepseek-chat"}))),
        ("empty_messages", chat(json!({"messages": []}))),
        (
            "temperature_out_of_range",
            chat(json!({"temperature": 2.5})),
        ),
        ("top_p_zero", chat(json!({"top_p": 0}))),
        ("max_tokens_too_large", chat(json!({"max_tokens": 400_000}))),
        (
            "top_logprobs_too_large",
            chat(json!({"logprobs": true, "top_logprobs": 21})),
        ),
        (
            "presence_penalty_out_of_range",
            chat(json!({"presence_penalty": -2.5})),
        ),
        ("empty_stop", chat(json!({"stop": ""}))),
        (
            "stream_options_without_stream",
            chat(json!({"stream": false, "stream_options": {"include_usage": true}})),
        ),
        (
            "json_mode_without_the_word",
            chat(json!({"response_format": {"type": "json_object"}})),
        ),
        (
            "invalid_json_schema",
            chat(json!({"messages": [{"role": "user", "content": "json"}],
            "response_format": {"type": "json_schema", "json_schema": {"name": "s",
                "schema": {"type": "object", "properties": {"a": {"type": "zzz"}}}}}})),
        ),
        (
            "tool_schema_not_an_object",
            chat(json!({"tools": [{"type": "function",
            "function": {"name": "f", "parameters": {"type": "string"}}}]})),
        ),
        (
            "tool_choice_unknown_function",
            chat(json!({"thinking": {"type": "disabled"}, "tools": [tool],
            "tool_choice": {"type": "function", "function": {"name": "zz"}}})),
        ),
        (
            "tool_choice_required_in_thinking_mode",
            chat(json!({"thinking": {"type": "enabled"},
            "tools": [tool], "tool_choice": "required"})),
        ),
        (
            "tool_call_without_result",
            chat(json!({"thinking": {"type": "disabled"}, "tools": [tool],
            "messages": [{"role": "user", "content": "Weather?"},
                {"role": "assistant", "content": null, "tool_calls": [call]}]})),
        ),
        (
            "tool_result_without_call",
            chat(json!({"thinking": {"type": "disabled"}, "tools": [tool],
            "messages": [{"role": "user", "content": "Weather?"},
                {"role": "tool", "tool_call_id": "call_9", "content": "Sunny"}]})),
        ),
        (
            "prefix_without_content",
            chat(json!({"messages": [{"role": "user", "content": "Code"},
            {"role": "assistant", "content": null, "prefix": true}]})),
        ),
        (
            "image_bad_base64",
            chat(
                json!({"model": "DeepSeek-V4.1-Flash", "messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,!!!"}}]}]}),
            ),
        ),
        (
            "image_ftp_url",
            chat(
                json!({"model": "DeepSeek-V4.1-Flash", "messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "ftp://example.com/a.png"}}]}]}),
            ),
        ),
    ];
    insta::assert_snapshot!(report(
        Protocol::ChatCompletions,
        &cases,
        &ConversionOptions::default()
    ));
}

#[test]
fn responses_errors() {
    let tool =
        json!({"type": "function", "name": "get_weather", "parameters": get_weather_parameters()});
    let call = json!({"type": "function_call", "call_id": "call_1", "name": "get_weather",
        "arguments": "{\"city\":\"Paris\"}"});
    let output = json!({"type": "function_call_output", "call_id": "call_1", "output": "Sunny"});
    let cases = [
        ("invalid_json", "{".to_owned()),
        ("input_of_a_wrong_type", responses(json!({"input": 5}))),
        (
            "negative_integer",
            responses(json!({"max_output_tokens": -1})),
        ),
        (
            "unknown_variant",
            responses(json!({"reasoning": {"effort": "bogus"}})),
        ),
        (
            "too_deep_nesting",
            responses(json!({"input": "DEEP"})).replace("\"DEEP\"", &nested(200, "\"x\"")),
        ),
        (
            "neither_input_nor_instructions",
            json!({"model": "DeepSeek-V4-Pro"}).to_string(),
        ),
        ("unknown_model", responses(json!({"model": "gpt-4o"}))),
        ("empty_input", responses(json!({"input": []}))),
        (
            "temperature_out_of_range",
            responses(json!({"temperature": 2.5})),
        ),
        (
            "top_logprobs_too_large",
            responses(json!({"top_logprobs": 21})),
        ),
        (
            "json_mode_without_the_word",
            responses(json!({"text": {"format": {"type": "json_object"}},
            "reasoning": {"effort": "none"}})),
        ),
        (
            "json_schema_without_name",
            responses(json!({"text": {"format": {"type": "json_schema",
            "schema": {"type": "object"}}}})),
        ),
        (
            "strict_schema_array_without_items",
            responses(json!({"input": "json", "reasoning": {"effort": "none"},
            "text": {"format": {"type": "json_schema", "name": "s", "strict": true,
                "schema": {"type": "object", "properties": {"a": {"type": "array"}}}}}})),
        ),
        (
            "tool_name_too_long",
            responses(
                json!({"tools": [{"type": "function", "name": "a".repeat(129),
            "parameters": get_weather_parameters()}]}),
            ),
        ),
        (
            "call_without_output",
            responses(json!({"reasoning": {"effort": "none"}, "tools": [tool],
            "input": [{"role": "user", "content": "Weather?"}, call]})),
        ),
        (
            "output_without_call",
            responses(json!({"reasoning": {"effort": "none"}, "tools": [tool],
            "input": [{"role": "user", "content": "Weather?"}, output]})),
        ),
        (
            "duplicate_output",
            responses(json!({"reasoning": {"effort": "none"}, "tools": [tool],
            "input": [{"role": "user", "content": "Weather?"}, call, output, output]})),
        ),
        (
            "image_in_an_assistant_message",
            responses(json!({"model": "DeepSeek-V4.1-Flash",
            "input": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": [
                {"type": "input_image", "image_url": "data:image/png;base64,AAAA"}]}]})),
        ),
    ];
    insta::assert_snapshot!(report(
        Protocol::Responses,
        &cases,
        &ConversionOptions::default()
    ));
}

#[test]
fn messages_errors() {
    let tool = json!({"name": "get_weather", "input_schema": get_weather_parameters()});
    let tool_use = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]});
    let cases = [
        ("invalid_json", "{\"model\": ".to_owned()),
        (
            "missing_messages",
            json!({"model": "DeepSeek-V4-Pro", "max_tokens": 1024}).to_string(),
        ),
        ("wrong_type", messages(json!({"temperature": "1"}))),
        (
            "unknown_block_type",
            messages(json!({"system": [{"type": "image",
            "source": {"type": "url", "url": "https://x"}}]})),
        ),
        (
            "unknown_media_type",
            messages(
                json!({"messages": [{"role": "user", "content": [{"type": "image",
            "source": {"type": "base64", "media_type": "image/bmp", "data": "AAAA"}}]}]}),
            ),
        ),
        (
            "too_deep_nesting",
            messages(json!({"x": "DEEP"})).replace("\"DEEP\"", &nested(200, "{}")),
        ),
        (
            "unknown_model",
            messages(json!({"model": "claude-sonnet-4-5"})),
        ),
        ("empty_messages", messages(json!({"messages": []}))),
        ("max_tokens_zero", messages(json!({"max_tokens": 0}))),
        ("top_p_out_of_range", messages(json!({"top_p": 1.1}))),
        (
            "tool_name_too_long",
            messages(json!({"tools": [{"name": "a".repeat(129),
            "input_schema": get_weather_parameters()}]})),
        ),
        (
            "tool_choice_unknown_tool",
            messages(json!({"tools": [tool],
            "tool_choice": {"type": "tool", "name": "zz"}})),
        ),
        (
            "tool_use_without_result",
            messages(json!({"thinking": {"type": "disabled"}, "tools": [tool],
            "messages": [{"role": "user", "content": "Weather?"}, tool_use,
                {"role": "user", "content": "And?"}]})),
        ),
        (
            "duplicate_tool_use_ids",
            messages(json!({"thinking": {"type": "disabled"}, "tools": [tool],
            "messages": [{"role": "user", "content": "Weather?"}, {"role": "assistant", "content": [
                {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {}},
                {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {}}]}]})),
        ),
        (
            "tool_result_unknown_id",
            messages(json!({"thinking": {"type": "disabled"}, "tools": [tool],
            "messages": [{"role": "user", "content": "Weather?"}, tool_use, {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "zz", "content": "Sunny"}]}]})),
        ),
        (
            "image_file_id",
            messages(
                json!({"model": "DeepSeek-V4.1-Flash", "messages": [{"role": "user",
            "content": [{"type": "image", "source": {"type": "file", "file_id": "f"}}]}]}),
            ),
        ),
    ];
    insta::assert_snapshot!(report(
        Protocol::Messages,
        &cases,
        &ConversionOptions::default()
    ));
}

#[test]
fn errors_under_strict_options() {
    let options = ConversionOptions {
        reasoning_content_behavior: ReasoningContentBehavior::Reject,
        responses_web_search: WebSearchBehavior::Reject,
        messages_web_search: WebSearchBehavior::Reject,
        ..ConversionOptions::default()
    };
    let chat_tool = json!({"type": "function", "function": {"name": "get_weather", "parameters": get_weather_parameters()}});
    let chat_cases = [(
        "reasoning_content_not_passed_back",
        chat(
            json!({"thinking": {"type": "enabled"}, "tools": [chat_tool], "messages": [
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "Sunny"}]}),
        ),
    )];
    let responses_tool =
        json!({"type": "function", "name": "get_weather", "parameters": get_weather_parameters()});
    let responses_cases = [
        (
            "reasoning_not_passed_back",
            responses(
                json!({"reasoning": {"effort": "high"}, "tools": [responses_tool], "input": [
                {"role": "user", "content": "Weather?"},
                {"type": "function_call", "call_id": "call_1", "name": "get_weather",
                    "arguments": "{\"city\":\"Paris\"}"},
                {"type": "function_call_output", "call_id": "call_1", "output": "Sunny"}]}),
            ),
        ),
        (
            "web_search",
            responses(json!({"tools": [{"type": "web_search"}]})),
        ),
    ];
    let messages_tool = json!({"name": "get_weather", "input_schema": get_weather_parameters()});
    let messages_cases = [
        (
            "thinking_not_passed_back",
            messages(
                json!({"thinking": {"type": "enabled"}, "tools": [messages_tool], "messages": [
                {"role": "user", "content": "Weather?"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1",
                    "name": "get_weather", "input": {"city": "Paris"}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "Sunny"}]}]}),
            ),
        ),
        (
            "web_search",
            messages(json!({"tools": [{"type": "web_search_20250305", "name": "web_search"}]})),
        ),
    ];
    let all = [
        report(Protocol::ChatCompletions, &chat_cases, &options),
        report(Protocol::Responses, &responses_cases, &options),
        report(Protocol::Messages, &messages_cases, &options),
    ];
    insta::assert_snapshot!(all.join("\n"));
}
