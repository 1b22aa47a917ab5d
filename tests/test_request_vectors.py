"""The request golden vectors through the Python API: errors, prompts, special ranges, token ids."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from deepseek_recipe import ConversionError, ConversionOptions, RequestParseError, convert
from deepseek_recipe.requests import responses_echo, responses_namespace_tool_map
from tests.vectors import load_jsonl

FILES = {
    "chat_completions": "requests/chat_completions.jsonl",
    "responses": "requests/responses.jsonl",
    "messages": "requests/messages.jsonl",
    "image_requests": "images/image_requests.jsonl",
}


def _options(raw: dict[str, Any]) -> ConversionOptions:
    return ConversionOptions(**raw)


def _body(record: dict[str, Any]) -> str:
    if "request_raw" in record:
        return record["request_raw"]
    return json.dumps(record["request"], ensure_ascii=False)


def _assert_equal_f32(got: dict[str, Any], want: dict[str, Any]) -> None:
    """Equal, with `temperature`/`top_p` compared as f32 (the vectors widen them to f64)."""
    got, want = dict(got), dict(want)
    for key in ("temperature", "top_p"):
        a, b = got.pop(key, None), want.pop(key, None)
        assert (a is None) == (b is None), key
        if a is not None and b is not None:
            assert math.isclose(a, b, rel_tol=1e-6), key
    assert got == want


def _check_error(record: dict[str, Any], err: Exception) -> None:
    expect = record["expect"]["error"]
    if expect["stage"] == "parse":
        assert isinstance(err, RequestParseError), repr(err)
        assert str(err) == expect["body"]
    else:
        assert isinstance(err, ConversionError), repr(err)
        assert err.status_code == expect["status_code"]
        assert err.body == expect["body"]


def _check_success(record: dict[str, Any], body: str) -> None:
    expect = record["expect"]
    options = _options(record["options"])
    converted = convert(body, protocol=record["protocol"], options=options)
    assert converted.request_model == expect["request_model"]
    assert converted.model_version == expect["model_version"]
    assert converted.stream == expect["stream"]
    assert converted.parsing_options == expect["parsing_options"]
    _assert_equal_f32(converted.inference_options, expect["inference_options"])
    rendered = converted.render()
    assert rendered.prompt == expect["prompt"]
    assert [list(r) for r in rendered.special_ranges] == expect["special_ranges"]
    assert rendered.image_count == expect["image_count"]
    if "token_ids" in expect:
        assert converted.encode() == expect["token_ids"]
    elif "encode_error" in expect and expect["model_version"] == "DeepseekV4Pro":
        with pytest.raises(Exception) as info:
            converted.encode()
        assert str(info.value) == expect["encode_error"]["message"]
    for prompt_tokens, context_limit, result in expect["resolve_max_tokens"]:
        if isinstance(result, int):
            assert converted.resolve_max_tokens(prompt_tokens, context_limit) == result
        else:
            with pytest.raises(ConversionError) as info:
                converted.resolve_max_tokens(prompt_tokens, context_limit)
            assert info.value.status_code == result["error"]["status_code"]
            assert info.value.body == result["error"]["body"]
    if record["protocol"] == "responses" and "responses_echo" in expect:
        _assert_equal_f32(responses_echo(body), expect["responses_echo"])
        tool_map = expect["namespace_tool_map"]
        if "error" not in tool_map:
            got = responses_namespace_tool_map(body, options)
            assert {k: list(v) for k, v in got.items()} == tool_map


@pytest.mark.parametrize("name", sorted(FILES))
def test_request_vectors(name: str) -> None:
    records = load_jsonl(FILES[name])
    failures: list[str] = []
    for record in records:
        body = _body(record)
        try:
            if "error" in record["expect"]:
                with pytest.raises((RequestParseError, ConversionError)) as info:
                    convert(body, protocol=record["protocol"], options=_options(record["options"]))
                _check_error(record, info.value)
            else:
                _check_success(record, body)
        except (AssertionError, pytest.fail.Exception) as err:
            failures.append(f"{record['id']}: {str(err)[:300]}")
    print(f"{name}: {len(records) - len(failures)} passed, {len(failures)} failed")
    assert not failures, "\n".join(failures[:20])
