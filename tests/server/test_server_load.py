"""Bounded load test on loopback: 200 concurrent streaming requests, no errors, no leaks."""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from deepseek_recipe_engine.server import ServerSettings
from tests.server.live import API_KEY, LiveServer, start_server

CONCURRENT = 200
MAX_TOKENS = 4
TIME_LIMIT_S = 90.0
RSS_GROWTH_LIMIT_BYTES = 24 * 1024 * 1024


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    live = start_server(ServerSettings(api_key=API_KEY, max_concurrent_requests=CONCURRENT))
    yield live
    live.stop()


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


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


def test_200_concurrent_streams(server: LiveServer) -> None:
    # A first full round warms allocator pools and code paths; memory must stay flat after it.
    warm_up, _ = asyncio.run(run_load(server.base_url, CONCURRENT))
    assert len(warm_up) == CONCURRENT
    assert server.wait_blocks_free()
    rss_before = rss_bytes()
    results, wall = asyncio.run(run_load(server.base_url, CONCURRENT))
    assert len(results) == CONCURRENT
    assert server.wait_blocks_free(), "cache blocks leaked"
    assert server.app_in_flight() == 0
    growth = rss_bytes() - rss_before
    ttfts = [ttft for ttft, _ in results]
    tokens = sum(count for _, count in results)
    # A request ends at its budget or earlier at end-of-sentence (the random model emits it too).
    assert all(1 <= count <= MAX_TOKENS for _, count in results)
    print(
        f"\nload: {CONCURRENT} concurrent streams in {wall:.1f}s; "
        f"TTFT p50 {statistics.median(ttfts) * 1000:.0f} ms, "
        f"p99 {percentile(ttfts, 0.99) * 1000:.0f} ms; "
        f"{tokens / wall:.1f} completion tokens/s; RSS growth {growth / 2**20:.1f} MiB"
    )
    assert growth < RSS_GROWTH_LIMIT_BYTES, f"RSS grew by {growth / 2**20:.1f} MiB"
