"""The stream side of the differential harness: generated cases through the published 0.2.0
wheel (`peer_streams.py`, its own venv and process) and through this library, compared case by
case.

    .venv/bin/python -m tests.differential.streams_check --seed 1 --count 10000 --out reports/diff

Prints the counts per protocol and category and writes every difference as a minimal reproducible
case (the record with the reference's `expect`, inputs shrunk while the difference stays) under
`--out`. The exit status is 1 when any case differs.

`check(record)` compares one record with `expect` (also used by the regression test) through the
shared stream-vector check, `deepseek_recipe.vectors.check_stream`: chunks (the input index that
produced each, SSE event, compact JSON bytes after normalisation, float spellings), the error and
its input index, `finished`, `done_data` and the accumulated response.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from deepseek_recipe.vectors import check_stream
from tests.differential.streams_gen import Case, generate

REPO_ROOT = Path(__file__).resolve().parents[2]
PEER_PYTHON = REPO_ROOT / "bench" / ".peer-venv" / "bin" / "python"
PEER_SCRIPT = Path(__file__).resolve().parent / "peer_streams.py"
TOKENIZER_JSON = (
    REPO_ROOT / "recipe-rs" / "deepseek-recipe" / "data" / "deepseek-v4" / "tokenizer.json"
)
COMPACT: dict[str, Any] = {"ensure_ascii": False, "separators": (",", ":")}


def peer_python() -> Path:
    """The peer venv's interpreter (`PEER_PYTHON` overrides; a worktree falls back to main's)."""
    if "PEER_PYTHON" in os.environ:
        return Path(os.environ["PEER_PYTHON"])
    if PEER_PYTHON.exists():
        return PEER_PYTHON
    return Path("/work/main/bench/.peer-venv/bin/python")


# --- comparison -------------------------------------------------------------------------------


def _text(value: Any) -> str:
    return json.dumps(value, **COMPACT)


def check(record: dict[str, Any]) -> list[str]:
    """Mismatch descriptions between this library and the record's `expect` (empty: equal): the
    shared byte-level stream check (`deepseek_recipe.vectors.check_stream`), after a case the
    reference itself failed on."""
    expect = record["expect"]
    if "peer_error" in expect:
        return [f"reference failed on the case: {expect['peer_error']}"]
    return check_stream(record)


# --- the reference process --------------------------------------------------------------------


class Peer:
    """One long-running `peer_streams.py` process: cases in, cases with `expect` out."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [str(peer_python()), "-I", str(PEER_SCRIPT), str(TOKENIZER_JSON)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            cwd="/",
        )

    @property
    def stdin(self) -> IO[str]:
        assert self.process.stdin is not None
        return self.process.stdin

    @property
    def stdout(self) -> IO[str]:
        assert self.process.stdout is not None
        return self.process.stdout

    def run_one(self, case: Case) -> dict[str, Any]:
        """One case, answered before the next is sent."""
        self.stdin.write(json.dumps(case, **COMPACT) + "\n")
        self.stdin.flush()
        return json.loads(self.stdout.readline())

    def run_many(self, cases: Iterable[Case]) -> Iterator[dict[str, Any]]:
        """Cases streamed through the process (written from a thread, read here, in order). The
        process ends with the input: it cannot be used afterwards."""
        failures: list[BaseException] = []

        def feed() -> None:
            try:
                for case in cases:
                    self.stdin.write(json.dumps(case, **COMPACT) + "\n")
            except BaseException as err:  # reported by the reading side
                failures.append(err)
            finally:
                self.stdin.close()

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        for line in self.stdout:
            yield json.loads(line)
        writer.join()
        if failures:
            raise RuntimeError("generating the cases failed") from failures[0]
        if self.process.wait(timeout=60) != 0:
            raise RuntimeError(f"the reference process failed ({self.process.returncode})")

    def close(self) -> None:
        if not self.stdin.closed:
            self.stdin.close()
        self.process.wait(timeout=60)
        self.stdout.close()


# --- minimisation -----------------------------------------------------------------------------


def _fails(peer: Peer, case: Case) -> dict[str, Any] | None:
    record = peer.run_one({k: v for k, v in case.items() if k != "expect"})
    if "peer_error" in record["expect"]:
        return None
    return record if check(record) else None


def _candidates(case: Case) -> Iterator[Case]:
    """Smaller variants of a case: fewer inputs, shorter texts and token lists, fewer keys."""
    inputs = case["inputs"]
    for index in range(len(inputs)):
        yield {**case, "inputs": inputs[:index] + inputs[index + 1 :]}
    for index, chunk in enumerate(inputs):
        key = {"text": "content", "tokens": "token_ids"}.get(chunk["kind"])
        if key is None:
            continue
        value = chunk[key]
        size = len(value) // 2
        while size >= 1:
            for start in range(0, len(value), size):
                smaller = dict(chunk)
                smaller[key] = value[:start] + value[start + size :]
                if key == "token_ids" and chunk.get("logprobs") is not None:
                    smaller["logprobs"] = (
                        chunk["logprobs"][:start] + chunk["logprobs"][start + size :]
                    )
                yield {**case, "inputs": [*inputs[:index], smaller, *inputs[index + 1 :]]}
            size //= 2
        if chunk["kind"] == "tokens" and chunk.get("logprobs") is not None:
            yield {
                **case,
                "inputs": [*inputs[:index], {**chunk, "logprobs": None}, *inputs[index + 1 :]],
            }
    for key in list(case["request"]):
        if key not in ("model", "messages", "input", "max_tokens"):
            request = {k: v for k, v in case["request"].items() if k != key}
            yield {**case, "request": request}


def minimize(peer: Peer, record: dict[str, Any], budget: int = 400) -> dict[str, Any]:
    """Shrinks a differing record while it still differs (at most `budget` reference runs)."""
    best = record
    improved = True
    while improved and budget > 0:
        improved = False
        for candidate in _candidates(best):
            budget -= 1
            if budget <= 0:
                break
            smaller = _fails(peer, candidate)
            if smaller is not None:
                best = smaller
                improved = True
                break
    return best


# --- the run ----------------------------------------------------------------------------------


def run(seed: int, count: int, out: Path, minimize_first: int) -> int:
    """Runs `count` cases of `seed`; returns the number of differing cases."""
    out.mkdir(parents=True, exist_ok=True)
    totals: Counter[tuple[str, str]] = Counter()
    failures: Counter[tuple[str, str]] = Counter()
    peer_errors = 0
    peer = Peer()
    shrinker: Peer | None = None
    started = time.monotonic()
    differences = 0
    try:
        for record in peer.run_many(generate(seed, count)):
            key = (record["protocol"], record["category"])
            totals[key] += 1
            if "peer_error" in record["expect"]:
                peer_errors += 1
                (out / f"{record['id']}.peer_error.json").write_text(_text(record) + "\n")
                continue
            mismatches = check(record)
            if not mismatches:
                continue
            failures[key] += 1
            differences += 1
            if differences <= minimize_first:
                # The batch process is busy streaming; a second one answers case by case.
                shrinker = shrinker or Peer()
                record = minimize(shrinker, record)
            (out / f"{record['id']}.json").write_text(
                json.dumps({**record, "mismatches": check(record)}, ensure_ascii=False, indent=1)
                + "\n"
            )
    finally:
        peer.close()
        if shrinker is not None:
            shrinker.close()
    elapsed = time.monotonic() - started
    report(totals, failures, peer_errors, elapsed)
    return differences


def report(
    totals: Counter[tuple[str, str]],
    failures: Counter[tuple[str, str]],
    peer_errors: int,
    elapsed: float,
) -> None:
    """Counts per protocol and category."""
    print(f"{'protocol':<18} {'category':<16} {'cases':>8} {'differ':>7}")
    for protocol, category in sorted(totals):
        key = (protocol, category)
        print(f"{protocol:<18} {category:<16} {totals[key]:>8} {failures[key]:>7}")
    total = sum(totals.values())
    print(
        f"total {total} streams, {sum(failures.values())} differ, {peer_errors} rejected by the "
        f"reference, {elapsed:.0f} s"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Generated stream cases through the published reference and this library."
    )
    parser.add_argument("--seed", type=int, default=1, help="generator seed (default 1)")
    parser.add_argument("--count", type=int, default=1000, help="number of streams")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("reports/differential/streams"),
        help="where differences are written",
    )
    parser.add_argument(
        "--minimize", type=int, default=20, help="minimise the first N differences (default 20)"
    )
    args = parser.parse_args(argv)
    differences = run(args.seed, args.count, args.out, args.minimize)
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
