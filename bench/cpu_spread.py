"""The same single-thread work on every CPU of the machine: how far one CPU differs from another.

`python -m bench.cpu_spread [--corpus-mb 20] [--calls 5000] [--markdown FILE]` from the repository
root. For each usable CPU a fresh process pinned to it measures, in the same minutes:

- the short chat's convert + render + encode (`deepseek_recipe.convert(...).encode()`), best time
  per call of 5 rounds of `--calls` calls;
- the seeded corpus encoded as plain text into Python lists, one call per document, by this
  library and, when installed, by tiktoken set up as DeepSeek V4 (`encode_ordinary`),
  interleaved: best MB/s of 2 passes each, after one untimed pass of ours (its word cache warm as
  in the suite's timed runs); the two id lists are checked equal on the first pass.

The suite pins every one-thread process to the last CPU, so its absolute figures are that CPU's;
on a virtual machine whose CPUs are not alike (shared cores, busy neighbours) this table tells
what the same code gives on each, and the ratio column whether a ratio holds on all of them.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.report import machine
from bench.runner import REPO_ROOT, tiktoken_problem
from tests.tokenizer_corpus import TOKENIZER_JSON, generate_documents

ROUNDS = 5
PASSES = 2


def arguments(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(prog="python -m bench.cpu_spread", description=__doc__)
    parser.add_argument("--corpus-mb", type=float, default=20.0, help="corpus (default 20)")
    parser.add_argument("--calls", type=int, default=5000, help="calls per timed round")
    parser.add_argument("--seed", type=int, default=0, help="corpus seed (default 0)")
    parser.add_argument("--markdown", type=Path, help="also write the report to this file")
    parser.add_argument("--child", nargs=2, metavar=("CORPUS", "CALLS"), help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def short_chat_best(calls: int) -> float:
    """Best seconds per call of the short chat's convert + render + encode."""
    import deepseek_recipe
    from bench.request_workloads import short_chat

    body = short_chat()
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(calls):
            deepseek_recipe.convert(body, protocol="chat_completions").encode()
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def tiktoken_encoder() -> Callable[[str], list[int]] | None:
    """tiktoken's `encode_ordinary` as DeepSeek V4, or None when tiktoken is not installed."""
    if tiktoken_problem():
        return None
    from bench.tiktoken_peer import deepseek_encoding

    return deepseek_encoding(TOKENIZER_JSON).encode_ordinary


def child(corpus_file: str, calls: int) -> dict[str, float | bool | None]:
    """The measurements on this process's CPU."""
    import deepseek_recipe

    documents: list[str] = json.loads(Path(corpus_file).read_text(encoding="utf-8"))
    megabytes = sum(len(document.encode("utf-8")) for document in documents) / 1e6
    tokenizer = deepseek_recipe.Tokenizer.deepseek_v4()
    other = tiktoken_encoder()

    def ours(document: str) -> list[int]:
        return tokenizer.encode(document, False)

    def rate(encode: Callable[[str], list[int]]) -> float:
        start = time.perf_counter()
        for document in documents:
            encode(document)
        return megabytes / (time.perf_counter() - start)

    same = None if other is None else all(ours(d) == other(d) for d in documents)
    ours_best, other_best = 0.0, 0.0
    for _ in range(PASSES):
        ours_best = max(ours_best, rate(ours))
        if other is not None:
            other_best = max(other_best, rate(other))
    return {
        "short_chat_us": short_chat_best(calls) * 1e6,
        "ours_mb_s": ours_best,
        "tiktoken_mb_s": other_best if other is not None else None,
        "same_ids": same,
    }


def row(cpu: int, result: dict[str, float | bool | None]) -> str:
    """One markdown row."""
    theirs = result["tiktoken_mb_s"]
    ours = float(result["ours_mb_s"] or 0.0)
    if theirs is None:
        tail = "| - | - | - |"
    else:
        same = "same ids" if result["same_ids"] else "IDS DIFFER"
        tail = f"| {float(theirs):.1f} | {ours / float(theirs):.2f}x | {same} |"
    return f"| {cpu} | {float(result['short_chat_us'] or 0.0):.2f} µs | {ours:.1f} " + tail


def measure_on(cpu: int, corpus_file: Path, calls: int) -> dict[str, float | bool | None]:
    """Runs the child measurement in a fresh process pinned to `cpu`."""
    completed = subprocess.run(
        [sys.executable, "-m", "bench.cpu_spread", "--child", str(corpus_file), str(calls)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
        preexec_fn=lambda: os.sched_setaffinity(0, {cpu}),
    )
    return json.loads(completed.stdout)


def main(argv: list[str] | None = None) -> int:
    """Prints the table (and writes it with `--markdown`); returns 1 when any ids differ."""
    args = arguments(argv)
    if args.child:
        print(json.dumps(child(args.child[0], int(args.child[1]))))
        return 0
    host = machine()
    command = shlex.join(["python", "-m", "bench.cpu_spread", *(argv or sys.argv[1:])])
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"machine: {host['cpu']}, {host['cores']} cores ({host['usable_cpus']} usable), "
        f"{host['os']}; Python {host['python']}",
        "",
        f"date: {date}; command: {command}",
        "",
        "| cpu | short chat convert + render + encode | ours plain, MB/s | tiktoken, MB/s "
        "| ours / tiktoken | ids |",
        "|---|---|---|---|---|---|",
    ]
    print("\n".join(lines), flush=True)
    differ = False
    with tempfile.TemporaryDirectory(prefix="bench-cpu-spread-") as name:
        corpus_file = Path(name) / "corpus.json"
        corpus = generate_documents(args.seed, int(args.corpus_mb * 1e6))
        corpus_file.write_text(json.dumps(corpus), encoding="utf-8")
        for cpu in sorted(os.sched_getaffinity(0)):
            result = measure_on(cpu, corpus_file, args.calls)
            differ |= result["same_ids"] is False
            lines.append(row(cpu, result))
            print(lines[-1], flush=True)
    if args.markdown:
        args.markdown.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
