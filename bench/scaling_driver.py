"""Child process of `bench.scaling`: times one implementation's tokenizer at each thread count.

This project's package: `python -m bench.scaling_driver ours SPEC RESULT` from the repository
root (`tiktoken` in place of `ours` for tiktoken, when installed; `machine` for the machine's
ceilings on the same thread counts: SHA-256, and our batch count in one process per thread).
The published 0.2.0 (whose `Tokenizer` has only `encode`, so a thread pool drives it):
`bench/.peer-venv/bin/python -I bench/scaling_driver.py peer SPEC RESULT` from outside the
repository, so that `deepseek_recipe` is the installed wheel.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
# Last on the path: `bench.measure` is found, while `deepseek_recipe` stays whichever is first.
sys.path.append(str(REPO_ROOT))

from bench.measure import digest, ids_digest  # noqa: E402

Work = Callable[[], object]
"""One timed call."""


def timed_seconds(work: Work) -> float:
    """The wall time of one call of `work`."""
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


Workloads = dict[str, tuple[Work, Callable[[], object]]]
"""Workload name -> (the timed call, the call that returns the corpus ids to check, if any)."""


def ours_workloads(
    spec: dict[str, Any], corpus: list[str], long_text: str, threads: int
) -> Workloads:
    """This project's calls at `threads` threads."""
    import deepseek_recipe as dr

    tok = dr.Tokenizer.deepseek_v4().with_threads(threads)
    ids = tok.encode_batch(corpus, True)
    id_arrays = tok.encode_batch_array(corpus, True)
    return {
        "batch encode (lists)": (
            lambda: tok.encode_batch(corpus, True),
            lambda: tok.encode_batch(corpus, True),
        ),
        "batch encode (array)": (
            lambda: tok.encode_batch_array(corpus, True),
            lambda: tok.encode_batch_array(corpus, True).to_lists(),
        ),
        "batch count": (lambda: tok.count_batch(corpus, True), lambda: None),
        "batch decode": (lambda: tok.decode_batch(ids), lambda: None),
        "batch decode (array)": (lambda: tok.decode_batch(id_arrays), lambda: None),
        "batch decode (bytes)": (lambda: tok.decode_batch_bytes(id_arrays), lambda: None),
        "long text encode (list)": (lambda: tok.encode(long_text, True), lambda: None),
        "long text encode (array)": (lambda: tok.encode_array(long_text, True), lambda: None),
    }


def peer_workloads(
    spec: dict[str, Any], corpus: list[str], long_text: str, threads: int
) -> Workloads:
    """The published package's calls: `encode` mapped over a pool of `threads` threads."""
    import deepseek_recipe as peer

    tok = peer.Tokenizer.from_file(spec["tokenizer_json"])
    pool = ThreadPoolExecutor(threads)

    def batch() -> list[list[int]]:
        return list(pool.map(tok.encode, corpus))

    workloads: Workloads = {"batch encode (pool)": (batch, batch)}
    if threads == 1:
        workloads["long text encode (list)"] = (lambda: tok.encode(long_text), lambda: None)
    return workloads


def tiktoken_workloads(
    spec: dict[str, Any], corpus: list[str], long_text: str, threads: int
) -> Workloads:
    """tiktoken set up as DeepSeek V4 (`bench.tiktoken_peer`): its own batch call on a pool of
    `threads` threads, plain text (special-token spellings are text)."""
    from bench.tiktoken_peer import deepseek_encoding

    encoding = deepseek_encoding(Path(spec["tokenizer_json"]))

    def batch() -> list[list[int]]:
        return encoding.encode_ordinary_batch(corpus, num_threads=threads)

    workloads: Workloads = {"batch encode (plain)": (batch, lambda: None)}
    if threads == 1:
        workloads["long text encode (plain)"] = (
            lambda: encoding.encode_ordinary(long_text),
            lambda: None,
        )
    return workloads


CEILING_PASSES = 8
"""Times the machine's ceiling workload hashes the corpus (so that one run lasts long enough)."""

SHA_CEILING = "SHA-256 (ceiling)"
PROCESS_CEILING = "our batch count, one process per thread (ceiling)"


def machine_workloads(
    spec: dict[str, Any], corpus: list[str], long_text: str, threads: int
) -> Workloads:
    """The machine's own ceiling: SHA-256 (pure computation with the GIL released, no shared
    data) over the corpus bytes in 64 parts, `CEILING_PASSES` times, on a pool of `threads`
    threads. A tokenizer cannot scale further than this on the same machine in the same minutes."""
    import hashlib

    data = "".join(corpus).encode("utf-8")
    step = -(-len(data) // 64)
    parts = [data[start : start + step] for start in range(0, len(data), step)] * CEILING_PASSES
    pool = ThreadPoolExecutor(threads)

    def hash_parts() -> list[bytes]:
        return list(pool.map(lambda part: hashlib.sha256(part).digest(), parts))

    return {
        SHA_CEILING: (hash_parts, lambda: None),
        PROCESS_CEILING: (process_count(corpus, threads), lambda: None),
    }


def process_count(corpus: list[str], processes: int) -> Work:
    """`count_batch` of the corpus shared out among `processes` single-threaded processes (forked
    once, each with its own tokenizer, sharing nothing), timed from a common start to the last
    finish: this tokenizer's work with no threads at all, so what the machine allows it. The
    threaded `batch count` row against this one is what our threading costs."""
    import multiprocessing

    import deepseek_recipe as dr

    context = multiprocessing.get_context("fork")
    ready, start, done = (context.Barrier(processes + 1) for _ in range(3))

    def child(share: list[str]) -> None:
        tok = dr.Tokenizer.deepseek_v4().with_threads(1)
        tok.count_batch(share, True)
        ready.wait()
        while True:
            start.wait()
            tok.count_batch(share, True)
            done.wait()

    for index in range(processes):
        share = corpus[index::processes]
        context.Process(target=child, args=(share,), daemon=True).start()
    ready.wait()

    def run() -> None:
        start.wait()
        done.wait()

    return run


MAKERS = {
    "ours": ours_workloads,
    "peer": peer_workloads,
    "tiktoken": tiktoken_workloads,
    "machine": machine_workloads,
}
"""Each implementation's workloads."""


def main(implementation: str, spec_file: Path, result_file: Path) -> None:
    """Times every workload at every thread count; writes seconds and corpus-id digests."""
    spec = json.loads(spec_file.read_text(encoding="utf-8"))
    corpus: list[str] = json.loads(Path(spec["corpus"]).read_text(encoding="utf-8"))
    long_text = Path(spec["long_text"]).read_text(encoding="utf-8")
    make = MAKERS[implementation]
    made = {threads: make(spec, corpus, long_text, threads) for threads in spec["threads"]}
    checks: dict[str, str] = {}
    checked = {min(made), max(made)}
    for threads in checked:
        for name, (_, ids) in made[threads].items():
            produced = ids()
            if isinstance(produced, list):
                digests = ",".join(ids_digest(doc) for doc in produced)
                checks[f"{name} x{threads}"] = digest(digests.encode())
    # Rounds over every thread count and workload, the best of each kept: a slow phase of the
    # machine then costs every cell alike instead of the one thread count it fell on.
    seconds: dict[str, dict[int, float]] = {}
    for _ in range(spec["runs"]):
        for threads, workloads in made.items():
            for name, (work, _) in workloads.items():
                cell = seconds.setdefault(name, {})
                cell[threads] = min(cell.get(threads, float("inf")), timed_seconds(work))
    passes = {name: CEILING_PASSES for name in seconds if name == SHA_CEILING}
    result = {"seconds": seconds, "checks": checks, "passes": passes}
    result_file.write_text(json.dumps(result), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]))
