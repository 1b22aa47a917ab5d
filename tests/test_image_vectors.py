"""The image golden vectors through the Python API: preprocessing, token counts, resolution with
a shared quota, and the image sources of converted requests (their resolution and the prompt
token count including images). The checks are `deepseek_recipe.vectors`; the image inputs are
read from the fixture folder `make image-fixtures` writes (each checked against its SHA-256).

Normative: sizes, formats, token adjustments, quotas and error kind/retryable/message; the WebP
bytes (`data_len`, `data_sha256`) depend on the reference's codec build and are not compared.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from deepseek_recipe.vectors import (
    check_image_preprocess,
    check_image_resolution,
    check_image_resolve,
    check_image_tokens,
    use_image_fixtures,
)
from tests.vectors import image_fixtures, load_jsonl

Record = dict[str, Any]

FILES: dict[str, Callable[[Record], list[str]]] = {
    "image_preprocess.jsonl": check_image_preprocess,
    "image_tokens.jsonl": check_image_tokens,
    "image_resolve.jsonl": check_image_resolve,
    # The request part of these records is checked by test_request_vectors.
    "image_requests.jsonl": check_image_resolution,
}


@pytest.mark.parametrize("name", sorted(FILES))
def test_image_vectors(name: str) -> None:
    records = load_jsonl(f"images/{name}")
    if name == "image_requests.jsonl":
        records = [r for r in records if "image_resolution" in r["expect"]]
    check = FILES[name]
    use_image_fixtures(image_fixtures())
    try:
        # Decoding and resolving run without the GIL: records are checked on several threads.
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            results = list(pool.map(check, records))
    finally:
        use_image_fixtures(None)
    failures = [
        f"{record['id']}: {'; '.join(mismatches)[:400]}"
        for record, mismatches in zip(records, results, strict=True)
        if mismatches
    ]
    print(f"images {name}: {len(records) - len(failures)} passed, {len(failures)} failed")
    assert records, "no record was checked"
    assert not failures, "\n".join(failures[:20])
