"""V4.1 image input: sources, preprocessing, token counts, safe fetching and resolution.

The flow (all work is done by the Rust core, without the GIL):

* an `ImageSource` says where an image comes from (a data URL, an http(s) URL, or the encoded
  bytes, e.g. Anthropic's base64 `source`) with its `detail` and request `path`;
* `ImageResolver.resolve()` applies the request limits (images, bytes, sides), decodes data URLs
  or fetches URLs (an `ImageFetcher` whose `FetchPolicy` refuses loopback, private, link-local and
  metadata addresses unless told otherwise), and preprocesses every image; an `ImageQuota` carries
  the images and bytes a request has used across calls;
* `preprocess()` turns one encoded image into the WebP the model sees; its `token_count` is what
  the image costs, and a prompt count adds `token_count - 1` per image (the placeholder already
  counts as one token): `token_adjustment()`.

Every failure raises `ImageError` with the reference's `kind` and `retryable`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast

from deepseek_recipe import _native

if TYPE_CHECKING:
    from deepseek_recipe.requests import ConvertedRequest

__all__ = [
    "DestinationFilter",
    "FetchPolicy",
    "ImageDetail",
    "ImageFetcher",
    "ImageFormat",
    "ImageQuota",
    "ImageResolver",
    "ImageSource",
    "ImageSourceKind",
    "PreprocessOptions",
    "PreprocessedImage",
    "QuotaUsage",
    "ResolveBudget",
    "ResolvedImages",
    "ResolverLimits",
    "RetryPolicy",
    "image_tokens",
    "preprocess",
    "request_image_sources",
    "request_token_adjustment",
    "token_adjustment",
]

ImageDetail = Literal["low", "high", "original", "auto"]
"""Requested detail; only `low` changes preprocessing (`original` and `auto` act as `high`)."""

ImageSourceKind = Literal["data_url", "url", "bytes"]
"""Where a source's bytes come from."""

ImageFormat = Literal["png", "jpeg", "gif", "webp"]
"""An encoded format the pipeline accepts (sniffed from magic bytes) or produces (WebP)."""

DestinationFilter = Callable[[str, str], bool]
"""A check of `(URL host, resolved IP address)`; anything but `True` rejects the address."""


def _set_fields_json(options: PreprocessOptions | ResolverLimits | ResolveBudget) -> str:
    """The fields of `options` that are set, as a JSON object."""
    return json.dumps({k: v for k, v in asdict(options).items() if v is not None})


_FETCH_DEFAULTS: dict[str, Any] = json.loads(_native.ImageFetcher().policy_json())
"""The core's fetch policy defaults, read once (`FetchPolicy` spells none of them)."""
_DESTINATION_DEFAULTS: dict[str, Any] = _FETCH_DEFAULTS["destinations"]
_RETRY_DEFAULTS: dict[str, Any] = json.loads(_native.ImageResolver().retry_json())
"""The core's retry defaults, read once (`RetryPolicy` spells none of them)."""


@dataclass(frozen=True)
class ImageSource:
    """One image to resolve: a data URL, an http(s) URL, or the encoded bytes.

    `path` is the JSON path of the request part (it prefixes error messages, e.g.
    `.messages[0].image[0]: ...`); sources built by hand usually leave it empty.
    """

    kind: ImageSourceKind
    data: str | bytes = field(repr=False)
    detail: ImageDetail = "high"
    path: str = ""

    def __post_init__(self) -> None:
        """Checks the source as the resolver reads it: `ValueError` for an unknown kind or
        detail, `TypeError` for data of the wrong type (`bytes` for `bytes`, `str` otherwise)."""
        _native.check_image_source(self.kind, self.data, self.detail)

    @classmethod
    def from_data_url(cls, url: str, detail: ImageDetail = "high", path: str = "") -> ImageSource:
        """A `data:<media type>[;base64],<data>` URL."""
        return cls("data_url", url, detail, path)

    @classmethod
    def from_url(cls, url: str, detail: ImageDetail = "high", path: str = "") -> ImageSource:
        """An http(s) URL, fetched by the resolver's `ImageFetcher`."""
        return cls("url", url, detail, path)

    @classmethod
    def from_bytes(
        cls, data: bytes | bytearray | memoryview, detail: ImageDetail = "high", path: str = ""
    ) -> ImageSource:
        """The encoded image bytes (PNG, JPEG, GIF or WebP; the magic bytes decide)."""
        return cls("bytes", bytes(data), detail, path)

    @classmethod
    def from_base64(
        cls, data: str, media_type: str, detail: ImageDetail = "high", path: str = ""
    ) -> ImageSource:
        """Base64 data with its media type, as an Anthropic `{"type": "base64"}` source sends
        it: kept as the data URL the official converter builds (`image/jpg` → `image/jpeg`).
        A media type the official API does not accept raises `ValueError`."""
        return cls("data_url", _native.base64_image_data_url(data, media_type), detail, path)

    @classmethod
    def from_anthropic(cls, source: Mapping[str, Any], path: str = "") -> ImageSource:
        """An Anthropic image block's `source` (`base64` or `url`); detail is always `high`."""
        kind = source.get("type")
        if kind == "base64":
            return cls.from_base64(str(source["data"]), str(source["media_type"]), path=path)
        if kind == "url":
            return cls.from_url(str(source["url"]), path=path)
        raise ValueError(f"unsupported Anthropic image source type {kind!r}")

    def describe(self, limit: int = 48) -> str:
        """A short human-readable form: the URL, the data URL's media type, or the byte count."""
        if isinstance(self.data, bytes):
            return f"bytes ({len(self.data)} B)"
        if self.kind == "data_url":
            header = self.data.split(",", 1)[0][:limit]
            return f"data URL {header} ({len(self.data)} chars)"
        return self.data if len(self.data) <= limit else self.data[: limit - 1] + "…"


@dataclass(frozen=True)
class PreprocessOptions:
    """How `preprocess()` treats one image (the resolver derives these from its limits);
    `None` leaves the core's default (`high` detail, 8192 px sources, 512 px for `low`)."""

    detail: ImageDetail | None = None
    max_dimension_px: int | None = None
    """Largest accepted source width or height; 0 rejects every image."""
    low_detail_max_dimension_px: int | None = None
    """Long-side limit for `low` detail."""

    def __post_init__(self) -> None:
        """Checks `detail` as the core reads it (`ValueError` naming the known ones)."""
        if self.detail is not None:
            _native.check_image_detail(self.detail)

    def to_json(self) -> str:
        """The options as the JSON object the core reads (unset options left out)."""
        return _set_fields_json(self)


@dataclass(frozen=True)
class PreprocessedImage:
    """A preprocessed image: the lossy WebP the model receives, its size and token cost."""

    data: bytes = field(repr=False)
    width: int
    height: int
    format: ImageFormat
    source_format: ImageFormat
    token_count: int
    """Prompt tokens this image costs."""

    @property
    def token_adjustment(self) -> int:
        """What a prompt count adds for this image: `token_count - 1` (its placeholder is one)."""
        return self.token_count - 1


def _image_from_native(raw: tuple[bytes, int, int, str, str, int]) -> PreprocessedImage:
    data, width, height, fmt, source_format, tokens = raw
    return PreprocessedImage(
        data, width, height, cast(ImageFormat, fmt), cast(ImageFormat, source_format), tokens
    )


def preprocess(
    data: bytes | bytearray | memoryview, options: PreprocessOptions | None = None
) -> PreprocessedImage:
    """Preprocesses one encoded image: format sniffing, header and size limits, decoding (first
    frame, alpha blended onto #FDFDFD), `low` detail shrink, fitting to the token budget with
    gray padding, WebP encoding. Raises `ImageError` (located at `image[0]`)."""
    raw = _native.preprocess(bytes(data), None if options is None else options.to_json())
    return _image_from_native(raw)


def image_tokens(width: int, height: int) -> int:
    """Prompt tokens an image of `width` x `height` costs (the V4.1 token specification)."""
    return _native.image_token_count(width, height)


def token_adjustment(sizes: Iterable[tuple[int, int]]) -> int:
    """What a prompt count adds for images of these sizes: Σ(tokens - 1)."""
    return sum(image_tokens(width, height) - 1 for width, height in sizes)


@dataclass(frozen=True)
class FetchPolicy:
    """How image URLs are fetched, and which destinations are allowed (SSRF protection).

    The defaults are the core's, read from it at import (32 MiB bodies, 5 redirects, 10 s to
    connect, 30 s in total). By default only public addresses are allowed: loopback, private,
    link-local (cloud metadata), CGNAT, multicast, reserved and IPv6 forms embedding them are
    refused, for every address a host resolves to and again after every redirect.
    """

    max_bytes: int = _FETCH_DEFAULTS["max_bytes"]
    """Largest body accepted (exactly `max_bytes` passes)."""
    max_redirects: int = _FETCH_DEFAULTS["max_redirects"]
    connect_timeout_s: float = _FETCH_DEFAULTS["connect_timeout_s"]
    total_timeout_s: float = _FETCH_DEFAULTS["total_timeout_s"]
    """For the whole fetch: every hop and the body."""
    allow_special_addresses: bool = _DESTINATION_DEFAULTS["allow_special_addresses"]
    """Allow loopback, private and every other special address (e.g. for local tests)."""
    allowed_ranges: tuple[str, ...] = tuple(_DESTINATION_DEFAULTS["allowed_ranges"])
    """CIDR ranges allowed even when special, e.g. `("127.0.0.0/8", "10.1.0.0/16")`."""
    destination_filter: DestinationFilter | None = None
    """An extra check every `(host, address)` must pass; exceptions reject the address."""

    def to_json(self) -> str:
        """The policy as the JSON object the core reads (the filter has no JSON form)."""
        return json.dumps(
            {
                "max_bytes": self.max_bytes,
                "max_redirects": self.max_redirects,
                "connect_timeout_s": self.connect_timeout_s,
                "total_timeout_s": self.total_timeout_s,
                "destinations": {
                    "allow_special_addresses": self.allow_special_addresses,
                    "allowed_ranges": list(self.allowed_ranges),
                },
            }
        )


def _native_fetcher(policy: FetchPolicy) -> _native.ImageFetcher:
    return _native.ImageFetcher(policy.to_json(), policy.destination_filter)


class ImageFetcher:
    """An HTTP(S) image fetcher (one attempt per call; the resolver retries)."""

    def __init__(self, policy: FetchPolicy | None = None) -> None:
        self.policy = policy or FetchPolicy()
        self._fetcher = _native_fetcher(self.policy)

    def fetch(self, url: str) -> bytes:
        """The body of `url`; `ImageError` (`Fetch`, `FetchStatus`, `DestinationRejected`,
        `ImageTooLarge`) located at `image[0]`."""
        return self._fetcher.fetch(url)


@dataclass(frozen=True)
class ResolverLimits:
    """The resolver's request limits; `None` leaves the official API's default, which the core
    holds (600 images, 32 MiB per image, 64 MiB per request, 8192 px sides, 4096 px from 15
    images, 512 px for `low` detail, 8192-byte URLs). `ImageResolver.limits` reports them all."""

    max_images: int | None = None
    max_image_bytes: int | None = None
    max_total_bytes: int | None = None
    max_dimension_px: int | None = None
    many_images_max_dimension_px: int | None = None
    """Largest source side once the request holds `many_images` images or more."""
    many_images: int | None = None
    low_detail_max_dimension_px: int | None = None
    max_url_bytes: int | None = None

    def to_json(self) -> str:
        """The limits as the JSON object the core reads (unset limits left out)."""
        return _set_fields_json(self)


@dataclass(frozen=True)
class RetryPolicy:
    """Retries of retryable fetch failures: `attempts` in total, pauses doubling from
    `initial_backoff_s`. The defaults are the core's, read from it at import (4 attempts from
    0.25 s)."""

    attempts: int = _RETRY_DEFAULTS["attempts"]
    initial_backoff_s: float = _RETRY_DEFAULTS["initial_backoff_s"]

    def to_json(self) -> str:
        """The policy as the JSON object the core reads."""
        return json.dumps(asdict(self))


@dataclass(frozen=True)
class ResolveBudget:
    """What one request may spend beyond the official limits (host-side protection: a request
    within the official limits, up to 600 images, could otherwise hold a worker for minutes);
    `None` leaves the core's default (60 s, 8 concurrent fetches, 512 Mi pixels).
    `ImageResolver.budget` reports them all."""

    deadline_s: float | None = None
    """Wall-clock seconds a resolve call may spend obtaining its sources (every fetch, retry
    and pause); a URL still pending then fails with a retryable `Fetch` error."""
    concurrent_fetches: int | None = None
    """URL sources fetched at the same time (0 counts as 1)."""
    max_pixels: int | None = None
    """Pixels a request may decode and encode over all its resolve calls: each image costs its
    source width x height plus its output width x height, read from the header before any
    decoding; the image that would exceed it fails with `TotalSizeTooLarge`."""

    def to_json(self) -> str:
        """The budget as the JSON object the core reads (unset fields left out)."""
        return _set_fields_json(self)


@dataclass(frozen=True)
class QuotaUsage:
    """What a request has used so far."""

    image_count: int
    byte_size: int
    """Encoded input bytes (not the WebP output)."""
    pixels: int
    """Pixel cost of its images (see `ResolveBudget.max_pixels`)."""


class ImageQuota:
    """The images and bytes one request has used, shared by all its resolve calls (also across
    threads). A failed call leaves it unchanged."""

    def __init__(self) -> None:
        self._quota = _native.ImageQuota()

    @property
    def usage(self) -> QuotaUsage:
        """The usage so far."""
        return QuotaUsage(*self._quota.usage())

    @property
    def native(self) -> _native.ImageQuota:
        """The native handle, for other wrappers of this package."""
        return self._quota


@dataclass(frozen=True)
class ResolvedImages:
    """The outcome of a successful resolve call."""

    images: list[PreprocessedImage]
    token_adjustment: int
    """What a prompt token count adds for these images: Σ(tokens - 1)."""


class ImageResolver:
    """Turns image sources into preprocessed images under the request limits and `budget`.

    URL sources are fetched with `fetch` (default: `FetchPolicy()`, public addresses only), all
    of a call's at once (up to `budget.concurrent_fetches`) under `budget.deadline_s`;
    `offline=True` makes every URL source fail with `Fetch` instead.
    """

    def __init__(
        self,
        *,
        fetch: FetchPolicy | None = None,
        offline: bool = False,
        limits: ResolverLimits | None = None,
        retry: RetryPolicy | None = None,
        budget: ResolveBudget | None = None,
    ) -> None:
        self.fetch_policy = None if offline else (fetch or FetchPolicy())
        self.retry = retry or RetryPolicy()
        self._resolver = _native.ImageResolver(
            None if self.fetch_policy is None else _native_fetcher(self.fetch_policy),
            None if limits is None else limits.to_json(),
            self.retry.to_json(),
            None if budget is None else budget.to_json(),
        )
        self.limits = ResolverLimits(**json.loads(self._resolver.limits_json()))
        """The limits in force, every one set."""
        self.budget = ResolveBudget(**json.loads(self._resolver.budget_json()))
        """The budget in force, every field set."""

    def resolve(
        self, sources: Sequence[ImageSource], quota: ImageQuota | None = None
    ) -> ResolvedImages:
        """Checks the limits, obtains every source's bytes, then preprocesses them; the first
        failing source in that order raises `ImageError`. On success `quota` gains the sources
        and their encoded bytes (a fresh quota when `None`)."""
        quota = quota or ImageQuota()
        raw, adjustment = self._resolver.resolve(
            [(s.kind, s.data, s.detail, s.path) for s in sources], quota.native
        )
        return ResolvedImages([_image_from_native(image) for image in raw], adjustment)

    def resolve_request(
        self, request: ConvertedRequest, quota: ImageQuota | None = None
    ) -> ResolvedImages:
        """Resolves the image sources of a converted request's prompt (`request_image_sources`),
        natively and from the render `encode` already made."""
        quota = quota or ImageQuota()
        raw, adjustment = self._resolver.resolve_request(request.native, quota.native)
        return ResolvedImages([_image_from_native(image) for image in raw], adjustment)


def request_image_sources(request: ConvertedRequest) -> list[ImageSource]:
    """The image sources of a converted request's rendered prompt, in prompt order (one per
    `<｜image｜>` placeholder; none for V4, which renders images as `[Unsupported Image]`)."""
    return [
        ImageSource(cast(ImageSourceKind, kind), location, cast(ImageDetail, detail), path)
        for kind, location, detail, path in _native.request_image_sources(request.native)
    ]


def request_token_adjustment(
    request: ConvertedRequest,
    resolver: ImageResolver | None = None,
    quota: ImageQuota | None = None,
) -> int:
    """What a prompt count of `request` adds for its images (0 without images). The images are
    resolved with `resolver` (default: `ImageResolver()`, fetching public URLs only)."""
    if not _native.request_image_sources(request.native):
        return 0
    return (resolver or ImageResolver()).resolve_request(request, quota).token_adjustment
