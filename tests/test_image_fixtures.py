"""The image fixture folder (`make image-fixtures`, `scripts/gen_image_fixtures.py`): it holds
exactly the vectors' inputs, an altered or foreign folder is refused, and the generator it was
written with still rebuilds the inputs the `vectors` command regenerates."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from deepseek_recipe._vector_images import FIXTURES_MANIFEST, ImageFixtures, source_key
from deepseek_recipe.vectors import (
    check_image_preprocess,
    set_embedded_images,
    use_image_fixtures,
)
from tests.vectors import VECTORS, image_fixtures, load_jsonl

Record = dict[str, Any]


def _byte_source_keys(resolve_records: list[Record]) -> set[str]:
    return {
        source_key(record["id"], call_index, source_index)
        for record in resolve_records
        for call_index, call in enumerate(record["calls"])
        for source_index, source in enumerate(call["sources"])
        if source["kind"] == "bytes"
    }


def test_fixtures_hold_every_input_of_the_vectors() -> None:
    preprocess = load_jsonl("images/image_preprocess.jsonl")
    resolve = load_jsonl("images/image_resolve.jsonl")
    fixtures = image_fixtures()
    for record in preprocess:
        fixtures.image(record["image"]["sha256"])  # raises unless the bytes hash to it
    assert set(fixtures.sources) == _byte_source_keys(resolve)
    for key in fixtures.sources:
        fixtures.source(key)


def _copy_of_one_fixture(tmp_path: Path) -> tuple[Path, str]:
    """A fixture folder in `tmp_path` with the manifest and the first preprocess input."""
    record = load_jsonl("images/image_preprocess.jsonl")[0]
    sha256 = record["image"]["sha256"]
    source = image_fixtures().directory
    copy = tmp_path / "fixtures"
    copy.mkdir()
    shutil.copy(source / FIXTURES_MANIFEST, copy / FIXTURES_MANIFEST)
    shutil.copy(source / sha256, copy / sha256)
    return copy, sha256


def test_an_altered_fixture_is_refused(tmp_path: Path) -> None:
    copy, sha256 = _copy_of_one_fixture(tmp_path)
    fixtures = ImageFixtures(copy, VECTORS / "images")
    assert fixtures.image(sha256)
    data = bytearray((copy / sha256).read_bytes())
    data[len(data) // 2] ^= 1
    (copy / sha256).write_bytes(bytes(data))
    with pytest.raises(ValueError, match="does not match its SHA-256"):
        fixtures.image(sha256)
    (copy / sha256).unlink()
    with pytest.raises(ValueError, match="missing: run `make image-fixtures`"):
        fixtures.image(sha256)


def test_fixtures_of_other_vectors_or_none_are_refused(tmp_path: Path) -> None:
    copy, _ = _copy_of_one_fixture(tmp_path)
    manifest = json.loads((copy / FIXTURES_MANIFEST).read_text(encoding="utf-8"))
    manifest["vectors_digest"] = "0" * 64
    (copy / FIXTURES_MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(ValueError, match="made from other vectors"):
        ImageFixtures(copy, VECTORS / "images")
    with pytest.raises(FileNotFoundError, match="run `make image-fixtures`"):
        ImageFixtures(tmp_path / "absent", VECTORS / "images")


def test_the_vectors_command_path_regenerates_the_inputs() -> None:
    """Without fixtures (the `vectors` command), inputs are regenerated: the smallest record of
    each generator kind passes as it does from the fixtures."""
    records = load_jsonl("images/image_preprocess.jsonl")
    smallest: dict[str, Record] = {}
    for record in records:
        image = record["image"]
        if "b64" in image:
            continue
        kind = image["generator"]["name"]
        if kind not in smallest or image["size"] < smallest[kind]["image"]["size"]:
            smallest[kind] = record
    assert {"png", "jpeg", "gif"} <= set(smallest)
    set_embedded_images(records)
    use_image_fixtures(None)
    for record in smallest.values():
        assert check_image_preprocess(record) == [], record["id"]
