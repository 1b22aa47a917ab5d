"""The official `anthropic` SDK against the live reference server (Messages, x-api-key auth).

Messages requests carry no seed: the server seeds them (conftest.py), so each answer is compared
whole with the oracle's (tests/server/oracle.py); every answer and stream event the SDK reads is
also validated strictly against the SDK's types (conftest.py).
"""

from __future__ import annotations

from typing import Any

import anthropic
import pytest
from anthropic.types import Message, MessageParam

from deepseek_recipe import ConversionError, convert, count_prompt_tokens
from tests.server.conftest import SERVER_OPTIONS, anthropic_client
from tests.server.live import API_KEY, LiveServer
from tests.server.oracle import Oracle, normalised
from tests.server.recording import Recorder

MODEL = "DeepSeek-V4-Pro"
MESSAGES: list[MessageParam] = [{"role": "user", "content": "Hello!"}]
WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Current weather of a city",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}


def complete(
    claude: anthropic.Anthropic, oracle: Oracle, body: dict[str, Any]
) -> tuple[Message, dict[str, Any]]:
    """The SDK's message and the JSON it came from, which must be the oracle's answer."""
    raw = claude.messages.with_raw_response.create(**body)
    answer = raw.http_response.json()
    assert normalised(answer) == oracle.answer(body, "messages", answer)
    return raw.parse(), answer


def test_plain_message(claude: anthropic.Anthropic, oracle: Oracle) -> None:
    body = {"model": MODEL, "max_tokens": 8, "messages": MESSAGES, "thinking": {"type": "disabled"}}
    message, answer = complete(claude, oracle, body)
    assert message.type == "message"
    assert message.role == "assistant"
    assert [block.type for block in message.content] == ["text"]
    assert message.stop_reason == answer["stop_reason"]
    usage = message.usage
    prompt = usage.input_tokens + (usage.cache_read_input_tokens or 0)
    assert prompt == count_prompt_tokens(body, protocol="messages")


def test_thinking_stream(claude: anthropic.Anthropic, oracle: Oracle, live: LiveServer) -> None:
    body = {"model": MODEL, "max_tokens": 12, "messages": MESSAGES}
    with claude.messages.stream(**body) as stream:
        events = list(stream)
        final = stream.get_final_message()
    assert events[0].type == "message_start"
    assert events[-1].type == "message_stop"
    assert final.content[0].type == "thinking"
    # The SDK's accumulation of the stream is the complete answer the oracle expects (as SDK
    # messages: the accumulation also sets fields the wire leaves out, to their defaults).
    accumulated = final.to_dict(mode="json")
    expected = oracle.answer({**body, "stream": True}, "messages", accumulated)
    assert Message.model_validate(normalised(accumulated)) == Message.model_validate(expected)
    assert live.wait_idle()


def test_tool_use_named_with_thinking_off(claude: anthropic.Anthropic, oracle: Oracle) -> None:
    body = {
        "model": MODEL,
        "max_tokens": 48,
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [WEATHER_TOOL],
        "tool_choice": {"type": "tool", "name": "get_weather"},
        "thinking": {"type": "disabled"},
    }
    message = complete(claude, oracle, body)[0]
    uses = [block for block in message.content if block.type == "tool_use"]
    assert uses and all(block.name == "get_weather" for block in uses)


def test_invalid_request_official_body(claude: anthropic.Anthropic) -> None:
    body = {"model": MODEL, "max_tokens": 8, "messages": MESSAGES, "temperature": 5}
    with pytest.raises(anthropic.APIStatusError) as caught:
        claude.messages.create(
            model=MODEL, max_tokens=8, messages=MESSAGES, extra_body={"temperature": 5}
        )
    with pytest.raises(ConversionError) as official:
        convert(body, protocol="messages", options=SERVER_OPTIONS)
    assert caught.value.status_code == official.value.status_code
    assert caught.value.response.json() == official.value.body


def test_wrong_key_is_401(live: LiveServer, recorder: Recorder) -> None:
    client = anthropic_client(f"{live.base_url}/anthropic", recorder, "sk-bad-1234")
    with client, pytest.raises(anthropic.AuthenticationError) as caught:
        client.messages.create(model=MODEL, max_tokens=4, messages=MESSAGES)
    assert caught.value.response.json()["error"]["type"] == "authentication_error"
    assert caught.value.response.json()["error"]["message"].endswith("****1234 is invalid")


def test_v1_path_works_too(live: LiveServer, recorder: Recorder, oracle: Oracle) -> None:
    with anthropic_client(live.base_url, recorder, API_KEY) as client:
        complete(client, oracle, {"model": MODEL, "max_tokens": 4, "messages": MESSAGES})
