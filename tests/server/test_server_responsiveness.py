"""A request that takes seconds to prepare does not stall the other streams: conversion and
encoding run off the event loop, and slow image hosts hold up only the requests naming them."""

from __future__ import annotations

import asyncio
import http.server
import json
import random
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from deepseek_recipe import FetchPolicy, ImageResolver, Tokenizer
from deepseek_recipe_engine import EngineConfig
from deepseek_recipe_engine.server import ServerSettings
from tests.image_generators import generate
from tests.server.live import API_KEY, LiveServer, start_server

HEADERS = {"authorization": f"Bearer {API_KEY}"}
MAX_BODY_BYTES = 32 * 1024 * 1024  # room for a heavy message on a fast machine
PNG = generate(
    {
        "name": "png",
        "width": 32,
        "height": 32,
        "color_type": 2,
        "bit_depth": 8,
        "pattern": {"type": "linear", "k0": [10, 20, 30], "kx": [3, 5, 7], "ky": [1, 2, 3]},
    },
    {},
)
# The heavy message's encode time alone (prepared beside a stream: more), timed at this machine's
# quicker speed (the faster of two runs: the VM has slow phases, and a size measured in one would
# make the request too quick to show a stall once the phase passes).
ENCODE_TARGET_S = 2.0


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    live = start_server(
        ServerSettings(api_key=API_KEY, max_body_bytes=MAX_BODY_BYTES),
        EngineConfig(model="tiny", max_model_len=4096),
    )
    yield live
    live.stop()


def encode_seconds(tokenizer: Tokenizer, text: str) -> float:
    """Seconds `tokenizer` takes to encode `text` once."""
    start = time.perf_counter()
    tokenizer.encode(text)
    return time.perf_counter() - start


def heavy_body() -> bytes:
    """A message that takes about `ENCODE_TARGET_S` to encode on this machine, far over the
    context: random letters without a space, the slowest text there is (one pre-token whose
    pairs do not repeat, merged one pair at a time; a run of one letter merges every occurrence
    of a pair per pass, 100 MB/s and more)."""
    tokenizer = Tokenizer.deepseek_v41().with_threads(1)
    to_letters = bytes(ord("a") + byte % 26 for byte in range(256))
    word = random.Random(7).randbytes(MAX_BODY_BYTES // 2).translate(to_letters).decode()
    size, elapsed = 16 * 1024, 0.0
    while elapsed < ENCODE_TARGET_S / 2 and size < len(word) // 2:
        size *= 2
        elapsed = min(encode_seconds(tokenizer, word[:size]) for _ in range(2))
    size = min(len(word), int(size * ENCODE_TARGET_S / elapsed))
    message = {"role": "user", "content": word[:size]}
    body = {"model": "DeepSeek-V4-Pro", "messages": [message], "thinking": {"type": "disabled"}}
    return json.dumps(body).encode()


async def stream_gaps(client: httpx.AsyncClient, stop: asyncio.Event) -> list[tuple[float, float]]:
    """(arrival time, gap since the previous chunk) of a long stream, until `stop` is set."""
    body = {
        "model": "DeepSeek-V4-Pro",
        "messages": [{"role": "user", "content": "Tell me a long story."}],
        "max_tokens": 4000,
        "stream": True,
        "thinking": {"type": "disabled"},
    }
    arrivals: list[tuple[float, float]] = []
    async with client.stream("POST", "/v1/chat/completions", json=body) as response:
        assert response.status_code == 200
        last = time.perf_counter()
        async for _ in response.aiter_raw():
            now = time.perf_counter()
            arrivals.append((now, now - last))
            last = now
            if stop.is_set():
                break
    return arrivals


async def heavy_request(
    client: httpx.AsyncClient, body: bytes, stop: asyncio.Event
) -> tuple[float, float, httpx.Response]:
    await asyncio.sleep(0.5)  # the stream is flowing
    start = time.perf_counter()
    response = await client.post("/v1/chat/completions", content=body)
    end = time.perf_counter()
    stop.set()
    return start, end, response


async def run(
    base_url: str, body: bytes
) -> tuple[list[tuple[float, float]], float, float, httpx.Response]:
    stop = asyncio.Event()
    async with httpx.AsyncClient(base_url=base_url, headers=HEADERS, timeout=120) as client:
        arrivals, (start, end, response) = await asyncio.gather(
            stream_gaps(client, stop), heavy_request(client, body, stop)
        )
    return arrivals, start, end, response


def test_a_heavy_request_does_not_stall_other_streams(server: LiveServer) -> None:
    arrivals, start, end, response = asyncio.run(run(server.base_url, heavy_body()))
    assert response.status_code == 400
    assert "maximum context length" in response.json()["error"]["message"]
    heavy_s = end - start
    assert heavy_s > 1.0, "the heavy request was too quick to show a stall"
    # The chunk that arrives first after a stall (at the latest just after the heavy answer)
    # carries the stall as its gap.
    during = [gap for arrived, gap in arrivals if start < arrived <= end + 1.0]
    assert arrivals[-1][0] > end, "the stream ended before the heavy request"
    longest = max(during)
    print(f"\nheavy request {heavy_s:.2f} s; longest stream gap meanwhile {longest:.3f} s")
    assert longest < heavy_s / 2


class SlowImageHost(http.server.BaseHTTPRequestHandler):
    """Answers every GET with a small PNG after `DELAY_S` seconds."""

    DELAY_S = 3.0

    def do_GET(self) -> None:
        time.sleep(self.DELAY_S)
        self.send_response(200)
        self.send_header("content-type", "image/png")
        self.send_header("content-length", str(len(PNG)))
        self.end_headers()
        self.wfile.write(PNG)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.fixture(scope="module")
def image_host() -> Iterator[str]:
    host = http.server.ThreadingHTTPServer(("127.0.0.1", 0), SlowImageHost)
    thread = threading.Thread(target=host.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{host.server_address[1]}/image.png"
    host.shutdown()
    host.server_close()


@pytest.fixture(scope="module")
def one_thread_server() -> Iterator[LiveServer]:
    """One preparation thread; image URLs on loopback allowed (the slow host is local)."""
    resolver = ImageResolver(fetch=FetchPolicy(allow_special_addresses=True))
    live = start_server(
        ServerSettings(
            api_key=API_KEY,
            prepare_threads=1,
            image_resolver=resolver,
            max_completion_tokens=2,
        )
    )
    yield live
    live.stop()


async def timed_post(client: httpx.AsyncClient, body: dict[str, object]) -> tuple[float, int]:
    start = time.perf_counter()
    response = await client.post("/v1/chat/completions", json=body)
    return time.perf_counter() - start, response.status_code


async def slow_images_beside_a_plain_request(base_url: str, image_url: str) -> list[float]:
    content = [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": image_url, "detail": "low"}},
    ]
    with_image = {
        "model": "DeepSeek-V4.1-Flash",
        "messages": [{"role": "user", "content": content}],
        "thinking": {"type": "disabled"},
    }
    plain = {
        "model": "DeepSeek-V4-Pro",
        "messages": [{"role": "user", "content": "Hi"}],
        "thinking": {"type": "disabled"},
    }

    async def plain_after_the_images() -> tuple[float, int]:
        await asyncio.sleep(0.5)  # the image requests hold their threads by now
        return await timed_post(client, plain)

    async with httpx.AsyncClient(base_url=base_url, headers=HEADERS, timeout=60) as client:
        answers = await asyncio.gather(
            timed_post(client, with_image),
            timed_post(client, with_image),
            plain_after_the_images(),
        )
    assert [status for _, status in answers] == [200, 200, 200]
    return [elapsed for elapsed, _ in answers]


def test_slow_image_hosts_hold_up_only_their_requests(
    one_thread_server: LiveServer, image_host: str
) -> None:
    first, second, plain = asyncio.run(
        slow_images_beside_a_plain_request(one_thread_server.base_url, image_host)
    )
    assert min(first, second) >= SlowImageHost.DELAY_S
    assert plain < SlowImageHost.DELAY_S / 2
