"""A live reference server on 127.0.0.1 (random free port) in a background thread."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import torch
import uvicorn
from starlette.applications import Starlette

from deepseek_recipe import ConversionOptions
from deepseek_recipe_engine import Engine, EngineConfig
from deepseek_recipe_engine.connections import uvicorn_config
from deepseek_recipe_engine.server import ServerSettings, create_app

API_KEY = "sk-test-0123456789abcdef"


@dataclass
class LiveServer:
    """A running server: its engine, its base URL and how to stop it."""

    engine: Engine
    app: Starlette
    server: uvicorn.Server
    thread: threading.Thread
    port: int

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

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
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.app.state.server.close()
        self.engine.close()


def start_server(
    settings: ServerSettings, config: EngineConfig | None = None, engine: Engine | None = None
) -> LiveServer:
    torch.set_num_threads(1)
    engine = engine or Engine(config or EngineConfig(model="tiny"))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = create_app(engine, settings)
    server = uvicorn.Server(
        uvicorn_config(app, settings.connection_limits, log_level="warning", lifespan="off")
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the server did not start")
        time.sleep(0.02)
    return LiveServer(engine, app, server, thread, port)


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
