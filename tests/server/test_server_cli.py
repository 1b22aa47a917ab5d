"""`deepseek-recipe serve` and `python -m deepseek_recipe_engine` start a working server, as the
docs show, with the official defaults."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import httpx
import openai
import pytest

from deepseek_recipe.cli import build_parser
from deepseek_recipe.cli.serve_cmd import (
    RANDOM_WEIGHTS_COMPLETION_CAP,
    backend_problem,
    completion_cap,
    conversion_options,
)
from tests.server.fake_backends import Script, closed_port, start_fake
from tests.server.test_server_openai import WEATHER_TOOL, tool_history


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_up(base_url: str, process: subprocess.Popen[bytes], timeout_s: float = 180) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}")
        try:
            if httpx.get(f"{base_url}/v1/models", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.2)
    raise TimeoutError("server did not come up")


@pytest.mark.parametrize(
    "command",
    [["-m", "deepseek_recipe.cli", "serve"], ["-m", "deepseek_recipe_engine"]],
    ids=["deepseek-recipe-serve", "python-m-engine"],
)
def test_command_serves_chat(command: list[str]) -> None:
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        [sys.executable, *command, "--port", str(port), "--threads", "1", "--log-level", "warning"]
    )
    try:
        wait_until_up(base_url, process)
        client = openai.OpenAI(base_url=f"{base_url}/v1", api_key="unused", max_retries=0)
        response = client.chat.completions.create(
            model="DeepSeek-V4-Pro",
            messages=[{"role": "user", "content": "Hello!"}],
            max_tokens=4,
        )
        assert response.usage is not None and 1 <= response.usage.completion_tokens <= 4
        # The default is the official pass-back rule: a tool call without its reasoning is a 400.
        missing = httpx.post(
            f"{base_url}/v1/chat/completions",
            json={
                "model": "DeepSeek-V4-Pro",
                "messages": tool_history(False),
                "tools": [WEATHER_TOOL],
            },
            timeout=60,
        )
        assert missing.status_code == 400 and "reasoning_content" in missing.text
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_serve_help_lists_options() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "deepseek_recipe.cli", "serve", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    for option in ("--host", "--port", "--model", "--api-key", "--reasoning-content-behavior"):
        assert option in done.stdout
    for option in ("--backend", "--backend-url", "--backend-timeout", "--backend-retry"):
        assert option in done.stdout


def serve_args(*argv: str):
    return build_parser().parse_args(["serve", *argv])


def test_pass_back_defaults_to_the_official_rejection(tmp_path):
    assert conversion_options(serve_args()).reasoning_content_behavior == "reject"
    flag = serve_args("--reasoning-content-behavior", "fill_empty")
    assert conversion_options(flag).reasoning_content_behavior == "fill_empty"
    path = tmp_path / "options.json"
    path.write_text('{"reasoning_content_behavior": "fill_empty"}', encoding="utf-8")
    from_file = serve_args("--conversion-options", str(path))
    assert conversion_options(from_file).reasoning_content_behavior == "fill_empty"


def test_completion_cap_defaults_to_a_cap_only_for_random_weights():
    assert completion_cap(serve_args()) == RANDOM_WEIGHTS_COMPLETION_CAP
    assert completion_cap(serve_args("--weights", "model.safetensors")) is None
    assert completion_cap(serve_args("--max-completion-tokens", "0")) is None
    assert completion_cap(serve_args("--max-completion-tokens", "7", "--weights", "w")) == 7
    with pytest.raises(SystemExit):
        serve_args("--max-completion-tokens", "-1")


def test_backend_options_are_checked():
    assert backend_problem(serve_args()) is None
    assert backend_problem(serve_args("--backend", "vllm", "--backend-url", "http://h")) is None
    assert "--backend-url" in (backend_problem(serve_args("--backend", "sglang")) or "")
    assert "--backend" in (backend_problem(serve_args("--backend-url", "http://h")) or "")
    with pytest.raises(SystemExit):
        serve_args("--backend", "tgi")


def test_no_completion_cap_in_front_of_a_backend():
    assert completion_cap(serve_args("--backend", "vllm", "--backend-url", "http://h")) is None


def test_serve_without_a_reachable_backend_says_so():
    url = f"http://127.0.0.1:{closed_port()}"
    command = ["serve", "--backend", "vllm", "--backend-url", url, "--backend-connect-timeout", "2"]
    done = subprocess.run(
        [sys.executable, "-m", "deepseek_recipe.cli", *command],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert url in done.stderr and "--max-model-len" in done.stderr


def test_serve_in_front_of_vllm_answers_and_reports_the_prompt_echo():
    fake = start_fake("vllm", Script(max_model_len=3000))
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    command = ["serve", "--backend", "vllm", "--backend-url", fake.url, "--port", str(port)]
    process = subprocess.Popen(
        [sys.executable, "-m", "deepseek_recipe.cli", *command, "--log-level", "info"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until_up(base_url, process)
        client = openai.OpenAI(base_url=f"{base_url}/v1", api_key="unused", max_retries=0)
        response = client.chat.completions.create(
            model="DeepSeek-V4-Pro", messages=[{"role": "user", "content": "Hello!"}]
        )
        assert response.usage is not None and response.usage.completion_tokens == 3
        # No cap in front of a backend: the budget is the official one within vLLM's context.
        assert fake.generations()[0]["max_tokens"] > 32
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=30)
        fake.stop()
    assert "prompt ids echoed by vLLM: 1 identical, 0 different, 0 missing" in stderr
