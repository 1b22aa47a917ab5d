"""Shared fixtures: hand-made exchanges for check tests; the fault-detection summary hook."""

from __future__ import annotations

import json
from typing import Any

import pytest

from deepseek_recipe_conformance.model import Case, CheckSpec, Exchange, Source, Step
from deepseek_recipe_conformance.sse import encode_sse
from tests.conformance.fault_report import FAULT_SUMMARY


def body_exchange(
    protocol: str, body: Any, request: dict[str, Any] | None = None, status: int = 200
) -> Exchange:
    """A finished non-streaming exchange."""
    raw = json.dumps(body, ensure_ascii=False).encode()
    return Exchange(
        protocol, request or {}, False, status, {"content-type": "application/json"}, raw
    )


def stream_exchange(
    protocol: str, events: list[tuple[str | None, Any]], request: dict[str, Any] | None = None
) -> Exchange:
    """A finished streaming exchange from (event name, data) pairs; str data is sent verbatim."""
    framed = [
        (name, data if isinstance(data, str) else json.dumps(data, ensure_ascii=False))
        for name, data in events
    ]
    raw = encode_sse(framed)
    exchange = Exchange(
        protocol,
        {**(request or {}), "stream": True},
        True,
        200,
        {"content-type": "text/event-stream"},
        raw,
    )
    exchange.chunk_times = [(len(raw) - 1, 1.0)]
    return exchange


def make_case(protocol: str = "chat", checks: tuple[CheckSpec, ...] = (), steps: int = 1) -> Case:
    """A minimal case around the given checks."""
    return Case(
        id="t.case",
        family="t",
        protocol=protocol,
        title="test",
        steps=tuple(Step({}, False) for _ in range(steps)),
        checks=checks,
        required=True,
        source=Source("spec", "test"),
        scenario="plain",
    )


def chat_chunk(
    delta: dict[str, Any], finish: str | None = None, usage: Any = "absent"
) -> dict[str, Any]:
    """An official-shaped Chat chunk."""
    chunk: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "system_fingerprint": None,
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }
    if usage != "absent":
        chunk["usage"] = usage
    return chunk


USAGE = {
    "prompt_tokens": 10,
    "completion_tokens": 5,
    "total_tokens": 15,
    "prompt_tokens_details": {"cached_tokens": 4},
    "prompt_cache_hit_tokens": 4,
    "prompt_cache_miss_tokens": 6,
}


def chat_body(
    message: dict[str, Any],
    finish: str = "stop",
    usage: dict[str, Any] | None = None,
    logprobs: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A non-streamed Chat Completions response body holding `message`."""
    return {
        "id": "x",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", **message},
                "logprobs": logprobs,
                "finish_reason": finish,
            }
        ],
        "usage": USAGE if usage is None else usage,
    }


def good_chat_stream(tool: bool = False) -> list[tuple[str | None, Any]]:
    """A faithful thinking-mode Chat stream (optionally with a tool call)."""
    events: list[tuple[str | None, Any]] = [
        (None, chat_chunk({"role": "assistant", "content": None, "reasoning_content": ""})),
        (None, chat_chunk({"content": None, "reasoning_content": "think"})),
    ]
    if tool:
        events += [
            (
                None,
                chat_chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_00_abcdefghijABCDEFGHIJ1234",
                                "type": "function",
                                "function": {"name": "get_weather", "arguments": ""},
                            }
                        ]
                    }
                ),
            ),
            (
                None,
                chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"city": '}}]}),
            ),
            (
                None,
                chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"Paris"}'}}]}),
            ),
        ]
    else:
        events.append((None, chat_chunk({"content": "Hello", "reasoning_content": None})))
    events += [
        (
            None,
            chat_chunk(
                {"content": "", "reasoning_content": None}, "tool_calls" if tool else "stop", USAGE
            ),
        ),
        (None, "[DONE]"),
    ]
    return events


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """Print the fault-detection rate (whether or not output capture is on)."""
    lines = config.stash.get(FAULT_SUMMARY, None)
    if lines:
        terminalreporter.section("conformance fault injection")
        for line in lines:
            terminalreporter.write_line(line)
