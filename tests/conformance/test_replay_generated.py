"""The replay oracle against the recipe itself: for generated model outputs (tool calls with
JSON and non-JSON raw values; text with markup, JSON fences and stop sequences; cut anywhere by
the token limit), the answer the recipe sends must be re-derived exactly from what a client sees
of it, never called output the recipe cannot produce. A host built on the recipe is then never
flagged for what its model wrote."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from deepseek_recipe import convert
from deepseek_recipe.stream import StreamProcessor
from deepseek_recipe_conformance import replay
from deepseek_recipe_conformance.sse import encode_sse, parse_sse
from deepseek_recipe_conformance.views import Output, output_from_body, output_from_stream

DSML = replay.DSML
SCHEMA = {
    "type": "object",
    "properties": {"cmd": {"type": "string"}, "args": {"type": "array"}},
}
JSON_VALUES = ["[]", "[1, 2]", '{"a": 1}', "true", "null", "12", '"s"', "-0.5e3"]
RAW_PIECES = ["<", "</", "}", "{", ", ", '"k": ', "ls -la", "[]", "é", "\n", " ", "<｜", "x"]
TEXT_PIECES = ["a", "<", '"', "\\", "\n", "}", ", ", "é", "😀", "</", " "]
PROSE_PIECES = ["a", " ", "\n", "\n\n", "{", "}", "[", '"', ":", ",", "```json\n", "```"]
PROSE_PIECES += ["</think>", "<｜", "<", "é", "😀", "STOP", "ST", "x y"]
STOPS = ["STOP", "\n\n"]
CASES = 400


def _request(protocol: str, mode: str) -> dict[str, Any]:
    """A request with one tool: `forced` (tool choice required), `auto` or `thinking` (auto,
    thinking enabled)."""
    message = [{"role": "user", "content": "List the files in /tmp."}]
    forced, thinking = mode == "forced", mode == "thinking"
    if protocol == "chat_completions":
        tool = {"type": "function", "function": {"name": "run_cmd", "parameters": SCHEMA}}
        return {
            "model": "DeepSeek-V4-Pro",
            "messages": message,
            "thinking": {"type": "enabled" if thinking else "disabled"},
            "tools": [tool],
            "tool_choice": "required" if forced else "auto",
        }
    if protocol == "responses":
        tool = {"type": "function", "name": "run_cmd", "parameters": SCHEMA}
        return {
            "model": "DeepSeek-V4-Pro",
            "input": message,
            "reasoning": {"effort": "high" if thinking else "none"},
            "tools": [tool],
            "tool_choice": "required" if forced else "auto",
        }
    return {
        "model": "DeepSeek-V4-Pro",
        "max_tokens": 64,
        "messages": message,
        "thinking": {"type": "enabled", "budget_tokens": 32} if thinking else {"type": "disabled"},
        "tools": [{"name": "run_cmd", "input_schema": SCHEMA}],
        "tool_choice": {"type": "any" if forced else "auto"},
    }


def _value(rng: random.Random, string: bool) -> str:
    pieces = TEXT_PIECES if string else RAW_PIECES
    if not string and rng.random() < 0.5:
        value = rng.choice(JSON_VALUES)
        if rng.random() < 0.3:  # JSON followed by text that is not a separator
            value += "".join(rng.choices(pieces, k=rng.randint(1, 3)))
    else:
        value = "".join(rng.choices(pieces, k=rng.randint(0, 5)))
    return value


def _model_text(rng: random.Random, mode: str) -> str:
    forced = mode == "forced"
    text = ""
    if mode == "thinking":
        text += "".join(rng.choices(TEXT_PIECES, k=rng.randint(0, 6))) + "</think>"
    if not forced:
        prose = "".join(rng.choices(TEXT_PIECES, k=4))
        text += rng.choice(["", "Sure.", "Let me check.\n\n", prose])
    text += "" if forced else f"<{DSML}tool_calls>\n"
    for _ in range(rng.randint(1, 3)):
        text += f'<{DSML}invoke name="run_cmd">\n'
        for _ in range(rng.randint(0, 3)):
            name, string = rng.choice(["cmd", "args", "x_1"]), rng.random() < 0.4
            flag = "true" if string else "false"
            value = _value(rng, string)
            text += f'<{DSML}parameter name="{name}" string="{flag}">{value}</{DSML}parameter>\n'
        text += f"</{DSML}invoke>\n"
    return text + f"</{DSML}tool_calls>"


def _pieces(rng: random.Random, text: str) -> list[str]:
    pieces, at = [], 0
    while at < len(text):
        step = rng.randint(1, 8)
        pieces.append(text[at : at + step])
        at += step
    return pieces


def _host_answer(converted: Any, pieces: list[str], finish: str) -> replay.Expected:
    """What a host built on the recipe sends for the model's pieces (one token each)."""
    processor = StreamProcessor(converted, response_id="resp_0", created=1_700_000_000)
    ready = {
        "kind": "ready",
        "prompt_tokens": 9,
        "prompt_cache_hit_tokens": 0,
        "system_fingerprint": "fp_0",
    }
    return replay.recipe_answer(processor, ready, pieces, finish, token_count=1)


def _difference(protocol: str, converted: Any, pieces: list[str], finish: str, stream: bool):
    short = {"chat_completions": "chat", "responses": "responses", "messages": "messages"}[protocol]
    answer = _host_answer(converted, pieces, finish)
    events, body = answer.events, answer.body
    output: Output
    if stream:
        parsed = parse_sse(encode_sse([(n, json.dumps(d, ensure_ascii=False)) for n, d in events]))
        output = output_from_stream(short, parsed)
        got: Any = replay.coalesce(short, [(e.event, e.json()) for e in parsed.data_events()])
    else:
        output = output_from_body(short, body)
        got = body
    usage = output.usage
    prompt = (usage.prompt or 0, usage.cache_hit or 0) if usage else (0, 0)
    try:
        answers = replay.expected_answers(converted, output, stream, prompt)
    except replay.NotRecipeOutput as exc:
        return f"not recipe output: {exc}"
    except replay.NotReplayable:
        return None
    found = [
        replay.first_difference(
            replay.normalize(replay.coalesce(short, a.events) if stream else a.body),
            replay.normalize(got),
        )
        for a in answers
    ]
    return None if None in found else found[0]


@pytest.mark.parametrize("protocol", ["chat_completions", "responses", "messages"])
@pytest.mark.parametrize("mode", ["auto", "forced", "thinking"])
def test_generated_tool_call_outputs_are_re_derived(protocol: str, mode: str) -> None:
    rng = random.Random(f"{protocol}-{mode}")
    converted = convert(_request(protocol, mode), protocol=protocol)
    problems = []
    for case in range(CASES):
        text = _model_text(rng, mode)
        cut = rng.random() < 0.6
        if cut:
            text = text[: rng.randint(0, len(text))]
        pieces, finish = _pieces(rng, text), "length" if cut else "stop"
        for stream in (False, True):
            found = _difference(protocol, converted, pieces, finish, stream)
            if found is not None:
                problems.append(f"case {case} stream={stream} {finish} {text!r}: {found}")
    assert problems[:5] == []


def _text_request(protocol: str, mode: str) -> dict[str, Any]:
    """A request without tools: thinking on or off, JSON output, stop sequences (`mode` names
    them, joined by `-`)."""
    thinking = "thinking" in mode
    body: dict[str, Any] = {"model": "DeepSeek-V4-Pro"}
    message = [{"role": "user", "content": "Reply in json."}]
    if protocol == "chat_completions":
        body.update(messages=message, thinking={"type": "enabled" if thinking else "disabled"})
        if "json" in mode:
            body["response_format"] = {"type": "json_object"}
        if "stop" in mode:
            body["stop"] = STOPS
    elif protocol == "responses":
        body.update(input=message, reasoning={"effort": "high" if thinking else "none"})
        if "json" in mode:
            body["text"] = {"format": {"type": "json_object"}}
    else:
        budget = {"type": "enabled", "budget_tokens": 32}
        body.update(messages=message, max_tokens=64)
        body["thinking"] = budget if thinking else {"type": "disabled"}
        if "stop" in mode:
            body["stop_sequences"] = STOPS
    return body


@pytest.mark.parametrize("protocol", ["chat_completions", "responses", "messages"])
@pytest.mark.parametrize("mode", ["plain", "thinking", "json", "thinking-json", "stop"])
def test_generated_text_outputs_are_re_derived(protocol: str, mode: str) -> None:
    rng = random.Random(f"text-{protocol}-{mode}")
    converted = convert(_text_request(protocol, mode), protocol=protocol)
    problems = []
    for case in range(CASES):
        text = "".join(rng.choices(PROSE_PIECES, k=rng.randint(0, 14)))
        finish = "length" if rng.random() < 0.4 else "stop"
        pieces = _pieces(rng, text)
        for stream in (False, True):
            found = _difference(protocol, converted, pieces, finish, stream)
            if found is not None:
                problems.append(f"case {case} stream={stream} {finish} {pieces!r}: {found}")
    assert problems[:5] == []


@pytest.mark.parametrize("protocol", ["chat_completions", "messages"])
@pytest.mark.parametrize(
    "pieces",
    [
        ["S", "</think>", "TOP and on"],  # markup inside a stop: it does not fire
        ["a\n", "</think>", "\nb"],
        ["</think>", "\n\n", "rest"],  # leading newlines kept, then the stop fires
        ["x", "\n</think>\n", "ST</think>OP", "STOP", "after"],
    ],
)
def test_markup_that_keeps_a_stop_from_firing_is_re_derived(
    protocol: str, pieces: list[str]
) -> None:
    converted = convert(_text_request(protocol, "stop"), protocol=protocol)
    for stream in (False, True):
        assert _difference(protocol, converted, pieces, "stop", stream) is None
