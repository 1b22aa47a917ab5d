"""Output checks: does an implementation produce what ours produces on the same workload?

Drivers report `check`, a list of digests (per document for (a), per 1024-id block after the
length for (b), per normalised SSE chunk for (c)) and, for streams, `summary`, the digest of
the assembled reasoning, content, tool calls, finish reason and usage.
"""

from __future__ import annotations

from typing import Any

from bench.cases import Family


def first_difference(left: list[str], right: list[str]) -> int:
    """The first index where the lists differ (the shorter length if one is a prefix)."""
    for index, (a, b) in enumerate(zip(left, right, strict=False)):
        if a != b:
            return index
    return min(len(left), len(right))


def check_status(family: Family, stage: str, ours: dict[str, Any], other: dict[str, Any]) -> str:
    """`same …` when `other` matches `ours`, else where it first differs (never hidden)."""
    mine, theirs = ours["check"], other["check"]
    if not mine and not theirs:
        return "-"
    if family == "tokenize":
        if mine == theirs:
            return "same ids"
        return f"DIFF ids, doc {first_difference(mine, theirs)}"
    if family == "request":
        what = "ids" if stage == "encode" else "prompt"
        if mine == theirs:
            return f"same {what}"
        if what == "prompt":
            return "DIFF prompt"
        block = first_difference(mine[1:], theirs[1:])
        return f"DIFF ids ({mine[0]} vs {theirs[0]}), from id {block * 1024}"
    if mine == theirs:
        return "same chunks"
    chunk = first_difference(mine, theirs)
    if ours["summary"] == other["summary"]:
        return f"chunks differ from {chunk}, same content"
    return f"DIFF content, chunk {chunk}"
