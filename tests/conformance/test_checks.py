"""Checks on hand-made exchanges: each check passes a faithful answer and flags a broken one."""

import copy

import pytest

from deepseek_recipe_conformance.checks import REGISTRY, CheckContext, NotApplicable
from deepseek_recipe_conformance.checks.base import StepView
from deepseek_recipe_conformance.checks.schema import validate
from deepseek_recipe_conformance.oracle import NoOracle
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


def test_output_checks():
    good = body_exchange("chat", chat_body({"content": "Hi", "reasoning_content": "r"}))
    assert run("output.reasoning", good) == [] and run("output.content", good, nonempty=True) == []
    assert run("output.reasoning", good, present=False)
    assert run("output.finish", good, equals="stop") == [] and run(
        "output.finish", good, equals="length"
    )
    leak = body_exchange("chat", chat_body({"content": "Hi<｜DSML｜tool_calls>"}))
    assert run("output.no_markup_leak", good) == [] and run("output.no_markup_leak", leak)
    assert (
        run("output.json_content", body_exchange("chat", chat_body({"content": ' {"a": 1}'}))) == []
    )
    assert run(
        "output.json_content", body_exchange("chat", chat_body({"content": 'Sure: {"a": 1}'}))
    )


def test_stop_and_max_tokens():
    request = {"stop": ["##"], "max_tokens": 5}
    good = body_exchange(
        "chat", chat_body({"content": "Title", "reasoning_content": "a ## b"}), request
    )
    assert run("output.stop_respected", good, reasoning=True) == []
    assert run("output.max_tokens", good) == []
    cut = body_exchange("chat", chat_body({"content": None, "reasoning_content": "a "}), request)
    assert run("output.stop_respected", cut, reasoning=True)
    over = body_exchange(
        "chat",
        chat_body({"content": "x"}, usage={**USAGE, "completion_tokens": 9, "total_tokens": 19}),
        request,
    )
    assert run("output.max_tokens", over)


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


def test_tool_checks():
    good = tool_body('{"city": "Paris"}')
    for name in ("tools.arguments_json", "tools.arguments_schema", "tools.call_ids"):
        assert run(name, good) == [], name
    assert run("tools.called", good, min=1, name="get_weather") == []
    assert run("tools.called", good, min=2)
    assert run("tools.none_called", good)
    assert run("tools.arguments_json", tool_body('{"arguments": {"city": "Paris"}}'))
    assert run("tools.arguments_json", tool_body('{"city": "Par'))
    assert run("tools.arguments_schema", tool_body('{"city": 3}'))
    assert run("tools.arguments_schema", tool_body('{"city": "P"}', name="other"))
    assert run("tools.call_ids", tool_body('{"city": "P"}', call_id="call_abc"))


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
    good = body_exchange("chat", chat_body({"content": "Hi"}, logprobs={"content": [entry]}))
    assert run("logprobs.shape", good, top=1) == []
    assert run("logprobs.shape", body_exchange("chat", chat_body({"content": "Hi"})))
    positive = body_exchange(
        "chat", chat_body({"content": "Hi"}, logprobs={"content": [{**entry, "logprob": 0.5}]})
    )
    assert run("logprobs.shape", positive)


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
    assert REGISTRY["equivalence.stream_vs_body"].fn(ctx)
    assert REGISTRY["usage.cache_hit"].fn(ctx) == []
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
