"""The differential runner: generate cases → the published reference (its own process) → this
library (`deepseek_recipe.vectors`) → counts per protocol x category, and every difference
minimised into a reproducible JSON record.

A *kind* is a module exposing

* `generate(seed, count)` - an iterable of cases (vector records without `expect`, each with
  `id`, `protocol` and `category`);
* `PEER_SCRIPT` - the path of the script the peer interpreter runs (JSON lines in on stdin, the
  same cases with `expect` out on stdout, one line per case, in order);
* `check(record)` - the list of mismatches between the record's `expect` and this library;

and optionally `peer_args()` (extra arguments of the peer script) and `SHRINK_KEYS` (the case
keys the shrinker may reduce; default `("request",)`). See `tests/differential/README.md`.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
PEER_VENV = Path(os.environ.get("RECIPE_PEER_VENV", REPO_ROOT / "bench" / ".peer-venv"))
PEER_PYTHON = PEER_VENV / "bin" / "python"

Record = dict[str, Any]


def peer_available() -> bool:
    return PEER_PYTHON.exists()


def load_kind(name: str) -> ModuleType | None:
    """The kind module `tests.differential.<name>_gen`, or None when it does not exist."""
    module = f"tests.differential.{name}_gen"
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as err:
        if err.name == module:
            return None
        raise


# --- the peer process -----------------------------------------------------------------------


def peer_command(kind: ModuleType) -> list[str]:
    args = kind.peer_args() if hasattr(kind, "peer_args") else []
    return [str(PEER_PYTHON), "-I", str(kind.PEER_SCRIPT), *args]


class Peer:
    """A long-running peer process answering one case at a time (for the shrinker)."""

    def __init__(self, kind: ModuleType) -> None:
        self.kind = kind
        self.cwd = tempfile.TemporaryDirectory(prefix="recipe-peer-")
        self.process = subprocess.Popen(
            peer_command(kind),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            cwd=self.cwd.name,
        )

    def ask(self, case: Record) -> Record:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(case, ensure_ascii=False) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("peer process ended")
        return json.loads(line)

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=30)
        self.cwd.cleanup()


def peer_stream(kind: ModuleType, cases_file: Path) -> Iterator[Record]:
    """The peer's answers to the cases of a JSON-lines file, as they come."""
    with tempfile.TemporaryDirectory(prefix="recipe-peer-") as cwd, cases_file.open("rb") as stdin:
        process = subprocess.Popen(peer_command(kind), stdin=stdin, stdout=subprocess.PIPE, cwd=cwd)
        assert process.stdout is not None
        for line in process.stdout:
            yield json.loads(line)
        if process.wait() != 0:
            raise RuntimeError(f"peer exited with status {process.returncode}")


# --- checking -------------------------------------------------------------------------------


@dataclass
class Tally:
    """Per (protocol, category): passed, differing, peer errors; plus the differing records."""

    passed: Counter[tuple[str, str]] = field(default_factory=Counter)
    differing: Counter[tuple[str, str]] = field(default_factory=Counter)
    peer_errors: Counter[tuple[str, str]] = field(default_factory=Counter)
    differences: list[Record] = field(default_factory=list)
    peer_error_samples: list[Record] = field(default_factory=list)

    def merge(self, other: Tally, keep: int) -> None:
        self.passed.update(other.passed)
        self.differing.update(other.differing)
        self.peer_errors.update(other.peer_errors)
        self.differences += other.differences[: max(0, keep - len(self.differences))]
        self.peer_error_samples += other.peer_error_samples[
            : max(0, 20 - len(self.peer_error_samples))
        ]


def group(record: Record) -> tuple[str, str]:
    return str(record.get("protocol", "-")), str(record.get("category", "-")).split(".")[0]


def check_file(kind_name: str, cases_file: str, keep: int) -> Tally:
    """Worker: the peer's answers for one file of cases, checked with this library."""
    kind = load_kind(kind_name)
    assert kind is not None
    tally = Tally()
    for record in peer_stream(kind, Path(cases_file)):
        key = group(record)
        if "peer_error" in record.get("expect", {}):
            tally.peer_errors[key] += 1
            if len(tally.peer_error_samples) < 20:
                tally.peer_error_samples.append(record)
            continue
        mismatches = kind.check(record)
        if mismatches:
            tally.differing[key] += 1
            if len(tally.differences) < keep:
                tally.differences.append({**record, "mismatches": mismatches})
        else:
            tally.passed[key] += 1
    return tally


def split_cases(cases: Iterable[Record], directory: Path, jobs: int) -> list[Path]:
    """Writes the cases round-robin into `jobs` JSON-lines files."""
    files = [directory / f"cases-{j}.jsonl" for j in range(jobs)]
    with contextlib.ExitStack() as stack:
        handles = [stack.enter_context(path.open("w", encoding="utf-8")) for path in files]
        for index, case in enumerate(cases):
            handles[index % jobs].write(json.dumps(case, ensure_ascii=False) + "\n")
    return files


def run_kind(kind_name: str, seed: int, count: int, jobs: int, keep: int) -> Tally:
    kind = load_kind(kind_name)
    assert kind is not None
    total = Tally()
    with tempfile.TemporaryDirectory(prefix="recipe-diff-") as tmp:
        files = split_cases(kind.generate(seed, count), Path(tmp), jobs)
        if jobs == 1:
            total.merge(check_file(kind_name, str(files[0]), keep), keep)
        else:
            with ProcessPoolExecutor(max_workers=jobs) as pool:
                futures = [pool.submit(check_file, kind_name, str(f), keep) for f in files]
                for future in futures:
                    total.merge(future.result(), keep)
    return total


# --- minimising -----------------------------------------------------------------------------


def signature(mismatches: list[str]) -> str:
    """The field of the first mismatch (what must keep differing while shrinking)."""
    first = mismatches[0] if mismatches else ""
    for stop in (":", "(", "[", ".", " "):
        first = first.split(stop, 1)[0]
    return first


def candidates(value: Any) -> Iterator[Any]:
    """Smaller variants of a JSON value: drop a key / an item, replace a container by one of its
    children, shorten a string."""
    if isinstance(value, dict):
        keys = list(value)
        for key in keys:
            yield {k: v for k, v in value.items() if k != key}
        for key in keys:
            for smaller in candidates(value[key]):
                yield {**value, key: smaller}
    elif isinstance(value, list):
        for index in range(len(value)):
            yield value[:index] + value[index + 1 :]
        for index, item in enumerate(value):
            for smaller in candidates(item):
                yield [*value[:index], smaller, *value[index + 1 :]]
    elif isinstance(value, str) and value:
        if len(value) > 8:
            yield value[: len(value) // 2]
            yield value[len(value) // 2 :]
        yield value[1:]
        yield value[:-1]
        if value.strip() != value:
            yield value.strip()


def minimise(kind: ModuleType, peer: Peer, record: Record, budget: float) -> Record:
    """Shrinks the case while the reference and this library still differ in the same field."""
    keys = getattr(kind, "SHRINK_KEYS", ("request",))
    target = signature(record["mismatches"])
    best = {k: v for k, v in record.items() if k not in ("expect", "mismatches")}
    best_record = record
    deadline = time.monotonic() + budget
    tried: set[str] = set()
    improved = True
    while improved and time.monotonic() < deadline:
        improved = False
        for key in keys:
            if best.get(key) is None:
                continue
            for smaller in candidates(best[key]):
                if time.monotonic() >= deadline:
                    break
                trial = {**best, key: smaller}
                fingerprint = json.dumps(trial, sort_keys=True)
                if fingerprint in tried:
                    continue
                tried.add(fingerprint)
                answer = peer.ask(trial)
                if "peer_error" in answer.get("expect", {}):
                    continue
                mismatches = kind.check(answer)
                if mismatches and signature(mismatches) == target:
                    best = trial
                    best_record = {**answer, "mismatches": mismatches}
                    improved = True
                    break
            if improved:
                break
    return best_record


# --- reporting ------------------------------------------------------------------------------


def report(name: str, tally: Tally) -> str:
    keys = sorted(set(tally.passed) | set(tally.differing) | set(tally.peer_errors))
    lines = [
        f"{name}: {'protocol':<18} {'category':<14} {'passed':>9} {'differing':>9} {'peer err':>8}"
    ]
    for key in keys:
        lines.append(
            f"{name}: {key[0]:<18} {key[1]:<14} {tally.passed[key]:>9} "
            f"{tally.differing[key]:>9} {tally.peer_errors[key]:>8}"
        )
    protocols = sorted({key[0] for key in keys})
    for protocol in protocols:
        passed = sum(v for k, v in tally.passed.items() if k[0] == protocol)
        differing = sum(v for k, v in tally.differing.items() if k[0] == protocol)
        errors = sum(v for k, v in tally.peer_errors.items() if k[0] == protocol)
        lines.append(f"{name}: {protocol:<18} {'(all)':<14} {passed:>9} {differing:>9} {errors:>8}")
    lines.append(
        f"{name}: {sum(tally.passed.values())} passed, {sum(tally.differing.values())} differing, "
        f"{sum(tally.peer_errors.values())} peer errors"
    )
    return "\n".join(lines)


def write_differences(
    kind: ModuleType, name: str, tally: Tally, out: Path, minimise_count: int, budget: float
) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    peer = Peer(kind) if minimise_count > 0 and tally.differences else None
    seen: set[str] = set()
    try:
        for index, record in enumerate(tally.differences):
            shrunk = record
            if peer is not None and index < minimise_count:
                shrunk = minimise(kind, peer, record, budget)
                shrunk["minimised"] = True
            body = json.dumps({k: v for k, v in shrunk.items() if k not in ("id",)}, sort_keys=True)
            if body in seen:
                continue
            seen.add(body)
            shrunk["original_id"] = record["id"]
            path = out / f"{name}-{record['id']}.json"
            path.write_text(
                json.dumps(shrunk, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
            )
            written.append(path)
    finally:
        if peer is not None:
            peer.close()
    return written


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m tests.differential",
        description="Differential test against the published deepseek-recipe 0.2.0.",
    )
    parser.add_argument("--requests", type=int, default=1000, help="request cases per protocol")
    parser.add_argument("--streams", type=int, default=0, help="stream cases")
    parser.add_argument("--seed", type=int, default=None, help="seed (default: a fresh one)")
    parser.add_argument("--out", type=Path, default=Path("reports/differential"))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--keep", type=int, default=2000, help="differing records kept per kind")
    parser.add_argument("--minimise", type=int, default=50, help="differences minimised per kind")
    parser.add_argument("--minimise-seconds", type=float, default=20.0, help="budget per case")
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="exit 0 when differences are found (still printed and written); errors still fail",
    )
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "big")
    if not peer_available():
        sys.stderr.write(
            f"no peer environment at {PEER_VENV} (create it: python -m bench --setup-peer)\n"
        )
        return 2
    print(f"differential: seed {seed} (reproduce: --seed {seed})", flush=True)
    plan = [("requests", args.requests), ("streams", args.streams)]
    differing = 0
    for name, count in plan:
        if count <= 0:
            continue
        kind = load_kind(name)
        if kind is None:
            print(
                f"{name}: skipped: tests/differential/{name}_gen.py does not exist "
                f"(the {name} side of the harness is not installed)",
                flush=True,
            )
            continue
        started = time.monotonic()
        tally = run_kind(name, seed, count, max(1, args.jobs), args.keep)
        print(report(name, tally), flush=True)
        print(f"{name}: {time.monotonic() - started:.1f} s", flush=True)
        for sample in tally.peer_error_samples[:3]:
            print(f"{name}: peer error in {sample['id']}: {sample['expect']['peer_error']}")
        if tally.differences:
            written = write_differences(
                kind, name, tally, args.out, args.minimise, args.minimise_seconds
            )
            print(f"{name}: {len(written)} difference files in {args.out}", flush=True)
        differing += sum(tally.differing.values())
    print(f"differential: seed {seed}: {differing} differences", flush=True)
    if differing and args.report_only:
        print("differential: --report-only: the differences above do not fail this run", flush=True)
        return 0
    return 1 if differing else 0
