"""The exception classes: defined by the native module, one per core error kind, never a plain
`ValueError` in their place; their attributes survive pickling."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

import pytest

from deepseek_recipe import (
    ConversionOptions,
    Tokenizer,
    _native,  # pyright: ignore[reportPrivateUsage]
    convert,
    errors,
)
from deepseek_recipe.images import preprocess
from deepseek_recipe.stream import StreamProcessor

CHAT: dict[str, Any] = {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "hi"}]}
QUOTED_PARAMETER = 'a"b'


def _stream_misuse() -> None:
    processor = StreamProcessor(convert(CHAT))
    processor.finish()
    processor.push_text("late")


def _unwritable_tool_call() -> None:
    parameters = {
        "type": "object",
        "properties": {QUOTED_PARAMETER: {"type": "string"}},
        "required": [QUOTED_PARAMETER],
    }
    tool = {"type": "function", "function": {"name": "f", "parameters": parameters}}
    request = {**CHAT, "tools": [tool], "tool_choice": "required", "thinking": {"type": "disabled"}}
    convert(request).constraint_grammar()


# One failing call per core error kind, and the class it must raise (exactly that class).
ERROR_KINDS: dict[str, tuple[Callable[[], object], type[errors.RecipeError]]] = {
    "parse": (lambda: convert("{"), errors.RequestParseError),
    "api": (lambda: convert({**CHAT, "model": "nope"}), errors.ConversionError),
    "tokenizer": (lambda: Tokenizer.from_str("{}"), errors.TokenizerError),
    "encode": (
        lambda: convert(CHAT, options=ConversionOptions(special_tokens={"bos": "<x>"})).encode(),
        errors.EncodeError,
    ),
    "image": (lambda: preprocess(b""), errors.ImageError),
    "constraint": (_unwritable_tool_call, errors.ConstraintError),
    "stream": (_stream_misuse, errors.RecipeError),
}


@pytest.mark.parametrize("kind", ERROR_KINDS)
def test_every_core_error_kind_raises_its_class(kind: str) -> None:
    call, expected = ERROR_KINDS[kind]
    with pytest.raises(ValueError) as info:
        call()
    assert type(info.value) is expected, type(info.value)
    assert isinstance(info.value, errors.RecipeError)
    assert str(info.value)


def test_the_classes_are_the_native_ones() -> None:
    for name in errors.__all__:
        assert getattr(errors, name) is getattr(_native, name)
        value = getattr(errors, name)
        if isinstance(value, type):
            assert value.__module__ == "deepseek_recipe.errors"
            assert issubclass(value, errors.RecipeError) and issubclass(value, ValueError)
            assert value.__doc__


def test_request_parse_errors_tell_invalid_json_from_a_wrong_shape() -> None:
    with pytest.raises(errors.RequestParseError) as not_json:
        convert("{")
    with pytest.raises(errors.RequestParseError) as wrong_shape:
        convert('{"model": "DeepSeek-V4-Pro"}')
    with pytest.raises(errors.RequestParseError) as undecodable:
        convert(b"\xff")
    assert str(not_json.value).startswith(errors.INVALID_JSON_PREFIX)
    assert not_json.value.is_invalid_json and undecodable.value.is_invalid_json
    assert not wrong_shape.value.is_invalid_json
    assert errors.RequestParseError("invalid JSON request: x").is_invalid_json


def test_conversion_errors_carry_status_and_body_through_pickling() -> None:
    with pytest.raises(errors.ConversionError) as info:
        convert({**CHAT, "model": "nope"})
    error = info.value
    assert error.status_code == 400
    assert error.body["error"]["message"] == str(error)
    assert error.args == (str(error),)
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is errors.ConversionError
    assert (str(copy), copy.status_code, copy.body) == (str(error), 400, error.body)


def test_conversion_errors_are_built_from_a_dict_or_json_text() -> None:
    body = {"error": {"message": "m", "type": "invalid_request_error"}}
    from_dict = errors.ConversionError("m", 422, body)
    from_text = errors.ConversionError("m", 422, '{"error": {"message": "m"}}')
    assert (str(from_dict), from_dict.status_code, from_dict.body) == ("m", 422, body)
    assert from_text.body == {"error": {"message": "m"}}
    with pytest.raises(TypeError):
        errors.ConversionError("m", 400)  # type: ignore[call-arg]


def test_image_errors_carry_kind_and_retryability_through_pickling() -> None:
    error = errors.ImageError("image[0]: slow", "Fetch", True)
    assert (str(error), error.kind, error.retryable) == ("image[0]: slow", "Fetch", True)
    assert errors.ImageError("m", "Decode").retryable is False
    copy = pickle.loads(pickle.dumps(error))
    assert (type(copy), str(copy), copy.kind, copy.retryable) == (
        errors.ImageError,
        "image[0]: slow",
        "Fetch",
        True,
    )


def test_plain_classes_pickle_and_subclass() -> None:
    error = errors.TokenizerError("unknown token id 7")
    copy = pickle.loads(pickle.dumps(error))
    assert (type(copy), str(copy)) == (errors.TokenizerError, "unknown token id 7")

    class Refused(errors.ConversionError):
        pass

    refused = Refused("m", 403, {"error": {}})
    assert isinstance(refused, errors.ConversionError) and refused.status_code == 403
