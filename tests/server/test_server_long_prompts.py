"""`deepseek-recipe serve` takes prompts longer than 4,096 tokens: the context is `--max-model-len`,
the KV cache is sized for it, and long prefixes are served from the prefix cache."""

from __future__ import annotations

import subprocess
import sys

import openai

from deepseek_recipe import count_prompt_tokens
from deepseek_recipe.cli import build_parser
from deepseek_recipe_engine.engine import EngineCore, build_model
from deepseek_recipe_engine.request import GenerationRequest
from deepseek_recipe_engine.serve import engine_config
from tests.server.test_server_cli import free_port, wait_until_up

LONG_CONTEXT = 65536


def test_serve_sizes_the_engine_for_a_64k_context():
    args = build_parser().parse_args(["serve", "--max-model-len", str(2 * LONG_CONTEXT)])
    config = engine_config(args)
    core = EngineCore(config, build_model(config))
    assert core.max_len == 2 * LONG_CONTEXT
    core.validate(GenerationRequest(prompt_ids=[3] * LONG_CONTEXT, max_tokens=1))


def test_a_prompt_over_4096_tokens_is_served_and_its_prefix_cached(tmp_path):
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "deepseek_recipe", "serve", "--port", str(port)]
    command += ["--max-model-len", "8192", "--threads", "1", "--log-level", "warning"]
    process = subprocess.Popen(command, cwd=tmp_path)
    try:
        wait_until_up(base_url, process)
        text = " ".join(f"item{i}" for i in range(2000))
        body = {
            "model": "DeepSeek-V4-Pro",
            "messages": [{"role": "user", "content": text}],
            "max_tokens": 2,
            "thinking": {"type": "disabled"},
        }
        expected_tokens = count_prompt_tokens(body)
        assert expected_tokens > 4096
        client = openai.OpenAI(base_url=f"{base_url}/v1", api_key="unused", max_retries=0)
        create = client.chat.completions.create
        arguments = {"model": body["model"], "messages": body["messages"], "max_tokens": 2}
        first = create(**arguments, extra_body={"thinking": body["thinking"]}, timeout=300)
        again = create(**arguments, extra_body={"thinking": body["thinking"]}, timeout=300)
        for response in (first, again):
            assert response.usage is not None
            assert response.usage.prompt_tokens == expected_tokens
            assert response.choices[0].finish_reason == "length"
        assert again.usage is not None and again.usage.model_extra is not None
        hits = again.usage.model_extra["prompt_cache_hit_tokens"]
        assert expected_tokens - 16 <= hits < expected_tokens
    finally:
        process.terminate()
        process.wait(timeout=30)
