"""`python -m bench`: every workload, every implementation in its own process, one report.

    python -m bench [--quick] [--runs N] [--only TEXT] [--no-peer] [--no-hf] [--no-tiktoken]
                    [--setup-peer]
                    [--markdown FILE] [--json FILE]

Build the extension with `maturin develop --release` first: a debug build is far slower.
Exit status 1 when an output check differs or a process fails (both are in the report).
"""

from __future__ import annotations

import argparse
import datetime
import json
import shlex
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench import report, scaling
from bench.cases import Case, Sizes, request_cases, stream_cases, tokenizer_cases
from bench.compare import check_status
from bench.report import Row
from bench.runner import Outcome, peer_problem, run, setup_peer, tiktoken_problem

RSS_NOTE = (
    "peak RSS: VmHWM of the implementation's process (/proc/self/status), reset after its "
    "untimed check run and read after its timed runs: interpreter, library and workload included."
)
PIN_NOTE = "Every process is pinned to its thread count of CPUs (1 unless the label says x2)."


def arguments(argv: list[str]) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small workloads: a smoke run")
    parser.add_argument("--runs", type=int, help="timed runs per case (default 3, quick 1)")
    parser.add_argument("--seed", type=int, default=1, help="corpus seed (default 1)")
    parser.add_argument("--corpus-mb", type=float, default=20.0, help="corpus size (default 20)")
    parser.add_argument("--only", action="append", default=[], help="cases whose name has TEXT")
    parser.add_argument("--no-peer", action="store_true", help="skip the published package")
    parser.add_argument("--no-hf", action="store_true", help="skip HF tokenizers")
    parser.add_argument("--no-tiktoken", action="store_true", help="skip tiktoken")
    parser.add_argument(
        "--setup-peer", action="store_true", help="create bench/.peer-venv, then exit"
    )
    parser.add_argument(
        "--scaling",
        action="store_true",
        help="run the thread-scaling table instead (python -m bench.scaling --help)",
    )
    parser.add_argument("--timeout", type=float, default=900, help="seconds per process")
    parser.add_argument("--markdown", type=Path, help="write the report as markdown")
    parser.add_argument("--json", type=Path, help="write every raw number as JSON")
    return parser.parse_args(argv)


def build_cases(directory: Path, args: argparse.Namespace, peer: bool) -> list[Case]:
    """Every case, its workload files written into `directory`."""
    sizes = Sizes.quick() if args.quick else Sizes.full(args.corpus_mb)
    runs = args.runs or (1 if args.quick else 3)
    cases = [
        *tokenizer_cases(directory, args.seed, sizes, runs),
        *request_cases(directory, sizes, runs, peer),
        *stream_cases(directory, sizes, runs, peer),
    ]
    skipped = {"hf"} if args.no_hf else set()
    if args.no_tiktoken or tiktoken_problem():
        skipped.add("tiktoken")
    for case in cases:
        case.runners = [runner for runner in case.runners if runner.implementation not in skipped]
    if args.only:
        cases = [case for case in cases if any(text in case.name for text in args.only)]
    return cases


def measure(cases: list[Case], directory: Path, timeout: float) -> list[Row]:
    """Runs every case with each of its runners and checks their outputs against ours."""
    rows: list[Row] = []
    index = 0
    for case in cases:
        outcomes: list[Outcome] = []
        for runner in case.runners:
            index += 1
            outcome = run(case, runner, directory, index, timeout)
            outcomes.append(outcome)
            if outcome.result is None:
                took = outcome.error
            else:
                took = f"median {report.duration(statistics.median(outcome.result['seconds']))}"
            print(f"  {case.name} / {runner.label}: {took}", file=sys.stderr, flush=True)
        reference = outcomes[0]
        for outcome in outcomes:
            rows.append(Row(outcome, status(reference, outcome), reference))
    return rows


def status(reference: Outcome, outcome: Outcome) -> str:
    """The output check of `outcome` against ours (`reference`)."""
    if outcome.result is None:
        return outcome.error or "failed"
    if reference is outcome:
        return "reference" if len(outcome.case.runners) > 1 else "-"
    if reference.result is None:
        return "no reference"
    stage = outcome.runner.variant
    return check_status(outcome.case.family, stage, reference.result, outcome.result)


def render(rows: list[Row], header: dict[str, Any], markdown: bool) -> str:
    """The whole report: header, results, ratios and scaling."""
    table = report.markdown_table if markdown else report.text_table
    results = table(report.RESULT_HEADER, [report.result_cells(row) for row in rows])
    scaling = table(report.SCALING_HEADER, report.scaling_cells(rows))
    summary = report.summary_lines(rows)
    machine = header["machine"]
    lines = [
        f"machine: {machine['cpu']}, {machine['cores']} cores ({machine['usable_cpus']} usable),"
        f" {machine['os']}",
        f"date: {header['date']}; Python {machine['python']}",
        f"command: {header['command']}",
        *[f"library ({name}): {library}" for name, library in header["libraries"].items()],
        f"peer: {header['peer']}",
        RSS_NOTE,
        PIN_NOTE,
    ]
    bullet = "- " if markdown else ""
    parts = [
        "\n".join(bullet + line for line in lines),
        results,
        "\n".join(bullet + line for line in summary) or "(no ratios)",
        f"Cost per unit by size (flagged above {report.SUPER_LINEAR}x at 16x):",
        scaling,
    ]
    return "\n\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Runs the suite; returns 1 when an output check differs or a process failed."""
    argv = sys.argv[1:] if argv is None else argv
    if "--scaling" in argv:
        return scaling.main([arg for arg in argv if arg != "--scaling"])
    args = arguments(argv)
    if args.setup_peer:
        setup_peer()
        print(f"peer: {peer_problem() or 'deepseek-recipe 0.2.0 ready in bench/.peer-venv'}")
        return 0
    problem = None if not args.no_peer else "skipped (--no-peer)"
    problem = problem or peer_problem()
    if problem and not args.no_peer:
        print(f"peer deepseek-recipe 0.2.0 unavailable: {problem}; running without it")
    if not args.no_tiktoken and tiktoken_problem():
        print(f"tiktoken unavailable: {tiktoken_problem()}; running without it")
    with tempfile.TemporaryDirectory(prefix="recipe-bench-") as folder:
        directory = Path(folder)
        cases = build_cases(directory, args, peer=problem is None)
        rows = measure(cases, directory, args.timeout)
    libraries: dict[str, str] = {}
    for row in rows:
        if row.outcome.result is not None:
            libraries.setdefault(row.outcome.runner.implementation, row.outcome.result["library"])
    header = {
        "machine": report.machine(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": shlex.join(["python", "-m", "bench", *argv]),
        "libraries": libraries,
        "peer": problem or "deepseek-recipe 0.2.0 in bench/.peer-venv",
    }
    print(render(rows, header, markdown=False))
    if args.markdown:
        args.markdown.write_text(render(rows, header, markdown=True), encoding="utf-8")
    if args.json:
        raw = {**header, "rows": [row.numbers() for row in rows]}
        args.json.write_text(json.dumps(raw, indent=1, ensure_ascii=False), encoding="utf-8")
    failed = any(row.outcome.result is None or "DIFF" in row.status for row in rows)
    return 1 if failed else 0
