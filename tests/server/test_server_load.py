"""Bounded load test on loopback: 200 concurrent streaming requests, no errors, no leaks.

The server runs in a process of its own (`tests/server/server_process.py`), which reports its own
memory, cache blocks and live Python objects, so the client's allocations and the rest of the
test session do not count.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.server.live import API_KEY

CONCURRENT = 200
MAX_TOKENS = 4
TIME_LIMIT_S = 90.0
# After a warm-up round, a round of 200 requests must leave the server's memory and its live
# Python objects where they were (give or take allocator noise): a leak of even one small
# object per request shows.
RSS_GROWTH_LIMIT_BYTES = 16 * 1024 * 1024
OBJECT_GROWTH_LIMIT = CONCURRENT // 2
REPO = Path(__file__).resolve().parents[2]


@dataclass
class ServerProcess:
    """The server process: its base URL and a way to ask for its state."""

    process: subprocess.Popen[str]
    base_url: str

    def state(self) -> dict[str, Any]:
        """The server's own state once idle (see server_process.py)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write("state\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.server.server_process"],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdin is not None
    try:
        yield ServerProcess(process, process.stdout.readline().strip())
    finally:
        process.stdin.close()
        process.wait(timeout=30)
        process.stdout.close()


async def one_stream(client: httpx.AsyncClient, index: int) -> tuple[float, int]:
    """(time to first token in seconds, completion tokens) of one streamed chat request."""
    body = {
        "model": "DeepSeek-V4-Pro",
        "messages": [{"role": "user", "content": f"Request number {index}: say something."}],
        "max_tokens": MAX_TOKENS,
        "stream": True,
        "stream_options": {"include_usage": True},
        "thinking": {"type": "disabled"},
    }
    start = time.perf_counter()
    first_token: float | None = None
    usage: dict[str, int] | None = None
    done = False
    async with client.stream("POST", "/v1/chat/completions", json=body) as response:
        assert response.status_code == 200, await response.aread()
        async for line in response.aiter_lines():
            if not line.startswith("data: "):
                continue
            data = line.removeprefix("data: ")
            if data == "[DONE]":
                done = True
                continue
            chunk = json.loads(data)
            if first_token is None and any(c["delta"].get("content") for c in chunk["choices"]):
                first_token = time.perf_counter() - start
            usage = chunk.get("usage") or usage
    assert done and usage is not None
    return (first_token if first_token is not None else time.perf_counter() - start), usage[
        "completion_tokens"
    ]


async def run_load(base_url: str, count: int) -> tuple[list[tuple[float, int]], float]:
    limits = httpx.Limits(max_connections=count, max_keepalive_connections=count)
    headers = {"authorization": f"Bearer {API_KEY}"}
    async with httpx.AsyncClient(
        base_url=base_url, headers=headers, limits=limits, timeout=TIME_LIMIT_S
    ) as client:
        start = time.perf_counter()
        results = await asyncio.wait_for(
            asyncio.gather(*(one_stream(client, i) for i in range(count))), TIME_LIMIT_S
        )
        return results, time.perf_counter() - start


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def test_200_concurrent_streams(server: ServerProcess) -> None:
    # A first full round warms allocator pools, caches and code paths.
    warm_up, _ = asyncio.run(run_load(server.base_url, CONCURRENT))
    assert len(warm_up) == CONCURRENT
    before = server.state()
    results, wall = asyncio.run(run_load(server.base_url, CONCURRENT))
    after = server.state()
    assert len(results) == CONCURRENT
    assert after["idle"] and after["in_flight"] == 0
    assert after["free_blocks"] == after["blocks"], "cache blocks leaked"
    growth = after["rss_bytes"] - before["rss_bytes"]
    objects = after["python_objects"] - before["python_objects"]
    ttfts = [ttft for ttft, _ in results]
    tokens = sum(count for _, count in results)
    # A request ends at its budget or earlier at end-of-sentence (the random model emits it too).
    assert all(1 <= count <= MAX_TOKENS for _, count in results)
    print(
        f"\nload: {CONCURRENT} concurrent streams in {wall:.1f}s; "
        f"TTFT p50 {statistics.median(ttfts) * 1000:.0f} ms, "
        f"p99 {percentile(ttfts, 0.99) * 1000:.0f} ms; "
        f"{tokens / wall:.1f} completion tokens/s; server RSS growth {growth / 2**20:.1f} MiB, "
        f"{objects:+d} Python objects, {after['open_files']} open files"
    )
    assert growth < RSS_GROWTH_LIMIT_BYTES, f"server RSS grew by {growth / 2**20:.1f} MiB"
    assert objects < OBJECT_GROWTH_LIMIT, f"{objects} more Python objects in the server"
    assert after["open_files"] <= before["open_files"]
