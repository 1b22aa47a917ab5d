"""The batch stream API: `push_text_many` / `push_tokens_many` write exactly the bytes of pushing
the same pieces one by one, for every protocol, over random outputs and random splits."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deepseek_recipe import RecipeError, Tokenizer, convert
from deepseek_recipe.stream import StreamProcessor

TOOL = {"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer"}}}
REQUESTS: dict[str, dict[str, Any]] = {
    "chat_completions": {
        "model": "DeepSeek-V4-Pro",
        "stream": True,
        "thinking": {"type": "enabled"},
        "messages": [{"role": "user", "content": "Hi"}],
        "tools": [{"type": "function", "function": {"name": "search", "parameters": TOOL}}],
    },
    "responses": {
        "model": "DeepSeek-V4-Pro",
        "stream": True,
        "input": "Hi",
        "reasoning": {"effort": "high"},
        "tools": [{"type": "function", "name": "search", "parameters": TOOL}],
    },
    "messages": {
        "model": "DeepSeek-V4-Pro",
        "stream": True,
        "max_tokens": 1000,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "messages": [{"role": "user", "content": "Hi"}],
        "tools": [{"name": "search", "input_schema": TOOL}],
    },
}
PROTOCOLS = list(REQUESTS)
# A timestamp in the future keeps Responses' `completed_at` (the later of now and created_at)
# identical between the two processors compared.
CREATED = 4_000_000_000
FRAGMENTS = [
    "think",
    " about ",
    "数据",
    "😀",
    "\n",
    "\n\n",
    '"quoted"\\',
    "</think>",
    "</thi",
    "<｜DSML｜tool_calls>",
    '<｜DSML｜invoke name="search">',
    '<｜DSML｜parameter name="q" string="true">',
    '<｜DSML｜parameter name="n" string="false">',
    "</｜DSML｜parameter>",
    "</｜DSML｜invoke>",
    "</｜DSML｜tool_calls>",
    "<｜DSML｜",
    "STOP",
    "x",
]
outputs = st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join)


def _processor(protocol: str, stop: bool) -> StreamProcessor:
    converted = convert(REQUESTS[protocol], protocol=protocol)
    options = dict(converted.parsing_options)
    if stop:
        options["stop_sequences"] = ["STOP"]
    return StreamProcessor(
        converted, seed=7, created=CREATED, response_id="id-1", parsing_options=options
    )


def _split(items: Sequence[Any], cuts: list[int]) -> list[Any]:
    points = sorted({cut % (len(items) + 1) for cut in cuts} | {0, len(items)})
    return [items[start:end] for start, end in itertools.pairwise(points)]


def _one_by_one(
    processor: StreamProcessor, push: Callable[[Any], bytes], pieces: list[Any]
) -> bytes:
    out = b""
    for piece in pieces:
        out += push(piece)
        if processor.finished:
            break
    return out + processor.finish_sse()


def _compare(protocol: str, stop: bool, pieces: list[Any], tokens: bool) -> None:
    single = _processor(protocol, stop)
    batch = _processor(protocol, stop)
    if tokens:
        expected = _one_by_one(single, single.push_tokens, pieces)
        got = batch.push_tokens_many(pieces) + batch.finish_sse()
    else:
        expected = _one_by_one(single, single.push_text, pieces)
        got = batch.push_text_many(pieces) + batch.finish_sse()
    assert got == expected
    assert batch.response_json() == single.response_json()
    assert batch.finished == single.finished


@pytest.mark.parametrize("protocol", PROTOCOLS)
@settings(max_examples=60, deadline=None)
@given(output=outputs, cuts=st.lists(st.integers(0, 10_000), max_size=30), stop=st.booleans())
def test_text_batches_equal_one_by_one(
    protocol: str, output: str, cuts: list[int], stop: bool
) -> None:
    _compare(protocol, stop, _split(output, cuts), tokens=False)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@settings(max_examples=40, deadline=None)
@given(output=outputs, cuts=st.lists(st.integers(0, 10_000), max_size=30), stop=st.booleans())
def test_token_batches_equal_one_by_one(
    protocol: str, output: str, cuts: list[int], stop: bool
) -> None:
    ids = Tokenizer.deepseek_v4().encode(output, allow_special=True)
    pieces = [list(piece) for piece in _split(ids, cuts)]
    _compare(protocol, stop, pieces, tokens=True)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_single_token_pieces_and_tuples(protocol: str) -> None:
    text = (
        "Let me think 数据 😀.</think>Calling.\n\n"
        '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="search">\n'
    )
    ids = Tokenizer.deepseek_v4().encode(text, allow_special=True)
    _compare(protocol, False, [[token] for token in ids], tokens=True)
    single = _processor(protocol, False)
    batch = _processor(protocol, False)
    expected = _one_by_one(single, single.push_tokens, [ids[:3], ids[3:]])
    assert batch.push_tokens_many((tuple(ids[:3]), tuple(ids[3:]))) + batch.finish_sse() == expected


def test_batches_after_the_stream_finished_raise() -> None:
    processor = _processor("chat_completions", True)
    first = processor.push_text_many(["a</think>b", "STOP", "never read"])
    assert b"never read" not in first
    assert processor.finished
    with pytest.raises(RecipeError):
        processor.push_text_many(["late"])
    with pytest.raises(RecipeError):
        processor.push_tokens_many([[1]])


def test_token_batches_need_a_tokenizer() -> None:
    converted = convert(REQUESTS["chat_completions"], protocol="chat_completions")
    processor = StreamProcessor(converted, tokenizer=False)
    with pytest.raises(RecipeError):
        processor.push_tokens_many([[1, 2]])


def test_empty_batches_write_nothing_but_the_start() -> None:
    processor = _processor("messages", False)
    assert processor.push_text_many([]) == b""
    assert processor.push_tokens_many([]) == b""
    assert processor.push_text_many([""]).startswith(b"event: message_start\n")
