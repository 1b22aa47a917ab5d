"""The request golden vectors through the Python API: errors, conversion, prompts, special ranges,
token ids (the checks are `deepseek_recipe.vectors.check_request`)."""

from __future__ import annotations

import pytest

from deepseek_recipe.vectors import check_request
from tests.vectors import load_jsonl

FILES = {
    "chat_completions": "requests/chat_completions.jsonl",
    "responses": "requests/responses.jsonl",
    "messages": "requests/messages.jsonl",
    "image_requests": "images/image_requests.jsonl",
}


@pytest.mark.parametrize("name", sorted(FILES))
def test_request_vectors(name: str) -> None:
    records = load_jsonl(FILES[name])
    failures: list[str] = []
    for record in records:
        mismatches = check_request(record)
        if mismatches:
            failures.append(f"{record['id']}: {'; '.join(mismatches)[:300]}")
    print(f"{name}: {len(records) - len(failures)} passed, {len(failures)} failed")
    assert not failures, "\n".join(failures[:20])
