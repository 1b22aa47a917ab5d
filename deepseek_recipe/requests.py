"""Request conversion, prompt rendering and prompt encoding (thin wrappers over the Rust core)."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypedDict, cast

from deepseek_recipe import _native
from deepseek_recipe._json_text import json_text
from deepseek_recipe.errors import INVALID_JSON_PREFIX, RequestParseError
from deepseek_recipe.images import ImageResolver, request_token_adjustment
from deepseek_recipe.tokenizer import Tokenizer

if TYPE_CHECKING:  # the typed models (pydantic) load only when a caller imports them
    from deepseek_recipe.models.chat_completions import ChatCompletionRequest
    from deepseek_recipe.models.messages import MessagesRequest
    from deepseek_recipe.models.responses import ResponsesRequest

__all__ = [
    "ConversionOptions",
    "ConvertedRequest",
    "InferenceOptions",
    "ModelVersion",
    "OutputConstraint",
    "ParsingOptions",
    "Protocol",
    "RenderedPrompt",
    "RequestLike",
    "convert",
    "count_prompt_tokens",
    "encode",
    "infer_protocol",
    "render",
    "responses_echo",
    "responses_namespace_tool_map",
]

Protocol = Literal["chat_completions", "responses", "messages"]
"""The request protocols: OpenAI Chat Completions, OpenAI Responses, Anthropic Messages."""

ModelVersion = Literal["DeepseekV4Pro", "DeepseekV41Flash"]
"""The model versions a model name resolves to."""

RequestLike: TypeAlias = (
    "ChatCompletionRequest | ResponsesRequest | MessagesRequest | Mapping[str, Any] | str | bytes"
)
"""A request: a typed model, a JSON object, or JSON text."""

_TYPED_REQUESTS: tuple[tuple[str, str, Protocol], ...] = (
    ("deepseek_recipe.models.chat_completions", "ChatCompletionRequest", "chat_completions"),
    ("deepseek_recipe.models.responses", "ResponsesRequest", "responses"),
    ("deepseek_recipe.models.messages", "MessagesRequest", "messages"),
)
"""Each typed request model by module and class name, with its protocol."""


class OutputConstraint(TypedDict):
    """What constrained decoding enforces: `kind` and its schema, pattern or tool list."""

    kind: Literal["json", "regex", "tool_call", "tool_call_required"]
    schema: str


class InferenceOptions(TypedDict):
    """Sampling settings resolved from a request."""

    max_tokens: int | None
    temperature: float
    top_p: float
    logprobs: bool
    top_logprobs: int | None
    seed: int | None
    output_constraint: OutputConstraint | None


class ParsingSwitches(TypedDict):
    """The parsing options every conversion reports."""

    parse_tool_calls: bool
    starts_in_tool_calls: bool
    parse_json_output: bool
    thinking_initial_stage: (
        Literal["ReasoningStart", "ReasoningContinuation", "ContentContinuation"] | None
    )
    stop_sequences: list[str]


class ParsingOptions(ParsingSwitches, total=False):
    """How the output parser reads the model's output."""

    special_tokens: dict[str, str]
    """The full special-token table the parser matches (thinking end, DSML token); present only
    when conversion options override a spelling."""


@dataclass(frozen=True)
class ConversionOptions:
    """Conversion settings; `None` leaves the reference default (see docs/requests.md)."""

    default_thinking_mode: bool | None = None
    reasoning_content_behavior: Literal["fill_empty", "reject"] | None = None
    responses_web_search: Literal["drop", "reject"] | None = None
    messages_web_search: Literal["drop", "reject"] | None = None
    thinking_max_tokens_upper_bound: int | None = None
    non_thinking_max_tokens_upper_bound: int | None = None
    model_versions_by_name: Mapping[str, ModelVersion] | None = None
    model_aliases: Mapping[str, ModelVersion] | None = None
    special_tokens: Mapping[str, str] | None = field(default=None)

    def to_json(self) -> str:
        """The options as the JSON object the core reads (unset options left out)."""
        return json.dumps({k: v for k, v in asdict(self).items() if v is not None})


@dataclass(frozen=True)
class RenderedPrompt:
    """A rendered prompt: its text and the code-point ranges that hold special tokens."""

    prompt: str
    special_ranges: list[tuple[int, int]]
    image_count: int

    def marked(self, left: str = "\x1b[7m", right: str = "\x1b[0m") -> str:
        """The prompt with every special token wrapped in `left`/`right` (reverse video)."""
        parts: list[str] = []
        at = 0
        for start, end in self.special_ranges:
            parts += [self.prompt[at:start], left, self.prompt[start:end], right]
            at = end
        parts.append(self.prompt[at:])
        return "".join(parts)


class ConvertedRequest:
    """A request converted for the model: conversation, inference and parsing options.

    The attributes are read from the native object on first access, so converting and encoding
    a request never pays for them.
    """

    def __init__(self, native: _native.ConvertedRequest, protocol: Protocol) -> None:
        self._native = native
        self.protocol: Protocol = protocol

    @cached_property
    def request_model(self) -> str:
        """The `model` field as the client sent it."""
        return self._native.request_model

    @cached_property
    def model_version(self) -> ModelVersion:
        """The model version the request's model name resolved to."""
        return cast(ModelVersion, self._native.model_version)

    @cached_property
    def stream(self) -> bool:
        """Whether the client asked for streaming."""
        return self._native.stream

    @cached_property
    def conversation(self) -> dict[str, Any]:
        """The protocol-neutral conversation, as JSON data."""
        return cast(dict[str, Any], json.loads(self._native.conversation_json))

    @cached_property
    def inference_options(self) -> InferenceOptions:
        """Sampling settings."""
        return cast(InferenceOptions, json.loads(self._native.inference_options_json))

    @cached_property
    def parsing_options(self) -> ParsingOptions:
        """Output-parsing settings."""
        return cast(ParsingOptions, json.loads(self._native.parsing_options_json))

    @property
    def native(self) -> _native.ConvertedRequest:
        """The native handle, for other wrappers of this package."""
        return self._native

    def render(self) -> RenderedPrompt:
        """Renders the prompt with the encoding of the model version."""
        return self._native.render(RenderedPrompt)

    def encode(self, tokenizer: Tokenizer | None = None) -> list[int]:
        """Prompt token ids; text from the request never becomes a special token.

        V4 uses the bundled tokenizer by default; V4.1 needs `tokenizer` (`TokenizerError`
        without one).
        """
        return self._native.encode(None if tokenizer is None else tokenizer.native)

    def constraint_grammar(self, tokenizer: Tokenizer | None = None) -> str | None:
        """The constrained-decoding grammar (llguidance's Lark dialect) of the request's output
        constraint, `None` without one; `tokenizer` (default: the bundled V4 one) gives the id of
        the thinking-end token. Raises `ConstraintError` for a constraint no grammar expresses.
        """
        return self._native.constraint_grammar(None if tokenizer is None else tokenizer.native)

    def resolve_max_tokens(self, prompt_tokens: int, context_limit: int) -> int:
        """The completion budget, or `ConversionError` when the prompt leaves no room."""
        return self._native.resolve_max_tokens(prompt_tokens, context_limit)

    def to_json(self) -> str:
        """The converted request as JSON."""
        return self._native.to_json()


def infer_protocol(request: RequestLike) -> Protocol:
    """Guesses the protocol of a request; pass `protocol=` where the guess can be wrong.

    Typed models decide by their class; anything else is read by the core (`input`/`instructions`
    mean Responses; Anthropic-only keys or content blocks mean Messages; anything else is Chat
    Completions).
    """
    return _typed_protocol(request) or _text_protocol(_as_text(request))


def _text_protocol(body: str) -> Protocol:
    """The core's guess of the protocol of a JSON body (`infer_protocol`)."""
    return cast(Protocol, _native.infer_protocol(body))


def _typed_protocol(request: object) -> Protocol | None:
    """The protocol of a typed request model, None for anything else. A model's module is loaded
    before any of its instances exists, so only loaded modules are consulted (none is imported)."""
    for module_name, class_name, protocol in _TYPED_REQUESTS:
        module = sys.modules.get(module_name)
        if module is not None and isinstance(request, getattr(module, class_name)):
            return protocol
    return None


def convert(
    request: RequestLike,
    *,
    protocol: Protocol | None = None,
    options: ConversionOptions | None = None,
) -> ConvertedRequest:
    """Parses and converts a request.

    Raises `RequestParseError` for a body that is not a valid request of the protocol (bad JSON,
    wrong types) and `ConversionError` (with the official `status_code` and `body`) for an
    invalid one.
    """
    body = _as_text(request)
    if not protocol:  # from the text already made: a JSON object is serialised once
        protocol = _typed_protocol(request) or _text_protocol(body)
    return ConvertedRequest(_native.convert(protocol, body, _options_json(options)), protocol)


def render(
    request: RequestLike,
    *,
    protocol: Protocol | None = None,
    options: ConversionOptions | None = None,
) -> RenderedPrompt:
    """Converts a request and renders its prompt."""
    return convert(request, protocol=protocol, options=options).render()


def encode(
    request: RequestLike,
    *,
    protocol: Protocol | None = None,
    options: ConversionOptions | None = None,
    tokenizer: Tokenizer | None = None,
) -> list[int]:
    """Converts a request and encodes its prompt into token ids."""
    return convert(request, protocol=protocol, options=options).encode(tokenizer)


def count_prompt_tokens(
    request: RequestLike,
    *,
    protocol: Protocol | None = None,
    options: ConversionOptions | None = None,
    tokenizer: Tokenizer | None = None,
    image_resolver: ImageResolver | None = None,
) -> int:
    """The number of prompt tokens the official API bills for a request.

    V4.1 images count as the official API counts them: each `<｜image｜>` placeholder is one
    encoded token and its image adds `token_count - 1` more. The images are resolved (decoded,
    fetched, preprocessed) with `image_resolver`, by default `ImageResolver()`, which fetches
    public http(s) URLs only; resolution errors raise `ImageError`.
    """
    converted = convert(request, protocol=protocol, options=options)
    text_tokens = len(converted.encode(tokenizer))
    return text_tokens + request_token_adjustment(converted, image_resolver)


def responses_echo(request: RequestLike) -> dict[str, Any]:
    """The request fields a Responses API response echoes back."""
    return cast(dict[str, Any], json.loads(_native.responses_echo(_as_text(request))))


def responses_namespace_tool_map(
    request: RequestLike, options: ConversionOptions | None = None
) -> dict[str, tuple[str, str]]:
    """Flattened tool name → (namespace, local name) for namespaced Responses tools."""
    raw = cast(
        dict[str, list[str]],
        json.loads(_native.responses_namespace_tool_map(_as_text(request), _options_json(options))),
    )
    return {name: (pair[0], pair[1]) for name, pair in raw.items()}


def _options_json(options: ConversionOptions | None) -> str | None:
    return None if options is None else options.to_json()


def _as_text(request: RequestLike) -> str:
    if type(request) is str:  # the common case first: the model classes' checks cost more
        return request
    if _typed_protocol(request) is not None:
        return cast("ChatCompletionRequest", request).to_json()
    if isinstance(request, bytes):
        try:
            return request.decode("utf-8")
        except UnicodeDecodeError as err:
            raise RequestParseError(f"{INVALID_JSON_PREFIX}{err}") from err
    if isinstance(request, str):
        return request
    return json_text(request)
