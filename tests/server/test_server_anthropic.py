"""The official `anthropic` SDK against the live reference server (Messages, x-api-key auth)."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from deepseek_recipe import ConversionError, convert, count_prompt_tokens
from tests.server.conftest import SERVER_OPTIONS
from tests.server.live import LiveServer

MODEL = "DeepSeek-V4-Pro"
MESSAGES: list[dict[str, Any]] = [{"role": "user", "content": "Hello!"}]


def test_plain_message(claude: anthropic.Anthropic) -> None:
    message = claude.messages.create(
        model=MODEL, max_tokens=8, messages=MESSAGES, thinking={"type": "disabled"}
    )
    assert message.type == "message"
    assert message.role == "assistant"
    assert [block.type for block in message.content] == ["text"]
    assert message.stop_reason in ("end_turn", "max_tokens")
    body = {
        "model": MODEL,
        "max_tokens": 8,
        "messages": MESSAGES,
        "thinking": {"type": "disabled"},
    }
    assert message.usage.input_tokens == count_prompt_tokens(body, protocol="messages")
    assert 1 <= message.usage.output_tokens <= 8


def test_thinking_stream(claude: anthropic.Anthropic, live: LiveServer) -> None:
    with claude.messages.stream(model=MODEL, max_tokens=12, messages=MESSAGES) as stream:
        events = list(stream)
        final = stream.get_final_message()
    assert events[0].type == "message_start"
    assert events[-1].type == "message_stop"
    assert final.content[0].type == "thinking"
    assert final.stop_reason in ("end_turn", "max_tokens")
    assert final.usage.output_tokens >= 1
    assert live.wait_blocks_free()


def test_tool_use_named_with_thinking_off(claude: anthropic.Anthropic) -> None:
    tool = {
        "name": "get_weather",
        "description": "Current weather of a city",
        "input_schema": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    }
    message = claude.messages.create(
        model=MODEL,
        max_tokens=48,
        messages=[{"role": "user", "content": "Weather in Paris?"}],
        tools=[tool],
        tool_choice={"type": "tool", "name": "get_weather"},
        thinking={"type": "disabled"},
    )
    assert message.stop_reason in ("tool_use", "max_tokens")
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


def test_wrong_key_is_401(live: LiveServer) -> None:
    client = anthropic.Anthropic(
        base_url=f"{live.base_url}/anthropic", api_key="sk-bad-1234", max_retries=0
    )
    with pytest.raises(anthropic.AuthenticationError) as caught:
        client.messages.create(model=MODEL, max_tokens=4, messages=MESSAGES)
    assert caught.value.response.json()["error"]["type"] == "authentication_error"
    assert caught.value.response.json()["error"]["message"].endswith("****1234 is invalid")


def test_v1_path_works_too(live: LiveServer) -> None:
    from tests.server.live import API_KEY

    client = anthropic.Anthropic(base_url=live.base_url, api_key=API_KEY, max_retries=0)
    message = client.messages.create(model=MODEL, max_tokens=4, messages=MESSAGES)
    assert message.usage.output_tokens >= 1
