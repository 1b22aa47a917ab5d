"""A reference server in a process of its own, for measurements of the server alone.

`python -m tests.server.server_process` starts the tiny server (API key `live.API_KEY`, at most
256 requests in flight) on 127.0.0.1, prints its base URL, then answers each line read from
standard input with one JSON line of its own state once it is idle: resident memory, open file
descriptors, free cache blocks, requests in flight, live Python objects. It stops at end of input.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
from pathlib import Path

from deepseek_recipe_engine.server import ServerSettings
from tests.server.live import API_KEY, LiveServer, start_server


def resident_bytes() -> int:
    """This process's resident set size."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def idle(server: LiveServer) -> bool:
    """No request in flight, every cache block free, every connection closed."""
    connections = server.server.server_state.connections
    return server.blocks_all_free() and server.app_in_flight() == 0 and not connections


def state(server: LiveServer, timeout_s: float = 10.0) -> dict[str, object]:
    """The server's state once it is idle (or after `timeout_s`), garbage collected."""
    deadline = time.monotonic() + timeout_s
    while not idle(server) and time.monotonic() < deadline:
        time.sleep(0.05)
    gc.collect()
    core = server.engine.core
    return {
        "idle": idle(server),
        "rss_bytes": resident_bytes(),
        "open_files": len(os.listdir("/proc/self/fd")),
        "free_blocks": core.blocks.num_free_blocks,
        "blocks": core.config.num_blocks,
        "in_flight": server.app_in_flight(),
        "python_objects": len(gc.get_objects()),
    }


def main() -> None:
    server = start_server(ServerSettings(api_key=API_KEY, max_concurrent_requests=256))
    state(server)  # the first call warms what it uses itself
    print(server.base_url, flush=True)
    try:
        for _ in sys.stdin:
            print(json.dumps(state(server)), flush=True)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
