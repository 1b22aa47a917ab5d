"""Thread scaling of batch and long-text tokenization, this project against the published 0.2.0.

`python -m bench.scaling [--corpus-mb 20] [--long-mb 4] [--threads 1 2 4 8 16] [--no-peer]`
from the repository root (also `python -m bench --scaling`). Each implementation runs in its own
process (`bench.scaling_driver`); the peer, whose `Tokenizer` has only `encode`, is driven by a
thread pool of each size. The table gives MB/s, the speed-up over the same call on one thread
and the efficiency (speed-up / threads); the corpus ids of every batch call are checked equal.
Each timed round runs every workload at every thread count once, and each cell keeps its best
round, so a slow phase of the machine costs every thread count alike.
The last rows are the machine's ceilings on the same thread counts: "SHA-256" hashes the corpus
(pure computation with no shared data: how far this machine lets any job scale in those minutes),
and "our batch count, one process per thread" shares the corpus out among that many single-threaded
processes timed together (the tokenizer's own work with no threads: what the threaded batch count
could reach there).
"""

from __future__ import annotations

import argparse
import datetime
import json
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.report import machine
from bench.runner import PEER_PYTHON, REPO_ROOT, peer_problem, tiktoken_problem
from tests.tokenizer_corpus import TOKENIZER_JSON, generate_documents

DRIVER = REPO_ROOT / "bench" / "scaling_driver.py"


def arguments(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(prog="python -m bench.scaling", description=__doc__)
    parser.add_argument("--corpus-mb", type=float, default=20.0, help="batch corpus (default 20)")
    parser.add_argument("--long-mb", type=float, default=4.0, help="one long text (default 4)")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    parser.add_argument(
        "--runs", type=int, default=3, help="timed rounds over every count and workload, best kept"
    )
    parser.add_argument("--seed", type=int, default=1, help="corpus seed (default 1)")
    parser.add_argument("--no-peer", action="store_true", help="skip the published package")
    parser.add_argument("--no-tiktoken", action="store_true", help="skip tiktoken")
    parser.add_argument(
        "--no-ceiling", action="store_true", help="skip the machine's ceilings (last rows)"
    )
    parser.add_argument("--markdown", type=Path, help="also write the table here")
    return parser.parse_args(argv)


def run_driver(implementation: str, spec_file: Path, directory: Path) -> dict[str, Any]:
    """One implementation's results (seconds per workload and thread count, id checks)."""
    result_file = directory / f"{implementation}.json"
    if implementation != "peer":
        argv, cwd = [sys.executable, "-m", "bench.scaling_driver"], REPO_ROOT
    else:
        argv, cwd = [str(PEER_PYTHON), "-I", str(DRIVER)], directory
    subprocess.run([*argv, implementation, str(spec_file), str(result_file)], cwd=cwd, check=True)
    return json.loads(result_file.read_text(encoding="utf-8"))


def table(results: dict[str, dict[str, Any]], sizes: dict[str, float], threads: list[int]) -> str:
    """Markdown: one row per implementation and workload, MB/s (speed-up, efficiency) per count."""
    header = "| implementation, workload | " + " | ".join(f"{t} thr" for t in threads) + " |"
    lines = [header, "|---|" + "---|" * len(threads)]
    for implementation, result in results.items():
        for name, by_threads in result["seconds"].items():
            size = sizes["long" if name.startswith("long") else "corpus"]
            size *= result.get("passes", {}).get(name, 1)
            one = by_threads.get("1")
            cells = []
            for count in threads:
                seconds = by_threads.get(str(count))
                if seconds is None:
                    cells.append("")
                    continue
                cell = f"{size / seconds:.1f}"
                if one and count > 1:
                    speedup = one / seconds
                    cell += f" ({speedup:.1f}x, {100 * speedup / count:.0f}%)"
                cells.append(cell)
            lines.append(f"| {implementation}, {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Runs the scaling table; returns 1 when any batch call's corpus ids differ."""
    args = arguments(argv)
    implementations = ["ours"]
    if not args.no_peer:
        problem = peer_problem()
        if problem:
            print(f"peer skipped: {problem}")
        else:
            implementations.append("peer")
    if not args.no_tiktoken:
        problem = tiktoken_problem()
        if problem:
            print(f"tiktoken skipped: {problem}")
        else:
            implementations.append("tiktoken")
    if not args.no_ceiling:
        implementations.append("machine")
    with tempfile.TemporaryDirectory(prefix="bench-scaling-") as name:
        directory = Path(name)
        corpus = generate_documents(args.seed, int(args.corpus_mb * 1e6))
        mixed = "".join(corpus)
        long_bytes = int(args.long_mb * 1e6)
        long_text = (mixed * (long_bytes // max(len(mixed), 1) + 1))[:long_bytes]
        (directory / "corpus.json").write_text(json.dumps(corpus), encoding="utf-8")
        (directory / "long.txt").write_text(long_text, encoding="utf-8")
        sizes = {
            "corpus": len(mixed.encode("utf-8")) / 1e6,
            "long": len(long_text.encode("utf-8")) / 1e6,
        }
        spec = {
            "corpus": str(directory / "corpus.json"),
            "long_text": str(directory / "long.txt"),
            "tokenizer_json": str(TOKENIZER_JSON),
            "threads": args.threads,
            "runs": args.runs,
        }
        spec_file = directory / "spec.json"
        spec_file.write_text(json.dumps(spec), encoding="utf-8")
        results = {impl: run_driver(impl, spec_file, directory) for impl in implementations}
    checks = {check for result in results.values() for check in result["checks"].values()}
    host = machine()
    command = shlex.join(["python", "-m", "bench.scaling", *(argv or sys.argv[1:])])
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    report = (
        f"machine: {host['cpu']}, {host['cores']} cores ({host['usable_cpus']} usable), "
        f"{host['os']}; Python {host['python']}\n\ndate: {date}; command: {command}\n\n"
        f"corpus {sizes['corpus']:.1f} MB ({len(corpus)} documents), long text "
        f"{sizes['long']:.1f} MB; MB/s (speed-up over 1 thread, efficiency)\n\n"
        + table(results, sizes, args.threads)
        + f"\n\ncorpus ids: {'identical' if len(checks) == 1 else 'DIFFER'} across every batch call"
    )
    print(report)
    if args.markdown:
        args.markdown.write_text(report + "\n", encoding="utf-8")
    return 0 if len(checks) == 1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
