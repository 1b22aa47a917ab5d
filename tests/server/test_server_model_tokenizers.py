"""Each model version's answers are decoded and counted with that version's tokenizer, and a V4
model never samples the ids only V4.1 has (model_tokenizers.py).

A V4 answer whose reasoning holds the text `<｜System｜>` counts it as the V4 tokenizer does (five
tokens), as the official V4 count and the conformance suite's `usage.reasoning_tokens` have it; a
V4.1 answer counts it as one special token.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from deepseek_recipe import ConversionOptions, ImageResolver, Tokenizer
from deepseek_recipe_engine.model_tokenizers import ModelTokenizers
from deepseek_recipe_engine.preparation import PreparedRequest, RequestPreparer
from deepseek_recipe_engine.remote import RemoteOptions
from deepseek_recipe_engine.server import ServerSettings
from deepseek_recipe_engine.vllm_backend import VllmBackend
from tests.server.fake_backends import FakeServer, Script, start_fake
from tests.server.live import API_KEY, LiveServer, serve_backend

SYSTEM = "<｜System｜>"
V4_VOCAB = Tokenizer.deepseek_v4().vocab_size
V41_VOCAB = Tokenizer.deepseek_v41().vocab_size


def thinking_chat(model: str) -> dict[str, Any]:
    return {
        "model": model,
        "messages": [{"role": "user", "content": "Hi"}],
        "thinking": {"type": "enabled"},
        "max_tokens": 32,
    }


def test_each_version_has_its_tokenizer() -> None:
    tokenizers = ModelTokenizers.load()
    assert tokenizers.of("DeepseekV4Pro").count(SYSTEM, allow_special=True) == 5
    assert tokenizers.of("DeepseekV41Flash").count(SYSTEM, allow_special=True) == 1
    assert tokenizers.vocab_size == V41_VOCAB > V4_VOCAB


def test_absent_ids_are_v41_additions_for_v4_only() -> None:
    tokenizers = ModelTokenizers.load()
    assert tokenizers.absent_ids("DeepseekV4Pro", V41_VOCAB) == list(range(V4_VOCAB, V41_VOCAB))
    assert tokenizers.absent_ids("DeepseekV41Flash", V41_VOCAB) == []
    assert tokenizers.absent_ids("DeepseekV4Pro", None) == []  # a remote model's own business
    assert tokenizers.absent_ids("DeepseekV4Pro", V4_VOCAB) == []  # a V4-sized model lacks them


def test_a_tokenizer_file_gets_the_v41_tokens_for_v41_only(tmp_path: Path) -> None:
    path = tmp_path / "tokenizer.json"
    path.write_text(Tokenizer.deepseek_v4_json(), encoding="utf-8")
    tokenizers = ModelTokenizers.load(str(path))
    assert tokenizers.v4.vocab_size == V4_VOCAB
    assert tokenizers.v41.vocab_size == V41_VOCAB
    assert tokenizers.of("DeepseekV4Pro").token_to_id(SYSTEM) is None


def prepared(body: dict[str, Any], model_vocab: int | None) -> PreparedRequest:
    preparer = RequestPreparer(
        tokenizers=ModelTokenizers.load(),
        model_vocab=model_vocab,
        options=ConversionOptions(),
        context_limit=4096,
        enforcement="logits_processor",
        max_completion_tokens=None,
        image_resolver=ImageResolver(),
        threads=1,
        image_threads=1,
    )
    try:
        result = asyncio.run(preparer.prepare(json.dumps(body).encode(), "chat_completions"))
    finally:
        preparer.close()
    assert isinstance(result, PreparedRequest)
    return result


def test_a_v4_generation_never_samples_v41_only_ids() -> None:
    v4 = prepared(thinking_chat("DeepSeek-V4-Pro"), V41_VOCAB).generation
    v41 = prepared(thinking_chat("DeepSeek-V4.1-Flash"), V41_VOCAB).generation
    assert set(range(V4_VOCAB, V41_VOCAB)) <= set(v4.banned_token_ids)
    assert not set(range(V4_VOCAB, V41_VOCAB)) & set(v41.banned_token_ids)


@pytest.fixture
def system_text_backend() -> Iterator[LiveServer]:
    """A server over a scripted vLLM whose answer is reasoning `<｜System｜>` (spelled by the V4
    tokenizer's five ids), then `</think>` and `Hi`."""
    v4 = Tokenizer.deepseek_v4()
    think_end = v4.token_to_id("</think>")
    assert think_end is not None
    script = Script(chunks=[v4.encode(SYSTEM), [think_end], v4.encode("Hi")], finish="stop")
    fake: FakeServer = start_fake("vllm", script)
    settings = ServerSettings(api_key=API_KEY, default_seed=3)
    backend = VllmBackend([fake.url], context_limit=script.max_model_len, options=RemoteOptions())
    live = serve_backend(settings, backend)
    yield live
    live.stop()
    fake.stop()


@pytest.mark.parametrize(
    ("model", "reasoning_tokens"), [("DeepSeek-V4-Pro", 5), ("DeepSeek-V4.1-Flash", 1)]
)
def test_reasoning_tokens_use_the_models_tokenizer(
    system_text_backend: LiveServer, model: str, reasoning_tokens: int
) -> None:
    answer = httpx.post(
        f"{system_text_backend.base_url}/v1/chat/completions",
        json=thinking_chat(model),
        headers={"authorization": f"Bearer {API_KEY}"},
        timeout=30,
    ).json()
    assert answer["choices"][0]["message"]["reasoning_content"] == SYSTEM
    assert answer["choices"][0]["message"]["content"] == "Hi"
    assert answer["usage"]["completion_tokens_details"]["reasoning_tokens"] == reasoning_tokens
