"""What the HTTP backends (vLLM, SGLang) share: the endpoint pool, failures, the chunk stream.

`RemoteBackend.submit` picks the endpoint with the fewest generations in flight among those up,
lets the concrete backend start the generation there (`start`), and moves on to the next endpoint
when one cannot be reached or is overloaded; an endpoint that cannot be reached is taken out for
`retry_after_s` and then tried again. The generation's chunks are read by a task of their own into
a queue (`RemoteStream`), so a reader may give up waiting (the server's keep-alive timer) without
losing any; closing the stream closes its HTTP response, which makes the backend abort the request.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from deepseek_recipe_engine.backend import BackendError
from deepseek_recipe_engine.errors import SERVER_ERROR, SERVER_OVERLOADED
from deepseek_recipe_engine.request import Chunk, Finish

__all__ = [
    "Endpoint",
    "EndpointFailure",
    "EndpointPool",
    "RemoteBackend",
    "RemoteOptions",
    "RemoteStream",
    "context_limit_of",
    "fetch_json",
    "open_stream",
    "sse_data",
]

logger = logging.getLogger("deepseek_recipe_engine.remote")

MAX_ERROR_BODY_BYTES = 64 * 1024
"""An error answer of a backend is read up to this size (the rest is not needed)."""


@dataclass(frozen=True)
class RemoteOptions:
    """How the server talks to a backend's endpoints."""

    connect_timeout_s: float = 10.0
    # Longest wait for the next bytes of an answer (queueing included) before the endpoint counts
    # as out of reach.
    read_timeout_s: float = 600.0
    retry_after_s: float = 10.0  # an endpoint out of reach is tried again after this long
    api_key: str | None = None  # sent as `Authorization: Bearer KEY`
    max_connections: int = 1024

    def client(self) -> httpx.AsyncClient:
        """An HTTP client with these timeouts and the key."""
        headers = {"authorization": f"Bearer {self.api_key}"} if self.api_key else None
        timeout = httpx.Timeout(
            self.read_timeout_s, connect=self.connect_timeout_s, pool=self.read_timeout_s
        )
        limits = httpx.Limits(max_connections=self.max_connections, max_keepalive_connections=64)
        return httpx.AsyncClient(timeout=timeout, limits=limits, headers=headers)


class EndpointFailure(Exception):
    """An endpoint could not start a generation: `down` when it could not be reached (it is
    taken out), else it was overloaded or failed (the next endpoint is tried either way)."""

    def __init__(self, status: int, message: str, *, down: bool) -> None:
        super().__init__(message)
        self.status = status
        self.down = down


class Endpoint:
    """One backend server: its base URL and how busy it is."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")
        self.outstanding = 0  # generations started here and not finished
        self.down_until = 0.0  # monotonic time before which it is not tried

    def __repr__(self) -> str:
        return f"Endpoint({self.url!r}, outstanding={self.outstanding})"


class EndpointPool:
    """The endpoints of one backend, handed out by fewest outstanding generations."""

    def __init__(
        self, urls: list[str], retry_after_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if not urls:
            raise ValueError("a remote backend needs at least one URL")
        self.endpoints = [Endpoint(url) for url in urls]
        self.retry_after_s = retry_after_s
        self._clock = clock
        self._turn = 0  # rotates the first choice among equally busy endpoints

    def ranked(self) -> list[Endpoint]:
        """The endpoints to try, in order: those up (or due for a retry), fewest outstanding
        first, ties taken in turn."""
        now = self._clock()
        count = len(self.endpoints)
        self._turn = (self._turn + 1) % count
        order = {id(e): (i - self._turn) % count for i, e in enumerate(self.endpoints)}
        up = [e for e in self.endpoints if e.down_until <= now]
        return sorted(up, key=lambda e: (e.outstanding, order[id(e)]))

    def mark_down(self, endpoint: Endpoint) -> None:
        """Take an endpoint out for `retry_after_s`."""
        endpoint.down_until = self._clock() + self.retry_after_s
        logger.warning(
            "backend %s is out of reach; trying it again in %.0f s",
            endpoint.url,
            self.retry_after_s,
        )

    def mark_up(self, endpoint: Endpoint) -> None:
        """An endpoint answered."""
        if endpoint.down_until:
            logger.info("backend %s answers again", endpoint.url)
        endpoint.down_until = 0.0


class RemoteStream:
    """The chunks of a generation on a remote endpoint, read by a task of its own.

    `chunks` must end with a `Finish`; ending without one, or an HTTP failure while reading, ends
    the stream with `BackendError` 500. `on_done` runs once reading stops, however it stops.
    """

    def __init__(self, chunks: AsyncIterator[Chunk], on_done: Callable[[], None]) -> None:
        self._queue: asyncio.Queue[Chunk | BackendError] = asyncio.Queue()
        self._done = False
        self._on_done = on_done
        self._task = asyncio.create_task(self._read(chunks))

    def __aiter__(self) -> AsyncIterator[Chunk]:
        return self

    async def __anext__(self) -> Chunk:
        if self._done:
            raise StopAsyncIteration
        item = await self._queue.get()
        if isinstance(item, BackendError):
            self._done = True
            raise item
        if isinstance(item, Finish):
            self._done = True
        return item

    async def aclose(self) -> None:
        """Stop reading; the HTTP response is closed, so the backend aborts the generation."""
        self._done = True
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)

    async def _read(self, chunks: AsyncIterator[Chunk]) -> None:
        try:
            async for chunk in chunks:
                self._queue.put_nowait(chunk)
                if isinstance(chunk, Finish):
                    return
            self._queue.put_nowait(
                BackendError(500, f"{SERVER_ERROR}: the backend ended the answer without a finish")
            )
        except BackendError as error:
            self._queue.put_nowait(error)
        except (httpx.HTTPError, ValueError) as error:  # transport failures, malformed JSON
            logger.error("backend answer failed: %r", error)
            self._queue.put_nowait(BackendError(500, f"{SERVER_ERROR}: {error!r}"))
        finally:
            self._on_done()


class RemoteBackend:
    """The endpoint handling of an HTTP backend; subclasses say how a generation starts."""

    def __init__(self, urls: list[str], options: RemoteOptions) -> None:
        self.options = options
        self.pool = EndpointPool(urls, options.retry_after_s)
        self.client = options.client()

    async def submit_to_pool(
        self, start: Callable[[Endpoint], Awaitable[RemoteStream]]
    ) -> RemoteStream:
        """`await start(endpoint)` on the endpoints in `pool.ranked()` order until one starts
        the generation; `start` raises `EndpointFailure` to move on. `BackendError` 503 when no
        endpoint could (500 when the last one failed rather than being overloaded or away)."""
        failure: EndpointFailure | None = None
        for endpoint in self.pool.ranked():
            endpoint.outstanding += 1
            try:
                stream = await start(endpoint)
            except EndpointFailure as error:
                endpoint.outstanding -= 1
                failure = error
                if error.down:
                    self.pool.mark_down(endpoint)
                else:
                    logger.warning("backend %s: %s", endpoint.url, error)
                continue
            except BaseException:
                endpoint.outstanding -= 1
                raise
            self.pool.mark_up(endpoint)
            return stream
        if failure is not None and failure.status == 500:
            raise BackendError(500, SERVER_ERROR)
        raise BackendError(503, SERVER_OVERLOADED)

    def finisher(self, endpoint: Endpoint) -> Callable[[], None]:
        """What a stream runs when it stops reading: one generation less on `endpoint`."""

        def done() -> None:
            endpoint.outstanding -= 1

        return done

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self.client.aclose()


async def fetch_json(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    body: Mapping[str, Any] | None = None,
) -> Any:
    """The JSON answer of a request that must succeed, or `EndpointFailure` / `BackendError`."""
    response = await open_stream(client, method, url, body)
    try:
        return json.loads(await response.aread())
    except (httpx.HTTPError, ValueError) as error:
        raise EndpointFailure(
            500, f"unreadable answer from {url}: {error!r}", down=False
        ) from error
    finally:
        await response.aclose()


async def open_stream(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    body: Mapping[str, Any] | None = None,
) -> httpx.Response:
    """Send a request and wait for the answer's status; the open response when it is 200.

    Raises `EndpointFailure` (down) when the endpoint cannot be reached or does not answer in
    time, `EndpointFailure` for 429 and 5xx answers (overloaded or failed), and `BackendError`
    for any other status: 400 with the backend's message for 4xx (the backend refuses the
    request), 500 for the rest (e.g. a wrong key for the backend).
    """
    try:
        request = client.build_request(method, url, json=body)
        response = await client.send(request, stream=True)
    except (httpx.TransportError, httpx.TimeoutException) as error:
        raise EndpointFailure(503, f"{url}: {error!r}", down=True) from error
    if response.status_code == 200:
        return response
    try:
        detail = (await response.aread())[:MAX_ERROR_BODY_BYTES].decode("utf-8", "replace")
    except httpx.HTTPError:
        detail = ""
    finally:
        await response.aclose()
    status = response.status_code
    if status in (429, 503):
        raise EndpointFailure(503, f"{url} is overloaded ({status})", down=False)
    if status >= 500:
        raise EndpointFailure(500, f"{url} failed ({status}): {detail}", down=False)
    if status in (400, 413, 422):
        raise BackendError(
            400, _error_message(detail) or f"the backend refused the request ({status})"
        )
    logger.error("backend %s answered %d: %s", url, status, detail)
    raise BackendError(500, SERVER_ERROR)


def _error_message(detail: str) -> str | None:
    """The message of a backend's JSON error body (OpenAI shape or FastAPI's `detail`)."""
    try:
        body = json.loads(detail)
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    error = body.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return error["message"]
    if isinstance(body.get("message"), str):
        return body["message"]
    if isinstance(body.get("detail"), str):
        return body["detail"]
    return None


async def sse_data(response: httpx.Response) -> AsyncIterator[str]:
    """The `data` of each Server-Sent Event of a streamed answer, up to `[DONE]`."""
    lines: list[str] = []
    async for line in response.aiter_lines():
        if line.startswith("data:"):
            lines.append(line[5:].removeprefix(" "))
        elif not line and lines:
            data = "\n".join(lines)
            lines = []
            if data == "[DONE]":
                return
            yield data
    if lines and (data := "\n".join(lines)) != "[DONE]":
        yield data


async def served_context_limit(client: httpx.AsyncClient, url: str) -> int:
    """The `max_model_len` an OpenAI-compatible server (vLLM, SGLang) lists at `url`/v1/models."""
    answer = await fetch_json(client, "GET", f"{url.rstrip('/')}/v1/models")
    for model in answer.get("data") or []:
        if isinstance(model, dict) and isinstance(model.get("max_model_len"), int):
            return model["max_model_len"]
    raise ValueError(f"{url}/v1/models lists no max_model_len")


async def context_limit_of(urls: list[str], options: RemoteOptions) -> int:
    """The smallest `max_model_len` of the servers that answer; `EndpointFailure` when none does."""
    limits = []
    async with options.client() as client:
        for url in urls:
            try:
                limits.append(await served_context_limit(client, url))
            except (EndpointFailure, BackendError, ValueError) as error:
                logger.warning("backend %s: %s", url, error)
    if not limits:
        raise EndpointFailure(503, f"none of {urls} answered /v1/models", down=True)
    return min(limits)
