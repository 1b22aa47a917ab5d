"""A live reference server on 127.0.0.1 (random free port) in a background thread: over the bundled
engine, or (`start_vllm_server`) in front of a running vLLM."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch
import uvicorn
from starlette.applications import Starlette

from deepseek_recipe import ConversionOptions
from deepseek_recipe_engine import Engine, EngineConfig, EngineCore, GenerationRequest
from deepseek_recipe_engine.backend import Backend
from deepseek_recipe_engine.connections import uvicorn_config
from deepseek_recipe_engine.engine import GenerationResult
from deepseek_recipe_engine.engine_backend import EngineBackend
from deepseek_recipe_engine.remote import RemoteBackend, RemoteOptions, context_limit_of
from deepseek_recipe_engine.server import ServerSettings, create_app
from deepseek_recipe_engine.vllm_backend import VllmBackend

API_KEY = "sk-test-0123456789abcdef"


@dataclass
class LiveServer:
    """A running server: its backend (and engine, unless it fronts vLLM), its base URL, how to
    generate a request alone on the same model (the oracle's way) and how to stop it."""

    engine: Engine
    backend: Backend
    app: Starlette
    server: uvicorn.Server
    thread: threading.Thread
    port: int
    # How the oracle generates a request alone on the same model (None: no oracle).
    generate_alone: Callable[[GenerationRequest], GenerationResult] | None = None
    cache_block_size: int = 0  # prompt-cache hits come in whole blocks of this many tokens

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait_idle(self, timeout_s: float = 10.0) -> bool:
        """Wait until nothing is generating: every engine cache block free, or no request in
        flight on the backend servers."""
        if not isinstance(self.backend, RemoteBackend):
            return self.wait_blocks_free(timeout_s)
        pool = self.backend.pool
        deadline = time.monotonic() + timeout_s
        while any(e.outstanding for e in pool.endpoints) and time.monotonic() < deadline:
            time.sleep(0.05)
        return not any(e.outstanding for e in pool.endpoints)

    def blocks_all_free(self) -> bool:
        core = self.engine.core
        return core.blocks.num_free_blocks == core.config.num_blocks and not core.has_work()

    def wait_blocks_free(self, timeout_s: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.blocks_all_free():
                return True
            time.sleep(0.05)
        return self.blocks_all_free()

    def app_in_flight(self) -> int:
        return self.app.state.server.limit.in_flight

    def stop(self) -> None:
        """Stop the server (its shutdown closes the backend) and the engine."""
        self.server.should_exit = True
        self.thread.join(timeout=10)
        if self.engine is not None:
            self.engine.close()


def start_server(
    settings: ServerSettings, config: EngineConfig | None = None, engine: Engine | None = None
) -> LiveServer:
    """The server over the bundled engine (tiny model unless `config` or `engine` says)."""
    torch.set_num_threads(1)
    engine = engine or Engine(config or EngineConfig(model="tiny"))
    cores: list[EngineCore] = []  # the oracle's own engine core, made when first needed

    def generate_alone(request: GenerationRequest) -> GenerationResult:
        if not cores:
            cores.append(EngineCore(engine.core.config))
        return cores[0].generate([request])[0]

    return serve_backend(
        settings,
        EngineBackend(engine),
        engine=engine,
        generate_alone=generate_alone,
        cache_block_size=engine.core.config.block_size,
    )


def start_vllm_server(settings: ServerSettings, url: str, cache_block_size: int) -> LiveServer:
    """The server in front of the vLLM at `url` (started with `--block-size cache_block_size`);
    the oracle generates on that vLLM directly, through a backend of its own."""
    context_limit = asyncio.run(context_limit_of([url], RemoteOptions()))
    backend = VllmBackend([url], context_limit=context_limit)

    def generate_alone(request: GenerationRequest) -> GenerationResult:
        async def run() -> GenerationResult:
            alone = VllmBackend([url], context_limit=context_limit)
            result = GenerationResult()
            try:
                stream = await alone.submit(request)
                async for chunk in stream:
                    result.add(chunk)
            finally:
                await alone.aclose()
            return result

        return asyncio.run(run())

    return serve_backend(
        settings,
        backend,
        engine=None,
        generate_alone=generate_alone,
        cache_block_size=cache_block_size,
    )


def serve_backend(
    settings: ServerSettings,
    backend: Backend,
    *,
    engine: Engine | None = None,
    generate_alone: Callable[[GenerationRequest], GenerationResult] | None = None,
    cache_block_size: int = 0,
) -> LiveServer:
    """The server in front of any backend."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = create_app(backend, settings)
    server = uvicorn.Server(uvicorn_config(app, settings.connection_limits, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the server did not start")
        time.sleep(0.02)
    return LiveServer(
        engine,  # type: ignore[arg-type]  # None in front of vLLM: engine tests never use it
        backend,
        app,
        server,
        thread,
        port,
        generate_alone,
        cache_block_size,
    )


def official_rule_server(max_completion_tokens: int) -> Iterator[LiveServer]:
    """A module fixture body: the tiny server with the official reasoning pass-back rule
    (`reject`) and a cap on completion tokens, stopped after the module."""
    live = start_server(
        ServerSettings(
            api_key=API_KEY,
            conversion_options=ConversionOptions(reasoning_content_behavior="reject"),
            max_completion_tokens=max_completion_tokens,
        )
    )
    yield live
    live.stop()
