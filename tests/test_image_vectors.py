"""The image golden vectors through the Python API: preprocessing, token counts, resolution with
a shared quota, and the image sources of converted requests (their resolution and the prompt
token count including images).

Normative: sizes, formats, token adjustments, quotas and error kind/retryable/message; the WebP
bytes (`data_len`, `data_sha256`) depend on the reference's codec build and are not compared.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import json
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from typing import Any
from urllib.parse import urlsplit

import pytest

from deepseek_recipe import (
    ConversionOptions,
    FetchPolicy,
    ImageError,
    ImageQuota,
    ImageResolver,
    ImageSource,
    PreprocessOptions,
    Tokenizer,
    convert,
    count_prompt_tokens,
    preprocess,
)
from deepseek_recipe.errors import EncodeError
from deepseek_recipe.images import (
    ResolvedImages,
    ResolverLimits,
    image_tokens,
    request_image_sources,
)
from tests.image_generators import generate
from tests.vectors import load_jsonl

Record = dict[str, Any]

# The prompt-count check resolves a request's images a second time; requests near the
# 600-image limit (whose resolution is checked above) are left out of it to bound the run time.
PROMPT_COUNT_MAX_SOURCES = 100


@cache
def _embedded() -> dict[str, bytes]:
    """Embedded files by key, from the preprocess records' `b64`."""
    return {
        record["image"]["generator"]["key"]: base64.b64decode(record["image"]["b64"])
        for record in load_jsonl("images/image_preprocess.jsonl")
        if record["image"]["generator"]["name"] == "embedded"
    }


def _image_bytes(image: Record) -> bytes:
    """The input bytes of a record's `image` (its `b64`, else regenerated), checked."""
    if "b64" in image:
        data = base64.b64decode(image["b64"])
    else:
        data = generate(image["generator"], _embedded())
    assert hashlib.sha256(data).hexdigest() == image["sha256"], "input bytes differ from sha256"
    return data


def _error(error: ImageError) -> Record:
    return {"kind": error.kind, "retryable": error.retryable, "message": str(error)}


def _check_preprocess(record: Record) -> None:
    options = PreprocessOptions(**record["options"])
    data = _image_bytes(record["image"])
    try:
        image = preprocess(data, options)
        actual: Record = {
            "width": image.width,
            "height": image.height,
            "format": image.format,
            "token_adjustment": image.token_adjustment,
        }
        assert image.data[:4] == b"RIFF" and image.data[8:12] == b"WEBP"
    except ImageError as error:
        actual = {"error": _error(error)}
    expected = {k: v for k, v in record["expect"].items() if k not in ("data_len", "data_sha256")}
    assert actual == expected


def _check_tokens(record: Record) -> None:
    adjustment = sum(image_tokens(w, h) - 1 for w, h in record["sizes"])
    assert {"token_adjustment": adjustment} == record["expect"]


def _resolver(fetcher: Record) -> ImageResolver:
    policy = FetchPolicy(
        max_bytes=fetcher.get("max_bytes") or FetchPolicy.max_bytes,
        destination_filter=(
            (lambda host, address: False)
            if fetcher.get("destination_filter") == "reject_all"
            else None
        ),
    )
    return ImageResolver(fetch=policy, limits=ResolverLimits())


def _source(source: Record) -> ImageSource:
    detail, path = source["detail"], source["path"]
    kind = source["kind"]
    if kind == "data_url":
        repeat = source.get("data_url_repeat")
        url = (
            repeat["prefix"] + repeat["unit"] * repeat["count"]
            if repeat is not None
            else source["data_url"]
        )
        return ImageSource.from_data_url(url, detail, path)
    if kind == "url":
        return ImageSource.from_url(source["url"], detail, path)
    return ImageSource.from_bytes(generate(source["image"], _embedded()), detail, path)


def _outcome(resolve: Callable[[], ResolvedImages], quota: ImageQuota) -> Record:
    try:
        resolved = resolve()
    except ImageError as error:
        outcome: Record = {"error": _error(error)}
    else:
        images = [
            {"width": image.width, "height": image.height, "format": image.format}
            for image in resolved.images
        ]
        outcome = {"images": images, "token_adjustment": resolved.token_adjustment}
    usage = quota.usage
    outcome["quota"] = {"image_count": usage.image_count, "byte_size": usage.byte_size}
    return outcome


def _expected_outcome(expect: Record) -> Record:
    expected = {k: v for k, v in expect.items() if k != "sources"}
    if "images" in expect:
        expected["images"] = [
            {"width": image["width"], "height": image["height"], "format": image["format"]}
            for image in expect["images"]
            for _ in range(image.get("repeat", 1))
        ]
    return expected


def _check_resolve(record: Record) -> None:
    resolver = _resolver(record["fetcher"])
    quota = ImageQuota()
    assert len(record["calls"]) == len(record["expect"]["calls"])
    for index, (call, expect) in enumerate(
        zip(record["calls"], record["expect"]["calls"], strict=True)
    ):
        sources: list[ImageSource] = []
        for raw in call["sources"]:
            sources += [_source(raw)] * raw.get("repeat", 1)
        actual = _outcome(lambda sources=sources: resolver.resolve(sources, quota), quota)
        assert actual == _expected_outcome(expect), f"call {index}"


def _has_named_host(sources: list[ImageSource]) -> bool:
    """Whether some URL source names a host (the vectors skip those: resolving needs DNS)."""
    for source in sources:
        if source.kind != "url" or not isinstance(source.data, str):
            continue
        try:
            host = urlsplit(source.data).hostname or ""
        except ValueError:
            return True
        if not _is_ip_literal(host):
            return True
    return False


def _is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _check_request(record: Record) -> bool:
    """Checks `image_resolution` and the prompt count with images; False when the record has no
    `image_resolution`."""
    expected = record["expect"].get("image_resolution")
    if expected is None:
        return False
    body = record.get("request_raw") or json.dumps(record["request"], ensure_ascii=False)
    options = ConversionOptions(**record["options"])
    converted = convert(body, protocol=record["protocol"], options=options)
    assert converted.model_version == "DeepseekV41Flash"
    sources = request_image_sources(converted)
    assert len(sources) == expected["sources"]
    assert converted.render().image_count == expected["sources"]
    if "skipped" in expected:
        assert _has_named_host(sources), "expected a URL with a host name (skipped)"
        return True
    resolver = _resolver({"destination_filter": "reject_all"})
    quota = ImageQuota()
    actual = _outcome(lambda: resolver.resolve_request(converted, quota), quota)
    want = _expected_outcome(expected)
    assert actual == want
    if len(sources) <= PROMPT_COUNT_MAX_SOURCES:
        _check_prompt_count(record, body, options, resolver, want)
    return True


def _check_prompt_count(
    record: Record, body: str, options: ConversionOptions, resolver: ImageResolver, want: Record
) -> None:
    """`count_prompt_tokens` = encoded prompt tokens + the recorded image token adjustment."""
    tokenizer = Tokenizer.deepseek_v41()
    converted = convert(body, protocol=record["protocol"], options=options)

    def count() -> int:
        return count_prompt_tokens(
            body,
            protocol=record["protocol"],
            options=options,
            tokenizer=tokenizer,
            image_resolver=resolver,
        )

    try:
        text_tokens = len(converted.encode(tokenizer))
    except EncodeError:
        with pytest.raises(EncodeError):
            count()
        return
    if "error" in want:
        with pytest.raises(ImageError) as info:
            count()
        assert _error(info.value) == want["error"]
        return
    assert count() == text_tokens + want["token_adjustment"]


FILES: dict[str, Callable[[Record], bool]] = {
    "image_preprocess.jsonl": lambda r: _check_preprocess(r) is None,
    "image_tokens.jsonl": lambda r: _check_tokens(r) is None,
    "image_resolve.jsonl": lambda r: _check_resolve(r) is None,
    "image_requests.jsonl": _check_request,
}


def _run(check: Callable[[Record], bool], record: Record) -> tuple[bool, str | None]:
    """(checked, failure) of one record."""
    try:
        return check(record), None
    except (AssertionError, ImageError, ValueError, pytest.fail.Exception) as err:
        return True, f"{record['id']}: {str(err)[:400]}"


@pytest.mark.parametrize("name", sorted(FILES))
def test_image_vectors(name: str) -> None:
    records = load_jsonl(f"images/{name}")
    check = FILES[name]
    # Decoding and resolving run without the GIL: records are checked on several threads.
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        results = list(pool.map(lambda record: _run(check, record), records))
    checked = sum(done for done, _ in results)
    failures = [failure for _, failure in results if failure is not None]
    print(f"images {name}: {checked - len(failures)} passed, {len(failures)} failed")
    assert checked > 0, "no record was checked"
    assert not failures, "\n".join(failures[:20])
