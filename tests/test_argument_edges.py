"""Hostile arguments get the documented exceptions (issue #15 item 8): integers outside the
native types, usage counters at their limit, request bodies nested deeper than Python recurses."""

from __future__ import annotations

import json
from typing import Any

import pytest

from deepseek_recipe import RequestParseError, Tokenizer, TokenizerError, convert
from deepseek_recipe.images import (
    ImageResolver,
    PreprocessOptions,
    ResolverLimits,
    image_tokens,
    preprocess,
)
from deepseek_recipe.stream import StreamProcessor

U64_MAX = 2**64 - 1


def _processor(**kwargs: Any) -> StreamProcessor:
    request = {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "hi"}]}
    return StreamProcessor(convert(request), **kwargs)


@pytest.mark.parametrize("token_id", [-1, 2**32, 2**70])
def test_ids_outside_u32_are_unknown_token_ids(token_id: int) -> None:
    tokenizer = Tokenizer.deepseek_v4()
    message = f"unknown token id {token_id}"
    with pytest.raises(TokenizerError, match=message):
        tokenizer.decode([1, token_id])
    with pytest.raises(TokenizerError, match=message):
        tokenizer.decode_batch([[1], [token_id]])
    with pytest.raises(TokenizerError, match=message):
        tokenizer.incremental_decoder().push([token_id])
    assert tokenizer.id_to_token(token_id) is None


def test_thread_counts_out_of_range_are_value_errors() -> None:
    tokenizer = Tokenizer.deepseek_v4()
    for threads in (-1, 2**64):
        with pytest.raises(ValueError, match="integer out of range"):
            tokenizer.with_threads(threads)
    assert tokenizer.with_threads(0).threads == 1


def test_inference_numbers_out_of_range_are_request_parse_errors() -> None:
    processor = _processor()
    with pytest.raises(RequestParseError, match="integer `-1`, expected u64"):
        processor.push_text("a", -1)
    with pytest.raises(RequestParseError, match="integer `18446744073709551616`, expected u64"):
        processor.push_text_many(["a"], 2**64)
    with pytest.raises(RequestParseError, match="integer `4294967296`, expected u32"):
        processor.push_tokens([2**32])
    with pytest.raises(RequestParseError, match="integer `-1`, expected u32"):
        processor.push_tokens_many([[1], [-1]])
    with pytest.raises(RequestParseError, match="integer `-5`, expected u32"):
        processor.push_tokens([1], [(-0.5, [(-5, -0.5)])])
    assert processor.push_text("still open", 1), "a refused chunk leaves the stream untouched"


@pytest.mark.parametrize("argument", ["seed", "created", "prompt_usage"])
@pytest.mark.parametrize("number", [-1, 2**64])
def test_processor_settings_out_of_range_are_request_parse_errors(
    argument: str, number: int
) -> None:
    # The settings cross the binding as JSON: the core's reader names the field's type.
    value: object = (number, 0) if argument == "prompt_usage" else number
    with pytest.raises(
        RequestParseError, match=r"invalid stream options: .*, expected u64"
    ) as info:
        _processor(**{argument: value})
    if number < 0:
        assert "invalid value: integer `-1`" in str(info.value)


def test_usage_counters_saturate() -> None:
    processor = _processor(prompt_usage=(U64_MAX, 0))
    processor.push_text("a", U64_MAX)
    processor.push_text("b", U64_MAX)
    processor.push_finish("stop")
    usage: Any = processor.response().usage
    assert (usage.completion_tokens, usage.total_tokens) == (U64_MAX, U64_MAX)


def test_image_sizes_and_limits_out_of_range_are_value_errors() -> None:
    with pytest.raises(ValueError, match="integer out of range: -1"):
        image_tokens(-1, 5)
    # Limits cross the binding as JSON: the core's reader names the field's type.
    with pytest.raises(ValueError, match="invalid resolver limits: invalid value: integer `-1`"):
        ImageResolver(offline=True, limits=ResolverLimits(max_images=-1))
    with pytest.raises(ValueError, match="invalid preprocess options: invalid value: integer `-1`"):
        preprocess(b"", PreprocessOptions(max_dimension_px=-1))


def _nested(depth: int) -> dict[str, Any]:
    body: dict[str, Any] = {}
    inner = body
    for _ in range(depth):
        inner["a"] = {}
        inner = inner["a"]
    return body


def test_bodies_nested_deeper_than_python_recurses_are_request_parse_errors() -> None:
    base = {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "hi"}]}
    with pytest.raises(RequestParseError) as shallow:
        convert(json.dumps({**base, "x": _nested(300)}))
    with pytest.raises(RequestParseError) as deep:
        convert({**base, "x": _nested(100_000)})
    assert str(deep.value) == str(shallow.value)
    assert str(deep.value).startswith("invalid JSON request: recursion limit exceeded at line 1")


def test_bodies_with_a_lone_surrogate_get_the_error_of_their_json_text() -> None:
    # A lone surrogate has no UTF-8: the object's JSON is written with escapes, and the parser
    # refuses it as it refuses that JSON text (no UnicodeEncodeError from the binding).
    body = {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "é\ud800"}]}
    with pytest.raises(RequestParseError) as from_object:
        convert(body)
    with pytest.raises(RequestParseError) as from_text:
        convert(json.dumps(body))
    assert str(from_object.value) == str(from_text.value)
    assert str(from_object.value).startswith("invalid JSON request: ")
