"""Golden-vector records checked against this library: one implementation for the `vectors`
command, the vector tests and the differential harness.

Each `check_*` function takes one record in the layout of `shared/vectors/README.md` and returns
the list of mismatches between the record's `expect` and what this library produces (empty: the
record passes). The checks never raise for a library error: an unexpected exception is reported
as a mismatch. `record_kind` tells which check a record needs, from its shape; `check_record`
dispatches on it.

| kind | records | check |
|---|---|---|
| `request` | `requests/*.jsonl` | `check_request` |
| `image_request` | `images/image_requests.jsonl` | `check_image_request` |
| `stream` | `streams/streams.jsonl` | `check_stream` |
| `image_preprocess` | `images/image_preprocess.jsonl` | `check_image_preprocess` |
| `image_tokens` | `images/image_tokens.jsonl` | `check_image_tokens` |
| `image_resolve` | `images/image_resolve.jsonl` | `check_image_resolve` |
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import json
import math
import operator
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal, cast
from urllib.parse import urlsplit

from deepseek_recipe._vector_images import ImageFixtures, generate, source_key
from deepseek_recipe.errors import (
    ConversionError,
    EncodeError,
    ImageError,
    RecipeError,
    RequestParseError,
)
from deepseek_recipe.images import (
    FetchPolicy,
    ImageQuota,
    ImageResolver,
    ImageSource,
    PreprocessOptions,
    ResolvedImages,
    ResolverLimits,
    image_tokens,
    preprocess,
    request_image_sources,
)
from deepseek_recipe.requests import (
    ConversionOptions,
    ConvertedRequest,
    Protocol,
    convert,
    count_prompt_tokens,
    responses_echo,
    responses_namespace_tool_map,
)
from deepseek_recipe.stream import StreamProcessor
from deepseek_recipe.tokenizer import Tokenizer

__all__ = [
    "KINDS",
    "Kind",
    "Record",
    "StreamNormalizer",
    "check_image_preprocess",
    "check_image_request",
    "check_image_resolve",
    "check_image_tokens",
    "check_record",
    "check_request",
    "check_stream",
    "first_difference",
    "iter_records",
    "record_kind",
    "request_body",
    "set_embedded_images",
    "stream_expect",
    "stream_processor",
    "use_image_fixtures",
]

Record = dict[str, Any]
Kind = Literal[
    "request", "image_request", "stream", "image_preprocess", "image_tokens", "image_resolve"
]
KINDS: tuple[Kind, ...] = (
    "request",
    "image_request",
    "stream",
    "image_preprocess",
    "image_tokens",
    "image_resolve",
)

# The prompt-count check of an image request resolves its images a second time; requests near
# the 600-image limit (whose resolution is checked) are left out of it to bound the run time.
PROMPT_COUNT_MAX_SOURCES = 100
_TOOL_CALL_ID = re.compile(r"^call_(\d{2,})_(ET_)?[A-Za-z0-9]{20}[0-9]{4}$")
_CLIP = 300


# --- shared ---------------------------------------------------------------------------------


def _clip(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _CLIP else text[:_CLIP] + "…"


def _compact(value: Any) -> str:
    """`value` as compact JSON, the way the reference's `to_json()` writes it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _same_bytes(actual: Any, expected: Any) -> bool:
    return _compact(actual) == _compact(expected)


def first_difference(path: str, actual: Any, expected: Any, *, byte_exact: bool = False) -> str:
    """`path` and both sides at the first place where `actual` and `expected` differ: as values,
    or with `byte_exact` as compact JSON (key order and float spelling included)."""
    same: Callable[[Any, Any], bool] = _same_bytes if byte_exact else operator.eq
    if isinstance(actual, dict) and isinstance(expected, dict):
        got = cast(dict[str, Any], actual)
        want = cast(dict[str, Any], expected)
        for key, value in want.items():
            if key not in got:
                return f"{path}.{key}: missing, want {_clip(value)}"
            if not same(got[key], value):
                return first_difference(f"{path}.{key}", got[key], value, byte_exact=byte_exact)
        extra = [key for key in got if key not in want]
        if extra:
            return f"{path}: unexpected keys {extra}"
        return f"{path}: keys in the order {list(got)}, want {list(want)}"
    if isinstance(actual, list) and isinstance(expected, list):
        got_list = cast(list[Any], actual)
        want_list = cast(list[Any], expected)
        for index, (a, b) in enumerate(zip(got_list, want_list, strict=False)):
            if not same(a, b):
                return first_difference(f"{path}[{index}]", a, b, byte_exact=byte_exact)
        if len(got_list) != len(want_list):
            extra = (got_list + want_list)[min(len(got_list), len(want_list))]
            return (
                f"{path}: {len(got_list)} items, want {len(want_list)}; first extra: {_clip(extra)}"
            )
    return f"{path}: got {_clip(actual)} want {_clip(expected)}"


def _compare(mismatches: list[str], name: str, actual: Any, expected: Any) -> None:
    if actual != expected:
        mismatches.append(first_difference(name, actual, expected))


def _f32_equal(actual: Any, expected: Any) -> bool:
    if actual is None or expected is None:
        return actual is None and expected is None
    return math.isclose(float(actual), float(expected), rel_tol=1e-6)


def _compare_f32_fields(mismatches: list[str], name: str, actual: Any, expected: Any) -> None:
    """Equal, with `temperature`/`top_p` compared as f32 (the vectors widen them to f64)."""
    got = dict(cast(dict[str, Any], actual))
    want = dict(cast(dict[str, Any], expected))
    for key in ("temperature", "top_p"):
        a, b = got.pop(key, None), want.pop(key, None)
        if not _f32_equal(a, b):
            mismatches.append(f"{name}.{key}: got {a} want {b}")
    _compare(mismatches, name, got, want)


def _unexpected(err: BaseException) -> str:
    return f"unexpected {type(err).__name__}: {_clip(str(err))}"


# --- requests -------------------------------------------------------------------------------


def request_body(record: Record) -> str:
    """The request body as JSON text: `request_raw` verbatim, else `request` serialised."""
    if "request_raw" in record:
        return cast(str, record["request_raw"])
    return json.dumps(record["request"], ensure_ascii=False)


def _options(record: Record) -> ConversionOptions:
    raw: dict[str, Any] = record.get("options") or {}
    return ConversionOptions(**raw)


def _recorded_parsing_options(actual: Any, expected: Any) -> Any:
    """`actual` without `special_tokens` where the vector does not record it: the request vectors
    list only the five switches (the table is checked through the rendered prompt instead)."""
    if "special_tokens" in expected:
        return actual
    return {key: value for key, value in actual.items() if key != "special_tokens"}


def _error_actual(err: Exception) -> Record:
    if isinstance(err, RequestParseError):
        return {"stage": "parse", "status_code": None, "body": str(err)}
    if isinstance(err, ConversionError):
        return {"stage": "convert", "status_code": err.status_code, "body": err.body}
    return {"stage": "other", "exception": type(err).__name__, "body": str(err)}


# Errors whose detail the reference picks arbitrarily (a hash-map iteration order that changes
# from run to run): compared without that detail.
_NONDETERMINISTIC_ERRORS = (re.compile(r"^(No tool output found for tool call ).*(\.)$"),)


def _error_message(error: Record) -> str | None:
    body = error.get("body")
    if isinstance(body, dict):
        inner = cast(Record, body).get("error")
        if isinstance(inner, dict):
            message = cast(Record, inner).get("message")
            return message if isinstance(message, str) else None
    return None


def _without_arbitrary_detail(error: Record) -> Record:
    message = _error_message(error)
    if message is None:
        return error
    for pattern in _NONDETERMINISTIC_ERRORS:
        if pattern.match(message):
            body = json.loads(json.dumps(error["body"]))
            body["error"]["message"] = pattern.sub(r"\1<any>\2", message)
            return {**error, "body": body}
    return error


def _check_error(record: Record, err: Exception) -> list[str]:
    expected = {k: v for k, v in record["expect"]["error"].items() if k != "exception"}
    actual = _error_actual(err)
    if _without_arbitrary_detail(actual) == _without_arbitrary_detail(expected):
        return []
    return [f"error: got {_clip(actual)} want {_clip(expected)}"]


def _conversation_as_vector(conversation: Record) -> Record:
    """Our conversation in the vectors' JSON shape (assistant defaults spelled out, images as
    `image_sources`)."""
    out = dict(conversation)
    messages: list[Record] = []
    for raw in cast(list[Record], conversation.get("messages", [])):
        message = dict(raw)
        images = cast(list[Record], message.pop("images", []))
        if message.get("role") == "assistant":
            message.setdefault("reasoning_content", None)
            message.setdefault("tool_calls", None)
            message.setdefault("prefix", False)
        if message.get("role") == "tool":
            message.setdefault("tool_call_id", None)
        if images:
            sources: list[Record] = []
            for image in images:
                source = cast(Record, image["source"])
                sources.append(
                    {
                        "kind": source["kind"],
                        "detail": source["detail"],
                        "path": source["path"],
                        source["kind"]: source["location"],
                    }
                )
            message["image_sources"] = sources
        messages.append(message)
    out["messages"] = messages
    return out


def _expected_conversation(expected: Record) -> Record:
    """The vector's conversation with empty system `tools` lists left out (our JSON omits
    them)."""
    out = dict(expected)
    messages: list[Record] = []
    for raw in cast(list[Record], expected.get("messages", [])):
        message = dict(raw)
        if message.get("role") == "system" and message.get("tools") == []:
            del message["tools"]
        messages.append(message)
    out["messages"] = messages
    return out


def _check_success(record: Record, body: str) -> list[str]:
    expect = cast(Record, record["expect"])
    options = _options(record)
    converted = convert(body, protocol=record["protocol"], options=options)
    mismatches: list[str] = []
    _compare(mismatches, "request_model", converted.request_model, expect["request_model"])
    _compare(mismatches, "model_version", converted.model_version, expect["model_version"])
    if "thinking_mode" in expect:
        _compare(
            mismatches,
            "thinking_mode",
            converted.conversation["thinking_mode"],
            expect["thinking_mode"],
        )
    _compare(mismatches, "stream", converted.stream, expect["stream"])
    _compare_f32_fields(
        mismatches, "inference_options", converted.inference_options, expect["inference_options"]
    )
    _compare(
        mismatches,
        "parsing_options",
        _recorded_parsing_options(converted.parsing_options, expect["parsing_options"]),
        expect["parsing_options"],
    )
    if "conversation" in expect:
        _compare(
            mismatches,
            "conversation",
            _conversation_as_vector(converted.conversation),
            _expected_conversation(expect["conversation"]),
        )
    rendered = converted.render()
    _compare(mismatches, "prompt", rendered.prompt, expect["prompt"])
    _compare(
        mismatches,
        "special_ranges",
        [list(r) for r in rendered.special_ranges],
        expect["special_ranges"],
    )
    _compare(mismatches, "image_count", rendered.image_count, expect["image_count"])
    if "token_ids" in expect:
        try:
            _compare(mismatches, "token_ids", converted.encode(), expect["token_ids"])
        except Exception as err:
            mismatches.append(f"token_ids: {_unexpected(err)}")
    elif "encode_error" in expect and expect["model_version"] == "DeepseekV4Pro":
        try:
            converted.encode()
        except Exception as err:
            _compare(mismatches, "encode_error", str(err), expect["encode_error"]["message"])
        else:
            mismatches.append(f"encode_error: encoded, want {_clip(expect['encode_error'])}")
    for prompt_tokens, context_limit, result in expect.get("resolve_max_tokens", []):
        name = f"resolve_max_tokens({prompt_tokens}, {context_limit})"
        try:
            actual: Any = converted.resolve_max_tokens(prompt_tokens, context_limit)
        except ConversionError as err:
            actual = {"error": {"status_code": err.status_code, "body": err.body}}
        _compare(mismatches, name, actual, result)
    if record["protocol"] == "responses" and "responses_echo" in expect:
        _compare_f32_fields(
            mismatches, "responses_echo", responses_echo(body), expect["responses_echo"]
        )
        tool_map = expect["namespace_tool_map"]
        try:
            got_map: Any = {
                k: list(v) for k, v in responses_namespace_tool_map(body, options).items()
            }
        except ConversionError as err:
            got_map = {"error": {"status_code": err.status_code, "body": err.body}}
        _compare(mismatches, "namespace_tool_map", got_map, tool_map)
    return mismatches


def check_request(record: Record) -> list[str]:
    """A request record: error (stage, status, body) or the converted request, its prompt,
    special ranges, token ids, `resolve_max_tokens` samples and the Responses extras."""
    body = request_body(record)
    expect = cast(Record, record["expect"])
    try:
        if "error" in expect:
            try:
                convert(body, protocol=record["protocol"], options=_options(record))
            except (RequestParseError, ConversionError) as err:
                return _check_error(record, err)
            return [f"converted, but expected error {_clip(expect['error'])}"]
        try:
            return _check_success(record, body)
        except (RequestParseError, ConversionError) as err:
            return [f"unexpected error: {_clip(_error_actual(err))}"]
    except Exception as err:
        return [_unexpected(err)]


# --- images ---------------------------------------------------------------------------------


class _ImageInputs:
    """Where image inputs come from: the embedded files by key, from the preprocess records'
    `b64` (set by the caller that has read them), and the fixture folder when one is used."""

    embedded: dict[str, bytes] | None = None
    fixtures: ImageFixtures | None = None


def set_embedded_images(records: list[Record]) -> None:
    """Registers the embedded files of these preprocess records (needed by generators of kind
    `embedded` in other image records)."""
    files = _ImageInputs.embedded or {}
    for record in records:
        image = cast(Record, record.get("image") or {})
        generator = cast(Record, image.get("generator") or {})
        if generator.get("name") == "embedded" and "b64" in image:
            files[generator["key"]] = base64.b64decode(image["b64"])
    _ImageInputs.embedded = files


def use_image_fixtures(fixtures: ImageFixtures | None) -> None:
    """Reads every image input from `fixtures` (written once by
    `scripts/gen_image_fixtures.py`) instead of regenerating it; `None` regenerates again."""
    _ImageInputs.fixtures = fixtures


def _embedded() -> dict[str, bytes]:
    return _ImageInputs.embedded or {}


def _image_bytes(image: Record) -> bytes:
    """The input bytes of a record's `image` (from the fixtures, its `b64`, else regenerated)."""
    if _ImageInputs.fixtures is not None:
        return _ImageInputs.fixtures.image(image["sha256"])
    if "b64" in image:
        return base64.b64decode(image["b64"])
    return generate(image["generator"], _embedded())


def _source_bytes(key: str, generator: Record) -> bytes:
    """The bytes of a resolve record's byte source `key` (from the fixtures, else regenerated)."""
    if _ImageInputs.fixtures is not None:
        return _ImageInputs.fixtures.source(key)
    return generate(generator, _embedded())


def _image_error(error: ImageError) -> Record:
    return {"kind": error.kind, "retryable": error.retryable, "message": str(error)}


def check_image_preprocess(record: Record) -> list[str]:
    """Output size, format and token adjustment, or the error triple (WebP bytes not compared:
    they depend on the reference's codec build)."""
    try:
        data = _image_bytes(record["image"])
        if hashlib.sha256(data).hexdigest() != record["image"]["sha256"]:
            return ["input bytes differ from sha256"]
        options = PreprocessOptions(**record["options"])
        try:
            image = preprocess(data, options)
        except ImageError as error:
            actual: Record = {"error": _image_error(error)}
        else:
            actual = {
                "width": image.width,
                "height": image.height,
                "format": image.format,
                "token_adjustment": image.token_adjustment,
            }
            if image.data[:4] != b"RIFF" or image.data[8:12] != b"WEBP":
                return ["output is not WebP"]
    except Exception as err:
        return [_unexpected(err)]
    expected = {k: v for k, v in record["expect"].items() if k not in ("data_len", "data_sha256")}
    mismatches: list[str] = []
    _compare(mismatches, "expect", actual, expected)
    return mismatches


def check_image_tokens(record: Record) -> list[str]:
    """The token adjustment of a list of image sizes."""
    try:
        adjustment = sum(image_tokens(w, h) - 1 for w, h in record["sizes"])
    except Exception as err:
        return [_unexpected(err)]
    mismatches: list[str] = []
    _compare(mismatches, "expect", {"token_adjustment": adjustment}, record["expect"])
    return mismatches


def _resolver(fetcher: Record) -> ImageResolver:
    reject_all = fetcher.get("destination_filter") == "reject_all"

    def reject(host: str, address: str) -> bool:
        return False

    policy = FetchPolicy(
        max_bytes=fetcher.get("max_bytes") or FetchPolicy.max_bytes,
        destination_filter=reject if reject_all else None,
    )
    return ImageResolver(fetch=policy, limits=ResolverLimits())


def _source(source: Record, key: str) -> ImageSource:
    """The image source a resolve record describes (`key`: its place, see `source_key`)."""
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
    return ImageSource.from_bytes(_source_bytes(key, source["image"]), detail, path)


def _outcome(resolve: Callable[[], ResolvedImages], quota: ImageQuota) -> Record:
    try:
        resolved = resolve()
    except ImageError as error:
        outcome: Record = {"error": _image_error(error)}
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
            for image in cast(list[Record], expect["images"])
            for _ in range(image.get("repeat", 1))
        ]
    return expected


def check_image_resolve(record: Record) -> list[str]:
    """Resolve calls sharing one quota: per call the images, adjustment, quota and error."""
    calls = cast(list[Record], record["calls"])
    expects = cast(list[Record], record["expect"]["calls"])
    if len(calls) != len(expects):
        return [f"calls: {len(calls)} calls, {len(expects)} expected outcomes"]
    mismatches: list[str] = []
    try:
        resolver = _resolver(record["fetcher"])
        quota = ImageQuota()
        for index, (call, expect) in enumerate(zip(calls, expects, strict=True)):
            sources: list[ImageSource] = []
            for at, raw in enumerate(cast(list[Record], call["sources"])):
                key = source_key(record["id"], index, at)
                sources += [_source(raw, key)] * raw.get("repeat", 1)

            def resolve(sources: list[ImageSource] = sources) -> ResolvedImages:
                return resolver.resolve(sources, quota)

            _compare(
                mismatches, f"calls[{index}]", _outcome(resolve, quota), _expected_outcome(expect)
            )
    except Exception as err:
        mismatches.append(_unexpected(err))
    return mismatches


def _has_named_host(sources: list[ImageSource]) -> bool:
    """Whether some URL source names a host (the vectors skip those: resolving needs DNS)."""
    for source in sources:
        if source.kind != "url" or not isinstance(source.data, str):
            continue
        try:
            host = urlsplit(source.data).hostname or ""
        except ValueError:
            return True
        try:
            ipaddress.ip_address(host)
        except ValueError:
            return True
    return False


def _check_prompt_count(
    record: Record, body: str, options: ConversionOptions, resolver: ImageResolver, want: Record
) -> list[str]:
    """`count_prompt_tokens` = encoded prompt tokens + the recorded image token adjustment."""
    tokenizer = Tokenizer.deepseek_v41()
    protocol = cast(Protocol, record["protocol"])
    converted = convert(body, protocol=protocol, options=options)

    def count() -> int:
        return count_prompt_tokens(
            body, protocol=protocol, options=options, tokenizer=tokenizer, image_resolver=resolver
        )

    try:
        text_tokens = len(converted.encode(tokenizer))
    except EncodeError:
        try:
            count()
        except EncodeError:
            return []
        return ["prompt count: counted, want EncodeError"]
    if "error" in want:
        try:
            count()
        except ImageError as error:
            if _image_error(error) != want["error"]:
                return [first_difference("prompt count error", _image_error(error), want["error"])]
            return []
        return ["prompt count: counted, want ImageError"]
    got = count()
    want_count = text_tokens + want["token_adjustment"]
    return [] if got == want_count else [f"prompt count: got {got} want {want_count}"]


def check_image_resolution(record: Record) -> list[str]:
    """Only the `image_resolution` of an image request (and the prompt count with images);
    nothing to check when the record has none."""
    expected = record["expect"].get("image_resolution")
    if expected is None:
        return []
    try:
        body = request_body(record)
        options = _options(record)
        converted = convert(body, protocol=record["protocol"], options=options)
        mismatches: list[str] = []
        _compare(mismatches, "model_version", converted.model_version, "DeepseekV41Flash")
        sources = request_image_sources(converted)
        _compare(mismatches, "image_resolution.sources", len(sources), expected["sources"])
        _compare(
            mismatches,
            "image_resolution.image_count",
            converted.render().image_count,
            expected["sources"],
        )
        if "skipped" in expected:
            if not _has_named_host(sources):
                mismatches.append("image_resolution: expected a URL with a host name (skipped)")
            return mismatches
        resolver = _resolver({"destination_filter": "reject_all"})
        quota = ImageQuota()
        want = _expected_outcome(expected)

        def resolve() -> ResolvedImages:
            return resolver.resolve_request(converted, quota)

        _compare(mismatches, "image_resolution", _outcome(resolve, quota), want)
        if not mismatches and len(sources) <= PROMPT_COUNT_MAX_SOURCES:
            mismatches += _check_prompt_count(record, body, options, resolver, want)
        return mismatches
    except Exception as err:
        return [_unexpected(err)]


def check_image_request(record: Record) -> list[str]:
    """An image request: the request checks plus its `image_resolution`."""
    return check_request(record) + check_image_resolution(record)


# --- streams --------------------------------------------------------------------------------


class StreamNormalizer:
    """Replaces random ids and timestamps exactly as the vector recorder did."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}

    def walk(self, value: Any, responses: bool) -> Any:
        if isinstance(value, str):
            match = _TOOL_CALL_ID.match(value)
            if match is None:
                return value
            if value not in self.ids:
                self.ids[value] = f"call_{match[1]}_{match[2] or ''}<R{len(self.ids)}>"
            return self.ids[value]
        if isinstance(value, list):
            return [self.walk(item, responses) for item in cast(list[Any], value)]
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for key, item in cast(dict[str, Any], value).items():
                if responses and key == "created_at" and isinstance(item, int):
                    out[key] = "<CREATED_AT>"
                elif responses and key == "completed_at" and isinstance(item, int):
                    out[key] = "<COMPLETED_AT>"
                else:
                    out[key] = self.walk(item, responses)
            return out
        return value

    def chunk(self, protocol: str, at: int | str, event: str | None, raw: str) -> Record:
        """One chunk record of `expect.chunks`: `at`, `sse_event` and the normalised `data`,
        with `floats` (the spelling of every float in document order) only where the compact
        re-serialisation of `data` is not `raw` byte for byte."""
        floats: list[str] = []

        def spelled(text: str) -> float:
            floats.append(text)
            return float(text)

        data = json.loads(raw, parse_float=spelled)
        compact = _compact(data) == raw
        if protocol == "chat_completions" and isinstance(data, dict) and "created" in data:
            data["created"] = "<CREATED>"
        record: Record = {
            "at": at,
            "sse_event": event,
            "data": self.walk(data, protocol == "responses"),
        }
        if not compact:
            record["floats"] = floats
        return record


def stream_processor(record: Record) -> StreamProcessor:
    """The processor a stream record describes (converted with its `options`, default options
    where it has none)."""
    converted: ConvertedRequest = convert(
        record["request"], protocol=record["protocol"], options=_options(record)
    )
    generator = cast(Record, record["generator"])
    init = cast(Record, record["response_init"])
    return StreamProcessor(
        converted,
        response_id=generator["id"],
        model=generator["model"],
        tokenizer=None if record["tokenizer"] else False,
        created=init["created"],
        signature=generator.get("signature"),
        parsing_options=record["parsing_options"],
        prompt_usage=(init["prompt_tokens"], init["prompt_cache_hit_tokens"]),
        thinking_mode=generator.get("direct_thinking_mode"),
    )


def stream_expect(record: Record) -> Record:
    """What this library produces for a stream record, in the layout of its `expect` (`chunks`,
    `error`, `finished`, `done_data`, `response`), following the vectors' harness procedure."""
    protocol = record["protocol"]
    processor = stream_processor(record)
    normalizer = StreamNormalizer()
    chunks: list[Record] = []
    error: Record | None = None
    for at, chunk in enumerate(cast(list[Record], record["inputs"])):
        try:
            records = processor.push_records(chunk)
        except RecipeError as err:
            error = {"message": str(err), "at": at}
            break
        chunks += [normalizer.chunk(protocol, at, event, raw) for event, raw in records]
    if error is None:
        try:
            records = processor.finish_records()
        except RecipeError as err:
            error = {"message": str(err), "at": "finish"}
        else:
            chunks += [normalizer.chunk(protocol, "finish", event, raw) for event, raw in records]
    response = normalizer.walk(json.loads(processor.response_json()), protocol == "responses")
    return {
        "chunks": chunks,
        "error": error,
        "finished": processor.finished,
        "done_data": processor.done_data,
        "response": response,
    }


def check_stream(record: Record) -> list[str]:
    """A stream record, compared byte for byte as compact JSON (key order and float spelling
    included): the chunks (input index, SSE event, data after normalisation), the error and its
    input index, `finished`, `done_data` and the accumulated response."""
    expect = cast(Record, record["expect"])
    try:
        ours = stream_expect(record)
    except Exception as err:
        return [_unexpected(err)]
    want_error = expect["error"]
    want = {
        "chunks": expect["chunks"],
        "error": None if want_error is None else {k: want_error[k] for k in ("message", "at")},
        "finished": expect["finished"],
        "done_data": expect["done_data"],
        "response": expect["response"],
    }
    return [
        first_difference(name, ours[name], value, byte_exact=True)
        for name, value in want.items()
        if not _same_bytes(ours[name], value)
    ]


# --- dispatch -------------------------------------------------------------------------------


CHECKS: dict[Kind, Callable[[Record], list[str]]] = {
    "request": check_request,
    "image_request": check_image_request,
    "stream": check_stream,
    "image_preprocess": check_image_preprocess,
    "image_tokens": check_image_tokens,
    "image_resolve": check_image_resolve,
}


def record_kind(record: Mapping[str, Any]) -> Kind | None:
    """The kind of a record, from its keys; `None` for something that is no vector record."""
    if "expect" not in record:
        return None
    if "inputs" in record and "generator" in record:
        return "stream"
    if "protocol" in record and ("request" in record or "request_raw" in record):
        expect = record["expect"]
        is_image = isinstance(expect, dict) and "image_resolution" in expect
        record_id = str(record.get("id", ""))
        return "image_request" if is_image or "-ir-" in record_id else "request"
    if "sizes" in record:
        return "image_tokens"
    if "calls" in record and "fetcher" in record:
        return "image_resolve"
    if "image" in record and "options" in record:
        return "image_preprocess"
    return None


def check_record(record: Record) -> list[str]:
    """The mismatches of any vector record (see `record_kind`)."""
    kind = record_kind(record)
    if kind is None:
        return ["not a vector record (unknown layout)"]
    return CHECKS[kind](record)


def iter_records(path: Path) -> Iterator[Record]:
    """The records of a vector file: JSON lines (`.jsonl`), or one record or a list of records
    (`.json`). Raises `ValueError` for unreadable content."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except ValueError as err:
                    raise ValueError(f"{path}:{number}: {err}") from err
        return
    try:
        data = json.loads(text)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from err
    if isinstance(data, list):
        yield from cast(list[Record], data)
    else:
        yield cast(Record, data)
