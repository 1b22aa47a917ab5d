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
    call then uses at most `threads` threads.
    """
    cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, cpus[-threads:])
    os.environ["RAYON_NUM_THREADS"] = str(threads)
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


def sse_chunks(sse: bytes) -> list[dict[str, Any]]:
    """The JSON chunks of a Chat Completions SSE byte stream (`[DONE]` kept as a string)."""
    chunks: list[dict[str, Any]] = []
    for message in sse.split(b"\n\n"):
        for line in message.split(b"\n"):
            if line.startswith(b"data: "):
                data = line[len(b"data: ") :]
                chunks.append({"done": data.decode()} if data == b"[DONE]" else json.loads(data))
    return chunks


def normalized_chunks(sse: bytes) -> list[str]:
    """The SSE stream's chunks as compact JSON without what is random or time-dependent:
    the `created` timestamp and the tool-call ids (both implementations draw them freely)."""
    lines = []
    for chunk in sse_chunks(sse):
        chunk.pop("created", None)
        for choice in chunk.get("choices", []):
            for call in choice.get("delta", {}).get("tool_calls") or []:
                if "id" in call:
                    call["id"] = "call_*"
        lines.append(json.dumps(chunk, ensure_ascii=False, separators=(",", ":")))
    return lines


def stream_summary(sse: bytes) -> str:
    """What a client assembles from the stream: reasoning, content, each tool call's name and
    arguments, finish reason and usage, as compact JSON."""
    reasoning: list[str] = []
    content: list[str] = []
    calls: dict[int, list[str]] = {}
    finish: list[Any] = []
    usage: Any = None
    for chunk in sse_chunks(sse):
        usage = chunk.get("usage", usage)
        for choice in chunk.get("choices", []):
            delta = choice.get("delta", {})
            reasoning.append(delta.get("reasoning_content") or "")
            content.append(delta.get("content") or "")
            for call in delta.get("tool_calls") or []:
                function = call.get("function", {})
                parts = calls.setdefault(call["index"], [])
                parts.append(function.get("name") or "")
                parts.append(function.get("arguments") or "")
            if choice.get("finish_reason"):
                finish.append(choice["finish_reason"])
    summary = {
        "reasoning": "".join(reasoning),
        "content": "".join(content),
        "tool_calls": ["".join(parts) for _, parts in sorted(calls.items())],
        "finish": finish,
        "usage": usage,
    }
    return json.dumps(summary, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


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
