# ruff: noqa: RUF001 -- the corpus is intentionally full of look-alike characters.
"""A deterministic mixed-text corpus for tokenizer parity tests and benchmarks.

`generate_documents(seed, total_bytes)` returns documents (each a few bytes to ~64 KiB of UTF-8)
mixing English, code, JSON, CJK, emoji, digit runs, whitespace runs, `\\r\\n`, special-token
spellings, mixed scripts, random code points and long runs of one character.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

TOKENIZER_JSON = (
    Path(__file__).resolve().parent.parent
    / "recipe-rs"
    / "deepseek-recipe"
    / "data"
    / "deepseek-v4"
    / "tokenizer.json"
)

WORDS = (
    "the of and to in is that for it as was with be by on not he this are or his from at which "
    "but have an they you were her she there been one all we their has would when if so no will "
    "model token stream response function request DeepSeek Hello World JSON API HTTP URL café "
    "naïve résumé façade coöperate Zürich don't it's we'll they're I'm isn't CamelCase snake_case "
    "e.g. i.e. etc. Mr. Dr. U.S.A. x86_64 v4.1 GPT-4o user@example.com https://example.com/a?b=c"
).split()

CODE_SNIPPETS = (
    "def encode(self, text: str) -> list[int]:\n    return [ord(c) for c in text]  # ids\n",
    "fn main() {\n    let v: Vec<u32> = (0..10).map(|x| x * 2).collect();\n"
    '    println!("{v:?}");\n}\n',
    "for (let i = 0; i < n; i++) {\r\n\tif (a[i] !== b[i]) return false;\r\n}\r\n",
    '#include <stdio.h>\nint main(void) { printf("%d\\n", 42); return 0; }\n',
    "SELECT id, name FROM users WHERE age >= 18 AND name LIKE '%son' ORDER BY id DESC;\n",
    '<div class="row"><span>&nbsp;&lt;tag&gt;</span></div>\n',
    "    x += 1;;; // ===>>> <<< !== ?? ?. :: -> => ... $$ @@ ## %% ^^ && || ~~\n",
    "```python\nprint('hi')\n```\n",
)

SCRIPTS = (
    "Привет, как дела? Съешь же ещё этих мягких французских булок.",
    "Γειά σου Κόσμε· ο ταχύς καφέ αλεπού.",
    "مرحبا بالعالم، كيف حالك؟ ١٢٣٤٥",
    "שלום עולם! מה שלומך?",
    "नमस्ते दुनिया। हिन्दी में लिखा गया पाठ।",
    "สวัสดีชาวโลก ภาษาไทย",
    "안녕하세요 세계! 한국어 텍스트입니다.",
    "Tiếng Việt có dấu: ằẳẵặ ỡợ",
    "e\u0301 a\u0308 o\u0303\u0323 z\u0336\u0335",
    "ＡＢＣ１２３！？ｱｲｳ",
    "①②③ ⅰⅱⅲ ½¾ ²³ ٣٤ ۵۶ ߁߂ ๑๒",
)

CJK = "我们今天讨论分词器的性能与正确性。東京はきれいです。カタカナ・ひらがな「引用」，、！？"

EMOJI = (
    "😀",
    "🎉",
    "👍🏽",
    "❤️",
    "👨\u200d👩\u200d👧\u200d👦",
    "🏳️\u200d🌈",
    "🇯🇵",
    "🇺🇸",
    "✈️",
    "🤖",
    "🧑🏿\u200d💻",
    "©",
    "™",
    "⌘",
    "∑∫√",
)

WHITESPACE = (
    " ",
    "  ",
    "\t",
    "\n",
    "\r\n",
    "\r",
    "\n\n",
    "\u00a0",
    "\u3000",
    "\u2009",
    "\x0b",
    "\x0c",
    "\u2028",
    "\u0085",
)

RUN_CHARS = (
    "a",
    " ",
    "\n",
    "-",
    "=",
    "0",
    "9",
    "中",
    "😀",
    "\t",
    ".",
    "ー",
    "\u00a0",
    "é",
    "\r\n",
    "ab",
)


def _special_spellings() -> list[str]:
    data = json.loads(TOKENIZER_JSON.read_text(encoding="utf-8"))
    return [token["content"] for token in data["added_tokens"]]


def generate_documents(seed: int, total_bytes: int) -> list[str]:
    """Documents totalling at least `total_bytes` bytes of UTF-8, the same for the same seed."""
    rng = random.Random(seed)
    specials = _special_spellings()
    common_specials = [s for s in specials if "place▁holder" not in s and "mm_span" not in s]

    def english() -> str:
        words = []
        for _ in range(rng.randint(3, 40)):
            word = rng.choice(WORDS)
            if rng.random() < 0.1:
                word = word.capitalize()
            words.append(word)
            if rng.random() < 0.08:
                words[-1] += rng.choice(",.;:!?")
        return " ".join(words) + rng.choice([". ", ".\n", "\n\n", "? ", "! "])

    def code() -> str:
        return rng.choice(CODE_SNIPPETS)

    def json_text() -> str:
        def value(depth: int) -> object:
            kind = rng.randint(0, 7 if depth < 3 else 4)
            if kind == 0:
                return rng.randint(-(10**12), 10**12)
            if kind == 1:
                return round(rng.uniform(-1000, 1000), rng.randint(0, 6))
            if kind == 2:
                return rng.choice([True, False, None])
            if kind in (3, 4):
                return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 5))) + rng.choice(
                    ["", "\n", "\t", "é", "中文", "😀", '"quoted"']
                )
            if kind in (5, 6):
                return {rng.choice(WORDS): value(depth + 1) for _ in range(rng.randint(0, 5))}
            return [value(depth + 1) for _ in range(rng.randint(0, 5))]

        indent = rng.choice([None, 2, 4])
        return json.dumps(value(0), ensure_ascii=rng.random() < 0.3, indent=indent) + "\n"

    def cjk() -> str:
        return "".join(rng.choice(CJK) for _ in range(rng.randint(1, 60)))

    def emoji() -> str:
        return "".join(rng.choice(EMOJI) for _ in range(rng.randint(1, 8))) + rng.choice(
            ["", " ", "\n"]
        )

    def digits() -> str:
        run = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 40)))
        return (
            rng.choice(["", " ", "$", "v", "x", "-", "#"])
            + run
            + rng.choice(["", " ", ".5", "%", "px", "\n", ",000"])
        )

    def whitespace() -> str:
        return "".join(rng.choice(WHITESPACE) for _ in range(rng.randint(1, 30)))

    def special() -> str:
        spelling = rng.choice(common_specials if rng.random() < 0.8 else specials)
        if rng.random() < 0.2:
            cut = rng.randint(1, len(spelling) - 1)
            spelling = spelling[:cut] if rng.random() < 0.5 else spelling[cut:]
        return rng.choice(["", " ", "\n", "x"]) + spelling + rng.choice(["", " ", "\n", "y"])

    def script() -> str:
        return rng.choice(SCRIPTS) + rng.choice([" ", "\n", ""])

    def random_code_points() -> str:
        chars = []
        for _ in range(rng.randint(1, 20)):
            plane = rng.random()
            if plane < 0.5:
                code = rng.randint(0x80, 0xFFFF)
            elif plane < 0.8:
                code = rng.randint(0x10000, 0x2FFFF)
            elif plane < 0.9:
                code = rng.randint(0, 0x7F)
            else:
                code = rng.randint(0x30000, 0x10FFFF)
            if 0xD800 <= code <= 0xDFFF:
                code = 0xFFFD
            chars.append(chr(code))
        return "".join(chars)

    def long_run() -> str:
        return rng.choice(RUN_CHARS) * rng.choice([50, 200, 1000, 5000])

    parts: list[tuple[Callable[[], str], int]] = [
        (english, 30),
        (code, 10),
        (json_text, 8),
        (cjk, 8),
        (emoji, 5),
        (digits, 6),
        (whitespace, 6),
        (special, 6),
        (script, 8),
        (random_code_points, 4),
        (long_run, 1),
    ]
    makers = [maker for maker, weight in parts for _ in range(weight)]
    documents = []
    produced = 0
    while produced < total_bytes:
        target = rng.choice([16, 200, 2000, 16000, 64000])
        pieces: list[str] = []
        size = 0
        while size < target:
            piece = rng.choice(makers)()
            pieces.append(piece)
            size += len(piece.encode("utf-8"))
        documents.append("".join(pieces))
        produced += size
    return documents
