"""`DeepSeek-V4.1-Flash` on the server: thinking, system messages and images work, and usage
counts prompt tokens as `count_prompt_tokens` does (images included)."""

from __future__ import annotations

import base64
from typing import Any

import anthropic
import openai
import pytest

from deepseek_recipe import Tokenizer, count_prompt_tokens
from deepseek_recipe.requests import Protocol
from tests.image_generators import generate
from tests.server.conftest import SERVER_OPTIONS
from tests.server.live import LiveServer

MODEL = "DeepSeek-V4.1-Flash"
PNG = generate(
    {
        "name": "png",
        "width": 64,
        "height": 48,
        "color_type": 2,
        "bit_depth": 8,
        "pattern": {"type": "linear", "k0": [10, 20, 30], "kx": [3, 5, 7], "ky": [1, 2, 3]},
    },
    {},
)
IMAGE_URL = "data:image/png;base64," + base64.b64encode(PNG).decode()


def billed(body: dict[str, Any], protocol: Protocol = "chat_completions") -> int:
    """The official prompt count of a V4.1 request."""
    return count_prompt_tokens(
        body, protocol=protocol, options=SERVER_OPTIONS, tokenizer=Tokenizer.deepseek_v41()
    )


def chat(oai: openai.OpenAI, body: dict[str, Any]) -> Any:
    extra = {k: v for k, v in body.items() if k not in ("model", "messages", "max_tokens")}
    return oai.chat.completions.create(
        model=body["model"],
        messages=body["messages"],
        max_tokens=body["max_tokens"],
        extra_body=extra or None,
    )


SYSTEM_AND_USER = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "Hello!"},
]


@pytest.mark.parametrize("thinking", [None, "disabled"], ids=["thinking-default", "no-thinking"])
def test_system_message_with_and_without_thinking(oai: openai.OpenAI, thinking: str | None) -> None:
    body: dict[str, Any] = {"model": MODEL, "messages": SYSTEM_AND_USER, "max_tokens": 6}
    if thinking is not None:
        body["thinking"] = {"type": thinking}
    response = chat(oai, body)
    assert response.model == MODEL
    assert response.choices[0].finish_reason in ("stop", "length")
    assert response.usage is not None
    assert response.usage.prompt_tokens == billed(body)


def test_streamed_and_mid_conversation_system(oai: openai.OpenAI) -> None:
    messages = [
        *SYSTEM_AND_USER,
        {"role": "assistant", "content": "Hi."},
        {"role": "system", "content": "Now answer in French."},
        {"role": "user", "content": "Bye!"},
    ]
    body = {"model": MODEL, "messages": messages, "max_tokens": 6}
    chunks = list(
        oai.chat.completions.create(
            model=MODEL,
            messages=messages,  # type: ignore[arg-type]
            max_tokens=6,
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    usage = chunks[-1].usage
    assert usage is not None and usage.prompt_tokens == billed(body)


def test_images_count_in_prompt_tokens(oai: openai.OpenAI, live: LiveServer) -> None:
    content = [
        {"type": "text", "text": "What is in this picture?"},
        {"type": "image_url", "image_url": {"url": IMAGE_URL, "detail": "low"}},
    ]
    body = {
        "model": MODEL,
        "messages": [{"role": "user", "content": content}],
        "max_tokens": 4,
        "thinking": {"type": "disabled"},
    }
    without_image = {**body, "messages": [{"role": "user", "content": content[:1]}]}
    response = chat(oai, body)
    assert response.usage is not None
    assert response.usage.prompt_tokens == billed(body)
    # The image costs more than its one placeholder token.
    assert response.usage.prompt_tokens > billed(without_image) + 1
    assert live.wait_blocks_free()


def test_messages_api_with_system(claude: anthropic.Anthropic) -> None:
    body = {
        "model": MODEL,
        "max_tokens": 6,
        "system": "You are terse.",
        "messages": [{"role": "user", "content": "Hello!"}],
    }
    message = claude.messages.create(**body)  # type: ignore[arg-type]
    usage = message.usage
    # Anthropic's input_tokens leave out the prompt's cache hits.
    assert usage.input_tokens + (usage.cache_read_input_tokens or 0) == billed(body, "messages")
    assert message.content[0].type == "thinking"
