#!/usr/bin/env python3
"""Write the image vectors' inputs once into the fixture folder both test suites read.

Every input of `images/image_preprocess.jsonl` (its `b64`, else regenerated from `generator`
and checked against its `sha256`) and every byte source of `images/image_resolve.jsonl` is
written as a file named by its SHA-256, with a `manifest.json` naming the resolve sources'
files and the digest of the vector files they came from (`deepseek_recipe._vector_images`:
the generator and the folder's layout). The Rust image vector test and the Python one read the
inputs from there; `make test` runs this first. Nothing is written when the folder already
holds every input of these vectors; otherwise it is rebuilt beside and swapped in whole.

Usage (from the repository root, with the package built):
    scripts/gen_image_fixtures.py [--vectors DIR] [--out DIR]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from deepseek_recipe._vector_images import (
    FIXTURES_MANIFEST,
    default_fixtures_dir,
    generate,
    source_key,
    vectors_digest,
)

ROOT = Path(__file__).resolve().parent.parent
Record = dict[str, Any]


def read_records(path: Path) -> list[Record]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def byte_sources(resolve_records: list[Record]) -> Iterator[tuple[str, Record]]:
    """Every byte source of the resolve records: its manifest key and generator."""
    for record in resolve_records:
        for call_index, call in enumerate(record["calls"]):
            for source_index, source in enumerate(call["sources"]):
                if source["kind"] == "bytes":
                    yield source_key(record["id"], call_index, source_index), source["image"]


def up_to_date(out: Path, digest: str, preprocess_records: list[Record]) -> bool:
    """Whether `out` was made from these vectors and still holds every input."""
    try:
        manifest = json.loads((out / FIXTURES_MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if manifest.get("vectors_digest") != digest:
        return False
    names = [record["image"]["sha256"] for record in preprocess_records]
    names += manifest["sources"].values()
    return all((out / name).is_file() for name in names)


def write_fixtures(images: Path, out: Path, digest: str, preprocess_records: list[Record]) -> int:
    """Writes every input into `out` (rebuilt beside it, then swapped in); returns the count."""
    embedded = {
        record["image"]["generator"]["key"]: base64.b64decode(record["image"]["b64"])
        for record in preprocess_records
        if record["image"]["generator"]["name"] == "embedded"
    }
    staging = out.with_name(f"{out.name}.partial-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for record in preprocess_records:
        image = record["image"]
        data = (
            base64.b64decode(image["b64"])
            if "b64" in image
            else generate(image["generator"], embedded)
        )
        if hashlib.sha256(data).hexdigest() != image["sha256"]:
            raise SystemExit(f"gen_image_fixtures: {record['id']}: input differs from its sha256")
        (staging / image["sha256"]).write_bytes(data)
    sources: dict[str, str] = {}
    for key, generator in byte_sources(read_records(images / "image_resolve.jsonl")):
        data = generate(generator, embedded)
        sources[key] = hashlib.sha256(data).hexdigest()
        (staging / sources[key]).write_bytes(data)
    manifest = {"vectors_digest": digest, "sources": sources}
    (staging / FIXTURES_MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", "utf-8")
    shutil.rmtree(out, ignore_errors=True)
    staging.rename(out)
    return len(list(out.iterdir())) - 1


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--vectors",
        type=Path,
        default=Path(os.environ.get("RECIPE_VECTORS", ROOT.parent / "shared" / "vectors")),
        help="the golden vectors folder (default: $RECIPE_VECTORS, else ../shared/vectors)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=default_fixtures_dir(),
        help="the fixture folder (default: $RECIPE_IMAGE_FIXTURES, "
        "else ~/.cache/deepseek-recipe/image-fixtures)",
    )
    args = parser.parse_args()
    images: Path = args.vectors / "images"
    out: Path = args.out
    if not (images / "image_preprocess.jsonl").is_file():
        print(f"gen_image_fixtures: no image vectors at {images}, nothing written")
        return 0
    digest = vectors_digest(images)
    preprocess_records = read_records(images / "image_preprocess.jsonl")
    if up_to_date(out, digest, preprocess_records):
        print(f"gen_image_fixtures: {out} is up to date")
        return 0
    if out.exists() and not (out / FIXTURES_MANIFEST).is_file() and any(out.iterdir()):
        print(f"gen_image_fixtures: {out} is not a fixture folder, not replaced", file=sys.stderr)
        return 1
    count = write_fixtures(images, out, digest, preprocess_records)
    print(f"gen_image_fixtures: {count} inputs written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
