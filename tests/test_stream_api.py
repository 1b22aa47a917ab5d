"""The Python stream API: typed chunks, SSE bytes, fast paths, accumulation, async adapter."""

from __future__ import annotations

import asyncio
import json

import pytest

from deepseek_recipe import (
    ConversionOptions,
    RecipeError,
    RequestParseError,
    Tokenizer,
    _native,  # pyright: ignore[reportPrivateUsage]
    convert,
)
from deepseek_recipe.models import ChatCompletion, ChatCompletionChunk, Message
from deepseek_recipe.stream import StreamProcessor, accumulate, stream_sse

CHAT = {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "Hi"}], "stream": True}
MESSAGES = {
    "model": "DeepSeek-V4-Pro",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "Hi"}],
}


def test_text_pieces_give_typed_chunks_and_a_response():
    processor = StreamProcessor(convert(CHAT), seed=1)
    chunks = processor.push({"kind": "ready", "prompt_tokens": 5, "prompt_cache_hit_tokens": 2})
    chunks += processor.push({"kind": "text", "content": "Think</think>Hel", "token_count": 3})
    chunks += processor.push({"kind": "text", "content": "lo", "token_count": 1})
    chunks += processor.push({"kind": "finish", "finish_reason": "stop"})
    assert all(isinstance(chunk, ChatCompletionChunk) for chunk in chunks)
    assert processor.finished
    response = processor.response()
    assert isinstance(response, ChatCompletion)
    assert response.choices[0].message.content == "Hello"
    assert response.choices[0].message.reasoning_content == "Think"
    usage = json.loads(processor.response_json())["usage"]
    assert usage["prompt_cache_hit_tokens"] == 2
    assert usage["prompt_cache_miss_tokens"] == 3


def test_token_fast_path_matches_json_path():
    tokenizer = Tokenizer.deepseek_v4()
    ids = tokenizer.encode("Reasoning here</think>The answer is 42.", allow_special=True)
    fast = StreamProcessor(convert(CHAT), seed=3, created=1, response_id="chatcmpl-x")
    slow = StreamProcessor(convert(CHAT), seed=3, created=1, response_id="chatcmpl-x")
    fast.push({"kind": "ready", "prompt_tokens": 1, "prompt_cache_hit_tokens": 0})
    fast_bytes = fast.push_tokens(ids[:4]) + fast.push_tokens(ids[4:]) + fast.push_finish("stop")
    slow.push({"kind": "ready", "prompt_tokens": 1, "prompt_cache_hit_tokens": 0})
    slow_bytes = slow.push_sse({"kind": "tokens", "token_ids": ids[:4]})
    slow_bytes += slow.push_sse({"kind": "tokens", "token_ids": ids[4:]})
    slow_bytes += slow.push_sse({"kind": "finish", "finish_reason": "stop"})
    assert fast_bytes == slow_bytes
    assert fast.finish_sse() == b"data: [DONE]\n\n"


def test_pushing_after_finish_is_an_error():
    processor = StreamProcessor(convert(CHAT))
    processor.push({"kind": "finish", "finish_reason": "length"})
    with pytest.raises(RecipeError):
        processor.push({"kind": "text", "content": "late", "token_count": 1})


def test_accumulate_messages():
    response = accumulate(
        convert(MESSAGES, protocol="messages"),
        [
            {"kind": "ready", "prompt_tokens": 4, "prompt_cache_hit_tokens": 0},
            {"kind": "text", "content": "Hmm</think>Hello!", "token_count": 4},
            {"kind": "finish", "finish_reason": "stop"},
        ],
    )
    assert isinstance(response, Message)
    assert response.stop_reason == "end_turn"


def test_async_adapter_frames_messages_events():
    processor = StreamProcessor(convert(MESSAGES, protocol="messages"))

    async def chunks():
        yield {"kind": "ready", "prompt_tokens": 4, "prompt_cache_hit_tokens": 0}
        yield {"kind": "text", "content": "</think>Hi", "token_count": 2}
        yield {"kind": "finish", "finish_reason": "stop"}

    async def collect() -> bytes:
        return b"".join([part async for part in stream_sse(processor, chunks())])

    body = asyncio.run(collect()).decode()
    events = [
        line.removeprefix("event: ") for line in body.splitlines() if line.startswith("event: ")
    ]
    assert events[0] == "message_start"
    assert events[-1] == "message_stop"


def test_the_parser_matches_overridden_special_token_spellings():
    options = ConversionOptions(special_tokens={"thinking_end": "</T>", "dsml": "|D|"})
    converted = convert(CHAT, options=options)
    assert converted.parsing_options.get("special_tokens", {}).get("thinking_end") == "</T>"
    assert "special_tokens" not in convert(CHAT).parsing_options
    processor = StreamProcessor(converted, seed=1)
    processor.push({"kind": "text", "content": "Think</think>x</T>Hello", "token_count": 3})
    processor.push({"kind": "finish", "finish_reason": "stop"})
    response = processor.response()
    assert isinstance(response, ChatCompletion)
    message = response.choices[0].message
    assert message.reasoning_content == "Think</think>x"
    assert message.content == "Hello"


def test_native_stream_options_are_read_by_name() -> None:
    converted = convert(CHAT)
    native = _native.StreamProcessor(
        converted.native, "chatcmpl-x", "m", None, '{"created": 5, "bundled_tokenizer": false}'
    )
    native.push_text("hi", 1)
    native.finish_sse()
    assert '"created":5' in native.response_json()
    textual = _native.StreamProcessor(
        converted.native, "chatcmpl-x", "m", None, '{"bundled_tokenizer": false}'
    )
    with pytest.raises(RecipeError, match="tokenizer"):
        textual.push_tokens([1])
    for options, message in [
        ('{"sead": 1}', "unknown field `sead`"),
        ('{"thinking_mode": 1}', "invalid type: integer `1`, expected a boolean"),
        ('{"parsing_options": {}}', "missing field `parse_tool_calls`"),
        ("[1, 2]", "invalid type: sequence, expected a map"),
    ]:
        with pytest.raises(RequestParseError, match=f"invalid stream options: .*{message}"):
            _native.StreamProcessor(converted.native, "chatcmpl-x", "m", None, options)


def test_processor_keywords_reach_the_stream() -> None:
    converted = convert({**CHAT, "thinking": {"type": "disabled"}})
    processor = StreamProcessor(
        converted,
        response_id="chatcmpl-k",
        model="named",
        created=9,
        parsing_options={**converted.parsing_options, "stop_sequences": ["X"]},
        tokenizer=False,
    )
    processor.push_text("aXb")
    assert processor.finished
    response = json.loads(processor.response_json())
    assert (response["id"], response["model"], response["created"]) == ("chatcmpl-k", "named", 9)
    assert response["choices"][0]["message"]["content"] == "a"


def test_prompt_usage_seeds_the_response_until_the_ready_chunk() -> None:
    processor = StreamProcessor(convert(MESSAGES, protocol="messages"), prompt_usage=(12, 4))
    usage = json.loads(processor.response_json())["usage"]
    assert (usage["input_tokens"], usage["cache_read_input_tokens"]) == (8, 4)


def test_token_logprobs_are_read_from_any_pairs() -> None:
    tokenizer = Tokenizer.deepseek_v4()
    ids = tokenizer.encode("</think>Hi there", allow_special=True)
    as_tuples = [(-0.25 * k, [(token, -0.25 * k), (7, -3.0)]) for k, token in enumerate(ids)]
    as_lists = [[lp, [list(entry) for entry in top]] for lp, top in as_tuples]
    outputs = []
    for logprobs in (as_tuples, as_lists, tuple(as_tuples)):
        processor = StreamProcessor(convert(CHAT), seed=3, created=1, response_id="chatcmpl-x")
        processor.push_sse({"kind": "ready", "prompt_tokens": 1, "prompt_cache_hit_tokens": 0})
        outputs.append(processor.push_tokens(ids, logprobs))
    assert outputs[0] == outputs[1] == outputs[2]
    assert b'"logprob":-0.25' in outputs[0]


@pytest.mark.parametrize(
    "logprobs",
    [[(-0.5,)], [(-0.5, [(1, -0.5, 0.0)])], [(-0.5, [1])], [("x", [])], 5],
)
def test_malformed_token_logprobs_are_type_errors_that_leave_the_stream_open(
    logprobs: object,
) -> None:
    processor = StreamProcessor(convert(CHAT), seed=3)
    processor.push_sse({"kind": "ready", "prompt_tokens": 1, "prompt_cache_hit_tokens": 0})
    with pytest.raises(TypeError):
        processor.push_tokens([1], logprobs)  # pyright: ignore[reportArgumentType]
    assert not processor.finished
    assert processor.push_text("still open")
