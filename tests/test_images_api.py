"""The typed image API: sources, preprocessing, token counts, the quota, fetching from a local
HTTP server on 127.0.0.1 (allowed only when the policy says so), errors, and decoder robustness
on malformed bytes."""

from __future__ import annotations

import base64
import json
import pickle
import sys
import threading
from collections.abc import Iterator
from dataclasses import asdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deepseek_recipe import (
    FetchPolicy,
    ImageError,
    ImageQuota,
    ImageResolver,
    ImageSource,
    PreprocessOptions,
    RecipeError,
    ResolverLimits,
    Tokenizer,
    _native,
    convert,
    count_prompt_tokens,
    image_tokens,
    preprocess,
)
from deepseek_recipe.images import (
    ImageFetcher,
    RetryPolicy,
    request_image_sources,
    request_token_adjustment,
    token_adjustment,
)
from tests.image_generators import generate

PNG_40x50 = generate(
    {
        "name": "png",
        "width": 40,
        "height": 50,
        "color_type": 6,
        "bit_depth": 8,
        "pattern": {"type": "linear", "k0": [10, 20, 30, 128], "kx": [3, 5, 7, 1], "ky": [1, 2, 3]},
    },
    {},
)
JPEG_16 = generate(
    {
        "name": "jpeg",
        "width": 16,
        "height": 16,
        "components": 3,
        "pattern": {"type": "linear", "k0": [90, 128, 128], "kx": [13]},
    },
    {},
)
GIF_17x9 = generate(
    {
        "name": "gif",
        "width": 17,
        "height": 9,
        "palette": [[255, 0, 0], [0, 255, 0], [0, 0, 255]],
        "frames": [{"pattern": {"type": "linear", "kx": [1], "ky": [1]}}],
    },
    {},
)
NO_RETRY = RetryPolicy(attempts=1)
LOOPBACK = FetchPolicy(allow_special_addresses=True, connect_timeout_s=2, total_timeout_s=5)


# --- preprocessing and token counts -----------------------------------------------------------


def test_preprocess_reports_size_tokens_and_webp_bytes() -> None:
    image = preprocess(PNG_40x50)
    assert (image.width, image.height, image.format, image.source_format) == (
        490,
        616,
        "webp",
        "png",
    )
    assert image.token_count == 197 == image_tokens(40, 50)
    assert image.token_adjustment == 196
    assert image.data[:4] == b"RIFF" and image.data[8:16] == b"WEBPVP8 "
    low = preprocess(JPEG_16, PreprocessOptions(detail="low"))
    assert (low.width, low.height, low.source_format) == (546, 546, "jpeg")
    assert preprocess(GIF_17x9).source_format == "gif"


def test_preprocess_low_detail_shrinks_long_side() -> None:
    wide = generate(
        {
            "name": "png",
            "width": 1920,
            "height": 1080,
            "color_type": 0,
            "bit_depth": 1,
            "pattern": {"type": "checker", "size": 8, "a": [0], "b": [1]},
        },
        {},
    )
    assert (preprocess(wide).width, preprocess(wide).height) == (1708, 966)
    low = preprocess(wide, PreprocessOptions(detail="low"))
    assert (low.width, low.height, low.token_count) == (728, 420, 192)


def test_preprocess_errors_carry_kind_and_location() -> None:
    cases = {
        b"": "EmptyImage",
        b"BM\x00\x00\x00\x00": "UnsupportedMediaType",
        b"\x89PNG\r\n\x1a\n": "Decode",
    }
    for data, kind in cases.items():
        with pytest.raises(ImageError) as info:
            preprocess(data)
        assert info.value.kind == kind
        assert info.value.retryable is False
        assert str(info.value).startswith("image[0]: You have uploaded an unsupported image.")
        assert isinstance(info.value, RecipeError) and isinstance(info.value, ValueError)
    with pytest.raises(ImageError) as info:
        preprocess(PNG_40x50, PreprocessOptions(max_dimension_px=39))
    assert info.value.kind == "ImageDimensionsTooLarge"


def test_image_error_pickles() -> None:
    with pytest.raises(ImageError) as info:
        preprocess(b"")
    copy = pickle.loads(pickle.dumps(info.value))
    assert (str(copy), copy.kind, copy.retryable) == (str(info.value), "EmptyImage", False)


def test_invalid_detail_is_a_value_error() -> None:
    # The core's names of the details, checked when the options or the source are built.
    expected = '; expected "low", "high", "original" or "auto"'
    with pytest.raises(ValueError, match='unknown detail "HIGH"' + expected):
        PreprocessOptions(detail="HIGH")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match='unknown detail "x"'):
        ImageSource.from_url("http://8.8.8.8/a.png", detail="x")  # type: ignore[arg-type]


def test_sources_are_checked_as_the_resolver_reads_them() -> None:
    with pytest.raises(ValueError, match='unknown image source kind "file"'):
        ImageSource("file", "f")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        ImageSource("url", b"http://8.8.8.8/a.png")
    with pytest.raises(TypeError):
        ImageSource("bytes", "not bytes")


def test_base64_sources_take_the_official_media_types() -> None:
    assert ImageSource.from_base64("QQ==", "image/jpg").data == "data:image/jpeg;base64,QQ=="
    assert ImageSource.from_base64("QQ==", "image/webp").data == "data:image/webp;base64,QQ=="
    with pytest.raises(ValueError, match='unknown media type "image/bmp"'):
        ImageSource.from_base64("QQ==", "image/bmp")
    with pytest.raises(ValueError, match='unknown media type "image/JPEG"'):
        ImageSource.from_anthropic({"type": "base64", "media_type": "image/JPEG", "data": "QQ=="})


def test_token_counts_follow_the_specification() -> None:
    assert image_tokens(1, 1) == 184
    assert image_tokens(1920, 1080) == 968
    assert image_tokens(0, 0) == 2
    assert image_tokens(2**32 - 1, 2**32 - 1) == 994
    assert token_adjustment([(1, 1), (1000, 1000)]) == 183 + 601
    assert token_adjustment([]) == 0


# --- sources and the resolver -----------------------------------------------------------------


def test_sources_from_every_protocol_shape() -> None:
    encoded = base64.b64encode(PNG_40x50).decode()
    sources = [
        ImageSource.from_data_url(f"data:image/png;base64,{encoded}", detail="low", path="p"),
        ImageSource.from_bytes(bytearray(JPEG_16)),
        ImageSource.from_base64(encoded, "image/jpg"),
        ImageSource.from_anthropic({"type": "base64", "media_type": "image/png", "data": encoded}),
    ]
    assert sources[2].data == f"data:image/jpeg;base64,{encoded}"
    quota = ImageQuota()
    resolved = ImageResolver(offline=True).resolve(sources, quota)
    assert [(i.width, i.height) for i in resolved.images] == [
        (490, 616),
        (546, 546),
        (490, 616),
        (490, 616),
    ]
    assert resolved.token_adjustment == sum(i.token_adjustment for i in resolved.images)
    assert quota.usage.image_count == 4
    assert quota.usage.byte_size == 3 * len(PNG_40x50) + len(JPEG_16)
    with pytest.raises(TypeError):
        ImageSource("bytes", "not bytes")
    with pytest.raises(ValueError):
        ImageSource.from_anthropic({"type": "file", "file_id": "f"})


def test_quota_is_shared_across_calls_and_unchanged_on_error() -> None:
    resolver = ImageResolver(offline=True, limits=ResolverLimits(max_images=3))
    quota = ImageQuota()
    source = ImageSource.from_bytes(GIF_17x9, path=".messages[0]")
    resolver.resolve([source, source], quota)
    with pytest.raises(ImageError) as info:
        resolver.resolve([source, source], quota)
    assert info.value.kind == "TooManyImages"
    assert str(info.value) == ".messages[0]: Too many images: max 3 images per request, got 4"
    assert quota.usage.image_count == 2
    resolver.resolve([source], quota)
    assert quota.usage.image_count == 3


def test_the_cores_default_limits_reach_python() -> None:
    assert ImageResolver(offline=True, limits=ResolverLimits(max_images=3)).limits == (
        ResolverLimits(
            max_images=3,
            max_image_bytes=32 << 20,
            max_total_bytes=64 << 20,
            max_dimension_px=8192,
            many_images_max_dimension_px=4096,
            many_images=15,
            low_detail_max_dimension_px=512,
            max_url_bytes=8192,
        )
    )
    assert json.loads(_native.ImageResolver().limits_json()) == asdict(ImageResolver().limits)


def test_offline_resolver_refuses_urls_and_checks_them_first() -> None:
    resolver = ImageResolver(offline=True)
    with pytest.raises(ImageError) as info:
        resolver.resolve([ImageSource.from_url("ftp://h/x", path="p")])
    assert (info.value.kind, str(info.value)) == ("InvalidUrl", 'p: invalid url: "ftp://h/x"')
    with pytest.raises(ImageError) as info:
        resolver.resolve([ImageSource.from_url("http://8.8.8.8/x.png")])
    assert info.value.kind == "Fetch"


# --- fetching from a local server -------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    hits: ClassVar[dict[str, int]] = {}

    def do_GET(self) -> None:
        _Handler.hits[self.path] = _Handler.hits.get(self.path, 0) + 1
        if self.path == "/image.png":
            self._reply(200, PNG_40x50)
        elif self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "/image.png")
            self.end_headers()
        elif self.path == "/status/500":
            self._reply(500, b"no")
        else:
            self._reply(404, b"missing")

    def _reply(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_loopback_is_refused_by_default(server: str) -> None:
    with pytest.raises(ImageError) as info:
        ImageFetcher().fetch(f"{server}/image.png")
    assert info.value.kind == "DestinationRejected"
    assert info.value.retryable is False
    assert str(info.value) == f"image[0]: Failed to download image from {server}/image.png"
    with pytest.raises(ImageError) as info:
        ImageResolver().resolve([ImageSource.from_url(f"{server}/image.png", path="p")])
    assert (info.value.kind, str(info.value).split(":")[0]) == ("DestinationRejected", "p.image[0]")
    for private in ("http://10.0.0.1/x", "http://169.254.169.254/latest", "http://[::1]/x"):
        with pytest.raises(ImageError) as info:
            ImageFetcher().fetch(private)
        assert info.value.kind == "DestinationRejected", private


def test_fetch_when_the_policy_allows_loopback(server: str) -> None:
    assert ImageFetcher(LOOPBACK).fetch(f"{server}/image.png") == PNG_40x50
    ranged = FetchPolicy(allowed_ranges=("127.0.0.0/8",))
    assert ImageFetcher(ranged).fetch(f"{server}/redirect") == PNG_40x50
    resolved = ImageResolver(fetch=LOOPBACK).resolve(
        [ImageSource.from_url(f"{server}/image.png", detail="low")]
    )
    assert (resolved.images[0].width, resolved.images[0].height) == (490, 616)
    with pytest.raises(ValueError, match="prefix too long"):
        ImageFetcher(FetchPolicy(allowed_ranges=("127.0.0.0/40",)))


def test_fetch_status_errors_and_retries(server: str) -> None:
    with pytest.raises(ImageError) as info:
        ImageFetcher(LOOPBACK).fetch(f"{server}/missing")
    assert (info.value.kind, info.value.retryable) == ("FetchStatus", False)
    resolver = ImageResolver(fetch=LOOPBACK, retry=RetryPolicy(attempts=3, initial_backoff_s=0.01))
    _Handler.hits.pop("/status/500", None)
    with pytest.raises(ImageError) as info:
        resolver.resolve([ImageSource.from_url(f"{server}/status/500")])
    assert (info.value.kind, info.value.retryable) == ("FetchStatus", True)
    assert _Handler.hits["/status/500"] == 3


def test_fetch_size_limit(server: str) -> None:
    small = FetchPolicy(allow_special_addresses=True, max_bytes=100)
    with pytest.raises(ImageError) as info:
        ImageFetcher(small).fetch(f"{server}/image.png")
    assert info.value.kind == "ImageTooLarge"
    assert str(info.value) == "image[0]: image file size exceeds limit 0 MB"
    with pytest.raises(ImageError) as info:
        ImageResolver(fetch=small, retry=NO_RETRY).resolve(
            [ImageSource.from_url(f"{server}/image.png")]
        )
    assert (info.value.kind, info.value.retryable) == ("Fetch", True)


def test_fetch_and_retry_defaults_are_the_cores() -> None:
    core_fetch = json.loads(_native.ImageFetcher().policy_json())
    assert json.loads(FetchPolicy().to_json()) == core_fetch
    assert (FetchPolicy.max_bytes, FetchPolicy().max_redirects) == (32 << 20, 5)
    assert (FetchPolicy().connect_timeout_s, FetchPolicy().total_timeout_s) == (10.0, 30.0)
    assert json.loads(_native.ImageResolver().retry_json()) == asdict(RetryPolicy())
    assert RetryPolicy() == RetryPolicy(attempts=4, initial_backoff_s=0.25)
    assert json.loads(ImageResolver()._resolver.retry_json()) == asdict(RetryPolicy())


def test_fetch_and_retry_json_forms_are_checked_by_the_core() -> None:
    ranged = _native.ImageFetcher('{"destinations": {"allowed_ranges": ["10.0.0.0/8"]}}')
    policy = json.loads(ranged.policy_json())
    assert policy["destinations"]["allowed_ranges"] == ["10.0.0.0/8"]
    assert policy["max_bytes"] == FetchPolicy.max_bytes, "an absent key keeps the default"
    retry = _native.ImageResolver(retry_json='{"attempts": 2}').retry_json()
    assert json.loads(retry) == {"attempts": 2, "initial_backoff_s": RetryPolicy.initial_backoff_s}
    for bad in ('{"max_bytes": -1}', '{"timeout_s": 1}', '{"total_timeout_s": "1"}', "["):
        with pytest.raises(ValueError, match="invalid fetch policy"):
            _native.ImageFetcher(bad)
    for bad in ('{"attempts": -1}', '{"backoff_s": 1}', '{"initial_backoff_s": -1}'):
        with pytest.raises(ValueError, match="invalid retry policy"):
            _native.ImageResolver(retry_json=bad)
    with pytest.raises(ValueError, match="invalid fetch policy"):
        ImageFetcher(FetchPolicy(connect_timeout_s=float("nan")))


def test_fetch_policy_overrides_reach_the_fetch(server: str) -> None:
    no_redirects = FetchPolicy(allow_special_addresses=True, max_redirects=0)
    with pytest.raises(ImageError) as info:
        ImageFetcher(no_redirects).fetch(f"{server}/redirect")
    assert (info.value.kind, info.value.retryable) == ("Fetch", False)
    one_redirect = FetchPolicy(allow_special_addresses=True, max_redirects=1)
    assert ImageFetcher(one_redirect).fetch(f"{server}/redirect") == PNG_40x50
    _Handler.hits.pop("/status/500", None)
    with pytest.raises(ImageError):
        ImageResolver(fetch=LOOPBACK, retry=NO_RETRY).resolve(
            [ImageSource.from_url(f"{server}/status/500")]
        )
    assert _Handler.hits["/status/500"] == 1, "one attempt: the retry override reached the core"


def test_destination_filter_sees_host_and_address(
    server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[str, str]] = []

    def only_loopback(host: str, address: str) -> bool:
        seen.append((host, address))
        return address == "127.0.0.1"

    policy = FetchPolicy(allow_special_addresses=True, destination_filter=only_loopback)
    assert ImageFetcher(policy).fetch(f"{server}/image.png") == PNG_40x50
    assert seen == [("127.0.0.1", "127.0.0.1")]

    def broken(host: str, address: str) -> bool:
        raise RuntimeError("filter failed")

    rejecting = FetchPolicy(allow_special_addresses=True, destination_filter=broken)
    reported: list[object] = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)
    with pytest.raises(ImageError) as info:
        ImageFetcher(rejecting).fetch(f"{server}/image.png")
    assert info.value.kind == "DestinationRejected"
    assert len(reported) == 1, "the filter's exception is reported as unraisable"
    with pytest.raises(TypeError, match="destination_filter must be callable"):
        ImageFetcher(FetchPolicy(destination_filter=1))  # type: ignore[arg-type]


# --- requests ---------------------------------------------------------------------------------


def _v41_request(url: str) -> dict[str, object]:
    return {
        "model": "DeepSeek-V4.1-Flash",
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Describe"},
                    {"type": "image_url", "image_url": {"url": url, "detail": "low"}},
                ],
            }
        ],
    }


def test_prompt_count_includes_image_tokens(server: str) -> None:
    data_url = "data:image/png;base64," + base64.b64encode(PNG_40x50).decode()
    tokenizer = Tokenizer.deepseek_v41()
    converted = convert(_v41_request(data_url))
    [source] = request_image_sources(converted)
    assert (source.kind, source.detail, source.path) == ("data_url", "low", ".messages[0]")
    text_tokens = len(converted.encode(tokenizer))
    count = count_prompt_tokens(_v41_request(data_url), tokenizer=tokenizer)
    assert count == text_tokens + 196
    assert request_token_adjustment(converted) == 196
    by_url = count_prompt_tokens(
        _v41_request(f"{server}/image.png"),
        tokenizer=tokenizer,
        image_resolver=ImageResolver(fetch=LOOPBACK),
    )
    assert by_url == text_tokens + 196
    with pytest.raises(ImageError) as info:
        count_prompt_tokens(_v41_request(f"{server}/image.png"), tokenizer=tokenizer)
    assert info.value.kind == "DestinationRejected"


def test_v4_images_add_no_tokens() -> None:
    request = _v41_request("data:image/png;base64,!!!")
    request["model"] = "DeepSeek-V4-Pro"
    converted = convert(request)
    assert request_image_sources(converted) == []
    assert count_prompt_tokens(request) == len(converted.encode())


# --- malformed input --------------------------------------------------------------------------

_SAMPLES = [PNG_40x50, JPEG_16, GIF_17x9]


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=512))
def test_preprocess_never_crashes_on_arbitrary_bytes(data: bytes) -> None:
    try:
        image = preprocess(data)
    except ImageError as error:
        assert error.kind in {"EmptyImage", "UnsupportedMediaType", "Decode"}
    else:
        assert image.width % 14 == 0 and image.height % 14 == 0


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(_SAMPLES),
    st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=8),
    st.integers(0, 10_000),
)
def test_preprocess_never_crashes_on_damaged_images(
    sample: bytes, flips: list[tuple[int, int]], cut: int
) -> None:
    data = bytearray(sample[: max(cut, 4)])
    for at, value in flips:
        if data:
            data[at % len(data)] ^= value
    try:
        image = preprocess(bytes(data), PreprocessOptions(max_dimension_px=4096))
    except ImageError as error:
        assert error.kind in {
            "EmptyImage",
            "UnsupportedMediaType",
            "Decode",
            "ImageDimensionsTooLarge",
        }
    else:
        assert image.token_count >= 2
