"""Check `src/tokenizer/unicode_tables.rs` against Hugging Face `tokenizers` for every code point.

For each class the pre-tokenizer regexes use (`\\p{L}` with `\\p{M}`, `\\p{N}`, `\\p{P}` with
`\\p{S}`, `\\s`), HF's regex engine removes the matching characters from a string of all code
points; the characters left over must be exactly those our table does not put in that class.

    python scripts/check_unicode_tables.py
"""

import re
import sys
from pathlib import Path

from tokenizers import Regex, pre_tokenizers

TABLE = (
    Path(__file__).resolve().parent.parent
    / "recipe-rs/deepseek-recipe/src/tokenizer/unicode_tables.rs"
)
CLASSES = {
    "LetterOrMark": r"[\p{L}\p{M}]",
    "Number": r"\p{N}",
    "PunctOrSymbol": r"[\p{P}\p{S}]",
    "Space": r"\s",
}


def main() -> int:
    ranges: dict[str, list[tuple[int, int]]] = {kind: [] for kind in CLASSES}
    for start, end, kind in re.findall(
        r"\(0x([0-9A-F]+), 0x([0-9A-F]+), Kind::(\w+)\)", TABLE.read_text()
    ):
        ranges[kind].append((int(start, 16), int(end, 16)))
    code_points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    text = "".join(map(chr, code_points))
    failures = 0
    for kind, pattern in CLASSES.items():
        split = pre_tokenizers.Split(Regex(pattern), behavior="removed")
        left = {ord(c) for piece, _ in split.pre_tokenize_str(text) for c in piece}
        reference = {c for c in code_points if c not in left}
        ours = {c for start, end in ranges[kind] for c in range(start, end + 1)}
        differ = sorted(reference ^ ours)
        print(f"{kind:14} reference {len(reference):6}  ours {len(ours):6}  differ {len(differ)}")
        if differ:
            print("  first differences:", [hex(c) for c in differ[:10]])
            failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
