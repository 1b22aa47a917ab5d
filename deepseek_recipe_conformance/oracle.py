"""What the suite may ask the recipe itself: prompt-token counts and expected validation errors.

Three implementations live here: `RecipeOracle` (the recipe core itself: any request, the
default), `VectorOracle` (answers from the golden request vectors for requests they recorded)
and `NoOracle` (checks that need an oracle are skipped).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Protocol

from deepseek_recipe import (
    ConversionError,
    ConversionOptions,
    ConvertedRequest,
    RecipeError,
    convert,
)
from deepseek_recipe.requests import ModelVersion
from deepseek_recipe.requests import Protocol as RecipeProtocol

VECTOR_PROTOCOLS: dict[str, RecipeProtocol] = {
    "chat": "chat_completions",
    "responses": "responses",
    "messages": "messages",
}
"""Suite protocol names mapped onto vector file names."""


class Oracle(Protocol):
    """Answers questions about a request the way the recipe would.

    `protocol` is the suite's short name (`chat`, `responses`, `messages`); `body` is the request
    exactly as sent, model name included.
    """

    def count_prompt_tokens(self, protocol: str, body: dict[str, Any]) -> int | None:
        """Prompt tokens the recipe counts for this request, or None when unknown."""
        ...

    def expected_error(self, protocol: str, body: dict[str, Any]) -> tuple[int, Any] | None:
        """`(status, body)` the recipe answers for an invalid request, or None when unknown."""
        ...

    def convert(self, protocol: str, body: dict[str, Any]) -> ConvertedRequest | None:
        """The request as the recipe converts it (thinking mode, stops, tool choice, parsing
        options, the stream processor's input), or None when unknown."""
        ...


class NoOracle:
    """An oracle that knows nothing: checks that need one are skipped."""

    def count_prompt_tokens(self, protocol: str, body: dict[str, Any]) -> int | None:
        """Always unknown."""
        return None

    def expected_error(self, protocol: str, body: dict[str, Any]) -> tuple[int, Any] | None:
        """Always unknown."""
        return None

    def convert(self, protocol: str, body: dict[str, Any]) -> ConvertedRequest | None:
        """Always unknown."""
        return None


def request_key(protocol: str, body: dict[str, Any]) -> str:
    """Identity of a request regardless of its model name: protocol + canonical JSON."""
    rest = {k: v for k, v in body.items() if k != "model"}
    return protocol + "\n" + json.dumps(rest, sort_keys=True, ensure_ascii=False)


def default_vectors_dir() -> Path:
    """`RECIPE_VECTORS`, or `../shared/vectors` from the current directory (the layout beside a
    checkout; an installed suite has no vectors of its own)."""
    return Path(os.environ.get("RECIPE_VECTORS") or Path("..", "shared", "vectors"))


class VectorOracle:
    """Answers from the golden request vectors (exact request match, model name ignored).

    Prompt-token counts come from V4 `token_ids`; errors only from the convert stage, which
    carries the official status and body. Vectors with non-default options are used only when
    the option matches the official API (`reasoning_content_behavior: reject`), and only
    vectors recorded with a supported model name (other names are errors about the name).
    """

    OFFICIAL_OPTIONS = ({}, {"reasoning_content_behavior": "reject"})
    RECORDED_MODELS = ("DeepSeek-V4-Pro", "DeepSeek-V4.1-Flash")

    def __init__(self, vectors_dir: Path) -> None:
        self.tokens: dict[str, int] = {}
        self.errors: dict[str, tuple[int, Any]] = {}
        for protocol, stem in VECTOR_PROTOCOLS.items():
            path = vectors_dir / "requests" / f"{stem}.jsonl"
            with path.open(encoding="utf-8") as lines:
                for line in lines:
                    self._add(protocol, json.loads(line))

    def _add(self, protocol: str, record: dict[str, Any]) -> None:
        request = record.get("request")
        if not isinstance(request, dict) or record.get("options") not in self.OFFICIAL_OPTIONS:
            return
        if request.get("model") not in self.RECORDED_MODELS:
            return  # the answer depends on the model name itself
        expect = record["expect"]
        key = request_key(protocol, request)
        error = expect.get("error")
        if error is not None:
            if error.get("stage") == "convert" and error.get("status_code") is not None:
                self.errors[key] = (error["status_code"], error["body"])
        elif record["options"] == {} and isinstance(expect.get("token_ids"), list):
            self.tokens[key] = len(expect["token_ids"])

    def count_prompt_tokens(self, protocol: str, body: dict[str, Any]) -> int | None:
        """Token count of the recorded V4 prompt for this request."""
        return self.tokens.get(request_key(protocol, body))

    def expected_error(self, protocol: str, body: dict[str, Any]) -> tuple[int, Any] | None:
        """Recorded convert-stage error for this request."""
        return self.errors.get(request_key(protocol, body))

    def convert(self, protocol: str, body: dict[str, Any]) -> ConvertedRequest | None:
        """Vectors hold no converted requests: unknown."""
        return None


def official_model_version(model: str) -> ModelVersion | None:
    """The DeepSeek version the official model table gives the name `model`; None for a name
    outside it."""
    probe = {"model": model, "messages": [{"role": "user", "content": "Hi"}]}
    try:
        return convert(probe, protocol="chat_completions").model_version
    except RecipeError:
        return None


class RecipeOracle:
    """Answers with the recipe core: conversion errors, and V4 prompt-token counts.

    The host's model name (`model`) is added to the recipe's model table as `version` (default:
    the version the official table gives that name, else V4), so a host that serves DeepSeek
    under another name is still judged; every other name keeps the official model-name check.
    Conversion runs with the official API's settings (missing reasoning pass-back is rejected).
    V4.1 prompt counts need the V4.1 tokenizer, which is not bundled: they are unknown.
    """

    def __init__(self, model: str, version: ModelVersion | None = None) -> None:
        self.version: ModelVersion = version or official_model_version(model) or "DeepseekV4Pro"
        self.options = ConversionOptions(
            reasoning_content_behavior="reject", model_aliases={model: self.version}
        )

    def _convert(self, protocol: str, body: dict[str, Any]) -> ConvertedRequest:
        return convert(body, protocol=VECTOR_PROTOCOLS[protocol], options=self.options)

    def convert(self, protocol: str, body: dict[str, Any]) -> ConvertedRequest | None:
        """The recipe's conversion with the official settings; None for an invalid request."""
        try:
            return self._convert(protocol, body)
        except RecipeError:
            return None

    def count_prompt_tokens(self, protocol: str, body: dict[str, Any]) -> int | None:
        """Prompt tokens of the request's V4 prompt; None for V4.1 or a request that fails."""
        if self.version != "DeepseekV4Pro":
            return None
        try:
            converted = self._convert(protocol, body)
            if converted.model_version != "DeepseekV4Pro":
                return None
            return len(converted.encode())
        except RecipeError:
            return None

    def expected_error(self, protocol: str, body: dict[str, Any]) -> tuple[int, Any] | None:
        """The official status and body of a conversion error; None when the request is valid
        or fails to parse (the official status of parse failures is not known)."""
        try:
            self._convert(protocol, body)
        except ConversionError as error:
            return error.status_code, error.body
        except RecipeError:
            return None
        return None
