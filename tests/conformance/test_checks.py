"""Checks on hand-made exchanges: each check passes a faithful answer and flags a broken one."""

import copy
import json

import pytest

from deepseek_recipe import Tokenizer
from deepseek_recipe.stream import StreamProcessor
from deepseek_recipe_conformance.checks import (
    REGISTRY,
    CheckContext,
    NotApplicable,
    NotExercised,
    Target,
)
from deepseek_recipe_conformance.checks.base import StepView
from deepseek_recipe_conformance.checks.schema import validate
from deepseek_recipe_conformance.oracle import NoOracle, RecipeOracle
from tests.conformance.conftest import (
    USAGE,
    body_exchange,
    chat_body,
    chat_chunk,
    good_chat_stream,
    make_case,
    stream_exchange,
)


class CountingOracle:
    def count_prompt_tokens(self, protocol, body):
        return 10

    def expected_error(self, protocol, body):
        return None


def run(check_name, exchange, oracle=None, **params):
    return REGISTRY[check_name].fn(StepView(exchange, oracle or NoOracle(), 0), **params)


WEATHER_CC = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "additionalProperties": False,
        },
    },
}


def test_every_registered_check_has_a_summary_and_source():
    assert len(REGISTRY) >= 25
    for info in REGISTRY.values():
        assert info.summary and info.source.kind in ("vector", "spec", "docs", "issue")


def test_status_and_error_body():
    error = {
        "error": {
            "message": "Bad",
            "type": "invalid_request_error",
            "param": None,
            "code": "invalid_request_error",
        }
    }
    good = body_exchange("chat", error, status=400)
    assert run("http.status", good, equals=400) == []
    assert run("http.error_body", good, status=400, body=error) == []
    assert run("http.status", body_exchange("chat", error, status=422), equals=400)
    flagged = run(
        "http.error_body",
        body_exchange("chat", {"detail": "Bad"}, status=400),
        status=400,
        body=error,
    )
    assert flagged and "OpenAI-style" in flagged[0].expected
    reworded = copy.deepcopy(error)
    reworded["error"]["message"] = "bad"
    assert run(
        "http.error_body", body_exchange("chat", reworded, status=400), status=400, body=error
    )


def test_error_body_without_expectation_needs_the_oracle():
    with pytest.raises(NotApplicable):
        run("http.error_body", body_exchange("chat", {}, status=400))


def test_content_type():
    assert run("http.content_type", stream_exchange("chat", good_chat_stream())) == []
    wrong = stream_exchange("chat", good_chat_stream())
    wrong.headers["content-type"] = "application/json"
    assert run("http.content_type", wrong)


STREAM_FRAMING_CHECKS = (
    "stream.events_parse",
    "stream.terminator",
    "stream.role_first",
    "stream.finish_last",
    "stream.usage_chunk",
    "stream.event_order",
)
"""The framing checks every protocol's well-formed stream must pass."""


def test_chat_stream_framing_good_and_bad():
    good = stream_exchange("chat", good_chat_stream(tool=True), {"messages": []})
    for name in STREAM_FRAMING_CHECKS:
        assert run(name, good) == [], name
    assert run("stream.role_first", good, thinking=True) == []
    assert run("stream.role_first", good, thinking=False)
    assert run("stream.terminator", stream_exchange("chat", good_chat_stream()[:-1]))
    events = good_chat_stream()
    events.insert(-1, (None, {**chat_chunk({}), "choices": None, "usage": USAGE}))
    assert run("stream.usage_chunk", stream_exchange("chat", events))
    assert run("stream.finish_last", stream_exchange("chat", events))
    no_role = good_chat_stream()
    no_role[0] = (None, chat_chunk({"content": ""}))
    assert run("stream.role_first", stream_exchange("chat", no_role))
    drift = good_chat_stream()
    drift[1] = (None, {**drift[1][1], "id": "other"})
    assert run("stream.event_order", stream_exchange("chat", drift))


def test_stream_checks_skip_non_streams():
    with pytest.raises(NotApplicable):
        run("stream.terminator", body_exchange("chat", chat_body({"content": "x"})))


def responses_events(seq_gap=False, done=False):
    resp = {
        "id": "resp_1",
        "object": "response",
        "status": "in_progress",
        "output": [],
        "usage": None,
    }
    final = {
        **resp,
        "status": "completed",
        "output": [
            {"type": "message", "content": [{"type": "output_text", "text": "Hi", "logprobs": []}]}
        ],
        "usage": {
            "input_tokens": 5,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 1,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 6,
        },
    }
    events = [
        {"type": "response.created", "response": resp},
        {"type": "response.in_progress", "response": resp},
        {"type": "response.output_item.added", "output_index": 0, "item": {"type": "message"}},
        {"type": "response.output_text.delta", "output_index": 0, "delta": "Hi", "logprobs": []},
        {"type": "response.output_item.done", "output_index": 0, "item": {"type": "message"}},
        {"type": "response.completed", "response": final},
    ]
    for n, e in enumerate(events):
        e["sequence_number"] = n + (1 if seq_gap and n > 2 else 0)
    out = [(e["type"], e) for e in events]
    return out + ([(None, "[DONE]")] if done else [])


def test_responses_framing():
    good = stream_exchange("responses", responses_events())
    for name in STREAM_FRAMING_CHECKS:
        assert run(name, good) == [], name
    assert run("stream.event_order", stream_exchange("responses", responses_events(seq_gap=True)))
    assert run("stream.terminator", stream_exchange("responses", responses_events(done=True)))


def messages_events(close=True):
    usage = {
        "input_tokens": 6,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 4,
        "output_tokens": 0,
        "service_tier": "standard",
    }
    events = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "content": [],
                "usage": usage,
            },
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
        {"type": "ping"},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "hmm"},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {
                "type": "tool_use",
                "id": "call_00_abcdefghijABCDEFGHIJ1234",
                "name": "get_weather",
                "input": {},
            },
        },
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": '{"city": "Paris"}'},
        },
        {"type": "content_block_stop", "index": 1},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {**usage, "output_tokens": 7},
        },
        {"type": "message_stop"},
    ]
    if not close:
        events = [e for e in events if e["type"] != "content_block_stop"]
    return [(e["type"], e) for e in events]


def test_messages_framing_and_view():
    good = stream_exchange(
        "messages",
        messages_events(),
        {"tools": [{"name": "get_weather", "input_schema": WEATHER_CC["function"]["parameters"]}]},
    )
    for name in (
        *STREAM_FRAMING_CHECKS,
        "tools.arguments_json",
        "tools.arguments_schema",
        "usage.arithmetic",
        "usage.cache_fields",
    ):
        assert run(name, good) == [], name
    assert run("stream.role_first", good, thinking=True) == []
    view = StepView(good, NoOracle(), 0).output
    assert view.reasoning == "hmm" and view.finish == "tool_calls"
    assert view.usage.prompt == 10 and view.usage.cache_hit == 4
    assert run("stream.event_order", stream_exchange("messages", messages_events(close=False)))


RESPONSES_WEATHER = {"type": "function", **WEATHER_CC["function"]}
MESSAGES_WEATHER = {"name": "get_weather", "input_schema": WEATHER_CC["function"]["parameters"]}
ORACLE = RecipeOracle("m")
CHAT_OFF = {
    "model": "m",
    "messages": [{"role": "user", "content": "Hi"}],
    "thinking": {"type": "disabled"},
}
CHAT_ON = {"model": "m", "messages": [{"role": "user", "content": "Hi"}]}
MESSAGES_ON = {"model": "m", "max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}]}


def recipe_exchange(protocol, request, text, stream=False, finish="stop", prompt=(10, 4)):
    """The official answer to `request` for the model output `text` (one piece per token)."""
    converted = ORACLE.convert(protocol, {**request, "stream": stream})
    processor = StreamProcessor(converted)
    ready = {"kind": "ready", "prompt_tokens": prompt[0], "prompt_cache_hit_tokens": prompt[1]}
    data = processor.push_sse(ready)
    for token in Tokenizer.deepseek_v4().encode(text, allow_special=True):
        if processor.finished:
            break
        data += processor.push_tokens([token])
    if not processor.finished:
        data += processor.push_finish(finish)
    data += processor.finish_sse()
    if stream:
        exchange = stream_exchange(protocol, [], request)
        exchange.raw = data
        return exchange
    return body_exchange(protocol, json.loads(processor.response_json()), request)


def check(name, exchange, **params):
    return run(name, exchange, ORACLE, **params)


def tool_body(arguments, name="get_weather", call_id="call_00_abcdefghijABCDEFGHIJ1234"):
    call = {
        "index": 0,
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }
    return body_exchange(
        "chat",
        chat_body({"content": "", "tool_calls": [call]}, "tool_calls"),
        {"tools": [WEATHER_CC]},
    )


def test_output_checks():
    good = recipe_exchange("chat", CHAT_ON, "r</think>Hi")
    assert check("output.reasoning", recipe_exchange("chat", CHAT_OFF, "Hi")) == []
    leaked = body_exchange("chat", chat_body({"content": "Hi", "reasoning_content": "r"}), CHAT_OFF)
    assert check("output.reasoning", leaked)
    with pytest.raises(NotApplicable):
        check("output.reasoning", good)
    assert check("output.content", good) == []
    assert check("output.content", body_exchange("chat", chat_body({"content": None}), CHAT_ON))
    leak = body_exchange(
        "chat", chat_body({"content": "Hi<｜DSML｜tool_calls>"}), {**CHAT_ON, "tools": [WEATHER_CC]}
    )
    assert check("output.no_markup_leak", good) == [] and check("output.no_markup_leak", leak)
    plain = {**CHAT_OFF, "tool_choice": "none", "tools": [WEATHER_CC]}
    as_text = body_exchange("chat", chat_body({"content": "<｜DSML｜tool_calls>"}), plain)
    assert check("output.no_markup_leak", as_text) == []  # tools disabled: DSML is text
    reasoned = {"content": "Hi", "reasoning_content": "Prag｜DSML｜"}
    in_reasoning = body_exchange("chat", chat_body(reasoned), {**CHAT_ON, "tools": [WEATHER_CC]})
    assert check("output.no_markup_leak", in_reasoning) == []  # the official parser's text
    think_leak = body_exchange("chat", chat_body({"content": "a</think>b"}), CHAT_ON)
    assert check("output.no_markup_leak", think_leak)


def test_json_output_is_judged_on_what_came_back():
    request = {**CHAT_OFF, "messages": [{"role": "user", "content": "json"}]}
    json_mode = {**request, "response_format": {"type": "json_object"}}
    assert check("output.json", recipe_exchange("chat", json_mode, 'Sure: {"a": 1}')) == []
    trailing = body_exchange("chat", chat_body({"content": '{"a": 1} done'}), json_mode)
    assert check("output.json", trailing)
    with pytest.raises(NotExercised):
        check("output.json", recipe_exchange("chat", json_mode, "no json at all"))
    with pytest.raises(NotApplicable):
        check("output.json", recipe_exchange("chat", request, "x"))
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    strict = {
        **request,
        "response_format": {"type": "json_schema", "json_schema": {"name": "v", "schema": schema}},
    }
    assert check("output.json", recipe_exchange("chat", strict, '{"ok": true}')) == []
    assert check("output.json", recipe_exchange("chat", strict, '{"ok": "yes"}'))


def test_stops_and_limits():
    request = {**CHAT_ON, "stop": ["##"], "max_tokens": 5}
    kept = recipe_exchange("chat", request, "a ## b</think>Title")
    assert check("output.stop_respected", kept) == []
    assert check("output.max_tokens", kept) == []
    leaked = body_exchange("chat", chat_body({"content": "T ## x"}), request)
    assert check("output.stop_respected", leaked)
    with pytest.raises(NotExercised):
        check("output.stop_respected", recipe_exchange("chat", request, "ab</think>cd"))
    over = body_exchange(
        "chat",
        chat_body({"content": "x"}, usage={**USAGE, "completion_tokens": 9, "total_tokens": 19}),
        request,
    )
    assert check("output.max_tokens", over)


def test_length_finish_matches_the_limit():
    request = {**CHAT_OFF, "max_tokens": 4}
    long_text = "one two three four five six"
    assert (
        check("finish.length", recipe_exchange("chat", request, long_text, finish="length")) == []
    )
    reached_but_stop = recipe_exchange("chat", request, long_text)
    assert check("finish.length", reached_but_stop)
    with pytest.raises(NotExercised):
        check("finish.length", recipe_exchange("chat", request, "Hi"))
    early_length = recipe_exchange("chat", {**CHAT_OFF, "max_tokens": 40}, "Hi", finish="length")
    assert check("finish.length", early_length)
    capped = StepView(early_length, ORACLE, 0, Target(completion_cap=2))
    assert REGISTRY["finish.length"].fn(capped) == []


def test_messages_stop_sequence_is_reported():
    request = {**MESSAGES_ON, "thinking": {"type": "disabled"}, "stop_sequences": ["END"]}
    stopped = recipe_exchange("messages", request, "Done. END more", stream=True)
    assert check("finish.valid", stopped) == []
    assert StepView(stopped, ORACLE, 0).output.stop_sequence == "END"
    body = recipe_exchange("messages", request, "Done. END more")
    wrong = json.loads(body.raw)
    wrong["stop_sequence"] = "OTHER"
    assert check("finish.valid", body_exchange("messages", wrong, request))
    wrong["stop_reason"], wrong["stop_sequence"] = "end_turn", "END"
    assert check("finish.valid", body_exchange("messages", wrong, request))


def test_stop_applied_compares_two_deterministic_answers():
    request = {**CHAT_OFF}
    stops = {**request, "stop": [" "]}
    free = recipe_exchange("chat", request, "Paris is nice")
    cut = recipe_exchange("chat", stops, "Paris is nice")
    ctx = CheckContext(make_case(steps=2), [free, cut], ORACLE)
    assert REGISTRY["output.stop_applied"].fn(ctx) == []
    kept = body_exchange("chat", chat_body({"content": "Paris is nice"}), stops)
    assert REGISTRY["output.stop_applied"].fn(
        CheckContext(make_case(steps=2), [free, kept], ORACLE)
    )
    diverged = body_exchange("chat", chat_body({"content": "Parisian"}), stops)
    with pytest.raises(NotExercised):
        REGISTRY["output.stop_applied"].fn(
            CheckContext(make_case(steps=2), [free, diverged], ORACLE)
        )
    other = recipe_exchange("chat", stops, "London is nice")
    with pytest.raises(NotExercised):
        REGISTRY["output.stop_applied"].fn(CheckContext(make_case(steps=2), [free, other], ORACLE))
    thinking = recipe_exchange("chat", CHAT_ON, "a b</think>Paris is nice")
    in_reasoning = recipe_exchange("chat", {**CHAT_ON, "stop": [" "]}, "a")
    ctx = CheckContext(make_case(steps=2), [thinking, in_reasoning], ORACLE)
    assert "reasoning" in REGISTRY["output.stop_applied"].fn(ctx)[0].expected


def test_signatures_and_reasoning_tokens():
    stream = recipe_exchange("messages", MESSAGES_ON, "hmm</think>Hi", stream=True)
    assert check("output.signatures", stream) == []
    body = json.loads(recipe_exchange("messages", MESSAGES_ON, "hmm</think>Hi").raw)
    body["content"][0]["signature"] = ""
    assert check("output.signatures", body_exchange("messages", body, MESSAGES_ON))
    chat = recipe_exchange("chat", CHAT_ON, "some reasoning here</think>Hi")
    assert check("usage.reasoning_tokens", chat) == []
    wrong = json.loads(chat.raw)
    wrong["usage"]["completion_tokens_details"]["reasoning_tokens"] = 99
    assert check("usage.reasoning_tokens", body_exchange("chat", wrong, CHAT_ON))
    del wrong["usage"]["completion_tokens_details"]
    assert check("usage.reasoning_tokens", body_exchange("chat", wrong, CHAT_ON))


@pytest.mark.parametrize("protocol", ["chat", "responses", "messages"])
@pytest.mark.parametrize("stream", [False, True])
def test_replay_accepts_the_recipe_and_flags_any_edit(protocol, stream):
    request = {
        "chat": {**CHAT_ON, "tools": [WEATHER_CC]},
        "responses": {"model": "m", "input": "Hi", "tools": [RESPONSES_WEATHER]},
        "messages": {**MESSAGES_ON, "tools": [MESSAGES_WEATHER]},
    }[protocol]
    text = (
        'hmm\n</think>Sure.\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name="get_weather">\n'
        '<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜tool_calls>"
    )
    good = recipe_exchange(protocol, request, text, stream)
    assert check("replay.answer", good) == []
    marker = {
        "chat": b'"index":0',
        "responses": b'"type":"message"',
        "messages": b'"type":"message"',
    }
    tampered = recipe_exchange(protocol, request, text, stream)
    if stream:
        tampered.raw = good.raw.replace(marker[protocol], marker[protocol] + b',"extra":1', 1)
    else:
        body = json.loads(good.raw)
        if protocol == "chat":
            body["choices"][0]["message"]["extra"] = 1
        elif protocol == "responses":
            body["output"][0]["extra"] = 1
        else:
            body["extra"] = 1
        tampered = body_exchange(protocol, body, request)
    assert tampered.raw != good.raw and check("replay.answer", tampered)


def test_tool_checks():
    good = tool_body('{"city": "Paris"}')
    for name in ("tools.arguments_json", "tools.arguments_schema", "tools.call_ids"):
        assert run(name, good) == [], name
    assert run("tools.called", good, min=1, name="get_weather") == []
    assert run("tools.called", good, min=2)
    assert run("tools.arguments_json", tool_body('{"arguments": {"city": "Paris"}}'))
    assert run("tools.arguments_json", tool_body('{"city": "Par'))
    assert run("tools.arguments_schema", tool_body('{"city": 3}'))
    assert run("tools.arguments_schema", tool_body('{"city": "P"}', name="other"))
    assert run("tools.call_ids", tool_body('{"city": "P"}', call_id="call_abc"))
    assert run(
        "tools.call_ids", tool_body('{"city": "P"}', call_id="call_01_abcdefghijABCDEFGHIJ1234")
    )
    with pytest.raises(NotExercised):
        run("tools.call_ids", good, min_calls=2)
    assert run("finish.tool_calls", good) == []
    stopped = json.loads(good.raw)
    stopped["choices"][0]["finish_reason"] = "stop"
    assert run("finish.tool_calls", body_exchange("chat", stopped, good.body))
    none = body_exchange("chat", chat_body({"content": "x"}, "tool_calls"), CHAT_OFF)
    assert run("finish.tool_calls", none)
    forbidden = body_exchange(
        "chat", json.loads(good.raw), {**CHAT_OFF, "tools": [WEATHER_CC], "tool_choice": "none"}
    )
    assert check("tools.none_called", forbidden)


def test_streamed_tool_call_view():
    exchange = stream_exchange("chat", good_chat_stream(tool=True), {"tools": [WEATHER_CC]})
    out = StepView(exchange, NoOracle(), 0).output
    assert [(c.name, c.arguments) for c in out.tool_calls] == [("get_weather", '{"city": "Paris"}')]
    assert run("tools.arguments_schema", exchange) == []


def test_usage_checks():
    good = body_exchange("chat", chat_body({"content": "x"}))
    for name in ("usage.present", "usage.arithmetic", "usage.cache_fields"):
        assert run(name, good) == [], name
    assert run("usage.prompt_parity", good, CountingOracle()) == []
    with pytest.raises(NotApplicable):
        run("usage.prompt_parity", good)
    off = body_exchange("chat", chat_body({"content": "x"}, usage={**USAGE, "total_tokens": 16}))
    assert run("usage.arithmetic", off)
    missing = body_exchange(
        "chat",
        chat_body(
            {"content": "x"},
            usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        ),
    )
    assert run("usage.cache_fields", missing)
    shifted = body_exchange(
        "chat",
        chat_body(
            {"content": "x"},
            usage={**USAGE, "prompt_tokens": 12, "total_tokens": 17, "prompt_cache_miss_tokens": 8},
        ),
    )
    assert run("usage.prompt_parity", shifted, CountingOracle())


def test_logprobs_shape():
    entry = {
        "token": "Hi",
        "logprob": -0.5,
        "bytes": [72, 105],
        "top_logprobs": [{"token": "Hi", "logprob": -0.5, "bytes": [72, 105]}],
    }
    request = {**CHAT_OFF, "logprobs": True, "top_logprobs": 1}
    good = body_exchange(
        "chat", chat_body({"content": "Hi"}, logprobs={"content": [entry]}), request
    )
    assert check("logprobs.shape", good) == []
    assert check("logprobs.shape", body_exchange("chat", chat_body({"content": "Hi"}), request))
    positive = body_exchange(
        "chat",
        chat_body({"content": "Hi"}, logprobs={"content": [{**entry, "logprob": 0.5}]}),
        request,
    )
    assert check("logprobs.shape", positive)
    too_many = {**entry, "top_logprobs": entry["top_logprobs"] * 2}
    assert check(
        "logprobs.shape",
        body_exchange(
            "chat", chat_body({"content": "Hi"}, logprobs={"content": [too_many]}), request
        ),
    )
    with pytest.raises(NotApplicable):
        check("logprobs.shape", body_exchange("chat", chat_body({"content": "Hi"}), CHAT_OFF))


def test_case_level_checks():
    stream = stream_exchange("chat", good_chat_stream(), {})
    body = body_exchange("chat", chat_body({"content": "Hello", "reasoning_content": "think"}))
    ctx = CheckContext(make_case(steps=2), [stream, body], NoOracle())
    assert REGISTRY["equivalence.stream_vs_body"].fn(ctx) == []
    assert REGISTRY["equivalence.stream_vs_body"].fn(ctx, text=True) == []
    other = body_exchange(
        "chat", chat_body({"content": "Other", "reasoning_content": "think"}, "length")
    )
    ctx = CheckContext(make_case(steps=2), [stream, other], NoOracle())
    with pytest.raises(NotExercised):
        REGISTRY["equivalence.stream_vs_body"].fn(ctx)
    assert REGISTRY["equivalence.stream_vs_body"].fn(ctx, text=True)
    same_text_other_finish = body_exchange(
        "chat", chat_body({"content": "Hello", "reasoning_content": "think"}, "length")
    )
    ctx = CheckContext(make_case(steps=2), [stream, same_text_other_finish], NoOracle())
    assert REGISTRY["equivalence.stream_vs_body"].fn(ctx)
    shifted = body_exchange(
        "chat", chat_body({"content": "Hello"}, usage={**USAGE, "prompt_tokens": 11})
    )
    ctx = CheckContext(make_case(steps=2), [stream, shifted], NoOracle())
    assert "prompt" in REGISTRY["equivalence.stream_vs_body"].fn(ctx)[0].expected
    assert (
        REGISTRY["usage.cache_hit"].fn(CheckContext(make_case(steps=2), [stream, body], NoOracle()))
        == []
    )
    cold = body_exchange(
        "chat",
        chat_body(
            {"content": "x"},
            usage={
                **USAGE,
                "prompt_cache_hit_tokens": 0,
                "prompt_cache_miss_tokens": 10,
                "prompt_tokens_details": {"cached_tokens": 0},
            },
        ),
    )
    assert REGISTRY["usage.cache_hit"].fn(
        CheckContext(make_case(steps=2), [body, cold], NoOracle())
    )


def test_error_shape_and_model_list():
    error = {
        "error": {
            "message": "Not Found",
            "type": "invalid_request_error",
            "param": None,
            "code": "x",
        }
    }
    assert run("http.error_shape", body_exchange("chat", error, status=404), status=404) == []
    text = body_exchange("chat", {}, status=404)
    text.raw = b"Not Found"
    assert run("http.error_shape", text, status=404)
    assert run("http.error_shape", body_exchange("chat", error, status=500), status=[400, 422])
    listing = {"object": "list", "data": [{"id": "m", "object": "model", "owned_by": "deepseek"}]}
    assert run("models.list", body_exchange("chat", listing), model="m") == []
    assert run("models.list", body_exchange("chat", listing), model="other")
    assert run("models.list", body_exchange("chat", {"models": ["m"]}), model="m")


def test_schema_validator():
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer"},
            "tags": {"type": "array", "items": {"enum": ["a", "b"]}},
            "v": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
        "required": ["n"],
        "additionalProperties": False,
    }
    assert validate({"n": 1, "tags": ["a"], "v": None}, schema) == []
    assert validate({"n": True}, schema)
    assert validate({"n": 1, "tags": ["c"]}, schema)
    assert validate({"n": 1, "x": 1}, schema)
    assert validate({"n": 1, "v": 3}, schema)
    assert validate({}, schema)


def test_unreadable_answer_shape_becomes_a_finding():
    from deepseek_recipe_conformance.model import CheckSpec
    from deepseek_recipe_conformance.runner import evaluate

    weird = stream_exchange("chat", [(None, {"choices": [5]}), (None, "[DONE]")])
    case = make_case(checks=(CheckSpec("stream.role_first"),))
    outcomes, findings = evaluate(case, [weird], NoOracle())
    assert outcomes[0].status == "failed"
    assert "could not read" in findings[0].observed


def test_unknown_check_in_a_case_file_is_rejected(tmp_path):
    from deepseek_recipe_conformance.cases import CaseFileError, load_cases

    (tmp_path / "x.json").write_text(
        '{"family": "x", "cases": [{"id": "x.1", "protocol": "chat", "title": "t",'
        ' "source": "spec:x", "body": {}, "checks": [{"check": "no.such"}]}]}'
    )
    with pytest.raises(CaseFileError):
        load_cases("m", tmp_path)


@pytest.mark.parametrize("protocol", ["chat", "responses", "messages"])
def test_no_answer_shape_crashes_the_suite(protocol):
    from deepseek_recipe_conformance.model import CheckSpec
    from deepseek_recipe_conformance.runner import evaluate, latency_of

    shapes = [
        None,
        5,
        "x",
        [],
        [1],
        {"choices": "x"},
        {"choices": [{"delta": 5}]},
        {"choices": [None]},
        {"type": "content_block_delta", "index": "a", "delta": []},
        {"usage": "x", "response": 3},
        {"type": "response.output_item.added", "output_index": 0, "item": 7},
        {
            "choices": [{"message": {"tool_calls": [{"function": None}]}}],
            "usage": {"prompt_tokens": "1"},
        },
    ]
    request = {"tools": "x", "stop": 5, "max_tokens": "9"}
    checks = tuple(CheckSpec(name) for name in REGISTRY if REGISTRY[name].scope == "step")
    for shape in shapes:
        for exchange in (
            stream_exchange(protocol, [(None, shape), (None, "[DONE]")], request),
            body_exchange(protocol, shape, request),
        ):
            outcomes, _ = evaluate(make_case(protocol, checks), [exchange], NoOracle())
            assert len(outcomes) == len(checks)
            latency_of([exchange])
