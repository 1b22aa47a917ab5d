"""The official `openai` SDK against the live reference server: Chat Completions and Responses.

Every request is seeded (Chat Completions by its `seed`, Responses by the server's seed), so each
answer is compared whole with the oracle's (tests/server/oracle.py); every answer and stream
event the SDK reads is also validated strictly against the SDK's types (conftest.py).
"""

from __future__ import annotations

import json
import secrets
from typing import Any

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletion

from deepseek_recipe import ConversionError, convert, count_prompt_tokens
from tests.server.conftest import SERVER_OPTIONS, openai_client
from tests.server.live import API_KEY, LiveServer
from tests.server.oracle import Oracle, normalised
from tests.server.recording import Recorder

MODEL = "DeepSeek-V4-Pro"
SEED = 11
NO_THINKING: dict[str, Any] = {"thinking": {"type": "disabled"}}
WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather of a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
SDK_FIELDS = {"model", "messages", "max_tokens", "temperature", "tools", "tool_choice", "stream"}
SDK_FIELDS |= {"response_format", "stream_options", "logprobs", "top_logprobs", "seed"}


def chat_body(**fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": MODEL,
        "messages": [{"role": "user", "content": "Hello!"}],
        "seed": SEED,
    }
    body.update(fields)
    return body


def sdk_arguments(body: dict[str, Any]) -> dict[str, Any]:
    """A request body as SDK arguments (fields the SDK does not know go in extra_body)."""
    extra = {k: v for k, v in body.items() if k not in SDK_FIELDS}
    return {**{k: v for k, v in body.items() if k in SDK_FIELDS}, "extra_body": extra or None}


def create(oai: openai.OpenAI, body: dict[str, Any]) -> Any:
    """The SDK's answer to a request body (a completion, or a chunk stream)."""
    return oai.chat.completions.create(**sdk_arguments(body))


def complete(
    oai: openai.OpenAI, oracle: Oracle, body: dict[str, Any]
) -> tuple[ChatCompletion, dict[str, Any]]:
    """The SDK's completion and the JSON it came from, which must be the oracle's answer."""
    raw = oai.chat.completions.with_raw_response.create(**sdk_arguments(body))
    answer = raw.http_response.json()
    assert normalised(answer) == oracle.answer(body, "chat_completions", answer)
    return raw.parse(), answer


def test_plain_chat(oai: openai.OpenAI, oracle: Oracle, live: LiveServer) -> None:
    body = chat_body(max_tokens=8, **NO_THINKING)
    response, answer = complete(oai, oracle, body)
    assert response.object == "chat.completion"
    assert response.model == MODEL
    assert response.choices[0].message.content == answer["choices"][0]["message"]["content"]
    usage = response.usage
    assert usage is not None
    assert usage.prompt_tokens == count_prompt_tokens(body, protocol="chat_completions")
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    extra = usage.model_extra or {}
    assert extra["prompt_cache_hit_tokens"] + extra["prompt_cache_miss_tokens"] == (
        usage.prompt_tokens
    )
    assert live.wait_idle()


def test_same_seed_same_answer_other_seed_other_answer(oai: openai.OpenAI, oracle: Oracle) -> None:
    body = chat_body(max_tokens=12, **NO_THINKING)
    first = complete(oai, oracle, body)[0].choices[0].message.content
    again = complete(oai, oracle, body)[0].choices[0].message.content
    other = complete(oai, oracle, {**body, "seed": SEED + 1})[0].choices[0].message.content
    assert first == again
    assert other != first


def test_models_list(oai: openai.OpenAI) -> None:
    names = [model.id for model in oai.models.list()]
    assert names == ["DeepSeek-V4-Pro", "DeepSeek-V4.1-Flash"]


def test_streaming_matches_non_streaming(oai: openai.OpenAI, oracle: Oracle) -> None:
    body = chat_body(max_tokens=12, **NO_THINKING)
    whole = complete(oai, oracle, body)[0]
    chunks = list(create(oai, {**body, "stream": True, "stream_options": {"include_usage": True}}))
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == whole.choices[0].message.content
    finishes = [
        c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason
    ]
    assert finishes == [whole.choices[0].finish_reason]
    assert chunks[-1].usage is not None and whole.usage is not None
    assert chunks[-1].usage.completion_tokens == whole.usage.completion_tokens
    assert len({c.id for c in chunks}) == 1


def test_thinking_on_and_off(oai: openai.OpenAI, oracle: Oracle) -> None:
    thinking, answer = complete(oai, oracle, chat_body(max_tokens=16))
    reasoning = answer["choices"][0]["message"]["reasoning_content"]
    assert reasoning and (thinking.choices[0].message.model_extra or {}).get("reasoning_content")
    assert thinking.usage is not None
    details = thinking.usage.completion_tokens_details
    assert (
        details is not None
        and details.reasoning_tokens
        == answer["usage"]["completion_tokens_details"]["reasoning_tokens"]
    )
    plain = complete(oai, oracle, chat_body(max_tokens=16, **NO_THINKING))[1]
    assert "reasoning_content" not in plain["choices"][0]["message"]
    streamed = create(oai, chat_body(max_tokens=16, stream=True))
    deltas = [c.choices[0].delta.model_extra or {} for c in streamed if c.choices]
    assert "".join(d.get("reasoning_content") or "" for d in deltas) == reasoning


def test_tool_call_auto_and_required(oai: openai.OpenAI, oracle: Oracle) -> None:
    messages = [{"role": "user", "content": "What is the weather in Paris?"}]
    complete(oai, oracle, chat_body(messages=messages, tools=[WEATHER_TOOL], max_tokens=24))
    required_body = chat_body(
        messages=messages, tools=[WEATHER_TOOL], tool_choice="required", max_tokens=48
    )
    required_body.update(NO_THINKING)
    required = complete(oai, oracle, required_body)[0]
    # The engine's grammar forces the call; its arguments may be cut by max_tokens.
    calls = required.choices[0].message.tool_calls
    assert calls and all(call.type == "function" for call in calls)
    assert all(call.function.name == "get_weather" for call in calls if call.type == "function")
    # With thinking on, required tool choice is the official 400.
    with pytest.raises(openai.BadRequestError) as caught:
        create(oai, {k: v for k, v in required_body.items() if k != "thinking"})
    assert caught.value.status_code == 400
    assert caught.value.body == expected_error({**required_body, "thinking": None})["error"]


def test_json_mode(oai: openai.OpenAI, oracle: Oracle) -> None:
    body = chat_body(
        messages=[{"role": "user", "content": "Reply in json: an object with key a"}],
        response_format={"type": "json_object"},
        max_tokens=32,
        **NO_THINKING,
    )
    content = complete(oai, oracle, body)[0].choices[0].message.content
    assert content is not None and content.startswith("{")  # the grammar opens an object


def tool_history(with_reasoning: bool) -> list[dict[str, Any]]:
    assistant: dict[str, Any] = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "call_00_abc",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
        ],
    }
    if with_reasoning:
        assistant["reasoning_content"] = "I should look up the weather."
    return [
        {"role": "user", "content": "What is the weather in Paris?"},
        assistant,
        {"role": "tool", "tool_call_id": "call_00_abc", "content": "sunny, 21C"},
    ]


def expected_error(body: dict[str, Any]) -> dict[str, Any]:
    body = {k: v for k, v in body.items() if v is not None}
    with pytest.raises(ConversionError) as caught:
        convert(body, protocol="chat_completions", options=SERVER_OPTIONS)
    return caught.value.body


def test_reasoning_content_pass_back(oai: openai.OpenAI, oracle: Oracle) -> None:
    passed = chat_body(messages=tool_history(True), tools=[WEATHER_TOOL], max_tokens=8)
    complete(oai, oracle, passed)
    missing = chat_body(messages=tool_history(False), tools=[WEATHER_TOOL], max_tokens=8)
    with pytest.raises(openai.BadRequestError) as caught:
        create(oai, missing)
    official = expected_error(missing)
    assert caught.value.status_code == 400
    assert caught.value.body == official["error"]
    assert "reasoning_content" in official["error"]["message"]


def test_invalid_request_official_body(oai: openai.OpenAI) -> None:
    body = chat_body(temperature=3.5)
    with pytest.raises(openai.APIStatusError) as caught:
        create(oai, body)
    with pytest.raises(ConversionError) as official:
        convert(body, protocol="chat_completions", options=SERVER_OPTIONS)
    assert caught.value.status_code == official.value.status_code
    assert caught.value.response.json() == official.value.body


def test_wrong_key_is_official_401(live: LiveServer, recorder: Recorder) -> None:
    client = openai_client(f"{live.base_url}/v1", recorder, "sk-wrong-key-9876")
    with client, pytest.raises(openai.AuthenticationError) as caught:
        client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "hi"}], seed=SEED
        )
    assert caught.value.response.json() == {
        "error": {
            "message": "Authentication Fails, Your api key: ****9876 is invalid",
            "type": "authentication_error",
            "param": None,
            "code": "invalid_request_error",
        }
    }


def test_cache_hits_on_repeated_prefix(
    oai: openai.OpenAI, oracle: Oracle, live: LiveServer
) -> None:
    system = "You are a careful assistant. " * 12 + secrets.token_hex(8)
    body = chat_body(
        messages=[{"role": "system", "content": system}, {"role": "user", "content": "Hi"}],
        max_tokens=4,
        **NO_THINKING,
    )
    first = complete(oai, oracle, body)[0]
    second = complete(oai, oracle, body)[0]
    assert first.usage is not None and second.usage is not None
    prompt = first.usage.prompt_tokens
    assert second.usage.prompt_tokens == prompt
    block = live.cache_block_size
    # Every full block before the one holding the last prompt token is reused (docs/engine.md;
    # vLLM too).
    expected_hits = (prompt - 1) // block * block
    assert expected_hits > 0
    extra = second.usage.model_extra or {}
    assert extra["prompt_cache_hit_tokens"] == expected_hits
    assert extra["prompt_cache_miss_tokens"] == prompt - expected_hits
    details = second.usage.prompt_tokens_details
    assert details is not None and details.cached_tokens == expected_hits


def test_responses_api(oai: openai.OpenAI, oracle: Oracle, recorder: Recorder) -> None:
    body: dict[str, Any] = {
        "model": MODEL,
        "input": "Say hello",
        "max_output_tokens": 16,
        "reasoning": {"effort": "none"},
    }
    raw = oai.responses.with_raw_response.create(**body)
    answer = raw.http_response.json()
    assert normalised(answer) == oracle.answer(body, "responses", answer)
    response = raw.parse()
    assert response.object == "response"
    assert response.output_text == "".join(
        part["text"] for item in answer["output"] for part in item.get("content", [])
    )
    stream_body = {"model": MODEL, "input": "Say hello", "max_output_tokens": 8, "stream": True}
    events = list(oai.responses.create(**stream_body))
    assert events[0].type == "response.created"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    last = recorder.last().events()[-1][1]
    assert isinstance(last, dict) and last["type"] == events[-1].type
    final = last["response"]
    assert normalised(final) == oracle.answer(stream_body, "responses", final)


def test_logprobs(oai: openai.OpenAI, oracle: Oracle) -> None:
    body = chat_body(max_tokens=4, logprobs=True, top_logprobs=2, **NO_THINKING)
    logprobs = complete(oai, oracle, body)[0].choices[0].logprobs
    assert logprobs is not None and logprobs.content
    for entry in logprobs.content:
        assert entry.logprob <= 0
        assert len(entry.top_logprobs) == 2


def test_json_body_round_trip(live: LiveServer) -> None:
    """The raw body is one JSON object (no keep-alive lines for a quick answer)."""
    raw = httpx.post(
        f"{live.base_url}/chat/completions",
        json=chat_body(max_tokens=2, **NO_THINKING),
        headers={"authorization": f"Bearer {API_KEY}"},
    )
    assert raw.status_code == 200
    assert raw.headers["content-type"].startswith("application/json")
    assert json.loads(raw.content)["object"] == "chat.completion"
