"""tiktoken set up as the DeepSeek V4 tokenizer: the peer of the single-thread tokenize rows.

tiktoken takes one pre-tokenizer regex and byte-level merge ranks. DeepSeek's `tokenizer.json`
has three `Split` pre-tokenizers run one after the other (numbers in threes, CJK runs, then the
word regex on each remaining piece, text between matches kept as pieces), so the single regex
below folds them into one: numbers and CJK runs first, then the word regex with numbers and CJK
taken out of its classes (so no match crosses into them), its `(?!\\S)` look-ahead also accepting
a number or CJK character (a piece's end in the original), and a last alternative for the text
the original keeps between matches (characters of no class that no letter follows). Merged token
ids grow with their merge's rank in this vocabulary, so an id serves as tiktoken's rank and
tiktoken's ids are the token ids. `bench.compare` checks the ids against ours document by document.

tiktoken is not a dependency of the project: this module is imported only by the bench's tiktoken
driver, in its own process, when tiktoken is installed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CJK = "一-龥぀-ゟ\u30a0-ヿ"
"""The CJK class of the second `Split`, as `tokenizer.json` spells it."""

_LETTER = rf"[\p{{L}}\p{{M}}--[{CJK}]]"
_PUNCT = rf"[\p{{P}}\p{{S}}--[{CJK}]]"
_OTHER = rf"[^\p{{L}}\p{{M}}\p{{N}}\p{{P}}\p{{S}}\s{CJK}]"

PATTERN = "|".join(
    [
        r"\p{N}{1,3}",
        rf"[{CJK}]+",
        r"""[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+""",
        rf"[^\r\n\p{{L}}\p{{P}}\p{{S}}\p{{N}}{CJK}]?{_LETTER}+",
        rf" ?{_PUNCT}+[\r\n]*",
        r"\s*[\r\n]+",
        rf"\s+(?![^\s\p{{N}}{CJK}])",
        r"\s+",
        rf"(?:{_OTHER}(?!{_LETTER}))+",
    ]
)
"""The three DeepSeek V4 `Split` regexes as one tiktoken pattern (see the module docs)."""


def byte_decoder() -> dict[str, int]:
    """The byte-level alphabet (GPT-2's): the character that spells each byte, reversed."""
    printable = [
        *range(ord("!"), ord("~") + 1),
        *range(ord("¡"), ord("¬") + 1),
        *range(ord("®"), ord("ÿ") + 1),
    ]
    chars = list(printable)
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            chars.append(256 + extra)
            extra += 1
    return {chr(char): byte for byte, char in zip(printable, chars, strict=True)}


def mergeable_ranks(tokenizer_json: Path) -> dict[bytes, int]:
    """Every byte-level vocabulary token's bytes and id (added tokens are left out)."""
    data = json.loads(tokenizer_json.read_text(encoding="utf-8"))
    decoder = byte_decoder()
    ranks: dict[bytes, int] = {}
    for spelling, token_id in data["model"]["vocab"].items():
        if all(char in decoder for char in spelling):
            ranks[bytes(decoder[char] for char in spelling)] = token_id
    return ranks


def deepseek_encoding(tokenizer_json: Path) -> Any:
    """A `tiktoken.Encoding` that gives DeepSeek V4's ids for plain text (`encode_ordinary`)."""
    import tiktoken  # pyright: ignore[reportMissingImports]  # bench-only, optional

    return tiktoken.Encoding(
        "deepseek_v4",
        pat_str=PATTERN,
        mergeable_ranks=mergeable_ranks(tokenizer_json),
        special_tokens={},
    )
