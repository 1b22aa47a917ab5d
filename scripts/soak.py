"""Soak test of the reference server (`make soak`; not in CI): hostile and innocent clients at once.

Starts `python -m deepseek_recipe_engine` on 127.0.0.1. For `--baseline` seconds only the innocent
clients run; then, for `--duration` seconds, the hostile ones join them:

* innocent streams: `--streams` (200) clients that each stream chat completions back to back;
  every gap between two chunks of a stream (after its first chunk) is recorded;
* normal requests: a client sending a short chat request every half second (it waits behind the
  streams' sequences) and one asking for the model list every half second (no engine involved);
* slow clients: `--slow` clients that send request headers a line every few seconds and, once
  the server drops them, come back a few seconds later;
* large prompts: `--large` clients posting 8 MiB one-character messages back to back;
* a flood: a third into the attack, `--flood` (20,000) connections that send half a request line
  and then nothing, held by helper processes (each has its own file-descriptor limit) for
  `--flood-hold` seconds.

It reports the innocent streams' chunk gaps (p50, p99, max) in both phases (the baseline shows
what the machine itself allows), every answer by scenario and status, errors that are not the
official JSON, and the server's memory, open files and log size at start and end. The exit
status is 1 when an innocent stream paused for a second or more under attack, a normal request
failed, or any answer was a 5xx or not JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

API_KEY = "sk-soak-0123456789"
HEADERS = {"authorization": f"Bearer {API_KEY}"}
CHAT = "/v1/chat/completions"
PARTIAL_REQUEST = b"POST /v1/chat/completions HTTP/1.1\r\nHost: soak\r\n"
FLOOD_PER_PROCESS = 10_000


@dataclass
class Tally:
    """What the clients saw."""

    started: float = field(default_factory=time.perf_counter)
    attack_started: float | None = None
    flood_started: float | None = None
    gaps: list[tuple[float, float]] = field(default_factory=list)
    """(gap, when it ended) between two chunks of an innocent stream."""
    answers: Counter[tuple[str, int]] = field(default_factory=Counter)
    bad_errors: list[str] = field(default_factory=list)
    normal_latencies: list[float] = field(default_factory=list)
    models_latencies: list[float] = field(default_factory=list)
    large_answered: list[float] = field(default_factory=list)
    slow_outcomes: Counter[str] = field(default_factory=Counter)

    def phase_gaps(self, attack: bool) -> list[float]:
        """The gaps that ended before the attack (`attack=False`) or during it."""
        start = self.attack_started if self.attack_started is not None else float("inf")
        return [gap for gap, ended in self.gaps if (ended >= start) == attack]

    def answer(self, scenario: str, response: httpx.Response, body: bytes) -> None:
        """Count an answer; keep a note of any 5xx or error that is not the official JSON."""
        self.answers[(scenario, response.status_code)] += 1
        if response.status_code < 400:
            return
        try:
            json.loads(body)["error"]["message"]
            official = response.headers.get("content-type") == "application/json"
        except (ValueError, KeyError, TypeError):
            official = False
        if response.status_code >= 500 or not official:
            self.bad_errors.append(f"{scenario}: {response.status_code} {body[:120]!r}")


def chat_body(
    max_tokens: int, stream: bool, content: str = "Tell me a story."
) -> dict[str, object]:
    return {
        "model": "DeepSeek-V4-Pro",
        "messages": [{"role": "user", "content": content}],
        "max_tokens": max_tokens,
        "stream": stream,
        "thinking": {"type": "disabled"},
    }


async def innocent_stream(client: httpx.AsyncClient, tally: Tally, stop: asyncio.Event) -> None:
    while not stop.is_set():
        async with client.stream("POST", CHAT, json=chat_body(64, True)) as response:
            if response.status_code != 200:
                tally.answer("stream", response, await response.aread())
                await asyncio.sleep(1)
                continue
            last: float | None = None
            async for chunk in response.aiter_raw():
                if b"data:" not in chunk:  # a keep-alive while queued behind other sequences
                    continue
                now = time.perf_counter()
                if last is not None:
                    tally.gaps.append((now - last, now))
                last = now
            tally.answer("stream", response, b"")


async def normal_requests(client: httpx.AsyncClient, tally: Tally, stop: asyncio.Event) -> None:
    """A short chat request every half second (it waits behind the streams' sequences)."""
    while not stop.is_set():
        start = time.perf_counter()
        response = await client.post(CHAT, json=chat_body(4, False, "Hi"))
        tally.normal_latencies.append(time.perf_counter() - start)
        tally.answer("normal", response, response.content)
        await asyncio.sleep(0.5)


async def model_lists(client: httpx.AsyncClient, tally: Tally, stop: asyncio.Event) -> None:
    """The model list every half second: it needs no engine, so it shows how quickly the server
    itself answers."""
    while not stop.is_set():
        start = time.perf_counter()
        response = await client.get("/v1/models")
        tally.models_latencies.append(time.perf_counter() - start)
        tally.answer("models", response, response.content)
        await asyncio.sleep(0.5)


async def large_prompts(client: httpx.AsyncClient, tally: Tally, stop: asyncio.Event) -> None:
    body = json.dumps(chat_body(4, False, "a" * (8 * 1024 * 1024 - 1024))).encode()
    while not stop.is_set():
        response = await client.post(CHAT, content=body)
        tally.answer("large", response, response.content)
        tally.large_answered.append(time.perf_counter())


async def slow_client(port: int, tally: Tally, stop: asyncio.Event) -> None:
    """Sends a header line every 3 s until dropped; comes back 5-10 s later."""
    await asyncio.sleep(random.uniform(0, 10))
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(PARTIAL_REQUEST)
            received = b""
            while not stop.is_set():
                try:
                    chunk = await asyncio.wait_for(reader.read(4096), 3)
                except asyncio.TimeoutError:
                    writer.write(b"X-Slow: 1\r\n")
                    continue
                if not chunk:
                    break
                received += chunk
            writer.close()
            status = received.split(b" ", 2)[1].decode() if received else "closed"
            tally.slow_outcomes[status] += 1
        except OSError as error:
            tally.slow_outcomes[type(error).__name__] += 1
        await asyncio.sleep(random.uniform(5, 10))


def flood_worker(port: int, count: int, hold_s: float) -> None:
    """Helper process: opens `count` connections that stall after half a request line, holds
    them `hold_s` seconds, then prints how many it opened and how many the server closed."""
    _raise_fd_limit()
    sockets: list[socket.socket] = []
    failed = 0
    for _ in range(count):
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.sendall(PARTIAL_REQUEST[:20])
            sockets.append(sock)
        except OSError:
            failed += 1
    time.sleep(hold_s)
    outcomes: Counter[str] = Counter()
    for sock in sockets:
        sock.setblocking(False)
        try:
            answer = sock.recv(4096)
            outcomes[answer.split(b" ", 2)[1].decode() if answer else "closed"] += 1
        except BlockingIOError:
            outcomes["still open"] += 1
        except OSError as error:
            outcomes[type(error).__name__] += 1
        sock.close()
    print(json.dumps({"opened": len(sockets), "failed to open": failed, **outcomes}))


async def flood(
    port: int, count: int, hold_s: float, delay_s: float, tally: Tally
) -> list[dict[str, int]]:
    await asyncio.sleep(delay_s)
    tally.flood_started = time.perf_counter()
    print(f"[{time.strftime('%X')}] flood: {count} stalled connections", flush=True)
    workers = []
    for start in range(0, count, FLOOD_PER_PROCESS):
        size = min(FLOOD_PER_PROCESS, count - start)
        workers.append(
            await asyncio.create_subprocess_exec(
                sys.executable,
                __file__,
                "--flood-worker",
                f"{port}:{size}:{hold_s}",
                stdout=asyncio.subprocess.PIPE,
            )
        )
    reports = []
    for worker in workers:
        out, _ = await worker.communicate()
        reports.append(json.loads(out))
    return reports


def server_state(pid: int, log: Path) -> dict[str, int]:
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    rss = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS:"))
    files = len(os.listdir(f"/proc/{pid}/fd"))
    return {"rss_bytes": rss, "open_files": files, "log_bytes": log.stat().st_size}


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


async def soak(args: argparse.Namespace, port: int, pid: int, log: Path) -> int:
    tally, stop = Tally(), asyncio.Event()
    limits = httpx.Limits(max_connections=args.streams + args.large + 4)
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", headers=HEADERS, limits=limits, timeout=600
    ) as client:
        start_state = server_state(pid, log)
        innocent = [innocent_stream(client, tally, stop) for _ in range(args.streams)]
        innocent += [normal_requests(client, tally, stop), model_lists(client, tally, stop)]
        tasks = [asyncio.create_task(coroutine) for coroutine in innocent]
        await progress(tally, pid, log, args.baseline, "baseline")
        tally.attack_started = time.perf_counter()
        hostile = [large_prompts(client, tally, stop) for _ in range(args.large)]
        hostile += [slow_client(port, tally, stop) for _ in range(args.slow)]
        tasks += [asyncio.create_task(coroutine) for coroutine in hostile]
        flooding = asyncio.create_task(
            flood(port, args.flood, args.flood_hold, args.duration / 3, tally)
        )
        await progress(tally, pid, log, args.duration, "attack")
        stop.set()
        flood_reports = await flooding
        await asyncio.wait(tasks, timeout=120)
        for task in tasks:
            task.cancel()
        end_state = server_state(pid, log)
    return report(tally, start_state, end_state, flood_reports)


async def progress(tally: Tally, pid: int, log: Path, seconds: float, phase: str) -> None:
    """Wait `seconds`, printing a line of progress every 15 s."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        await asyncio.sleep(min(15, max(0, deadline - time.monotonic())))
        gaps = tally.phase_gaps(phase == "attack")
        state = server_state(pid, log)
        print(
            f"[{time.strftime('%X')}] {phase}: stream gaps p99 {percentile(gaps, 0.99):.3f} s, "
            f"max {max(gaps, default=0):.3f} s; server RSS {state['rss_bytes'] / 2**20:.0f} MiB, "
            f"{state['open_files']} open files",
            flush=True,
        )


def report(
    tally: Tally, start: dict[str, int], end: dict[str, int], floods: list[dict[str, int]]
) -> int:
    print("\n== soak report ==")
    for phase, attack in (("baseline", False), ("attack", True)):
        gaps = tally.phase_gaps(attack)
        print(
            f"innocent stream chunk gaps, {phase}: {len(gaps)} gaps, "
            f"p50 {percentile(gaps, 0.5) * 1000:.0f} ms, p99 {percentile(gaps, 0.99) * 1000:.0f} "
            f"ms, max {max(gaps, default=0) * 1000:.0f} ms"
        )
    for gap, ended in sorted(tally.gaps, reverse=True)[:5]:
        when = f"{ended - tally.started:.1f} s in"
        if tally.flood_started is not None:
            when += f", {ended - tally.flood_started:+.1f} s from the flood"
        print(f"  longest: {gap:.2f} s ({when})")
    answered = ", ".join(f"{when - tally.started:.1f}" for when in tally.large_answered)
    print(f"large prompts answered at (s into the run): {answered}")
    for name, latencies in (("chat", tally.normal_latencies), ("models", tally.models_latencies)):
        print(
            f"normal {name} requests: {len(latencies)}, latency p50 "
            f"{percentile(latencies, 0.5):.2f} s, p99 {percentile(latencies, 0.99):.2f} s, "
            f"max {max(latencies, default=0):.2f} s"
        )
    for (scenario, status), count in sorted(tally.answers.items()):
        print(f"answers {scenario:>7} {status}: {count}")
    print(f"slow clients dropped with: {dict(tally.slow_outcomes)}")
    for number, flood_report in enumerate(floods):
        print(f"flood process {number}: {flood_report}")
    print(f"errors that are 5xx or not the official JSON: {len(tally.bad_errors)}")
    for line in tally.bad_errors[:10]:
        print(f"  {line}")
    for key in ("rss_bytes", "open_files", "log_bytes"):
        print(f"server {key}: start {start[key]}, end {end[key]}")
    normal_failed = sum(
        count
        for (scenario, status), count in tally.answers.items()
        if scenario in ("normal", "models") and status != 200
    )
    longest = max(tally.phase_gaps(True), default=0)
    passed = longest < 1.0 and not tally.bad_errors and not normal_failed
    print("PASS" if passed else "FAIL")
    return 0 if passed else 1


def _raise_fd_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--baseline", type=float, default=30, help="seconds of innocent clients alone (30)"
    )
    parser.add_argument(
        "--duration", type=float, default=180, help="seconds of the attack (default 180)"
    )
    parser.add_argument("--streams", type=int, default=200, help="innocent streams (200)")
    parser.add_argument("--slow", type=int, default=1000, help="slow clients (1000)")
    parser.add_argument("--large", type=int, default=2, help="large-prompt clients (2)")
    parser.add_argument("--flood", type=int, default=20_000, help="stalled connections (20000)")
    parser.add_argument("--flood-hold", type=float, default=30, help="seconds held (30)")
    parser.add_argument("--flood-worker", help=argparse.SUPPRESS)
    parser.add_argument(
        "server_args", nargs="*", help="extra `deepseek-recipe serve` options (after --)"
    )
    args = parser.parse_args()
    if args.flood_worker:
        port, count, hold = args.flood_worker.split(":")
        flood_worker(int(port), int(count), float(hold))
        return 0
    _raise_fd_limit()
    port = free_port()
    log = Path(tempfile.mkdtemp(prefix="soak-")) / "server.log"
    command = [sys.executable, "-m", "deepseek_recipe_engine", "--port", str(port)]
    command += ["--api-key", API_KEY, "--threads", "1", "--log-level", "warning", *args.server_args]
    with log.open("wb") as log_file:
        server = subprocess.Popen(command, stdout=log_file, stderr=subprocess.STDOUT)
        try:
            _wait_until_up(port, server)
            print(f"server pid {server.pid} on port {port}, log {log}", flush=True)
            return asyncio.run(soak(args, port, server.pid, log))
        finally:
            server.terminate()
            server.wait(timeout=60)


def _wait_until_up(port: int, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with {server.returncode}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/v1/models", headers=HEADERS).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.5)
    raise SystemExit("the server did not come up")


if __name__ == "__main__":
    sys.exit(main())
