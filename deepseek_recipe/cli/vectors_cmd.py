"""`deepseek-recipe vectors DIR`: every golden-vector file under a folder through this library."""

from __future__ import annotations

import argparse
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from deepseek_recipe.vectors import Record, check_record, iter_records, set_embedded_images

# Manifests and other JSON files beside the records are not vector files.
_SKIPPED_NAMES = frozenset({"manifest.json", "package.json"})


def register(subparsers: Any) -> None:
    """Add the `vectors` command."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "vectors",
        help="run golden-vector files (requests, streams, images) through this library",
        description="Check every vector file under DIR (*.jsonl, and *.json holding one record "
        "or a list of records: request, stream and image records, recognised by their layout) "
        "against this library. Prints per-file counts and 'N passed, M failed'; exits non-zero "
        "on any failure, unreadable file, or when no vectors are found.",
    )
    parser.add_argument("dir", metavar="DIR", type=Path, help="folder searched recursively")
    parser.add_argument(
        "--json",
        metavar="REPORT",
        type=Path,
        help="write every case's id, status and, for failures, expected vs actual",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="threads checking records (default: the number of CPUs)",
    )
    parser.set_defaults(handler=run)


def vector_files(root: Path) -> list[Path]:
    """The candidate vector files under `root`, sorted (the image preprocess file first: its
    embedded images are needed by the other image records)."""
    if root.is_file():
        return [root]
    found = [
        path
        for path in root.rglob("*")
        if path.is_file() and path.suffix in (".jsonl", ".json") and path.name not in _SKIPPED_NAMES
    ]
    return sorted(found, key=lambda path: (path.name != "image_preprocess.jsonl", str(path)))


def _case_report(record: Record, mismatches: list[str]) -> dict[str, Any]:
    case: dict[str, Any] = {"id": record.get("id"), "status": "failed" if mismatches else "passed"}
    if mismatches:
        case["mismatches"] = mismatches
        case["expected"] = record.get("expect")
    return case


def run(args: argparse.Namespace) -> int:
    """Check every record; print per-file counts and the total."""
    root: Path = args.dir
    if not root.exists():
        sys.stderr.write(f"deepseek-recipe vectors: error: {root} does not exist\n")
        return 2
    files = vector_files(root)
    total_passed = total_failed = unreadable = 0
    report: dict[str, Any] = {"files": []}
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for path in files:
            name = str(path.relative_to(root)) if path != root else path.name
            try:
                records = list(iter_records(path))
            except (OSError, ValueError) as err:
                sys.stdout.write(f"{name}: unreadable: {err}\n")
                report["files"].append({"file": name, "error": str(err)})
                unreadable += 1
                continue
            if path.name == "image_preprocess.jsonl":
                set_embedded_images(records)
            results = list(pool.map(check_record, records))
            failed = sum(1 for mismatches in results if mismatches)
            passed = len(results) - failed
            total_passed += passed
            total_failed += failed
            sys.stdout.write(f"{name}: {passed} passed, {failed} failed\n")
            for record, mismatches in zip(records, results, strict=True):
                if mismatches:
                    sys.stdout.write(f"  FAIL {record.get('id')}: {mismatches[0]}\n")
            report["files"].append(
                {
                    "file": name,
                    "passed": passed,
                    "failed": failed,
                    "cases": [
                        _case_report(record, mismatches)
                        for record, mismatches in zip(records, results, strict=True)
                    ],
                }
            )
    sys.stdout.write(f"{total_passed} passed, {total_failed} failed\n")
    report.update(passed=total_passed, failed=total_failed, unreadable=unreadable)
    if args.json is not None:
        args.json.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    if total_passed + total_failed == 0:
        sys.stderr.write(f"deepseek-recipe vectors: error: no vectors found under {root}\n")
        return 1
    return 1 if total_failed or unreadable else 0
