"""The official `openai` SDK against the live reference server: Chat Completions and Responses."""

from __future__ import annotations

import json
import secrets
from typing import Any

import httpx
import openai
import pytest

from deepseek_recipe import ConversionError, convert, count_prompt_tokens
from tests.server.conftest import SERVER_OPTIONS
from tests.server.live import API_KEY, LiveServer

MODEL = "DeepSeek-V4-Pro"
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


def chat_body(**fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"model": MODEL, "messages": [{"role": "user", "content": "Hello!"}]}
    body.update(fields)
    return body


def create(oai: openai.OpenAI, body: dict[str, Any]) -> Any:
    """Send a request body through the SDK (fields the SDK does not know go in extra_body)."""
    known = {"model", "messages", "max_tokens", "temperature", "tools", "tool_choice", "stream"}
    known |= {"response_format", "stream_options", "logprobs", "top_logprobs"}
    extra = {k: v for k, v in body.items() if k not in known}
    return oai.chat.completions.create(
        **{k: v for k, v in body.items() if k in known}, extra_body=extra or None
    )


def test_plain_chat(oai: openai.OpenAI, live: LiveServer) -> None:
    body = chat_body(max_tokens=8, **NO_THINKING)
    response = create(oai, body)
    choice = response.choices[0]
    assert response.object == "chat.completion"
    assert response.model == MODEL
    assert choice.message.role == "assistant"
    assert isinstance(choice.message.content, str)
    assert choice.finish_reason in ("stop", "length")
    usage = response.usage
    assert usage is not None
    assert usage.prompt_tokens == count_prompt_tokens(body, protocol="chat_completions")
    assert 1 <= usage.completion_tokens <= 8
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    extra = usage.model_extra or {}
    assert extra["prompt_cache_hit_tokens"] + extra["prompt_cache_miss_tokens"] == (
        usage.prompt_tokens
    )
    assert live.wait_blocks_free()


def test_models_list(oai: openai.OpenAI) -> None:
    names = [model.id for model in oai.models.list()]
    assert names == ["DeepSeek-V4-Pro", "DeepSeek-V4.1-Flash"]


def test_streaming_matches_non_streaming(oai: openai.OpenAI) -> None:
    body = chat_body(max_tokens=12, temperature=0, **NO_THINKING)
    whole = create(oai, body)
    chunks = list(create(oai, {**body, "stream": True, "stream_options": {"include_usage": True}}))
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == whole.choices[0].message.content
    finishes = [
        c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason
    ]
    assert finishes == [whole.choices[0].finish_reason]
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == whole.usage.completion_tokens
    assert len({c.id for c in chunks}) == 1


def test_thinking_on_and_off(oai: openai.OpenAI) -> None:
    thinking = create(oai, chat_body(max_tokens=16))
    reasoning = (thinking.choices[0].message.model_extra or {}).get("reasoning_content")
    assert isinstance(reasoning, str)
    details = thinking.usage.completion_tokens_details
    assert details is not None and details.reasoning_tokens is not None
    assert details.reasoning_tokens > 0
    plain = create(oai, chat_body(max_tokens=16, **NO_THINKING))
    assert (plain.choices[0].message.model_extra or {}).get("reasoning_content") is None
    streamed = create(oai, chat_body(max_tokens=16, stream=True))
    deltas = [c.choices[0].delta.model_extra or {} for c in streamed if c.choices]
    assert any(d.get("reasoning_content") for d in deltas)


def test_tool_call_auto_and_required(oai: openai.OpenAI) -> None:
    messages = [{"role": "user", "content": "What is the weather in Paris?"}]
    auto = create(
        oai, chat_body(messages=messages, tools=[WEATHER_TOOL], max_tokens=24, **NO_THINKING)
    )
    assert auto.choices[0].finish_reason in ("stop", "length", "tool_calls")
    required_body = chat_body(
        messages=messages, tools=[WEATHER_TOOL], tool_choice="required", max_tokens=48
    )
    required_body.update(NO_THINKING)
    required = create(oai, required_body)
    assert required.choices[0].finish_reason in ("tool_calls", "length")
    # The engine's grammar forces the call; its arguments may be cut by max_tokens.
    calls = required.choices[0].message.tool_calls
    assert calls and all(call.function.name == "get_weather" for call in calls)
    assert calls[0].function.arguments.startswith('{"city": "')
    # With thinking on, required tool choice is the official 400.
    with pytest.raises(openai.BadRequestError) as caught:
        create(oai, {k: v for k, v in required_body.items() if k != "thinking"})
    assert caught.value.status_code == 400
    assert caught.value.body == expected_error({**required_body, "thinking": None})["error"]


def test_json_mode(oai: openai.OpenAI) -> None:
    body = chat_body(
        messages=[{"role": "user", "content": "Reply in json: an object with key a"}],
        response_format={"type": "json_object"},
        max_tokens=32,
        **NO_THINKING,
    )
    response = create(oai, body)
    finish = response.choices[0].finish_reason
    content = response.choices[0].message.content
    assert finish in ("stop", "length") and isinstance(content, str)
    if finish == "stop":  # a complete answer is the JSON object the grammar enforced
        assert isinstance(json.loads(content), dict)


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


def test_reasoning_content_pass_back(oai: openai.OpenAI) -> None:
    passed = create(oai, chat_body(messages=tool_history(True), tools=[WEATHER_TOOL], max_tokens=8))
    assert passed.choices[0].finish_reason in ("stop", "length", "tool_calls")
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


def test_wrong_key_is_official_401(live: LiveServer) -> None:
    client = openai.OpenAI(
        base_url=f"{live.base_url}/v1", api_key="sk-wrong-key-9876", max_retries=0
    )
    with pytest.raises(openai.AuthenticationError) as caught:
        client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "hi"}])
    assert caught.value.response.json() == {
        "error": {
            "message": "Authentication Fails, Your api key: ****9876 is invalid",
            "type": "authentication_error",
            "param": None,
            "code": "invalid_request_error",
        }
    }


def test_cache_hits_on_repeated_prefix(oai: openai.OpenAI, live: LiveServer) -> None:
    system = "You are a careful assistant. " * 12 + secrets.token_hex(8)
    body = chat_body(
        messages=[{"role": "system", "content": system}, {"role": "user", "content": "Hi"}],
        max_tokens=4,
        **NO_THINKING,
    )
    first = create(oai, body)
    second = create(oai, body)
    prompt = first.usage.prompt_tokens
    assert second.usage.prompt_tokens == prompt
    block = live.engine.core.config.block_size
    # Every full block before the one holding the last prompt token is reused (docs/engine.md).
    expected_hits = (prompt - 1) // block * block
    assert expected_hits > 0
    extra = second.usage.model_extra or {}
    assert extra["prompt_cache_hit_tokens"] == expected_hits
    assert extra["prompt_cache_miss_tokens"] == prompt - expected_hits
    assert second.usage.prompt_tokens_details.cached_tokens == expected_hits


def test_responses_api(oai: openai.OpenAI) -> None:
    response = oai.responses.create(
        model=MODEL, input="Say hello", max_output_tokens=16, reasoning={"effort": "none"}
    )
    assert response.object == "response"
    assert response.status in ("completed", "incomplete")
    assert response.usage is not None and response.usage.output_tokens >= 1
    events = list(
        oai.responses.create(model=MODEL, input="Say hello", max_output_tokens=8, stream=True)
    )
    assert events[0].type == "response.created"
    assert events[-1].type in ("response.completed", "response.incomplete")
    numbers = [e.sequence_number for e in events]
    assert numbers == list(range(len(events)))


def test_logprobs(oai: openai.OpenAI) -> None:
    response = create(oai, chat_body(max_tokens=4, logprobs=True, top_logprobs=2, **NO_THINKING))
    content = response.choices[0].logprobs.content
    assert content
    for entry in content:
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
