"""The child side of a measurement: pinning, timing, peak memory and the driver protocol.

Every implementation runs in its own process: the parent (`bench.suite`) writes a case file,
starts `<python> <driver> CASE_FILE RESULT_FILE`, and reads the result file back. This module
must not import `deepseek_recipe`: the peer's driver imports it from the peer's environment.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

State = TypeVar("State")

Case = dict[str, Any]
"""A case as the parent wrote it (see `bench.cases.Case.spec`)."""

Driver = Callable[[Case], dict[str, Any]]
"""Runs one family's case and returns its result fields (`seconds`, `check`, ...)."""


def pin_threads(threads: int) -> None:
    """Restricts this process to `threads` CPUs, before any library starts a thread pool.

    Rust's `available_parallelism` and HF `tokenizers` honour the affinity mask, so a batch
    call then uses at most `threads` threads; the thread-count variables say the same explicitly.
    """
    cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, cpus[-threads:])
    os.environ["RAYON_NUM_THREADS"] = str(threads)
    os.environ["DEEPSEEK_RECIPE_NUM_THREADS"] = str(threads)
    os.environ["TOKENIZERS_PARALLELISM"] = "false" if threads == 1 else "true"


def status_kib(field: str) -> int:
    """A `/proc/self/status` memory field (`VmHWM`, `VmRSS`) in KiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def timed_runs(work: Callable[[], object], runs: int) -> list[float]:
    """Seconds of each of `runs` calls of `work` (the result is dropped after each call)."""
    return timed_setup_runs(lambda: None, lambda _: work(), runs)


def timed_setup_runs(
    setup: Callable[[], State], work: Callable[[State], object], runs: int
) -> list[float]:
    """Seconds of each of `runs` calls of `work` on a fresh, untimed `setup()`."""
    seconds = []
    for _ in range(runs):
        state = setup()
        start = time.perf_counter()
        work(state)
        seconds.append(time.perf_counter() - start)
    return seconds


def digest(data: bytes) -> str:
    """A short content digest (16 hex digits of SHA-256)."""
    return hashlib.sha256(data).hexdigest()[:16]


def ids_digest(ids: Iterable[int]) -> str:
    """The digest of a token-id sequence."""
    return digest(",".join(map(str, ids)).encode())


def id_blocks(ids: list[int], block: int = 1024) -> list[str]:
    """The length, then the digest of each `block` ids: locates a first difference cheaply."""
    return [str(len(ids))] + [ids_digest(ids[i : i + block]) for i in range(0, len(ids), block)]


class StreamCheck:
    """Checks a Chat Completions SSE stream as it is produced, holding no chunk: the digest of
    each chunk without what is random or time-dependent (the `created` timestamp and tool-call
    ids, drawn freely by each implementation), and what a client assembles from the stream
    (reasoning, content, each tool call's name and arguments, finish reasons, usage)."""

    def __init__(self) -> None:
        self.chunks: list[str] = []
        self.reasoning: list[str] = []
        self.content: list[str] = []
        self.calls: dict[int, list[str]] = {}
        self.finish: list[Any] = []
        self.usage: Any = None

    def add(self, sse: bytes) -> None:
        """Takes the next SSE bytes (whole messages, as each push returns them)."""
        for line in sse.split(b"\n"):
            if line.startswith(b"data: "):
                data = line[len(b"data: ") :]
                self.chunk({"done": data.decode()} if data == b"[DONE]" else json.loads(data))

    def chunk(self, chunk: dict[str, Any]) -> None:
        """Takes one parsed chunk."""
        chunk.pop("created", None)
        self.usage = chunk.get("usage", self.usage)
        for choice in chunk.get("choices", []):
            delta = choice.get("delta", {})
            self.reasoning.append(delta.get("reasoning_content") or "")
            self.content.append(delta.get("content") or "")
            for call in delta.get("tool_calls") or []:
                if "id" in call:
                    call["id"] = "call_*"
                function = call.get("function", {})
                parts = self.calls.setdefault(call["index"], [])
                parts += [function.get("name") or "", function.get("arguments") or ""]
            if choice.get("finish_reason"):
                self.finish.append(choice["finish_reason"])
        self.chunks.append(digest(json.dumps(chunk, ensure_ascii=False).encode()))

    def summary(self) -> str:
        """The digest of the assembled reasoning, content, tool calls, finish and usage."""
        summary = {
            "reasoning": "".join(self.reasoning),
            "content": "".join(self.content),
            "tool_calls": ["".join(parts) for _, parts in sorted(self.calls.items())],
            "finish": self.finish,
            "usage": self.usage,
        }
        return digest(json.dumps(summary, ensure_ascii=False, sort_keys=True).encode())


def after_check() -> dict[str, Any]:
    """Called between the untimed check run and the timed runs: resets VmHWM to the current
    RSS (Linux `clear_refs` 5) so the reported peak is the timed runs' own, and records the
    RSS before them."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        reset = True
    except OSError:
        reset = False
    return {"peak_reset": reset, "setup_rss_kib": status_kib("VmRSS")}


def repeated_result(
    work: Callable[[], object], repeat: int, runs: int, check: list[str]
) -> dict[str, Any]:
    """Times `runs` runs of `repeat` calls of `work` after the check run; the request families'
    result with its `check`."""

    def run_all() -> None:
        for _ in range(repeat):
            work()

    base = after_check()
    return {"seconds": timed_runs(run_all, runs), "check": check, **base}


def prepared_result(
    prepare: Callable[[], State],
    work: Callable[[State], object],
    repeat: int,
    runs: int,
    check: list[str],
) -> dict[str, Any]:
    """Times `runs` runs of `work` on each of `repeat` fresh `prepare()` results, made untimed
    before each run; the request families' result with its `check`. Each result is dropped
    right after its `work`, as the work's own result is (a rendered request keeps its prompt)."""

    def prepare_all() -> list[State]:
        states = [prepare() for _ in range(repeat)]
        states.reverse()  # popped from the end: worked on in the order they were made
        return states

    def run_all(states: list[State]) -> None:
        while states:
            work(states.pop())

    base = after_check()
    return {"seconds": timed_setup_runs(prepare_all, run_all, runs), "check": check, **base}


def stream_result(
    make: Callable[[], State],
    feed: Callable[[State, Callable[[bytes], object]], None],
    runs: int,
) -> dict[str, Any]:
    """Feeds one stream from `make()` into a `StreamCheck`, then times `runs` fresh streams
    whose bytes are dropped (`len`), as a server writes them out; the stream families' result."""
    stream_check = StreamCheck()
    feed(make(), stream_check.add)
    base = after_check()
    seconds = timed_setup_runs(make, lambda state: feed(state, len), runs)
    return {
        "seconds": seconds,
        "check": stream_check.chunks,
        "summary": stream_check.summary(),
        **base,
    }


def serve(drivers: Mapping[str, Driver], library: str) -> int:
    """The driver entry point: `driver CASE_FILE RESULT_FILE`; runs the case's family.

    `library` names the implementation actually imported (its module file and version)."""
    case_file, result_file = Path(sys.argv[1]), Path(sys.argv[2])
    case: Case = json.loads(case_file.read_text(encoding="utf-8"))
    pin_threads(case["threads"])
    result = drivers[case["family"]](case)
    result["peak_rss_kib"] = status_kib("VmHWM")
    result["python"] = sys.version.split()[0]
    result["library"] = library
    result_file.write_text(json.dumps(result), encoding="utf-8")
    return 0
