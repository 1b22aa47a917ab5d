"""The byte-level BPE tokenizer of DeepSeek V4, exact with Hugging Face `tokenizers`.

```python
from deepseek_recipe import Tokenizer

tok = Tokenizer.deepseek_v4()
ids = tok.encode("Hello <think>")                     # prompt text: specials are plain text
ids = tok.encode("Hello <think>", allow_special=True)  # added tokens recognised
text = tok.decode(ids)
ids = tok.encode_batch_array(texts)                   # many texts, no Python int per id
first = numpy.asarray(ids[0])                          # uint32 view, not a copy
```
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from deepseek_recipe import _native

__all__ = ["BatchBytes", "BatchIds", "IncrementalDecoder", "Tokenizer"]


def _item(flat: memoryview, offsets: memoryview, index: int, name: str) -> memoryview:
    """Item `index` of a flat batch (items back to back in `flat`, `len + 1` `offsets`), a view;
    negative indexes count from the end, as for a list."""
    count = len(offsets) - 1
    if not -count <= index < count:
        raise IndexError(f"{name} index {index} out of range for {count} {name}s")
    index %= count
    return flat[offsets[index] : offsets[index + 1]]


def _id_lists(batch: Iterable[Iterable[int]]) -> Sequence[Iterable[int]]:
    """`batch` as the native batch calls take it: a list or tuple as it is, else a list."""
    return batch if isinstance(batch, (list, tuple)) else list(batch)


@dataclass(frozen=True)
class BatchIds:
    """The ids of a batch of texts in one flat uint32 buffer (`Tokenizer.encode_batch_array`).

    `ids` holds every text's ids in order (memoryview format `I`, native-endian uint32) and
    `offsets` the `len + 1` boundaries (format `Q`): text `i` is `ids[offsets[i]:offsets[i + 1]]`.
    Both support the buffer protocol: `numpy.asarray(batch.ids)` and
    `torch.frombuffer(batch.ids, dtype=torch.uint32)` view them without copying.
    """

    ids: memoryview
    offsets: memoryview

    def __len__(self) -> int:
        """The number of texts."""
        return len(self.offsets) - 1

    def __getitem__(self, index: int) -> memoryview:
        """The ids of text `index` (a view into `ids`, no copy)."""
        return _item(self.ids, self.offsets, index, "text")

    def to_lists(self) -> list[list[int]]:
        """The ids as `encode_batch` gives them."""
        return [self[index].tolist() for index in range(len(self))]


@dataclass(frozen=True)
class BatchBytes:
    """The decoded bytes of a batch in one flat buffer (`Tokenizer.decode_batch_bytes`).

    `data` holds every list's tokens' bytes in order (memoryview format `B`: the UTF-8 that
    `decode` reads, before it replaces invalid sequences with U+FFFD) and `offsets` the `len + 1`
    boundaries (format `Q`): list `i` is `data[offsets[i]:offsets[i + 1]]`. `text(i)` is exactly
    `decode` of list `i`. Both support the buffer protocol (`numpy.frombuffer`, file writes).
    """

    data: memoryview
    offsets: memoryview

    def __len__(self) -> int:
        """The number of lists."""
        return len(self.offsets) - 1

    def __getitem__(self, index: int) -> memoryview:
        """The bytes of list `index` (a view into `data`, no copy)."""
        return _item(self.data, self.offsets, index, "list")

    def text(self, index: int) -> str:
        """The text of list `index`, as `decode` gives it."""
        return str(self[index], "utf-8", "replace")

    def to_strs(self) -> list[str]:
        """Every list's text, as `decode_batch` gives them."""
        return [self.text(index) for index in range(len(self))]


class Tokenizer:
    """A byte-level BPE tokenizer read from a Hugging Face `tokenizer.json`.

    Encoding gives the ids Hugging Face `tokenizers` gives; decoding gives its text with
    `skip_special_tokens=False`, except that unknown ids (any int no token has, negative or
    beyond 32 bits included) raise `TokenizerError`. Long and batch
    calls release the GIL. Batch calls and texts of at least 64 KiB use up to `threads` threads
    (default: the environment variable `DEEPSEEK_RECIPE_NUM_THREADS`, else the number of cores);
    the ids never depend on it.
    """

    __slots__ = ("_native",)

    def __init__(self, native: _native.Tokenizer) -> None:
        """Wrap a native tokenizer; use the class methods to make one."""
        self._native = native

    @property
    def native(self) -> _native.Tokenizer:
        """The native handle, for other `deepseek_recipe` modules that pass it to `_native`."""
        return self._native

    @classmethod
    def deepseek_v4(cls) -> Tokenizer:
        """The bundled DeepSeek V4 tokenizer (parsed once per process)."""
        return cls(_native.Tokenizer.deepseek_v4())

    @staticmethod
    def deepseek_v4_json() -> str:
        """The text of the bundled DeepSeek V4 `tokenizer.json` (no file access, no network)."""
        return _native.Tokenizer.deepseek_v4_json()

    @classmethod
    def deepseek_v41(cls) -> Tokenizer:
        """The bundled V4 tokenizer plus the V4.1 special tokens it lacks (`<｜System｜>`, id
        129,280), parsed once per process.

        No official V4.1 `tokenizer.json` is public; this one has V4's BPE (text encodes to the
        same ids) and every special token the V4.1 prompt format uses, so V4.1 prompts encode.
        The added ids are this package's, not necessarily DeepSeek's.
        """
        return cls(_native.Tokenizer.deepseek_v41())

    @staticmethod
    def deepseek_v41_json() -> str:
        """The `tokenizer.json` text of `deepseek_v41()`:
        `json_with_v41_special_tokens(deepseek_v4_json())`."""
        return _native.Tokenizer.deepseek_v41_json()

    @staticmethod
    def json_with_v41_special_tokens(json: str) -> str:
        """The `tokenizer.json` text `json` with each special token of the V4.1 prompt format it
        lacks added after its largest id (a spelling already in its BPE vocabulary keeps that
        id): how a V4-style file becomes one that encodes V4.1 prompts. Raises `TokenizerError`
        for a file without a `model.vocab` object or with `added_tokens` not a list."""
        return _native.Tokenizer.json_with_v41_special_tokens(json)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Tokenizer:
        """Read a `tokenizer.json` file; raises `TokenizerError` if it is invalid or unsupported."""
        return cls(_native.Tokenizer.from_file(os.fspath(path)))

    @classmethod
    def from_str(cls, json: str) -> Tokenizer:
        """Read a `tokenizer.json` from its text; raises `TokenizerError` like `from_file`."""
        return cls(_native.Tokenizer.from_str(json))

    def with_threads(self, threads: int) -> Tokenizer:
        """This tokenizer (same tables) using at most `threads` threads per call (`1`: none;
        `0` counts as `1`; a negative count raises `ValueError`)."""
        return Tokenizer(self._native.with_threads(threads))

    @property
    def threads(self) -> int:
        """The most threads one call uses."""
        return self._native.threads

    def encode(self, text: str, allow_special: bool = False) -> list[int]:
        """The ids of `text`.

        With `allow_special=False` (prompt text) spellings of special tokens such as `<think>` are
        plain text; with `True` added tokens in the text are recognised, as Hugging Face's
        `encode(text, add_special_tokens=False)` does.
        """
        return self._native.encode(text, allow_special)

    def encode_array(self, text: str, allow_special: bool = False) -> memoryview:
        """`encode` as a uint32 memoryview (format `I`) that numpy and torch take without a copy.

        For long texts this skips making a Python int per id, which costs more than encoding.
        """
        return memoryview(self._native.encode_array(text, allow_special)).cast("I")

    def count(self, text: str, allow_special: bool = False) -> int:
        """The number of ids `encode` gives."""
        return self._native.count(text, allow_special)

    def encode_batch(self, texts: Sequence[str], allow_special: bool = False) -> list[list[int]]:
        """`encode` of each text, in parallel."""
        return self._native.encode_batch(list(texts), allow_special)

    def encode_batch_array(self, texts: Sequence[str], allow_special: bool = False) -> BatchIds:
        """`encode` of each text, in parallel, into one flat uint32 buffer (see `BatchIds`).

        Prefer it to `encode_batch` for large batches: building Python lists (one int object
        per id, under the GIL) takes longer than the parallel encoding itself.
        """
        ids, offsets = self._native.encode_batch_array(list(texts), allow_special)
        return BatchIds(memoryview(ids).cast("I"), memoryview(offsets).cast("Q"))

    def count_batch(self, texts: Sequence[str], allow_special: bool = False) -> list[int]:
        """`count` of each text, in parallel."""
        return self._native.count_batch(list(texts), allow_special)

    def decode(self, ids: Iterable[int]) -> str:
        """The text of `ids`; invalid UTF-8 becomes U+FFFD; special tokens are kept.

        `ids` is any iterable of ints; a list or tuple of ints is read without Python work per
        id, and a one-dimensional uint32 buffer (`encode_array`'s memoryview, a numpy `uint32`
        array) is copied whole.
        """
        return self._native.decode(ids)

    def decode_batch(self, batch: Iterable[Iterable[int]] | BatchIds) -> list[str]:
        """`decode` of each id list, in parallel; a `BatchIds` (`encode_batch_array`'s result)
        is decoded from its buffers, with no Python work per id or per text."""
        if isinstance(batch, BatchIds):
            return self._native.decode_batch_array(batch.ids, batch.offsets)
        return self._native.decode_batch(_id_lists(batch))

    def decode_batch_bytes(self, batch: Iterable[Iterable[int]] | BatchIds) -> BatchBytes:
        """`decode_batch` as one flat UTF-8 buffer (see `BatchBytes`), written in parallel with
        no Python object per text.

        Prefer it to `decode_batch` for large batches whose texts go on as bytes (written to a
        file or a socket, hashed, measured) or are read only in part: making each text's `str`
        runs one thread at a time and bounds `decode_batch`; here that is left to `text(i)` when
        a text is needed. A `BatchIds` is read from its buffers with no Python work per id.
        """
        if isinstance(batch, BatchIds):
            data, offsets = self._native.decode_batch_array_bytes(batch.ids, batch.offsets)
        else:
            data, offsets = self._native.decode_batch_bytes(_id_lists(batch))
        return BatchBytes(memoryview(data), memoryview(offsets).cast("Q"))

    def token_to_id(self, token: str) -> int | None:
        """The id of the token spelled `token` (byte-level spelling, e.g. `Ġthe`)."""
        return self._native.token_to_id(token)

    def id_to_token(self, token_id: int) -> str | None:
        """The spelling of token `token_id` (`None` for an id no token has)."""
        return self._native.id_to_token(token_id)

    @property
    def vocab_size(self) -> int:
        """One more than the largest token id."""
        return self._native.vocab_size

    def incremental_decoder(self) -> IncrementalDecoder:
        """A streaming decoder over this tokenizer."""
        return IncrementalDecoder(self)


class IncrementalDecoder:
    """Streaming decoder: push ids as they come, get back only complete UTF-8 text.

    Bytes of a character split across tokens are held until it is complete; `finish()` turns a
    dangling incomplete character into U+FFFD. The pieces joined equal `Tokenizer.decode` of all
    the ids.
    """

    __slots__ = ("_native",)

    def __init__(self, tokenizer: Tokenizer) -> None:
        """A decoder over `tokenizer` with nothing pending."""
        self._native = _native.IncrementalDecoder(tokenizer.native)

    def push(self, ids: Iterable[int]) -> str:
        """Add `ids` (read as `Tokenizer.decode` reads them); return the newly complete text
        (possibly empty)."""
        return self._native.push(ids)

    def finish(self) -> str:
        """End the stream; return U+FFFD if an incomplete character was pending, else ''."""
        return self._native.finish()

    @property
    def has_pending(self) -> bool:
        """Whether bytes of an incomplete character are held."""
        return self._native.has_pending
