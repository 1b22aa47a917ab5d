"""Where the golden vectors are and how to read them (shared by the vector tests)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from deepseek_recipe._vector_images import ImageFixtures, default_fixtures_dir

REPO_ROOT = Path(__file__).resolve().parent.parent
VECTORS = Path(os.environ.get("RECIPE_VECTORS", REPO_ROOT.parent / "shared" / "vectors"))
VECTORS_OPTIONAL = os.environ.get("RECIPE_VECTORS_OPTIONAL") == "1"


def load_jsonl(relative: str) -> list[dict[str, Any]]:
    """The records of one vector file; fails (or skips, when optional) if it is missing."""
    path = VECTORS / relative
    if not path.is_file():
        if VECTORS_OPTIONAL:
            pytest.skip(f"RECIPE_VECTORS_OPTIONAL=1 and no vectors at {path}")
        pytest.fail(f"golden vectors not found at {path} (set RECIPE_VECTORS)")
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def image_fixtures() -> ImageFixtures:
    """The image inputs of the vectors, written once by `make image-fixtures`; fails with what
    to run when they are missing or were made from other vectors."""
    try:
        return ImageFixtures(default_fixtures_dir(), VECTORS / "images")
    except (OSError, ValueError) as err:
        pytest.fail(str(err))
