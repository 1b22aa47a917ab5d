"""Each model version's tokenizer, as the server uses them for prompts and answers.

A V4 model's vocabulary is its `tokenizer.json` as is; V4.1's adds the special tokens of the V4.1
prompt format that V4 lacks (`<｜System｜>`, ...) after V4's largest id. An answer is decoded and
counted with its model's tokenizer: a V4 answer's `<｜System｜>` text is plain text (five tokens
in `reasoning_tokens`, as the official V4 count has it), and a V4 model never samples the ids
that only V4.1 has.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from deepseek_recipe import Tokenizer
from deepseek_recipe.requests import ModelVersion

__all__ = ["ModelTokenizers"]


@dataclass(frozen=True)
class ModelTokenizers:
    """The V4 tokenizer and the V4.1 one built from it (V4's ids plus V4.1's special tokens)."""

    v4: Tokenizer
    v41: Tokenizer

    @classmethod
    def load(cls, tokenizer_path: str | None = None) -> ModelTokenizers:
        """From a V4-style `tokenizer.json` (default: the bundled V4 one), encoding on the calling
        thread only."""
        if tokenizer_path is None:
            v4, v41 = Tokenizer.deepseek_v4(), Tokenizer.deepseek_v41()
        else:
            text = Path(tokenizer_path).read_text(encoding="utf-8")
            v4 = Tokenizer.from_str(text)
            v41 = Tokenizer.from_str(Tokenizer.json_with_v41_special_tokens(text))
        return cls(v4.with_threads(1), v41.with_threads(1))

    @property
    def vocab_size(self) -> int:
        """The ids a model serving both versions needs (V4.1's vocabulary)."""
        return self.v41.vocab_size

    def of(self, version: ModelVersion) -> Tokenizer:
        """The tokenizer of `version`'s prompts and answers."""
        return self.v4 if version == "DeepseekV4Pro" else self.v41

    def absent_ids(self, version: ModelVersion, model_vocab: int | None) -> list[int]:
        """Ids of a model with `model_vocab` ids that `version`'s vocabulary lacks (V4.1's
        additions, for V4), which its answers must not hold; none when `model_vocab` is unknown
        (a remote model's vocabulary is its own)."""
        if model_vocab is None:
            return []
        return list(range(self.of(version).vocab_size, min(self.vocab_size, model_vocab)))
