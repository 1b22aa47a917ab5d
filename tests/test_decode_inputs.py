"""Every id input form of `decode`, `decode_batch`, `decode_batch_bytes` and
`IncrementalDecoder.push` reads the same.

Lists and tuples are read natively (long ones converted whole first), uint32 buffers and
`BatchIds` whole; anything else becomes a list first. The oracle for what a sequence of items
means is `_expected`: each item is read as `operator.index` reads it (a `bool` is 0 or 1, a float
raises `TypeError`), an int outside `u32` is an unknown id (named by the item's `str`), and the
first bad item decides the error.
"""

from __future__ import annotations

import array
import operator
from collections.abc import Callable, Iterable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deepseek_recipe import BatchIds, Tokenizer, TokenizerError

VOCAB = Tokenizer.deepseek_v4().vocab_size
U32_MAX = 2**32 - 1

try:
    import numpy
except ImportError:  # pragma: no cover - numpy is optional
    numpy = None

SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


class SubInt(int):
    """An int subclass: read by its value, as before."""


class Index:
    """Not an int, but has `__index__`: read by it, as before."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value


ITEM = st.one_of(
    st.integers(0, VOCAB - 1),
    st.integers(VOCAB - 1, VOCAB + 2),
    st.integers(-3, -1),
    st.sampled_from([U32_MAX, 2**32, 2**63, 2**64, 2**70, -(2**70)]),
    st.booleans(),
    st.integers(0, VOCAB - 1).map(SubInt),
    st.integers(-2, 2**33).map(Index),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([None, "7", b"7"]),
)
VALID_IDS = st.lists(st.integers(0, VOCAB - 1), max_size=40)


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return Tokenizer.deepseek_v4()


def outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    """What `call` gives: its value, or its exception's type name and message."""
    try:
        return ("value", call())
    except (TypeError, TokenizerError) as error:
        return (type(error).__name__, str(error))


def _expected(tok: Tokenizer, items: Iterable[Any]) -> tuple[str, Any]:
    """The outcome of decoding `items` by the reading rules of the module docstring."""
    ids = []
    for item in items:
        try:
            value = operator.index(item)
        except TypeError as error:
            return ("TypeError", str(error))
        if not 0 <= value <= U32_MAX:
            return ("TokenizerError", f"unknown token id {item}")
        ids.append(value)
    for value in ids:
        if tok.id_to_token(value) is None:
            return ("TokenizerError", f"unknown token id {value}")
    return ("value", tok.decode(ids))


def streamed(tok: Tokenizer, ids: Iterable[Any]) -> str:
    """The text of `ids` pushed at once into an incremental decoder, finished."""
    decoder = tok.incremental_decoder()
    return decoder.push(ids) + decoder.finish()


def uint32_forms(ids: list[int]) -> list[Any]:
    """`ids` as every uint32 buffer form: memoryview, array, a strided view and numpy."""
    flat = memoryview(array.array("I", ids))
    doubled = memoryview(array.array("I", [x for i in ids for x in (i, 0)]))[::2]
    forms: list[Any] = [flat, array.array("I", ids), doubled]
    if numpy is not None:
        forms.append(numpy.asarray(ids, dtype=numpy.uint32))
    return forms


@SETTINGS
@given(items=st.lists(ITEM, max_size=12), padding=st.sampled_from([0, 63, 64, 200]))
def test_items_read_as_before_in_every_container(tok, items, padding):
    # Padded past 64 items, lists and tuples are converted whole first (`array.array`).
    items = [5] * padding + items
    expected = _expected(tok, items)
    for form in (items, tuple(items), iter(items), (item for item in items)):
        assert outcome(lambda form=form: tok.decode(form)) == expected
    assert outcome(lambda: tok.native.decode(items)) == expected
    assert outcome(lambda: streamed(tok, items)) == expected
    batch_expected = expected
    if expected[0] == "value":
        batch_expected = ("value", [tok.decode([0]), expected[1], tok.decode([1])])
    assert outcome(lambda: tok.decode_batch([[0], items, (1,)])) == batch_expected
    as_bytes = outcome(lambda: tok.decode_batch_bytes([[0], items, (1,)]).to_strs())
    assert as_bytes == batch_expected


@SETTINGS
@given(ids=st.lists(st.integers(0, VOCAB + 5), max_size=40))
def test_uint32_buffers_decode_like_lists(tok, ids):
    expected = outcome(lambda: tok.decode(ids))
    for form in uint32_forms(ids):
        assert outcome(lambda form=form: tok.decode(form)) == expected
        assert outcome(lambda form=form: streamed(tok, form)) == expected


@SETTINGS
@given(batch=st.lists(VALID_IDS, max_size=6), threads=st.sampled_from([1, 3]))
def test_batch_forms_decode_alike(tok, batch, threads):
    tok = tok.with_threads(threads)
    expected = [tok.decode(ids) for ids in batch]
    flat = [i for ids in batch for i in ids]
    ends = [0]
    for ids in batch:
        ends.append(ends[-1] + len(ids))
    batch_ids = BatchIds(memoryview(array.array("I", flat)), memoryview(array.array("Q", ends)))
    assert tok.decode_batch(batch) == expected
    assert tok.decode_batch(tuple(tuple(ids) for ids in batch)) == expected
    assert tok.decode_batch(iter(batch)) == expected
    assert tok.decode_batch(batch_ids) == expected
    for form in (batch, iter(batch), batch_ids):
        decoded = tok.decode_batch_bytes(form)
        assert decoded.to_strs() == expected
        assert len(decoded) == len(batch)
        raw = [b"".join(tok.native.decode_batch_bytes([[i]])[0] for i in ids) for ids in batch]
        assert [bytes(decoded[i]) for i in range(len(batch))] == raw
        assert decoded.offsets.tolist()[-1] == len(decoded.data)
    assert tok.decode_batch([batch_ids[i] for i in range(len(batch_ids))]) == expected
    assert tok.decode_batch([memoryview(array.array("I", ids)) for ids in batch]) == expected
    if numpy is not None:
        assert tok.decode_batch([numpy.asarray(ids, dtype=numpy.uint32) for ids in batch]) == (
            expected
        )


def test_encode_arrays_decode_back(tok):
    texts = ["Hello <think> world", "", "数字 123 \U0001f600", "x" * 5000]
    assert tok.decode(tok.encode_array(texts[0], True)) == texts[0]
    batch = tok.encode_batch_array(texts, True)
    assert tok.decode_batch(batch) == texts
    assert tok.with_threads(2).decode_batch(batch) == texts
    assert [tok.decode(batch[i]) for i in range(len(batch))] == texts


def test_unknown_id_in_an_array_is_a_tokenizer_error(tok):
    with pytest.raises(TokenizerError, match=f"unknown token id {VOCAB + 7}"):
        tok.decode(memoryview(array.array("I", [1, VOCAB + 7])))
    batch = BatchIds(
        memoryview(array.array("I", [1, U32_MAX])), memoryview(array.array("Q", [0, 1, 2]))
    )
    with pytest.raises(TokenizerError, match=f"unknown token id {U32_MAX}"):
        tok.decode_batch(batch)
    with pytest.raises(TokenizerError, match=f"unknown token id {U32_MAX}"):
        tok.decode_batch_bytes(batch)


def test_batch_bytes_index_like_a_sequence(tok):
    decoded = tok.decode_batch_bytes([tok.encode("añb"), [], tok.encode("\U0001f9d1")[:1]])
    assert decoded.text(0) == "añb" and decoded.text(-2) == "" and decoded.text(2) == "\ufffd"
    assert bytes(decoded[0]) == "añb".encode()
    with pytest.raises(IndexError):
        decoded[3]
    empty = tok.decode_batch_bytes([])
    assert len(empty) == 0 and empty.to_strs() == [] and empty.offsets.tolist() == [0]


def test_parallel_batch_decode_keeps_order_and_the_first_error_by_position(tok):
    """Large enough to be decoded on several threads, its `str`s made while others decode."""
    texts = [f"text {i} 数字 {'é' * (i % 40)} \U0001f600" * 8 for i in range(3000)]
    batch = tok.encode_batch(texts)
    assert sum(map(len, batch)) >= 64 * 1024
    for threads in (2, 5):
        parallel = tok.with_threads(threads)
        assert parallel.decode_batch(batch) == texts
        assert parallel.decode_batch(parallel.encode_batch_array(texts)) == texts
        broken = [list(ids) for ids in batch]
        broken[2900].append(VOCAB + 9)
        broken[1700].append(VOCAB + 5)
        broken[2100].append(VOCAB + 7)
        with pytest.raises(TokenizerError, match=f"unknown token id {VOCAB + 5}"):
            parallel.decode_batch(broken)


def test_empty_inputs(tok):
    assert tok.decode([]) == tok.decode(()) == tok.decode(array.array("I")) == ""
    assert tok.decode_batch([]) == tok.decode_batch(()) == []
    assert tok.decode_batch([[], ()]) == ["", ""]
    empty = BatchIds(memoryview(array.array("I")), memoryview(array.array("Q", [0])))
    assert tok.decode_batch(empty) == []
    assert tok.decode_batch(tok.encode_batch_array(["", ""])) == ["", ""]


def test_offsets_past_the_end_slice_as_python_does(tok):
    ids = memoryview(array.array("I", [1, 2, 3]))
    batch = BatchIds(ids, memoryview(array.array("Q", [2, 1, 3, 9])))
    assert tok.decode_batch(batch) == [tok.decode(batch[i]) for i in range(len(batch))]


def test_other_buffers_are_read_item_by_item(tok):
    # Bytes are read as their byte values and signed or wider arrays as their ints.
    assert tok.decode(b"\x01\x02") == tok.decode([1, 2])
    assert tok.decode(array.array("q", [1, 2])) == tok.decode([1, 2])
    with pytest.raises(TokenizerError, match="unknown token id -1"):
        tok.decode(array.array("i", [1, -1]))
    with pytest.raises(TypeError, match="'float' object cannot be interpreted as an integer"):
        tok.decode(array.array("f", [1.0]))
    if numpy is not None:
        assert tok.decode(numpy.asarray([1, 2], dtype=numpy.int64)) == tok.decode([1, 2])
        with pytest.raises(TokenizerError, match="unknown token id -1"):
            tok.decode(numpy.asarray([-1], dtype=numpy.int64))
        two_dims = numpy.zeros((2, 2), dtype=numpy.uint32)
        assert tok.decode_batch(two_dims) == [tok.decode([0, 0])] * 2
        with pytest.raises(TypeError):
            tok.decode(two_dims)


def test_non_iterables_and_strings_raise_type_error(tok):
    with pytest.raises(TypeError, match="'int' object is not iterable"):
        tok.decode(5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="'str' object cannot be interpreted as an integer"):
        tok.decode("ab")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="'int' object is not iterable"):
        tok.decode_batch([5])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        tok.decode_batch(BatchIds([1], [0, 1]))  # type: ignore[arg-type]


def test_bools_and_int_subclasses_read_by_value(tok):
    assert tok.decode([True, False, SubInt(5)]) == tok.decode([1, 0, 5])
    if numpy is not None:
        assert tok.decode([numpy.uint32(7), numpy.int64(8)]) == tok.decode([7, 8])
