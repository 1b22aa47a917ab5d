"""`deepseek-recipe serve` and `python -m deepseek_recipe_engine` start a working server, as the docs show."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import httpx
import openai
import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_up(base_url: str, process: subprocess.Popen[bytes], timeout_s: float = 60) -> None:
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
