"""Per-call cost of the request rows, with the page faults and context switches behind it.

`python -m bench.call_probe` prints, for the short chat's convert, convert + render and convert +
render + encode, the document's convert and a 1 MB copy (the machine's own reference), the best
time per call and the minor page faults and involuntary context switches per call (`getrusage`):
what tells a machine whose memory or scheduler costs more apart from slower code.
`python -m bench.call_probe --loop short|document SECONDS` only repeats one workload, for a
sampling profiler such as `perf record` to attach to (scripts/device_bench.sh profile).
"""

from __future__ import annotations

import argparse
import resource
import time
from collections.abc import Callable

import deepseek_recipe
from bench.request_workloads import long_document, short_chat
from deepseek_recipe import _native

PROTOCOL = "chat_completions"


def _short_encode(body: str) -> Callable[[], object]:
    return lambda: deepseek_recipe.convert(body, protocol=PROTOCOL).encode()


def _document_convert(body: str) -> Callable[[], object]:
    return lambda: _native.convert(PROTOCOL, body)


def _probe(name: str, call: Callable[[], object], calls: int, rounds: int) -> str:
    """One table row: best time per call over `rounds` rounds of `calls` calls, and the faults
    and context switches per call over all of them."""
    for _ in range(min(calls, 100)):
        call()
    before = resource.getrusage(resource.RUSAGE_SELF)
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        best = min(best, (time.perf_counter() - start) / calls)
    after = resource.getrusage(resource.RUSAGE_SELF)
    total = calls * rounds
    faults = (after.ru_minflt - before.ru_minflt) / total
    switches = (after.ru_nivcsw - before.ru_nivcsw) / total
    return f"| {name} | {best * 1e6:.2f} µs | {faults:.3f} | {switches:.4f} |"


def table() -> str:
    """The markdown table of every probed call."""
    short = short_chat()
    document = long_document()
    megabyte = bytes(1 << 20)
    rows = [
        "| call | best per call | minor faults per call | involuntary switches per call |",
        "|---|---|---|---|",
        _probe(
            "short chat convert",
            lambda: deepseek_recipe.convert(short, protocol=PROTOCOL),
            20_000,
            7,
        ),
        _probe(
            "short chat convert + render",
            lambda: deepseek_recipe.convert(short, protocol=PROTOCOL).render(),
            20_000,
            7,
        ),
        _probe("short chat convert + render + encode", _short_encode(short), 20_000, 7),
        _probe("document convert", _document_convert(document), 100, 20),
        _probe("1 MB copy (bytearray)", lambda: bytearray(megabyte), 200, 20),
    ]
    return "\n".join(rows)


def loop(workload: str, seconds: float) -> None:
    """Repeats one workload for `seconds` (for a profiler)."""
    if workload == "short":
        call = _short_encode(short_chat())
    else:
        call = _document_convert(long_document())
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for _ in range(100):
            call()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.call_probe", description=__doc__)
    parser.add_argument(
        "--loop",
        nargs=2,
        metavar=("WORKLOAD", "SECONDS"),
        help="repeat `short` (convert + render + encode) or `document` (convert) for SECONDS",
    )
    args = parser.parse_args()
    if args.loop:
        workload, seconds = args.loop
        if workload not in ("short", "document"):
            parser.error("WORKLOAD is short or document")
        loop(workload, float(seconds))
    else:
        print(table())


if __name__ == "__main__":
    main()
