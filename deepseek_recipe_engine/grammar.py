"""Compiling the grammar the recipe emits for a constrained request (llguidance).

The grammar itself (`ConvertedRequest.constraint_grammar()`, built by the Rust core from the
output constraint, the parsing options and the prompt format's markup) is llguidance's Lark
dialect; this module turns it into matchers. Costs paid once per process: the llguidance
tokenizer (~1-3 s for the 129K vocabulary) and each distinct grammar's compilation (cached; a
request gets a copy of a compiled matcher).
"""

from __future__ import annotations

from functools import cache, lru_cache

import llguidance

from deepseek_recipe import Tokenizer
from deepseek_recipe.errors import ConstraintError
from deepseek_recipe_engine.config import tokenizer_json

__all__ = [
    "EOS_TOKEN",
    "PROMPT_ONLY_TOKENS",
    "ConstraintError",
    "compile_grammar",
    "engine_tokenizer",
    "grammar_tokenizer",
    "special_token_id",
]

EOS_TOKEN = "<｜end▁of▁sentence｜>"
PROMPT_ONLY_TOKENS = ("<｜begin▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>")
"""Prompt markup a model's answer never holds (a trained model gives them no weight; the
reference engine's random models are kept from sampling them)."""


@cache
def engine_tokenizer() -> Tokenizer:
    """The engine's vocabulary (the `tokenizer.json` of `tokenizer_json()`), loaded once."""
    return Tokenizer.from_str(tokenizer_json())


def special_token_id(token: str) -> int:
    """Id of a special token of the engine's vocabulary."""
    token_id = engine_tokenizer().token_to_id(token)
    if token_id is None:
        raise ConstraintError(f"{token!r} is not in the tokenizer")
    return token_id


@cache
def grammar_tokenizer() -> llguidance.LLTokenizer:
    """llguidance's view of the engine's vocabulary (token bytes + trie), built once per process;
    end-of-sentence is the stop token the grammar allows once it accepts."""
    return llguidance.LLTokenizer(tokenizer_json(), eos_token=special_token_id(EOS_TOKEN))


@lru_cache(maxsize=256)
def _compiled_matcher(grammar: str) -> llguidance.LLMatcher:
    """A pristine matcher for a grammar; callers take `deep_copy()`s."""
    matcher = llguidance.LLMatcher(grammar_tokenizer(), grammar, log_level=0)
    if matcher.is_error():
        raise ConstraintError(f"grammar does not compile: {matcher.get_error()}")
    return matcher


def compile_grammar(grammar: str) -> llguidance.LLMatcher:
    """A fresh matcher for a grammar (compiled once per distinct grammar, then copied)."""
    return _compiled_matcher(grammar).deep_copy()
