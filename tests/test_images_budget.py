"""What one request may spend on images (issue #15 item 9): URL sources fetched concurrently
under a deadline, fetches that cannot succeed not retried, and a pixel budget for the CPU."""

from __future__ import annotations

import json
import struct
import threading
import time
import zlib
from collections.abc import Iterator
from dataclasses import asdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from deepseek_recipe import ImageError, _native
from deepseek_recipe.images import (
    FetchPolicy,
    ImageQuota,
    ImageResolver,
    ImageSource,
    ResolveBudget,
    RetryPolicy,
)

LOOPBACK = FetchPolicy(allow_special_addresses=True, connect_timeout_s=2, total_timeout_s=30)
RETRIES = RetryPolicy(attempts=4, initial_backoff_s=0.01)


def _png(width: int, height: int) -> bytes:
    """A gray RGB PNG of `width` x `height`."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    rows = b"".join(b"\x00" + b"\x80" * (3 * width) for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    signature = b"\x89PNG\r\n\x1a\n"
    return (
        signature
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


PNG_100x50 = _png(100, 50)
COST_100x50 = 100 * 50 + 770 * 392
"""Pixel cost of `PNG_100x50`: its area plus its 770x392 output's."""


class _Handler(BaseHTTPRequestHandler):
    hits: ClassVar[dict[str, int]] = {}

    def do_GET(self) -> None:
        _Handler.hits[self.path] = _Handler.hits.get(self.path, 0) + 1
        if self.path == "/slow":
            time.sleep(2)
            self._reply(200, PNG_100x50)
        elif self.path.startswith("/to/"):
            self.send_response(302)
            self.send_header("Location", self.path.removeprefix("/to/"))
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self._reply(200, PNG_100x50)

    def _reply(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_the_cores_default_budget_reaches_python() -> None:
    resolver = ImageResolver(offline=True, budget=ResolveBudget(concurrent_fetches=2))
    assert resolver.budget == ResolveBudget(
        deadline_s=60.0, concurrent_fetches=2, max_pixels=512 << 20
    )
    assert json.loads(_native.ImageResolver().budget_json()) == asdict(ImageResolver().budget)


def test_an_invalid_budget_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="invalid resolve budget: invalid number of seconds: -1"):
        ImageResolver(offline=True, budget=ResolveBudget(deadline_s=-1))
    with pytest.raises(ValueError, match="invalid resolve budget: invalid value: integer `-1`"):
        ImageResolver(offline=True, budget=ResolveBudget(max_pixels=-1))


def test_the_pixel_budget_spans_the_request() -> None:
    resolver = ImageResolver(offline=True, budget=ResolveBudget(max_pixels=2 * COST_100x50))
    quota = ImageQuota()
    image = ImageSource.from_bytes(PNG_100x50, path=".messages[0]")
    resolver.resolve([image], quota)
    assert quota.usage.pixels == COST_100x50
    with pytest.raises(ImageError) as info:
        resolver.resolve([image, image], quota)
    assert (info.value.kind, info.value.retryable) == ("TotalSizeTooLarge", False)
    assert str(info.value) == (
        ".messages[0]: Total image size exceeds the limit: "
        f"max {2 * COST_100x50} pixels per request, got {3 * COST_100x50} pixels"
    )
    assert quota.usage.pixels == COST_100x50


def test_urls_are_fetched_together(server: str) -> None:
    resolver = ImageResolver(fetch=LOOPBACK, budget=ResolveBudget(concurrent_fetches=4))
    sources = [ImageSource.from_url(f"{server}/image-{index}.png") for index in range(6)]
    resolved = resolver.resolve(sources)
    assert [(image.width, image.height) for image in resolved.images] == [(770, 392)] * 6


def test_the_deadline_ends_pending_fetches(server: str) -> None:
    resolver = ImageResolver(fetch=LOOPBACK, retry=RETRIES, budget=ResolveBudget(deadline_s=0.3))
    _Handler.hits.pop("/slow", None)
    with pytest.raises(ImageError) as info:
        resolver.resolve([ImageSource.from_url(f"{server}/slow", path="p")])
    assert (info.value.kind, info.value.retryable) == ("Fetch", True)
    assert str(info.value) == f"p.image[0]: Failed to download image from {server}/slow"
    assert _Handler.hits["/slow"] == 1


@pytest.mark.parametrize("target", ["file:///etc/passwd", "gopher://127.0.0.1:70/x"])
def test_redirects_that_cannot_succeed_are_not_retried(server: str, target: str) -> None:
    resolver = ImageResolver(fetch=LOOPBACK, retry=RETRIES)
    path = f"/to/{target}"
    with pytest.raises(ImageError) as info:
        resolver.resolve([ImageSource.from_url(server + path)])
    assert (info.value.kind, info.value.retryable) == ("Fetch", False)
    assert _Handler.hits[path] == 1
