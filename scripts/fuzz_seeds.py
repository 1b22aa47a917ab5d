#!/usr/bin/env python3
"""Regenerate the committed fuzz seeds of the request and stream targets from the golden vectors.

Every request body of a protocol (`requests/*.jsonl`, the body a server receives) is a candidate
seed of its `convert_*` target; every model output of `streams/streams.jsonl` (its text pieces and
parsing options, encoded as `text_pieces` reads them) a candidate of `text_pieces`. The candidates
are minimised with `cargo fuzz cmin` (edge coverage, smallest inputs first), the smallest of
them are kept up to `--budget` bytes (the committed seeds stay small; the corpus that grows lives
in the fuzz cache, see `scripts/fuzz.sh`), and the result replaces `fuzz/seeds/<target>`.

Usage (from the repository root; needs nightly and cargo-fuzz):
    scripts/fuzz_seeds.py [--vectors DIR] [--budget BYTES] [TARGET ...]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CRATE = ROOT / "recipe-rs" / "deepseek-recipe"
REQUEST_TARGETS = {
    "convert_chat": "chat_completions",
    "convert_responses": "responses",
    "convert_messages": "messages",
}
STAGE_FLAGS = {None: 0, "ReasoningStart": 1, "ReasoningContinuation": 2, "ContentContinuation": 3}
PROTOCOL_FLAGS = {"chat_completions": 0, "messages": 1, "responses": 2}
PIECE_SEPARATOR = b"\xff"


def records(path: Path) -> Iterator[dict[str, object]]:
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


def request_bodies(vectors: Path, protocol: str) -> Iterator[bytes]:
    """The body of every request vector of `protocol`, as the vectors README prescribes."""
    for record in records(vectors / "requests" / f"{protocol}.jsonl"):
        raw = record.get("request_raw")
        text = raw if isinstance(raw, str) else json.dumps(record["request"], ensure_ascii=False)
        yield text.encode("utf-8")


def text_pieces_inputs(vectors: Path) -> Iterator[bytes]:
    """Each stream vector's text output in `text_pieces`' encoding: one flags byte (thinking
    stage, tool calls, JSON output, stop sequences, protocol), then the pieces split at 0xFF."""
    for record in records(vectors / "streams" / "streams.jsonl"):
        options = record["parsing_options"]
        assert isinstance(options, dict)
        stage = options.get("thinking_initial_stage")
        flags = STAGE_FLAGS[stage]
        flags |= 4 if options.get("parse_tool_calls") else 0
        flags |= 8 if options.get("starts_in_tool_calls") else 0
        flags |= 16 if options.get("parse_json_output") else 0
        flags |= 32 if options.get("stop_sequences") else 0
        flags |= PROTOCOL_FLAGS.get(str(record["protocol"]), 0) << 6
        inputs = record["inputs"]
        assert isinstance(inputs, list)
        pieces = [i["content"].encode("utf-8") for i in inputs if i.get("kind") == "text"]
        if pieces:
            yield bytes([flags]) + PIECE_SEPARATOR.join(pieces)


def candidates(target: str, vectors: Path) -> Iterator[bytes]:
    if target in REQUEST_TARGETS:
        return request_bodies(vectors, REQUEST_TARGETS[target])
    if target == "text_pieces":
        return text_pieces_inputs(vectors)
    raise SystemExit(f"no seed source for {target}")


def regenerate(target: str, vectors: Path, budget: int) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        corpus = Path(scratch)
        for data in candidates(target, vectors):
            (corpus / hashlib.sha1(data).hexdigest()).write_bytes(data)
        command = ["cargo", "+nightly", "fuzz", "cmin", target, str(corpus), "--"]
        subprocess.run([*command, "-use_counters=0"], cwd=CRATE, check=True)
        seeds = CRATE / "fuzz" / "seeds" / target
        shutil.rmtree(seeds, ignore_errors=True)
        seeds.mkdir(parents=True)
        total = 0
        for path in sorted(corpus.iterdir(), key=lambda p: (p.stat().st_size, p.name)):
            if total + path.stat().st_size > budget:
                break
            total += path.stat().st_size
            shutil.copy(path, seeds / path.name)
        print(f"{target}: {len(list(seeds.iterdir()))} seeds, {total} bytes")


def main() -> None:
    parser = argparse.ArgumentParser(description="Regenerate the committed fuzz seeds.")
    parser.add_argument(
        "--vectors",
        type=Path,
        default=Path(os.environ.get("RECIPE_VECTORS", ROOT.parent / "shared" / "vectors")),
    )
    parser.add_argument("--budget", type=int, default=48 * 1024, help="bytes of seeds per target")
    parser.add_argument("targets", nargs="*", default=[*REQUEST_TARGETS, "text_pieces"])
    args = parser.parse_args()
    for target in args.targets:
        regenerate(target, args.vectors, args.budget)


if __name__ == "__main__":
    main()
